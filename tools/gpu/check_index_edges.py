#!/usr/bin/env python3
"""The built-in global tokens + window at parameters near the ends of i32, on the GPU, against float64.

window_right = 2^31 - 1 means "no right edge" and window_left = 2^31 - 1 "no left edge": the window's edges
q + Nkv - Nq -/+ window_* then pass a C++ int, which the lowering computes at 64 bits (docs/Lowering.md,
"C++ forms of the variant's ops"). Each library of a bench_block_sparse.py staging named global_window runs
with and without its runtime block mask at a ragged and a GQA shape, bf16.

  PYTHONPATH=python python3 tools/gpu/check_index_edges.py STAGED_DIR [--kernels sm90,sm80]
"""
import argparse
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_block_sparse import D, Library, _libraries, _reference  # noqa: E402

I32_MAX, I32_MIN = 2**31 - 1, -2**31
# (global_tokens, window_left, window_right)
EDGES = [(64, 256, I32_MAX), (64, I32_MAX, 0), (0, I32_MAX, I32_MAX), (0, I32_MIN, I32_MAX),
         (64, -5, 300), (I32_MAX, 0, 0), (0, 3, I32_MIN)]


def mask_for(glob, left, right):
    def mask_mod(b, h, q, kv):
        diag = q.long()  # Nq = Nkv; Python's ints: no wrap
        return (kv < glob) | (diag < glob) | ((kv >= diag - left) & (kv <= diag + right))
    return mask_mod


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=pathlib.Path)
    ap.add_argument("--kernels", default="sm90")
    args = ap.parse_args()
    bad = runs = 0
    for kernel in args.kernels.split(","):
        for (name, dense), path in sorted(_libraries(args.root, kernel).items()):
            if name != "global_window":
                continue
            lib = Library(path, False)
            for B, Hq, Hkv, N in ((2, 4, 4, 1000), (1, 8, 2, 777)):
                g = torch.Generator(device="cuda").manual_seed(3)
                q, k, v = (torch.randn(B, H, N, D, generator=g, device="cuda").to(torch.bfloat16)
                           for H in (Hq, Hkv, Hkv))
                for glob, left, right in EDGES:
                    params = {"global_tokens": glob, "window_left": left, "window_right": right}
                    ref = _reference(q, k, v, None, mask_for(glob, left, right))
                    for with_mask in (False, True) if not dense else (False,):
                        bm = lib.block_mask(B, Hq, N, params) if with_mask else None
                        out = lib(q, k, v, params, bm)
                        err = ((out.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()
                        ok = bool(torch.isfinite(out).all()) and err < 1e-2
                        runs += 1
                        bad += not ok
                        print(f"edges {kernel} {name}{' dense' if dense else ''} B{B} H{Hq}/{Hkv} N{N} "
                              f"global {glob} left {left} right {right}{' (block mask)' if bm else ''}: "
                              f"{err:.2e} {'ok' if ok else 'FAIL'}", flush=True)
    print(f"{runs - bad} of {runs} runs match float64")
    return 1 if bad or not runs else 0


if __name__ == "__main__":
    sys.exit(main())
