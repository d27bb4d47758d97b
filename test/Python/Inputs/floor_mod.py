# Python's % takes the sign of the divisor: (q - kv) % 3 on negatives.
def mask_mod(b, h, q_idx, kv_idx):
    return ((q_idx - kv_idx) % 3) == 1


def score_mod(score, b, h, q_idx, kv_idx):
    return score + ((kv_idx - q_idx) % 7) - ((q_idx - kv_idx) % -4)
