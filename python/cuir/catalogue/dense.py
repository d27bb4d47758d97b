"""Dense float64 attention for the catalogue's references: the whole [B, H, Nq, Nkv] score matrix.

Written independently of the traced functions: every reference builds its bias and mask from the
coordinate grids below with whole-tensor operations, then calls attend().
"""
import torch


def grids(B, H, Nq, Nkv):
    """int64 coordinate tensors broadcastable to [B, H, Nq, Nkv]: (b, h, q, k)."""
    b = torch.arange(B).view(B, 1, 1, 1)
    h = torch.arange(H).view(1, H, 1, 1)
    q = torch.arange(Nq).view(1, 1, Nq, 1)
    k = torch.arange(Nkv).view(1, 1, 1, Nkv)
    return b, h, q, k


def scores(q, k, scale):
    """scale * q . k in float64, k heads repeated for GQA: [B, Hq, Nq, Nkv]."""
    Hq, Hkv = q.shape[1], k.shape[1]
    k = k.double().repeat_interleave(Hq // Hkv, dim=1)
    return (q.double() @ k.transpose(-1, -2)) * scale


def attend(s, v, visible=None, sigmoid=False):
    """Weights from scores s (already modified) and a visibility mask, times v (GQA-repeated).

    softmax: (out, lse), lse the natural-log log-sum-exp over visible keys (-inf, and out 0, for a row that
    sees none, as FlexAttention returns); sigmoid: out alone (sigmoid(s) of visible keys, no normalisation)."""
    Hq, Hkv = s.shape[1], v.shape[1]
    v = v.double().repeat_interleave(Hq // Hkv, dim=1)
    if visible is None:
        visible = torch.ones(s.shape, dtype=torch.bool)
    visible = visible.expand(s.shape)
    if sigmoid:
        return torch.where(visible, torch.sigmoid(s), torch.zeros((), dtype=s.dtype)) @ v
    s = s.masked_fill(~visible, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    w = torch.exp(s - lse.unsqueeze(-1)).nan_to_num(0.0)
    return w @ v, lse
