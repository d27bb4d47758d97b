# int64 values above 2^31 stay int64: captured tensors and .long() arithmetic.
import torch

offsets = torch.tensor([3_000_000_000, 5_000_000_017], dtype=torch.int64)


def mask_mod(b, h, q_idx, kv_idx):
    return (offsets[b] + q_idx) % 2 == (kv_idx.long() + 2**33) % 2


def score_mod(score, b, h, q_idx, kv_idx):
    return score + ((offsets[b] * 3 + kv_idx) % 1000).float()
