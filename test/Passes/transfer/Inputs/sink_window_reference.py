"""Streaming attention with attention sinks and a soft cap, written as a
PyTorch user would: a visibility function with data-dependent Python `if`s,
which the cuir.variant tracer cannot express (--transfer=llm: can).

The interpreter's reference protocol (docs/Interpreter.md): q is
[B, Hq, Nq, d], k and v [B, Hkv, Nkv, d]; the variant's parameters arrive as
keyword arguments; returns O [B, Hq, Nq, d] and the log-sum-exp [B, Hq, Nq].
"""
import torch


def visible(i, j, Nq, Nkv, sinks, window):
    pos = i + Nkv - Nq  # query row i sits at key position pos
    if j > pos:
        return False  # causal
    if j < sinks:
        return True  # the first tokens are always seen
    return pos - j <= window  # and the last window + 1 tokens


def reference(q, k, v, scale, causal=False, sinks=4, window=64, softcap=30.0):
    B, Hq, Nq, _ = q.shape
    Hkv, Nkv = k.shape[1], k.shape[2]
    mask = torch.tensor([[visible(i, j, Nq, Nkv, int(sinks), int(window))
                          for j in range(Nkv)] for i in range(Nq)])
    k = k.double().repeat_interleave(Hq // Hkv, dim=1)
    v = v.double().repeat_interleave(Hq // Hkv, dim=1)
    s = (q.double() @ k.transpose(-1, -2)) * scale
    s = float(softcap) * torch.tanh(s / float(softcap))
    s = s.masked_fill(~mask, float("-inf"))
    w = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return w @ v, torch.logsumexp(s, dim=-1)
