# A dilated causal window: every third key, a modulo of q - kv.
NAME = "dilated"
def mask_mod(b, h, q_idx, kv_idx):
    d = q_idx - kv_idx
    return (d >= 0) & (d % 3 == 0)
