# .to(dtype), .float(), .int(), .long(), .bool(), and bool + int promotion.
import torch


def score_mod(score, b, h, q_idx, kv_idx):
    rel = (q_idx - kv_idx).to(torch.int64).float() * 0.5
    truncated = (score * 3.7).int().float()
    flag = ((kv_idx % 3).bool() & (q_idx > 2)).float()
    counted = (q_idx > kv_idx) + 1 + (score > 0).long()
    return score + rel + truncated + flag + counted + (h.to(score.dtype) / 4)
