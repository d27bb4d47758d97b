"""Float64 references of Inputs/relbias_table.mlir, Inputs/qk_table.mlir and
Inputs/learned_softcap.mlir, written from their descriptions; their tensors
arrive as float64 leaves when the kernel computes their gradients (autograd
then gives those too)."""
import torch


def reference(q, k, v, scale, causal=False, variant="", bias=None, table=None, gain=None, cap=None, **_):
    B, Hq, Nq, _ = q.shape
    Nkv = k.shape[2]
    k = k.double().repeat_interleave(Hq // k.shape[1], dim=1)
    v = v.double().repeat_interleave(Hq // v.shape[1], dim=1)
    s = (q.double() @ k.transpose(-1, -2)) * scale
    qi = torch.arange(Nq).view(Nq, 1)
    ki = torch.arange(Nkv).view(1, Nkv)
    if variant == "relbias":
        s = s + bias.double()[:, qi - ki + 129].view(1, Hq, Nq, Nkv)
    elif variant == "qkbias":
        g = gain.double().view(1, Hq, 1, 1)
        s = (s + g * table.double().view(1, 1, Nq, Nkv)) * g
    elif variant == "learned_softcap":
        c = cap.double().view(1, Hq, 1, 1)
        s = c * torch.tanh(s / c)
    else:
        raise ValueError(f"unknown variant {variant!r}")
    w = torch.softmax(s, dim=-1)
    return w @ v, torch.logsumexp(s, dim=-1)
