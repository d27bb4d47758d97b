#!/usr/bin/env python3
"""The float64 PyTorch reference of attention forward and the comparison the GPU checks of the kernels share
(tools/gpu/check_flash_fwd.py):
  rel = ||out - ref|| / ||ref||, max |out - ref|, the first element outside atol + rtol*|ref| with its
  (b, i, h, c) coordinates, and max |lse - ref_lse| over rows that see a key (rows that see none must give
  O = 0 and LSE = -inf).
"""
import math

import torch

REL_TOL = {torch.bfloat16: 1e-2, torch.float16: 1e-2}       # acceptance: ||out-ref|| / ||ref||
ELEM_TOL = {torch.bfloat16: (2e-2, 2e-2), torch.float16: (4e-3, 4e-3)}  # (atol, rtol) per element, reported
LSE_TOL = 2e-3


def reference(q, k, v, causal, scale):
    """float64 attention on [B, N, H, d] tensors; rows that see no key give O = 0, LSE = -inf."""
    B, Nq, Hq, d = q.shape
    Nkv, Hkv = k.shape[1], k.shape[2]
    rep = Hq // Hkv
    qd = q.double().transpose(1, 2)
    kd = k.double().transpose(1, 2).repeat_interleave(rep, 1)
    vd = v.double().transpose(1, 2).repeat_interleave(rep, 1)
    s = (qd @ kd.transpose(-1, -2)) * scale
    if causal:
        i = torch.arange(Nq, device=q.device)[:, None]
        j = torch.arange(Nkv, device=q.device)[None, :]
        s = s.masked_fill(j > i + (Nkv - Nq), float("-inf"))
    lse = torch.logsumexp(s, dim=-1) if Nkv > 0 else torch.full(s.shape[:-1], float("-inf"), device=q.device,
                                                                 dtype=torch.float64)
    p = torch.exp(s - lse[..., None])
    p = torch.nan_to_num(p, nan=0.0)
    o = (p @ vd).transpose(1, 2)
    return o, lse


def compare(out, lse, ref_o, ref_lse, dtype):
    o = out.double()
    res = {}
    res["unwritten"] = int(torch.isnan(o).sum().item()) + int(torch.isnan(lse).sum().item())
    diff = (o - ref_o).abs()
    diff = torch.nan_to_num(diff, nan=float("inf"))
    ref_norm = ref_o.norm().item()
    if diff.numel() == 0:
        res["rel"], res["max_abs"] = 0.0, 0.0
    else:
        res["max_abs"] = diff.max().item()
        res["rel"] = diff.norm().item() / ref_norm if ref_norm > 0 else (0.0 if res["max_abs"] == 0 else math.inf)
    atol, rtol = ELEM_TOL[dtype]
    bad = diff > atol + rtol * ref_o.abs()
    res["n_bad_elems"] = int(bad.sum().item())
    if res["n_bad_elems"]:
        b, i, h, c = [int(x) for x in bad.nonzero()[0].tolist()]
        res["first_bad"] = {"b": b, "i": i, "h": h, "c": c, "out": float(o[b, i, h, c]),
                            "ref": float(ref_o[b, i, h, c])}
    finite = torch.isfinite(ref_lse)
    lse_d = lse.double()
    res["lse_empty_rows_ok"] = bool(torch.all(lse_d[~finite] == float("-inf")).item()) if (~finite).any() else True
    res["lse_max_abs"] = (lse_d[finite] - ref_lse[finite]).abs().max().item() if finite.any() else 0.0
    if math.isnan(res["lse_max_abs"]):
        res["lse_max_abs"] = math.inf
    res["ok"] = (res["unwritten"] == 0 and res["rel"] < REL_TOL[dtype] and res["lse_max_abs"] < LSE_TOL
                 and res["lse_empty_rows_ok"])
    return res
