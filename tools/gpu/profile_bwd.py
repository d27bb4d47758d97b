#!/usr/bin/env python3
"""A few launches of one backward configuration, CuIR's and SDPA cuDNN's, for ncu: so that the two kernels'
counters (throughput, L2 hit rates, DRAM bytes, warp stalls) are read on the same inputs. bf16, d = 128,
16k tokens (B = 16384 / N), the heads of bench_bwd.py's configurations.

    ncu --launch-skip 2 --launch-count 1 -k regex:'flash_bwd_sm90_kernel|cudnn|sm90_xmma|fmha' \\
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \\
        python3 tools/gpu/profile_bwd.py --kernel sm90 --config llama3.1-405b --N 8192 --causal --who cuir
    (the same with --who cudnn; its kernel names vary with the cuDNN version: list them first with
     nsys, or ncu --print-summary per-kernel without -k)

Without ncu it prints each side's median time, as bench_bwd.py measures it, for a quick look. With --breakdown,
also each side's GPU kernels (torch.profiler, CUPTI) with their mean time per backward, so that the main kernel
is told apart from the preprocessing and the dQ conversion.
"""
import argparse
import math
import pathlib
import sys

import torch
from torch.nn.attention import SDPBackend

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "python"), str(HERE)]
from bench_bwd import CONFIGS, cuir_call, peer_call, per_call_ms  # noqa: E402
from check_bwd import Backward, load  # noqa: E402


PEERS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "fa2": SDPBackend.FLASH_ATTENTION}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", choices=["sm80", "sm90"], default="sm90")
    ap.add_argument("--lib", default=None, help="default: build/kernels/KERNEL/libcuir_flash_bwd_KERNEL.so")
    ap.add_argument("--config", choices=sorted(CONFIGS), default="llama3.1-405b")
    ap.add_argument("--N", type=int, default=8192)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--who", choices=["cuir", "cudnn", "fa2", "both"], default="both",
                    help="both: CuIR and cuDNN")
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--breakdown", action="store_true", help="per-kernel GPU time of each side (torch.profiler)")
    args = ap.parse_args()
    lib = args.lib or HERE.parents[1] / "build" / "kernels" / args.kernel / f"libcuir_flash_bwd_{args.kernel}.so"
    Hq, Hkv = CONFIGS[args.config]
    d, B = 128, 16384 // args.N
    q = torch.randn(B, Hq, args.N, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k, v = (torch.randn(B, Hkv, args.N, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(2))
    do = torch.randn_like(q)
    fns = {}
    if args.who in ("cuir", "both"):
        bwd = Backward(load(lib, args.kernel), args.kernel)
        fns["cuir"] = cuir_call(bwd, q, k, v, do, args.causal, 1.0 / math.sqrt(d))
    for peer, backend in PEERS.items():
        if args.who == peer or (args.who == "both" and peer == "cudnn"):
            fn = peer_call(backend, q, k, v, do, args.causal)
            if fn is not None:
                fns[peer] = fn
    for name, fn in fns.items():
        for _ in range(args.launches):
            fn()
        torch.cuda.synchronize()
    print(f"{torch.cuda.get_device_name()}: {args.config} N={args.N} B={B} "
          f"{'causal' if args.causal else 'full'}, ms: " +
          ", ".join(f"{name} {per_call_ms(fn):.3f}" for name, fn in fns.items()), flush=True)
    if args.breakdown:
        for name, fn in fns.items():
            print_breakdown(name, fn)


def print_breakdown(name, fn, calls=10):
    """Each GPU kernel that `calls` backwards launch, with its mean time per backward and its share."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    rows = [(e.device_time_total / calls, e.count / calls, e.key) for e in prof.key_averages()
            if e.device_time_total > 0]
    total = sum(r[0] for r in rows)
    print(f"  {name}: {total / 1e3:.3f} ms of kernels per backward", flush=True)
    for us, count, key in sorted(rows, reverse=True):
        print(f"    {us / 1e3:8.3f} ms {100 * us / total:5.1f}%  x{count:g}  {key[:110]}", flush=True)


if __name__ == "__main__":
    main()
