#!/usr/bin/env python3
"""Benchmark of CuIR's sm_80 flash forward kernel against its peers, in one run on one GPU.

bf16, head dim 128, 16k tokens per batch (B = 16384 / N), N = 1k, 2k, 4k, 8k, for the head configurations
Llama2-7B (Hq/Hkv 32/32), Qwen2.5-72B (64/8) and Llama3.1-405B (128/8), full and causal:
  cuir   : kernels/sm80/flash_fwd.cu through build/kernels/sm80/libcuir_flash_fwd_sm80.so
  flash  : torch SDPA, FLASH_ATTENTION backend (FlashAttention-2)
  cudnn  : torch SDPA, CUDNN_ATTENTION backend
  flex   : FlexAttention, torch.compile'd (block_mask None for full, a causal block mask for causal)
Measured as /work/shared/bench/peer_bench.py measures the peers: inputs [B, H, N, D] contiguous (ours reads
the same tensors through strides), triton.testing.do_bench(warmup=25, rep=100, return_mode="median"),
TFLOP/s = 4*B*Hq*N*N*D / time for full, half of that for causal (only unmasked work is counted).
Before timing, each shape's output is compared with SDPA flash's (max abs difference, printed).

usage: python3 tools/gpu/bench_sm80.py [--n 1024 2048 4096 8192] [--no-flex] [--json f] [--md f]
"""
import argparse
import datetime
import json
import math
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
import triton.testing as tt  # noqa: E402

from cuir.kernel_lib import flash_fwd_sm80  # noqa: E402

CONFIGS = {"llama2-7b": (32, 32), "qwen2.5-72b": (64, 8), "llama3.1-405b": (128, 8)}
D = 128
TOKENS = 16384


def bench(fn):
    return tt.do_bench(fn, warmup=25, rep=100, return_mode="median")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS))
    ap.add_argument("--no-flex", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--md", default=None, help="write the markdown table here")
    ap.add_argument("--extra-lib", action="append", default=[], metavar="NAME=PATH",
                    help="also time another build of the kernel (a tuning variant) as column NAME")
    args = ap.parse_args()

    dev, dt = "cuda", torch.bfloat16
    torch.manual_seed(0)
    flex = None
    if not args.no_flex:
        from torch import _dynamo
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        # Without these, recompiles for new shapes hit the limit and FlexAttention silently runs unfused.
        _dynamo.config.cache_size_limit = 4096
        _dynamo.config.recompile_limit = 4096
        _dynamo.config.accumulated_recompile_limit = 4096
        flex = torch.compile(flex_attention, dynamic=False)

    extra = dict(x.split("=", 1) for x in args.extra_lib)
    gpu = torch.cuda.get_device_name()
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"{gpu}, torch {torch.__version__}, {stamp}", flush=True)
    results = []
    for cname in args.configs:
        Hq, Hkv = CONFIGS[cname]
        for N in args.n:
            B = TOKENS // N
            q = torch.randn(B, Hq, N, D, device=dev, dtype=dt)
            k = torch.randn(B, Hkv, N, D, device=dev, dtype=dt)
            v = torch.randn(B, Hkv, N, D, device=dev, dtype=dt)
            out = torch.empty_like(q)
            lse = torch.empty(B, Hq, N, device=dev, dtype=torch.float32)
            flops_full = 4 * B * Hq * N * N * D
            for causal in (False, True):
                flops = flops_full / 2 if causal else flops_full
                row = {"config": cname, "Hq": Hq, "Hkv": Hkv, "N": N, "B": B, "causal": causal, "ms": {},
                       "tflops": {}}
                fns = {
                    "cuir": lambda: flash_fwd_sm80(q, k, v, causal=causal, out=out, lse=lse, layout="bhnd"),
                    "flash": lambda: _sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal),
                    "cudnn": lambda: _sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal),
                }
                for name, path in extra.items():
                    fns[name] = (lambda path=path: flash_fwd_sm80(q, k, v, causal=causal, out=out, lse=lse,
                                                                  layout="bhnd", lib=path))
                if flex is not None:
                    if causal:
                        bm = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, N, N, device=dev)
                        fns["flex"] = lambda: flex(q, k, v, block_mask=bm, enable_gqa=True)
                    else:
                        fns["flex"] = lambda: flex(q, k, v, enable_gqa=True)
                # Agreement with SDPA flash on these very inputs.
                try:
                    ref = fns["flash"]()
                    fns["cuir"]()
                    torch.cuda.synchronize()
                    row["max_abs_vs_flash"] = (out.float() - ref.float()).abs().max().item()
                    del ref
                except Exception as e:  # noqa: BLE001
                    row["max_abs_vs_flash"] = f"err {type(e).__name__}: {e}"
                for name, fn in fns.items():
                    try:
                        t0 = time.time()
                        ms = bench(fn)
                        row["ms"][name] = ms
                        row["tflops"][name] = flops / ms / 1e9
                        row.setdefault("bench_s", {})[name] = round(time.time() - t0, 1)
                    except Exception as e:  # noqa: BLE001
                        row["ms"][name] = f"err {type(e).__name__}: {str(e)[:100]}"
                results.append(row)
                tf = row["tflops"]
                print(f"{cname:14s} N={N:5d} B={B:2d} {'causal' if causal else 'full  '} " +
                      " ".join(f"{n}={tf[n]:6.1f}" if n in tf else f"{n}=  err " for n in fns) +
                      f"  |cuir-flash|max={row['max_abs_vs_flash'] if isinstance(row['max_abs_vs_flash'], str) else round(row['max_abs_vs_flash'], 4)}",
                      flush=True)
            del q, k, v, out, lse
            torch.cuda.empty_cache()

    table = markdown_table(results, gpu, stamp)
    print()
    print(table)
    if args.md:
        with open(args.md, "w") as f:
            f.write(table + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": gpu, "torch": torch.__version__, "date": stamp, "rows": results}, f, indent=1)


def _sdpa(backend, q, k, v, causal):
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)


def markdown_table(results, gpu, stamp):
    lines = [f"TFLOP/s ({gpu}, {stamp}; bf16, d=128, 16k tokens per batch; causal counts half the work of full)",
             "",
             "| config | N | B | mask | CuIR sm80 | SDPA flash (FA2) | SDPA cuDNN | FlexAttention | CuIR / FA2 | CuIR / cuDNN |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(results, key=lambda r: (list(CONFIGS).index(r["config"]), r["N"], r["causal"])):
        tf = r["tflops"]

        def cell(n):
            return f"{tf[n]:.0f}" if n in tf else "–"

        ratio = lambda a, b: f"{tf[a] / tf[b]:.2f}" if a in tf and b in tf else "–"  # noqa: E731
        lines.append(f"| {r['config']} ({r['Hq']}/{r['Hkv']}) | {r['N']} | {r['B']} | "
                     f"{'causal' if r['causal'] else 'full'} | {cell('cuir')} | {cell('flash')} | {cell('cudnn')} | "
                     f"{cell('flex')} | {ratio('cuir', 'flash')} | {ratio('cuir', 'cudnn')} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
