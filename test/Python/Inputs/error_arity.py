def mask_mod(b, h, q_idx):
    return q_idx >= 0
