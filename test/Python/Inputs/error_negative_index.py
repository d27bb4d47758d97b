import torch

table = torch.zeros(4, 8)


def score_mod(score, b, h, q_idx, kv_idx):
    return score + table[h, -9]
