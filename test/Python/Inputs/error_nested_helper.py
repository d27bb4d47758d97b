# An unsupported construct in a helper: the error names the helper's line.
slopes = [0.5, 0.25]


def slope(h):
    return slopes[h]


def score_mod(score, b, h, q_idx, kv_idx):
    return score * slope(h)
