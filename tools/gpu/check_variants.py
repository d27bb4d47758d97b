#!/usr/bin/env python3
"""GPU validation and benchmark of the variant kernels CuIR built
(tools/gpu/build_variants.sh, carried as build/variants).

    python3 tools/gpu/check_variants.py check            # correctness vs float64
    python3 tools/gpu/check_variants.py bench [--flex-n 8192 ...]
Prints tables; --json writes the numbers. $CUIR_KERNEL (sm80, sm90) names the
kernel the variants were built on: the bench's base kernel.
"""
import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cuir.kernel_lib import flash_fwd_sm80, flash_fwd_sm90  # noqa: E402
from cuir.variant_lib import load_variant  # noqa: E402
import variant_defs as vd  # noqa: E402

VARIANTS = Path(os.environ.get("CUIR_VARIANTS_DIR", ROOT / "build" / "variants"))
BASE = {"sm80": flash_fwd_sm80, "sm90": flash_fwd_sm90}[os.environ.get("CUIR_KERNEL", "sm80")]


def kernel(name):
    return load_variant(VARIANTS / name / f"lib{name}.so")


def rel(a, b):
    return ((a.double() - b.double()).norm() / b.double().norm().clamp_min(1e-30)).item()


def check(args):
    shapes = [(2, 4, 2, 1000, 1000, 128, torch.bfloat16), (1, 8, 1, 257, 1500, 128, torch.bfloat16),
              (2, 2, 2, 700, 300, 64, torch.float16), (1, 4, 4, 1, 513, 128, torch.bfloat16)]
    bad, rows = 0, []
    print(f"{'variant':18} {'shape':34} {'rel err':>9} {'lse err':>9}  ok")
    for name in vd.SPECS:
        attn = kernel(name)
        for B, Hq, Hkv, Nq, Nkv, d, dt in shapes:
            torch.manual_seed(hash((name, Nq, Nkv)) % 2**31)
            q = torch.randn(B, Hq, Nq, d, device="cuda", dtype=dt)
            k = torch.randn(B, Hkv, Nkv, d, device="cuda", dtype=dt)
            v = torch.randn(B, Hkv, Nkv, d, device="cuda", dtype=dt)
            _, _, sigmoid, params = vd.make(name, B, Hq, Nq, Nkv)
            out = torch.full_like(q, float("nan"))
            out, lse = attn(q, k, v, out=out, return_lse=True, **params)
            torch.cuda.synchronize()
            ref, ref_lse = vd.eager(q, k, v, name, dtype_scores=torch.float64)
            err = rel(out, ref) if ref.norm() > 0 else out.abs().max().item()
            lse_err = 0.0
            if lse is not None and ref_lse is not None:
                fin = torch.isfinite(ref_lse)
                lse_err = (lse[fin].double() - ref_lse[fin]).abs().max().item() if fin.any() else 0.0
            ok = bool(torch.isfinite(out).all()) and err < 1e-2 and lse_err < 1e-2
            bad += not ok
            shape = f"B{B} H{Hq}/{Hkv} N{Nq}/{Nkv} d{d} {str(dt)[6:]}"
            rows.append({"variant": name, "shape": shape, "rel_err": err, "lse_err": lse_err, "ok": ok})
            print(f"{name:18} {shape:34} {err:9.2e} {lse_err:9.2e}  {'ok' if ok else 'FAIL'}", flush=True)
    print(f"{len(rows) - bad}/{len(rows)} passed")
    return rows, bad == 0


def bench(args):
    from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: F401
    import triton.testing as tt
    flex = None
    if args.flex_n:
        from torch import _dynamo  # not "import torch._dynamo": that makes torch local to bench()
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        _dynamo.config.cache_size_limit = 4096
        _dynamo.config.recompile_limit = 4096
        _dynamo.config.accumulated_recompile_limit = 4096
        flex = torch.compile(flex_attention, dynamic=False)
    med = lambda fn: tt.do_bench(fn, warmup=25, rep=100, return_mode="median")  # noqa: E731
    configs = {"llama2-7b": (32, 32), "qwen2.5-72b": (64, 8), "llama3.1-405b": (128, 8)}
    rows = []
    names = [n for n in vd.SPECS if n not in ("global_window", "document")]
    missing = [n for n in names if not (VARIANTS / n / f"lib{n}.so").exists()]
    if missing:
        print(f"not built in {VARIANTS}, not timed: {', '.join(missing)}", flush=True)
    names = [n for n in names if n not in missing]
    kernels = {n: kernel(n) for n in names}
    for cname, (Hq, Hkv) in configs.items():
        for N in args.n:
            B, d = 16384 // N, 128
            q = torch.randn(B, Hq, N, d, device="cuda", dtype=torch.bfloat16)
            k = torch.randn(B, Hkv, N, d, device="cuda", dtype=torch.bfloat16)
            v = torch.randn(B, Hkv, N, d, device="cuda", dtype=torch.bfloat16)
            base_full = med(lambda: BASE(q, k, v, causal=False, layout="bhnd", return_lse=False))
            base_causal = med(lambda: BASE(q, k, v, causal=True, layout="bhnd", return_lse=False))
            pairs_causal = N * (N + 1) / 2
            tf = lambda ms, pairs: 4 * B * Hq * pairs * d / ms / 1e9  # noqa: E731
            rows.append({"config": cname, "N": N, "variant": "base full", "ms": base_full,
                         "tflops": tf(base_full, N * N)})
            rows.append({"config": cname, "N": N, "variant": "base causal", "ms": base_causal,
                         "tflops": tf(base_causal, pairs_causal)})
            for name in names:
                score_mod, mask_mod, sigmoid, params = vd.make(name, B, Hq, N, N)
                m = vd.dense_mask(mask_mod, 1, 1, N, N)
                pairs = m.sum().item()
                attn = kernels[name]
                ms = med(lambda: attn(q, k, v, **params))
                row = {"config": cname, "N": N, "variant": name, "ms": ms, "tflops": tf(ms, pairs),
                       "vs_base_causal": base_causal / ms * (pairs / pairs_causal)}
                if flex is not None and N in args.flex_n and name not in vd.NO_FLEX and cname == "llama2-7b":
                    try:
                        bm = create_block_mask(mask_mod, None, None, N, N, device="cuda")
                        sm = score_mod if name in ("softcap_causal", "alibi_causal", "prefixlm_softcap") else None
                        fms = med(lambda: flex(q, k, v, score_mod=sm, block_mask=bm, enable_gqa=True))
                        row["flex_ms"], row["flex_tflops"] = fms, tf(fms, pairs)
                        row["vs_flex"] = fms / ms
                    except Exception as e:  # report, do not hide
                        row["flex_error"] = f"{type(e).__name__}: {str(e)[:100]}"
                if N in args.eager_n and cname == "llama2-7b":
                    ems = med(lambda: vd.eager(q, k, v, name))
                    row["eager_ms"], row["vs_eager"] = ems, ems / ms
                rows.append(row)
                print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}),
                      flush=True)
            del q, k, v
            torch.cuda.empty_cache()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["check", "bench"])
    ap.add_argument("--n", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    ap.add_argument("--flex-n", type=int, nargs="*", default=[8192])
    ap.add_argument("--eager-n", type=int, nargs="*", default=[2048])
    ap.add_argument("--json")
    args = ap.parse_args()
    print(torch.cuda.get_device_name(), torch.__version__, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    if args.mode == "check":
        rows, ok = check(args)
    else:
        rows, ok = bench(args), True
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
