#!/usr/bin/env python3
"""Backward-pass speed of a CuIR backward kernel against SDPA cuDNN and SDPA flash (FA2) backward, in the same
run, as ../shared/bench/peer_bwd.py measures the peers: bf16, d = 128, llama2-7b heads (Hq = Hkv = 32), 16k
tokens a batch (B = 16384 / N), N = 2048 and 8192, full and causal; medians of triton.testing.do_bench;
TF/s = 2.5 x 4 B H pairs d / time over the visible (query, key) pairs.

The tensors are the peers' [B, H, N, d] ones; the kernel reads them as strided [B, N, H, d] views. O and LSE come
from SDPA's flash forward. CuIR's time covers its three kernels (preprocess, main, dQ conversion).

usage: python3 tools/gpu/bench_bwd.py --lib build/kernels/sm90/libcuir_flash_bwd_sm90.so --kernel sm90 [--json f]
"""
import argparse
import json
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import triton.testing as tt  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from bwd_lib import Backward, load  # noqa: E402


def med(fn):
    return tt.do_bench(fn, warmup=10, rep=60, return_mode="median")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--kernel", choices=("sm80", "sm90"), required=True)
    ap.add_argument("--json")
    ap.add_argument("--deterministic", action="store_true", help="also time the deterministic mode")
    args = ap.parse_args()
    lib = load(pathlib.Path(args.lib).resolve(), args.kernel)
    H, d = 32, 128
    scale = 1.0 / math.sqrt(d)
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    print(f"{'N':>5} {'mask':6} {'cuir':>7} {'cuir det':>8} {'cudnn':>7} {'fa2':>7}   TF/s (backward)", flush=True)
    for N in (2048, 8192):
        B = 16384 // N
        q, k, v = (torch.randn(B, H, N, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
        do = torch.randn_like(q)
        for causal in (False, True):
            pairs = N * (N + 1) / 2 if causal else N * N
            tfs = lambda ms: 2.5 * 4 * B * H * pairs * d / ms / 1e9
            row = {}
            for name, be in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("fa2", SDPBackend.FLASH_ATTENTION)):
                with sdpa_kernel(be):
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    row[name] = tfs(med(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True)))
            with torch.no_grad():
                o, lse = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False,
                                                                            scale=scale)[:2]
            grads = [torch.empty_like(t) for t in (q, k, v)]
            view = lambda t: t.detach().transpose(1, 2)
            for det in (False, True) if args.deterministic else (False,):
                call = Backward(lib, args.kernel, view(q), view(k), view(v), view(o), view(do), lse.contiguous(),
                                *(view(g) for g in grads), scale, causal, det)
                assert call() == 0
                row["cuir det" if det else "cuir"] = tfs(med(call))
            results[f"N{N} {'causal' if causal else 'full'}"] = row
            print(f"{N:>5} {'causal' if causal else 'full':6} {row['cuir']:7.1f} {row.get('cuir det', float('nan')):8.1f} "
                  f"{row['cudnn']:7.1f} {row['fa2']:7.1f}", flush=True)
        del q, k, v, do
        torch.cuda.empty_cache()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
