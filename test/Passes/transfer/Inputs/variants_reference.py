"""Attention variants written directly in PyTorch (float64), independently of
CuIR's variant code, to check transferred kernels in the interpreter.

`variant` is the transfer spec ("prefixlm,softcap,sigmoid"); score functions
apply in its order to the scaled scores. Masks align to the bottom-right
corner: query row i sits on key i + Nkv - Nq.
"""
import torch


def reference(q, k, v, scale, causal=False, variant="", **p):
    B, Hq, Nq, _ = q.shape
    Hkv, Nkv = k.shape[1], k.shape[2]
    k = k.double().repeat_interleave(Hq // Hkv, dim=1)
    v = v.double().repeat_interleave(Hq // Hkv, dim=1)
    s = (q.double() @ k.transpose(-1, -2)) * scale
    diag = (torch.arange(Nq) + (Nkv - Nq)).view(1, 1, Nq, 1)
    key = torch.arange(Nkv).view(1, 1, 1, Nkv)
    visible = torch.ones(B, Hq, Nq, Nkv, dtype=torch.bool)
    sigmoid = False

    def per(name, n, shape):
        return torch.as_tensor(p[name], dtype=torch.float64).expand(n).reshape(shape)

    for part in variant.split(","):
        name = part.split("{")[0].strip()
        if name == "causal":
            visible &= key <= diag
        elif name == "prefixlm":
            prefix = per("prefix_len", B, (B, 1, 1, 1))
            visible &= (key < prefix) | (key <= diag)
        elif name == "softcap":
            cap = float(p["softcap"])
            s = cap * torch.tanh(s / cap)
        elif name == "sigmoid":
            s = s + float(p["sigmoid_bias"])
            sigmoid = True
        elif name == "alibi":
            s = s + per("alibi_slopes", Hq, (1, Hq, 1, 1)) * (key - diag)
        elif name == "window":
            lo, hi = diag - int(p["window_left"]), diag + int(p["window_right"])
            visible &= (key >= lo) & (key <= hi)
        elif name == "global-window":
            g = int(p["global_tokens"])
            lo, hi = diag - int(p["window_left"]), diag + int(p["window_right"])
            visible &= (key < g) | (diag < g) | ((key >= lo) & (key <= hi))
        elif name == "document":
            # A row without a key position (Nq > Nkv) takes the first key's.
            ids = torch.as_tensor(p["doc_ids"]).view(B, Nkv)
            qpos = (torch.arange(Nq) + (Nkv - Nq)).clamp(0, Nkv - 1)
            dq = ids[:, qpos].view(B, 1, Nq, 1)
            dk = ids.view(B, 1, 1, Nkv)
            visible &= dq == dk
        elif name in ("head_window", "group_window"):
            # test/Integration/transfer/Inputs/<name>.mlir: a causal window of
            # 16 (h + 1), or 100 h + 1, keys for query head h; q_idx and kv_idx
            # both from 0 (top-left aligned).
            h = torch.arange(Hq).view(1, Hq, 1, 1)
            width = 16 * (h + 1) if name == "head_window" else 100 * h + 1
            row = torch.arange(Nq).view(1, 1, Nq, 1)
            visible &= (key <= row) & (row - key < width)
        elif name:
            raise ValueError(f"unknown variant {name!r}")
    if sigmoid:
        return (torch.sigmoid(s) * visible) @ v
    s = s.masked_fill(~visible, float("-inf"))
    w = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return w @ v, torch.logsumexp(s, dim=-1)
