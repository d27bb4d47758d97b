# Rounding toward zero and to even: torch.trunc, torch.fix, torch.round (halves to even), and
# torch.div(rounding_mode="trunc") of integers (-4 / 3 is -1, where // gives -2) and of floats.
import torch


def score_mod(score, b, h, q_idx, kv_idx):
    d = q_idx - kv_idx
    ints = torch.div(d, 3, rounding_mode="trunc") + torch.div(d, -7, rounding_mode="trunc") * 2
    floats = torch.trunc(score * 3) + torch.fix(score * 5) + torch.round(score * 2) + \
        torch.round(torch.tensor(2.5)) + torch.div(score, 0.7, rounding_mode="trunc")
    return floats + ints.float() * 0.1
