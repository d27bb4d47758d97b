#!/usr/bin/env python3
"""Backward-pass speed of a CuIR backward kernel against SDPA cuDNN and SDPA flash (FA2) backward, in the same
run, as ../shared/bench/peer_bwd.py measures the peers: bf16, d = 128, llama2-7b heads (Hq = Hkv = 32), 16k
tokens a batch (B = 16384 / N), N = 2048 and 8192, full and causal; medians of triton.testing.do_bench;
TF/s = 2.5 x 4 B H pairs d / time over the visible (query, key) pairs.

The tensors are the peers' [B, H, N, d] ones; the kernel reads them as strided [B, N, H, d] views. O and LSE come
from SDPA's flash forward. CuIR's time covers its three kernels (preprocess, main, dQ conversion).

usage: python3 tools/gpu/bench_bwd.py --lib build/kernels/sm90/libcuir_flash_bwd_sm90.so --kernel sm90
           [--lib other.so ...] [--deterministic] [--json f]
(several --lib: variants of the kernel timed on the same inputs, labelled by file name; the first is "cuir")
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
    ap.add_argument("--lib", required=True, action="append")
    ap.add_argument("--kernel", choices=("sm80", "sm90"), required=True)
    ap.add_argument("--json")
    ap.add_argument("--deterministic", action="store_true", help="also time the deterministic mode")
    args = ap.parse_args()
    libs = {("cuir" if n == 0 else pathlib.Path(path).stem): load(pathlib.Path(path).resolve(), args.kernel)
            for n, path in enumerate(args.lib)}
    H, d = 32, 128
    scale = 1.0 / math.sqrt(d)
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    names = list(libs) + (["cuir det"] if args.deterministic else []) + ["cudnn", "fa2"]
    print(f"{'N':>5} {'mask':6} " + " ".join(f"{n:>12}" for n in names) + "   TF/s (backward)", flush=True)
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
            runs = [(name, lib, False) for name, lib in libs.items()]
            runs += [("cuir det", libs["cuir"], True)] if args.deterministic else []
            for name, lib, det in runs:
                call = Backward(lib, args.kernel, view(q), view(k), view(v), view(o), view(do), lse.contiguous(),
                                *(view(g) for g in grads), scale, causal, det)
                assert call() == 0
                row[name] = tfs(med(call))
            results[f"N{N} {'causal' if causal else 'full'}"] = row
            print(f"{N:>5} {'causal' if causal else 'full':6} " + " ".join(f"{row[n]:12.1f}" for n in names),
                  flush=True)
        del q, k, v, do
        torch.cuda.empty_cache()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
