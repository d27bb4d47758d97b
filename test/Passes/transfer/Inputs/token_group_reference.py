"""Float64 references of same_token_group.mlir and next_token_group.mlir
(the interpreter's reference protocol, docs/Interpreter.md)."""
import torch


def reference(q, k, v, scale, causal=False, group=None, variant="same_group"):
    B, Hq, Nq, _ = q.shape
    Hkv, Nkv = k.shape[1], k.shape[2]
    i = torch.arange(Nq)[:, None]
    j = torch.arange(Nkv)[None, :]
    g = group.long()
    if variant == "same_group":
        mask = (g[i] == g[j]) & (j <= i)
    else:
        mask = g[j + 1] == 0
    k = k.double().repeat_interleave(Hq // Hkv, dim=1)
    v = v.double().repeat_interleave(Hq // Hkv, dim=1)
    s = (q.double() @ k.transpose(-1, -2)) * scale
    s = s.masked_fill(~mask, float("-inf"))
    w = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return w @ v, torch.logsumexp(s, dim=-1)
