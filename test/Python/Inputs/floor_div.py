# // rounds down (toward -inf), also on negatives and negative divisors.
import torch


def mask_mod(b, h, q_idx, kv_idx):
    return q_idx // 4 == kv_idx // 4


def score_mod(score, b, h, q_idx, kv_idx):
    d = q_idx - kv_idx
    return score + d // 3 + (d // -5) * 2 + torch.div(d, 7, rounding_mode="floor")
