# The same window through De Morgan: hidden when ahead or too far behind.
import torch
NAME = "window"
W = 48
def mask_mod(b, h, q_idx, kv_idx):
    return ~((kv_idx > q_idx) | (kv_idx <= q_idx - W))
