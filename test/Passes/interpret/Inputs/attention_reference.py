"""Standard attention in float64, written independently of the interpreter's
built-in reference: q [B, Hq, Nq, d], k and v [B, Hkv, Nkv, d]."""
import torch


def reference(q, k, v, scale, causal=False, **params):
    q, k, v = q.double(), k.double(), v.double()
    rep = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(rep, dim=1)
    v = v.repeat_interleave(rep, dim=1)
    s = (q @ k.transpose(-1, -2)) * scale
    if causal:
        nq, nkv = s.shape[-2:]
        keep = torch.ones(nq, nkv, dtype=torch.bool).tril(nkv - nq)
        s = s.masked_fill(~keep, float("-inf"))
    return torch.softmax(s, dim=-1) @ v, torch.logsumexp(s, dim=-1)
