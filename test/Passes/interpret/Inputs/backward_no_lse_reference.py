"""A forward reference that returns O only: a backward needs its LSE."""
import torch


def reference(q, k, v, scale, **params):
    rep = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(rep, dim=1)
    v = v.repeat_interleave(rep, dim=1)
    return torch.softmax((q @ k.transpose(-1, -2)) * scale, dim=-1) @ v
