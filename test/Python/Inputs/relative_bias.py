# A relative-position table [H, 2N-1] indexed by a computed position.
import torch

N = 16
GRID = dict(H=3, Q=N, KV=N)
bias = torch.randn(3, 2 * N - 1, generator=torch.Generator().manual_seed(1))


def score_mod(score, b, h, q_idx, kv_idx):
    return score + bias[h, q_idx - kv_idx + N - 1]
