# A sliding window as FlexAttention users write it (top-left aligned).
import torch
NAME = "window"
W = 48
def mask_mod(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < W)
