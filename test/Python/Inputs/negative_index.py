# Negative indices count from the end of their dimension, as in torch.
import torch

N = 16
GRID = dict(H=3, Q=N, KV=N)
rel = torch.randn(3, N, generator=torch.Generator().manual_seed(2))
last = torch.randn(3, 8, generator=torch.Generator().manual_seed(3))


def score_mod(score, b, h, q_idx, kv_idx):
    return score + rel[h, kv_idx - q_idx] + last[h, -1]
