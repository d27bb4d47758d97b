# Masking with torch.finfo(torch.float32).min, the transformers idiom.
import torch


def score_mod(score, b, h, q_idx, kv_idx):
    return torch.where(q_idx >= kv_idx, score, torch.finfo(torch.float32).min)
