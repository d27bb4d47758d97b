"""Float64 references of Inputs/head_window.mlir and Inputs/group_window.mlir, written from their
descriptions: a causal window of 16 * (h + 1) keys (variant=head_window) or 100 * h + 1 keys
(variant=group_window) for query head h (q_idx and kv_idx aligned at 0), GQA by repeating the KV heads."""
import torch


def reference(q, k, v, scale, causal=False, variant="", **_):
    B, Hq, Nq, _ = q.shape
    Hkv, Nkv = k.shape[1], k.shape[2]
    k = k.double().repeat_interleave(Hq // Hkv, dim=1)
    v = v.double().repeat_interleave(Hq // Hkv, dim=1)
    s = (q.double() @ k.transpose(-1, -2)) * scale
    qi = torch.arange(Nq).view(1, 1, Nq, 1)
    ki = torch.arange(Nkv).view(1, 1, 1, Nkv)
    h = torch.arange(Hq).view(1, Hq, 1, 1)
    width = {"head_window": 16 * (h + 1), "group_window": 100 * h + 1}[variant]
    visible = (ki <= qi) & (qi - ki < width)
    s = s.masked_fill(~visible, float("-inf"))
    w = torch.softmax(s, dim=-1).nan_to_num()
    return w @ v, torch.logsumexp(s, dim=-1)
