# FlexAttention's document mask: a 1-D per-token tensor indexed by q_idx and kv_idx.
import torch

GRID = dict(Q=20, KV=20)
document_id = torch.tensor([0] * 5 + [1] * 9 + [2] * 6, dtype=torch.int32)


def mask_mod(b, h, q_idx, kv_idx):
    return (document_id[q_idx] == document_id[kv_idx]) & (q_idx >= kv_idx)
