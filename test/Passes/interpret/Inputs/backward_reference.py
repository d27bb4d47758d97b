"""Standard attention's backward by its closed form, in float64, written
independently of the interpreter's: the backward entry of the reference
protocol. q [B, Hq, Nq, d], k and v [B, Hkv, Nkv, d]; every row must see
a key."""
import os
import sys

import torch

# The forward is the other reference file's (the runner loads this file by
# path, so its folder is not on the module path).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention_reference import reference  # noqa: E402,F401


def reference_backward(q, k, v, o, lse, d_o, scale, causal=False, **params):
    rep = q.shape[1] // k.shape[1]
    kr = k.repeat_interleave(rep, dim=1)
    vr = v.repeat_interleave(rep, dim=1)
    s = (q @ kr.transpose(-1, -2)) * scale
    if causal:
        nq, nkv = s.shape[-2:]
        keep = torch.ones(nq, nkv, dtype=torch.bool).tril(nkv - nq)
        s = s.masked_fill(~keep, float("-inf"))
    p = torch.exp(s - lse.unsqueeze(-1))
    dp = d_o @ vr.transpose(-1, -2)
    ds = p * (dp - (d_o * o).sum(-1, keepdim=True))
    dq = scale * ds @ kr
    dk = scale * ds.transpose(-1, -2) @ q
    dv = p.transpose(-1, -2) @ d_o
    # Sum over the query heads of each KV head.
    shape = (k.shape[0], k.shape[1], rep) + k.shape[2:]
    return dq, dk.reshape(shape).sum(2), dv.reshape(shape).sum(2)
