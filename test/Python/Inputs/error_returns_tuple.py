def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx, q_idx < kv_idx + 8  # a tuple, not the conjunction
