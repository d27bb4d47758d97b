# Causal as where(q - kv >= 0, True, False).
import torch
NAME = "causal"
def mask_mod(b, h, q_idx, kv_idx):
    return torch.where(q_idx - kv_idx >= 0, True, False)
