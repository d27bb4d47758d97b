import torch

slopes = torch.tensor([0.5, 0.25], dtype=torch.float64)


def score_mod(score, b, h, q_idx, kv_idx):
    return score * slopes[h]
