# The same window as a causal mask and a distance |q - kv| < W.
import torch
NAME = "window"
W = 48
def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
def near(b, h, q_idx, kv_idx):
    return torch.abs(q_idx - kv_idx) < W
def mask_mod(b, h, q_idx, kv_idx):
    return causal(b, h, q_idx, kv_idx) & near(b, h, q_idx, kv_idx)
