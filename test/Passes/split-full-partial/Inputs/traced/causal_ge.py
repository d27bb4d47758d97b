# FlexAttention's causal mask.
NAME = "causal"
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx
