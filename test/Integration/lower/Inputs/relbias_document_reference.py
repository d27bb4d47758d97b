"""Float64 reference of Inputs/relbias_document.mlir, written from its
description: score + rel_bias[h, q - kv + N - 1]; visible iff doc[q] == doc[kv]
and (q - kv) mod 4 != 3 (Python's floor modulo). The captured tensors arrive
as torch tensors of their shapes. Nq == Nkv == N."""
import torch


def reference(q, k, v, scale, causal=False, rel_bias=None, doc=None, **_):
    B, Hq, N, _ = q.shape
    assert rel_bias.shape == (Hq, 2 * N - 1) and doc.shape == (N,), (rel_bias.shape, doc.shape)
    k = k.double().repeat_interleave(Hq // k.shape[1], dim=1)
    v = v.double().repeat_interleave(Hq // v.shape[1], dim=1)
    s = (q.double() @ k.transpose(-1, -2)) * scale
    qi = torch.arange(N).view(N, 1)
    ki = torch.arange(N).view(1, N)
    s = s + rel_bias.double()[:, qi - ki + N - 1].view(1, Hq, N, N)
    visible = (doc[qi] == doc[ki]) & ((qi - ki) % 4 != 3)
    s = s.masked_fill(~visible, float("-inf"))
    w = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return w @ v, torch.logsumexp(s, dim=-1)
