#!/usr/bin/env python3
"""How far rounding O to bf16 alone moves a trained tensor's gradient (CPU, float64, no kernel): the catalogue's
ALiBi slopes at check_catalogue_bwd.py's GQA shape. The slopes' gradient sums dS * (kv - q) over whole rows,
whose summands are far larger than the sum; D = rowsum(dO * O) from a rounded O shifts every dS. Prints the
gradient's relative change from that rounding, and that the correction check_catalogue_bwd.py applies (LSE's
gradient for upstream rowsum(dO * (O - O_rounded))) recovers the backward of the rounded inputs.
Usage: PYTHONPATH=python /usr/bin/python3 tools/gpu/rounded_o_floor.py"""
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
from cuir import catalogue  # noqa: E402


def main():
    torch.manual_seed(0)
    B, Hq, Hkv, Nq, Nkv, D = 2, 8, 2, 777, 1024, 64
    entry = catalogue.get("alibi")
    slopes = entry.make(B, Hq, Nq, Nkv, "cpu")["alibi_slope"].double().requires_grad_()
    q, k, v = (torch.randn(B, H, N, D).to(torch.bfloat16).double().requires_grad_()
               for H, N in ((Hq, Nq), (Hkv, Nkv), (Hkv, Nkv)))
    out, lse = entry.reference(q, k, v, D ** -0.5, {"alibi_slope": slopes})
    d_o = torch.randn(out.shape, dtype=torch.float64).to(torch.bfloat16).double()
    exact = torch.autograd.grad(out, (slopes,), d_o, retain_graph=True)[0]
    # The backward of the rounded inputs, by hand: P exact, D from O rounded to bf16.
    kk, vv = (t.detach().repeat_interleave(Hq // Hkv, 1) for t in (k, v))
    qi, ki = torch.arange(Nq).view(Nq, 1), torch.arange(Nkv).view(1, Nkv)
    s = q.detach() @ kk.transpose(-1, -2) * D ** -0.5 + slopes.detach().view(1, Hq, 1, 1) * (ki - qi)
    p = torch.softmax(s, -1)
    o_r = out.detach().to(torch.bfloat16).double()
    ds = p * (d_o @ vv.transpose(-1, -2) - (d_o * o_r).sum(-1, keepdim=True))
    rounded = (ds * (ki - qi)).sum((0, 2, 3))
    delta = (d_o * (out.detach() - o_r)).sum(-1)
    corrected = exact + torch.autograd.grad(lse, (slopes,), delta)[0]
    rel = lambda a, b: ((a - b).norm() / b.norm()).item()  # noqa: E731
    print(f"rounding O to bf16 moves the slopes' gradient by {rel(rounded, exact):.2e} (relative)")
    print(f"the corrected reference against the backward of the rounded inputs: {rel(corrected, rounded):.1e}")


if __name__ == "__main__":
    main()
