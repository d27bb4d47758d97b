# Causal as (kv <= q) == True.
NAME = "causal"
def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) == True
