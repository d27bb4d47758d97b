def score_mod(score, *args):
    return score
