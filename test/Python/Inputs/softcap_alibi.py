import torch
NAME = "softcap_alibi"
slopes = torch.tensor([0.25, 0.0625, 0.015625, 0.00390625])

def score_mod(score, b, h, q_idx, kv_idx):
    capped = 3.0 * torch.tanh(score / 3.0)
    return capped + slopes[h] * (kv_idx - q_idx)
