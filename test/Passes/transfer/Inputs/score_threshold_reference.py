"""Float64 reference of Inputs/score_threshold.mlir: scores at or below 0 are
masked; a row that keeps none gives O = 0 and LSE = -inf."""
import torch


def reference(q, k, v, scale, **_):
    Hq = q.shape[1]
    k = k.double().repeat_interleave(Hq // k.shape[1], dim=1)
    v = v.double().repeat_interleave(Hq // v.shape[1], dim=1)
    s = (q.double() @ k.transpose(-1, -2)) * scale
    s = torch.where(s > 0, s, torch.full_like(s, float("-inf")))
    lse = torch.logsumexp(s, dim=-1)
    w = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return w @ v, lse
