# NaN: a Python nan constant, NaN scores, isnan, comparisons with NaN.
import math

import torch


def SCORES(shape):
    s = torch.randn(shape) * 4
    s.view(-1)[::7] = float("nan")
    return s


def score_mod(score, b, h, q_idx, kv_idx):
    cleaned = torch.where(torch.isnan(score), 0.5, score)
    flagged = torch.where(score > 3.0, math.nan, cleaned)
    return torch.where(score != score, flagged + 1.0, flagged)
