#!/usr/bin/env python3
"""Interleaved A/B timing of two builds of one flash forward kernel (a change to kernels/<kernel>/flash_fwd.cu
against the build before it), on the shapes of bench_flash_fwd.py (bf16, d 128, 16k tokens a batch).

Each round times every build on every shape once (triton's do_bench median), the builds alternating within a
shape so that clocks and temperature drift affect both alike; the table gives, per shape, each build's median
TFLOP/s over the rounds and the range of the per-round ratio B / A. The outputs of the two builds are compared
first (max |B - A|, printed).

usage: python3 tools/gpu/ab_flash_fwd.py --kernel sm90|sm80 A=lib_a.so B=lib_b.so [--rounds 5] [--n 2048 8192]
                                         [--configs ...] [--json f]
"""
import argparse
import json
import pathlib
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import torch  # noqa: E402
import triton.testing as tt  # noqa: E402

from bench_flash_fwd import CONFIGS, D, TOKENS  # noqa: E402
from cuir.kernel_lib import flash_fwd_sm80, flash_fwd_sm90, load_library  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", choices=["sm80", "sm90"], required=True)
    ap.add_argument("builds", nargs=2, metavar="NAME=PATH")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n", type=int, nargs="+", default=[2048, 8192])
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS))
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    run = flash_fwd_sm90 if args.kernel == "sm90" else flash_fwd_sm80
    builds = {name: load_library(path, kernel=args.kernel) for name, path in (b.split("=", 1) for b in args.builds)}
    (a, b) = builds
    torch.manual_seed(0)
    shapes = []
    for cname in args.configs:
        Hq, Hkv = CONFIGS[cname]
        for N in args.n:
            B = TOKENS // N
            qkv = [torch.randn(B, h, N, D, device="cuda", dtype=torch.bfloat16) for h in (Hq, Hkv, Hkv)]
            for causal in (False, True):
                flops = 4 * B * Hq * N * N * D / (2 if causal else 1)
                shapes.append(dict(config=cname, N=N, causal=causal, flops=flops, qkv=qkv,
                                   out={n: torch.empty_like(qkv[0]) for n in builds},
                                   lse=torch.empty(B, Hq, N, device="cuda", dtype=torch.float32)))
    for s in shapes:
        for n, lib in builds.items():
            run(*s["qkv"], causal=s["causal"], out=s["out"][n], lse=s["lse"], layout="bhnd", lib=lib)
        s["max_diff"] = (s["out"][a].float() - s["out"][b].float()).abs().max().item()
        s["tflops"] = {n: [] for n in builds}
    print(f"{torch.cuda.get_device_name()}, {args.kernel}, {args.rounds} rounds", flush=True)
    for r in range(args.rounds):
        for s in shapes:
            order = list(builds) if r % 2 == 0 else list(reversed(builds))
            for n in order:
                fn = (lambda lib=builds[n], s=s, n=n: run(*s["qkv"], causal=s["causal"], out=s["out"][n],
                                                          lse=s["lse"], layout="bhnd", lib=lib))
                ms = tt.do_bench(fn, warmup=25, rep=100, return_mode="median")
                s["tflops"][n].append(s["flops"] / ms / 1e9)
        print(f"round {r + 1} done", flush=True)
    print(f"\n| config | N | mask | {a} TF/s | {b} TF/s | {b} / {a} (median, range) | max abs diff |")
    print("|---|---|---|---|---|---|---|")
    ratios = []
    for s in shapes:
        ta, tb = s["tflops"][a], s["tflops"][b]
        per_round = [y / x for x, y in zip(ta, tb)]
        ratios.append(statistics.median(per_round))
        print(f"| {s['config']} | {s['N']} | {'causal' if s['causal'] else 'full'} | {statistics.median(ta):.0f} | "
              f"{statistics.median(tb):.0f} | {statistics.median(per_round):.3f} ({min(per_round):.3f}-"
              f"{max(per_round):.3f}) | {s['max_diff']:.2e} |")
    geo = statistics.geometric_mean(ratios)
    print(f"\ngeometric mean of the per-shape median ratios {b} / {a}: {geo:.3f}")
    if args.json:
        rows = [{k: v for k, v in s.items() if k not in ("qkv", "out", "lse")} for s in shapes]
        pathlib.Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(), "rows": rows,
                                                       "geomean": geo}, indent=1))


if __name__ == "__main__":
    main()
