#!/usr/bin/env python3
"""Benchmark of one of CuIR's flash forward kernels against its peers, in one run on one GPU.

bf16, head dim 128, 16k tokens per batch (B = 16384 / N), N = 1k, 2k, 4k, 8k (--n), for the head configurations
Llama2-7B (Hq/Hkv 32/32), Qwen2.5-72B (64/8) and Llama3.1-405B (128/8), full and causal:
  sm90 / sm80 : the kernel under test (--kernel), kernels/<kernel>/flash_fwd.cu through
                libcuir_flash_fwd_<kernel>.so ($CUIR_FLASH_FWD_SM90_LIB / _SM80_LIB, or the build's)
  sm80        : with --kernel sm90, the sm_80 kernel too, unless --no-sm80
  NAME        : --extra-lib NAME=PATH, another build of the kernel under test (a tuning variant)
  flash       : torch SDPA, FLASH_ATTENTION backend (FlashAttention-2)
  cudnn       : torch SDPA, CUDNN_ATTENTION backend
  flex        : FlexAttention, torch.compile'd (block_mask None for full, a causal block mask for causal)
Measured as /work/shared/bench/peer_bench.py measures the peers: inputs [B, H, N, D] contiguous (ours read the
same tensors through strides), triton.testing.do_bench(warmup=25, rep=100, return_mode="median"),
TFLOP/s = 4*B*Hq*N*N*D / time for full, half of that for causal (only unmasked work is counted).
Before timing, each shape's output of the kernel under test (and of every extra build) is compared with SDPA
cuDNN's on the same inputs (max abs difference, printed; a difference over 0.05 is flagged).

usage: python3 tools/gpu/bench_flash_fwd.py --kernel sm80|sm90 [--n 8192] [--configs ...] [--no-flex]
                                            [--no-sm80] [--extra-lib N=P] [--json f] [--md f]
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
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", choices=["sm80", "sm90"], required=True, help="the CuIR kernel under test")
    ap.add_argument("--n", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS))
    ap.add_argument("--no-flex", action="store_true")
    ap.add_argument("--no-sm80", action="store_true", help="with --kernel sm90: do not time the sm_80 kernel")
    ap.add_argument("--json", default=None)
    ap.add_argument("--md", default=None, help="write the markdown table here")
    ap.add_argument("--extra-lib", action="append", default=[], metavar="NAME=PATH",
                    help="also time another build of the kernel under test (a tuning variant) as column NAME")
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

    kernel = args.kernel
    run = {"sm80": flash_fwd_sm80, "sm90": flash_fwd_sm90}
    lib = load_library(kernel=kernel)
    sm80_lib = load_library(kernel="sm80") if kernel == "sm90" and not args.no_sm80 else None
    extra = {name: load_library(path, kernel=kernel) for name, path in (x.split("=", 1) for x in args.extra_lib)}
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
                fns = {}
                for name, build in [(kernel, lib), *extra.items()]:
                    fns[name] = (lambda build=build: run[kernel](q, k, v, causal=causal, out=out, lse=lse,
                                                                 layout="bhnd", lib=build))
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
                    for name in [kernel, *extra]:
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

    table = markdown_table(results, gpu, stamp, kernel, list(extra), sm80_lib is not None)
    print()
    print(table)
    if args.md:
        with open(args.md, "w") as f:
            f.write(table + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": gpu, "torch": torch.__version__, "date": stamp, "rows": results}, f, indent=1)


def markdown_table(results, gpu, stamp, kernel, extra_names, with_sm80):
    ours = [kernel, *extra_names] + (["sm80"] if with_sm80 else [])
    titles = {kernel: f"CuIR {kernel}", "sm80": "CuIR sm80"}
    peers = [("flash", "SDPA flash (FA2)"), ("cudnn", "SDPA cuDNN"), ("flex", "FlexAttention")]
    header = ([titles.get(n, n) for n in ours] + [t for _, t in peers] +
              [f"{kernel} / {t}" for t in ("cuDNN", "FA2", "Flex")])
    lines = [f"TFLOP/s ({gpu}, {stamp}; bf16, d=128, 16k tokens per batch; causal counts half the work of full)",
             "",
             "| config | N | B | mask | " + " | ".join(header) + " |",
             "|---|---|---|---|" + "---|" * len(header)]
    for r in sorted(results, key=lambda r: (list(CONFIGS).index(r["config"]), r["N"], r["causal"])):
        tf = r["tflops"]

        def cell(n):
            return f"{tf[n]:.0f}" if n in tf else "–"

        ratio = lambda a, b: f"{tf[a] / tf[b]:.2f}" if a in tf and b in tf else "–"  # noqa: E731
        cells = [cell(n) for n in ours] + [cell(n) for n, _ in peers] + [
            ratio(kernel, n) for n in ("cudnn", "flash", "flex")]
        lines.append(f"| {r['config']} ({r['Hq']}/{r['Hkv']}) | {r['N']} | {r['B']} | "
                     f"{'causal' if r['causal'] else 'full'} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
