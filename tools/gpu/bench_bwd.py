#!/usr/bin/env python3
"""Backward-pass benchmark of a CuIR backward kernel against SDPA's cuDNN and flash (FA2) backends in the same run,
as ../shared/bench/peer_bwd.py measures the peers: bf16, d = 128, llama2-7b heads (Hq = Hkv = 32), 16k tokens a
batch (B = 16384 / N), N = 2048 and 8192, full and causal. TF/s = 2.5 x 4 B H pairs d / time, pairs = the visible
(query, key) pairs. The CuIR kernel gets the peers' [B, H, N, d] tensors as strided [B, N, H, d] views, with O and
LSE from SDPA's forward; its time is the whole backward (preprocessing, main kernel, dQ conversion).

usage: python3 tools/gpu/bench_bwd.py --kernel sm80|sm90 [--lib path.so] [--N 2048 8192] [--json f] [--md f]
"""
import argparse
import json
import math
import pathlib
import sys

import torch
import torch.nn.functional as F
import triton.testing as tt
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from check_bwd import Backward, load  # noqa: E402


def median_ms(fn):
    return tt.do_bench(fn, warmup=10, rep=60, return_mode="median")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", default="sm80")
    ap.add_argument("--lib", default=None)
    ap.add_argument("--N", type=int, nargs="+", default=[2048, 8192])
    ap.add_argument("--deterministic", action="store_true", help="also time the deterministic mode")
    ap.add_argument("--json", default=None)
    ap.add_argument("--md", default=None)
    args = ap.parse_args()
    root = pathlib.Path(__file__).resolve().parents[2]
    lib_path = args.lib or root / "build" / "kernels" / args.kernel / f"libcuir_flash_bwd_{args.kernel}.so"
    bwd = Backward(load(lib_path, args.kernel), args.kernel)
    H, d = 32, 128
    scale = 1.0 / math.sqrt(d)
    rows = []
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, kernel {args.kernel}", flush=True)
    for N in args.N:
        B = 16384 // N
        q, k, v = (torch.randn(B, H, N, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
        do = torch.randn_like(q)
        for causal in (False, True):
            pairs = N * (N + 1) / 2 if causal else N * N
            tflops = lambda ms: 2.5 * 4 * B * H * pairs * d / ms / 1e9  # noqa: E731
            row = {"N": N, "B": B, "causal": causal}
            for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("fa2", SDPBackend.FLASH_ATTENTION)):
                with sdpa_kernel(backend):
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    row[name] = tflops(median_ms(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True)))
            with torch.no_grad(), sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                o, lse = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, is_causal=causal)[:2]
                lse = lse[..., :N]
            view = lambda t: t.transpose(1, 2)  # noqa: E731 - [B, H, N, d] storage as [B, N, H, d]
            grads = [torch.empty_like(t) for t in (q, k, v)]
            modes = [("cuir", False)] + ([("cuir det", True)] if args.deterministic else [])
            for name, det in modes:
                p = bwd.params(*(view(t) for t in (q.detach(), k.detach(), v.detach(), o, do)), lse.contiguous(),
                               *(view(g) for g in grads), causal, scale, det)
                row[name] = tflops(median_ms(lambda: bwd.launch(p)))
            row["cuir / fa2"] = row["cuir"] / row["fa2"]
            row["cuir / cudnn"] = row["cuir"] / row["cudnn"]
            rows.append(row)
            print(json.dumps({a: (round(b, 3) if isinstance(b, float) else b) for a, b in row.items()}), flush=True)
        del q, k, v, do
        torch.cuda.empty_cache()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.md:
        cols = [c for c in rows[0] if c not in ("N", "B", "causal")]
        lines = ["| N | mask | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
        for r in rows:
            lines.append(f"| {r['N']} | {'causal' if r['causal'] else 'full'} | " +
                         " | ".join(f"{r[c]:.2f}" if "/" in c else f"{r[c]:.0f}" for c in cols) + " |")
        pathlib.Path(args.md).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
