# Bitwise and logical operators on ints and bools, and shifts.
import torch


def mask_mod(b, h, q_idx, kv_idx):
    bits = ((q_idx & 3) | (kv_idx ^ 5)) + (~kv_idx & 7) + (q_idx << 2) + (kv_idx >> 1)
    logical = torch.logical_and(q_idx > 2, ~(kv_idx > 9)) | torch.logical_not(h == 1)
    return ((bits % 3) == 0) ^ logical ^ torch.logical_or(kv_idx == 0, q_idx == 7)
