# A score_mod made by functools.partial, and a mask_mod with a keyword-only
# argument that has a default: FlexAttention calls both with the positional
# arguments alone.
import functools

import torch


def softcap(score, b, h, q_idx, kv_idx, cap):
    return cap * torch.tanh(score / cap)


score_mod = functools.partial(softcap, cap=20.0)


def mask_mod(b, h, q_idx, kv_idx, *, window=24):
    return (q_idx >= kv_idx) & (q_idx - kv_idx <= window)
