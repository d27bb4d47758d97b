# Global tokens and a sliding window: the first G keys and queries see
# everything, the rest a window. Linear, but two intervals a row.
NAME = "global_window"
G = 8
W = 48
def mask_mod(b, h, q_idx, kv_idx):
    window = (q_idx >= kv_idx) & (q_idx - kv_idx < W)
    return (kv_idx < G) | (q_idx < G) | window
