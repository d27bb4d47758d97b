import torch


def score_mod(score, b, h, q_idx, kv_idx):
    return torch.atan(score)
