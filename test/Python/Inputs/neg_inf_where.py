# Masking through score_mod: -inf from a Python float, through torch.where.
import torch


def score_mod(score, b, h, q_idx, kv_idx):
    return torch.where(q_idx >= kv_idx, score, -float("inf"))
