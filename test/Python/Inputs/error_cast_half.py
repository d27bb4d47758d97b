import torch


def score_mod(score, b, h, q_idx, kv_idx):
    return score.to(torch.float16)
