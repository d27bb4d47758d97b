def score_mod(score, b, h, q_idx, kv_idx):
    return score // 2.0
