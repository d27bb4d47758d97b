import torch

NAME = "prefix_document"
NORMALIZER = "sigmoid"
GRID = dict(B=2, Q=8, KV=8)
doc = torch.tensor([[0, 0, 0, 1, 1, 2, 2, 2], [0, 1, 1, 1, 1, 1, 2, 2]], dtype=torch.int32)


def mask_mod(b, h, q_idx, kv_idx):
    return (doc[b, q_idx] == doc[b, kv_idx]) & ((kv_idx < 3) | (q_idx >= kv_idx))
