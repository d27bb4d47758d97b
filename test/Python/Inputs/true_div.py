# int / int is a float32 true division (inf and nan where kv_idx is 0).
import torch


def score_mod(score, b, h, q_idx, kv_idx):
    ratio = q_idx / kv_idx
    return score + (q_idx - kv_idx) / 7 + torch.where(torch.isnan(ratio), -1.0, ratio) * 1e-3
