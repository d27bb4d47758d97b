"""The benchmark's attention variants in plain PyTorch: FlexAttention score_mod /
mask_mod functions, the eager implementation, the parameters CuIR's kernels
take, and the count of visible (query, key) pairs for TF/s.

Masks align to the bottom-right corner (query i sits on key i + Nkv - Nq), as
CuIR's built-ins; with Nq = Nkv that is FlexAttention's usual q_idx >= kv_idx.
Parameter values follow /work/shared/bench/peer_bench.py: prefix N/2, softcap
50, ALiBi slopes 2^(-8(h+1)/H), a window of 1024 keys, sigmoid bias -log(N).
"""
import math

import torch

SPECS = {
    "causal": "causal", "prefixlm": "prefixlm", "softcap_causal": "softcap,causal",
    "alibi_causal": "alibi,causal", "window": "window", "prefixlm_softcap": "prefixlm,softcap",
    "sigmoid_causal": "sigmoid,causal", "composite": "prefixlm,softcap,sigmoid",
    "global_window": "global-window", "document": "document", "packed_docs": "document",
}
# Benchmark names that run another name's library: packed documents are the document built-in.
LIBRARY = {"packed_docs": "document"}


def doc_ids(B, N, generator=None, device="cpu"):
    """Per batch element, document ids of packed documents of random lengths 128..2048."""
    rows = []
    for _ in range(B):
        lens = []
        while sum(lens) < N:
            lens.append(int(torch.randint(128, 2049, (1,), generator=generator).item()))
        rows.append(torch.repeat_interleave(torch.arange(len(lens)), torch.tensor(lens))[:N])
    return torch.stack(rows).to(device=device, dtype=torch.int32)


# packed_docs: one fresh draw per process and problem, so that the kernel and its reference see the same.
_PACKED = {}
# Masks that FlexAttention's softmax cannot express: sigmoid normalisers.
NO_FLEX = {"sigmoid_causal", "composite"}


def make(name, B, Hq, Nq, Nkv, device="cuda"):
    """(score_mod, mask_mod, sigmoid, cuir_params) for a variant and shape."""
    off = Nkv - Nq
    parts = SPECS[name].split(",")
    prefix = torch.full((B,), Nkv // 2, dtype=torch.int32, device=device)
    slopes = torch.tensor([2 ** (-8 * (h + 1) / Hq) for h in range(Hq)], dtype=torch.float32, device=device)
    cap, bias, left, glob = 50.0, -math.log(Nkv), 1023, 64
    runs = torch.tensor([100, 37, 512, 1000, 7], device=device)
    doc_row = torch.repeat_interleave(torch.arange(10**6, device=device) % len(runs),
                                      runs.repeat(10**6 // len(runs))[: 10**6])[:Nkv] if "document" in parts else None
    doc = doc_row.to(torch.int32).repeat(B) if doc_row is not None else None
    docs_2d = None
    if name == "packed_docs":  # distinct ids per document, per batch element
        key = (B, Nkv)  # not the device's spelling: "cuda" and "cuda:0" are one draw
        if key not in _PACKED:
            _PACKED[key] = doc_ids(B, Nkv)
        docs_2d = _PACKED[key].to(device)
        doc = docs_2d.reshape(-1).contiguous()
    params = {}
    if "prefixlm" in parts:
        params["prefix_len"] = prefix
    if "softcap" in parts:
        params["softcap"] = cap
    if "alibi" in parts:
        params["alibi_slopes"] = slopes
    if "sigmoid" in parts:
        params["sigmoid_bias"] = bias
    if "window" in parts:
        params["window_left"], params["window_right"] = left, 0
    if "global-window" in parts:
        params["global_tokens"], params["window_left"], params["window_right"] = glob, 256, 0
    if "document" in parts:
        params["doc_ids"] = doc

    def score_mod(score, b, h, q_idx, kv_idx):
        s = score
        for p in parts:
            if p == "softcap":
                s = cap * torch.tanh(s / cap)
            elif p == "alibi":
                s = s + slopes[h] * (kv_idx - (q_idx + off))
            elif p == "sigmoid":
                s = s + bias
        return s

    def mask_mod(b, h, q_idx, kv_idx):
        diag = q_idx + off
        ok = kv_idx >= 0
        for p in parts:
            if p == "causal":
                ok = ok & (kv_idx <= diag)
            elif p == "prefixlm":
                ok = ok & ((kv_idx < prefix[b]) | (kv_idx <= diag))
            elif p == "window":
                ok = ok & (kv_idx >= diag - left) & (kv_idx <= diag)
            elif p == "global-window":
                ok = ok & ((kv_idx < glob) | (diag < glob) | ((kv_idx >= diag - 256) & (kv_idx <= diag)))
            elif p == "document":
                qpos = torch.clamp(diag, 0, Nkv - 1)
                if docs_2d is not None:
                    ok = ok & (docs_2d[b, qpos] == docs_2d[b, kv_idx])
                else:
                    ok = ok & (doc_row[qpos] == doc_row[kv_idx])
        return ok

    return score_mod, mask_mod, "sigmoid" in parts, params


def dense_mask(mask_mod, B, Hq, Nq, Nkv, device="cuda"):
    q = torch.arange(Nq, device=device).view(1, 1, Nq, 1)
    k = torch.arange(Nkv, device=device).view(1, 1, 1, Nkv)
    b = torch.arange(B, device=device).view(B, 1, 1, 1)
    h = torch.arange(Hq, device=device).view(1, Hq, 1, 1)
    return mask_mod(b, h, q, k).expand(B, Hq, Nq, Nkv)


def eager(q, k, v, name, scale=None, dtype_scores=torch.float32):
    """q [B, Hq, Nq, d], k/v [B, Hkv, Nkv, d]: the variant computed the PyTorch way (materialized scores).
    With dtype_scores=float64 it is the reference."""
    B, Hq, Nq, d = q.shape
    Hkv, Nkv = k.shape[1], k.shape[2]
    scale = scale or 1.0 / math.sqrt(d)
    score_mod, mask_mod, sigmoid, _ = make(name, B, Hq, Nq, Nkv, q.device)
    rep = Hq // Hkv
    kk, vv = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
    if dtype_scores == torch.float64:
        s = (q.double() @ kk.double().transpose(-1, -2)) * scale
    else:
        s = (q @ kk.transpose(-1, -2)).float() * scale
    qi = torch.arange(Nq, device=q.device).view(1, 1, Nq, 1)
    ki = torch.arange(Nkv, device=q.device).view(1, 1, 1, Nkv)
    bi = torch.arange(B, device=q.device).view(B, 1, 1, 1)
    hi = torch.arange(Hq, device=q.device).view(1, Hq, 1, 1)
    s = score_mod(s, bi, hi, qi, ki)
    m = mask_mod(bi, hi, qi, ki)
    if sigmoid:
        p = torch.sigmoid(s) * m
        return (p.to(v.dtype if dtype_scores != torch.float64 else torch.float64)) @ (
            vv if dtype_scores != torch.float64 else vv.double()), None
    s = s.masked_fill(~m, float("-inf"))
    p = torch.softmax(s, -1).nan_to_num(0.0)
    if dtype_scores == torch.float64:
        return p @ vv.double(), torch.logsumexp(s, -1)
    return p.to(v.dtype) @ vv, None
