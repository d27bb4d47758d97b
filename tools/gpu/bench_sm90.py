#!/usr/bin/env python3
"""Benchmark of CuIR's sm_90 flash forward kernel against its peers and the sm_80 kernel, in one run on one GPU.

bf16, head dim 128, 16k tokens per batch (B = 16384 / N), N = 1k, 2k, 4k, 8k (--n), for the head configurations
Llama2-7B (Hq/Hkv 32/32), Qwen2.5-72B (64/8) and Llama3.1-405B (128/8), full and causal:
  sm90   : kernels/sm90/flash_fwd.cu through libcuir_flash_fwd_sm90.so ($CUIR_FLASH_FWD_SM90_LIB or the build's)
  sm80   : kernels/sm80/flash_fwd.cu through libcuir_flash_fwd_sm80.so ($CUIR_FLASH_FWD_SM80_LIB or the build's)
  flash  : torch SDPA, FLASH_ATTENTION backend (FlashAttention-2)
  cudnn  : torch SDPA, CUDNN_ATTENTION backend
  flex   : FlexAttention, torch.compile'd (block_mask None for full, a causal block mask for causal)
  NAME   : --extra-lib NAME=PATH, another build of the sm_90 kernel (a tuning variant)
Measured as /work/shared/bench/peer_bench.py measures the peers: inputs [B, H, N, D] contiguous (ours read the
same tensors through strides), triton.testing.do_bench(warmup=25, rep=100, return_mode="median"),
TFLOP/s = 4*B*Hq*N*N*D / time for full, half of that for causal (only unmasked work is counted).
Before timing, each shape's sm_90 output (and every variant's) is compared with SDPA cuDNN's on the same inputs
(max abs difference, printed; a difference over 0.05 is flagged).

usage: python3 tools/gpu/bench_sm90.py [--n 8192] [--configs ...] [--no-flex] [--no-sm80] [--extra-lib N=P]
                                       [--json f] [--md f]
"""
import argparse
import datetime
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
import triton.testing as tt  # noqa: E402

from cuir.kernel_lib import flash_fwd_sm80, flash_fwd_sm90, load_library  # noqa: E402

CONFIGS = {"llama2-7b": (32, 32), "qwen2.5-72b": (64, 8), "llama3.1-405b": (128, 8)}
D = 128
TOKENS = 16384


def bench(fn):
    return tt.do_bench(fn, warmup=25, rep=100, return_mode="median")


def _sdpa(backend, q, k, v, causal):
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS))
    ap.add_argument("--no-flex", action="store_true")
    ap.add_argument("--no-sm80", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--md", default=None, help="write the markdown table here")
    ap.add_argument("--extra-lib", action="append", default=[], metavar="NAME=PATH",
                    help="also time another build of the sm_90 kernel (a tuning variant) as column NAME")
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

    sm90_lib = load_library(kernel="sm90")
    sm80_lib = None if args.no_sm80 else load_library(kernel="sm80")
    extra = {name: load_library(path, kernel="sm90") for name, path in (x.split("=", 1) for x in args.extra_lib)}
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
                       "tflops": {}, "max_abs_vs_cudnn": {}}
                fns = {"sm90": lambda: flash_fwd_sm90(q, k, v, causal=causal, out=out, lse=lse, layout="bhnd",
                                                      lib=sm90_lib)}
                for name, lib in extra.items():
                    fns[name] = (lambda lib=lib: flash_fwd_sm90(q, k, v, causal=causal, out=out, lse=lse,
                                                                layout="bhnd", lib=lib))
                if sm80_lib is not None:
                    fns["sm80"] = lambda: flash_fwd_sm80(q, k, v, causal=causal, out=out, lse=lse, layout="bhnd",
                                                         lib=sm80_lib)
                fns["flash"] = lambda: _sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal)
                fns["cudnn"] = lambda: _sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal)
                if flex is not None:
                    if causal:
                        bm = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, N, N, device=dev)
                        fns["flex"] = lambda: flex(q, k, v, block_mask=bm, enable_gqa=True)
                    else:
                        fns["flex"] = lambda: flex(q, k, v, enable_gqa=True)
                # Agreement with SDPA cuDNN on these very inputs (ours write `out`).
                try:
                    ref = fns["cudnn"]().float()
                    for name in ["sm90", *extra]:
                        out.fill_(float("nan"))
                        fns[name]()
                        torch.cuda.synchronize()
                        diff = (out.float() - ref).abs().max().item()
                        row["max_abs_vs_cudnn"][name] = diff if diff == diff else float("inf")
                    del ref
                except Exception as e:  # noqa: BLE001
                    row["max_abs_vs_cudnn"]["error"] = f"{type(e).__name__}: {e}"
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
                diffs = row["max_abs_vs_cudnn"]
                flag = " MISMATCH" if any(isinstance(x, float) and x > 0.05 for x in diffs.values()) else ""
                print(f"{cname:14s} N={N:5d} B={B:2d} {'causal' if causal else 'full  '} " +
                      " ".join(f"{n}={tf[n]:6.1f}" if n in tf else f"{n}=  err " for n in fns) +
                      "  |x-cudnn|max " + " ".join(f"{n}={x:.4f}" if isinstance(x, float) else f"{n}={x}"
                                                   for n, x in diffs.items()) + flag, flush=True)
            del q, k, v, out, lse
            torch.cuda.empty_cache()

    table = markdown_table(results, gpu, stamp, list(extra))
    print()
    print(table)
    if args.md:
        with open(args.md, "w") as f:
            f.write(table + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": gpu, "torch": torch.__version__, "date": stamp, "rows": results}, f, indent=1)


def markdown_table(results, gpu, stamp, extra_names):
    extra_hdr = "".join(f" {n} |" for n in extra_names)
    lines = [f"TFLOP/s ({gpu}, {stamp}; bf16, d=128, 16k tokens per batch; causal counts half the work of full)",
             "",
             "| config | N | B | mask | CuIR sm90 |" + extra_hdr +
             " CuIR sm80 | SDPA flash (FA2) | SDPA cuDNN | FlexAttention | sm90 / cuDNN | sm90 / FA2 | sm90 / Flex |",
             "|---|---|---|---|---|" + "---|" * len(extra_names) + "---|---|---|---|---|---|---|"]
    for r in sorted(results, key=lambda r: (list(CONFIGS).index(r["config"]), r["N"], r["causal"])):
        tf = r["tflops"]

        def cell(n):
            return f"{tf[n]:.0f}" if n in tf else "–"

        ratio = lambda a, b: f"{tf[a] / tf[b]:.2f}" if a in tf and b in tf else "–"  # noqa: E731
        lines.append(f"| {r['config']} ({r['Hq']}/{r['Hkv']}) | {r['N']} | {r['B']} | "
                     f"{'causal' if r['causal'] else 'full'} | {cell('sm90')} |" +
                     "".join(f" {cell(n)} |" for n in extra_names) +
                     f" {cell('sm80')} | {cell('flash')} | {cell('cudnn')} | {cell('flex')} | "
                     f"{ratio('sm90', 'cudnn')} | {ratio('sm90', 'flash')} | {ratio('sm90', 'flex')} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
