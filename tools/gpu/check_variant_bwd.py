#!/usr/bin/env python3
"""GPU check and benchmark of variants' backward passes: libraries lowered by
`BWD=1 tools/gpu/build_variants.sh` (<dir>/<name>/lib<name>.so, the forward, and lib<name>_bwd.so, the backward
from kernels/sm80/flash_bwd.cu).

1. gradients: the variant's forward gives O and LSE, its backward dQ, dK, dV; compared with torch.autograd on the
   float64 eager variant of tools/gpu/variant_defs.py (fresh random inputs, bf16, d 64 and 128, GQA, Nq != Nkv),
   relative Frobenius error < 2e-2;
2. with --bench: the backward's time against FlexAttention's backward (torch.compile(flex_attention) with its
   block mask) in the same run, bf16, d 128, llama2-7b heads, 16k tokens, N = 2k and 8k.

usage: python3 tools/gpu/check_variant_bwd.py --libs build/variant-libs [--names a,b] [--bench] [--json f]
Exit code 0 iff every gradient check passes.
"""
import argparse
import json
import math
import pathlib
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tools" / "gpu"))
from cuir.variant_lib import load_variant, load_variant_backward  # noqa: E402
import variant_defs  # noqa: E402
from timing import median_ms  # noqa: E402


def rel(a, b):
    return ((a.double() - b).norm() / b.norm().clamp_min(1e-30)).item()


def check(fwd, bwd, name, shape, d, dtype):
    B, Hq, Hkv, Nq, Nkv = shape
    g = torch.Generator(device="cuda").manual_seed(Nq * 31 + Nkv + d)
    q, k, v = (torch.randn(B, H, N, d, generator=g, device="cuda").to(dtype)
               for H, N in ((Hq, Nq), (Hkv, Nkv), (Hkv, Nkv)))
    *_, params = variant_defs.make(name, B, Hq, Nq, Nkv)
    o, lse = fwd(q, k, v, return_lse=True, **params)
    do = torch.randn_like(o)
    dq, dk, dv = bwd(q, k, v, o, do, lse, **params)
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    ref, _ = variant_defs.eager(q64, k64, v64, name, dtype_scores=torch.float64)
    refs = torch.autograd.grad(ref, (q64, k64, v64), do.double())
    errs = {"out": rel(o, ref.detach()), "dq": rel(dq, refs[0]), "dk": rel(dk, refs[1]), "dv": rel(dv, refs[2])}
    ok = all(math.isfinite(e) and e < 2e-2 for e in errs.values())
    print(f"{name:18} {str(dtype)[6:]:8} d={d:3} B{B} H{Hq}/{Hkv} N{Nq}/{Nkv}: " +
          " ".join(f"{k_} {e:.2e}" for k_, e in errs.items()) + f" {'ok' if ok else 'FAIL'}", flush=True)
    return {"variant": name, "dtype": str(dtype), "d": d, "shape": list(shape), **errs, "ok": ok}


def bench(fwd, bwd, name, N):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    H, d, B = 32, 128, 16384 // N
    q, k, v = (torch.randn(B, H, N, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    score_mod, mask_mod, _, params = variant_defs.make(name, B, H, N, N)
    with torch.no_grad():
        o, lse = fwd(q, k, v, return_lse=True, **params)
    do = torch.randn_like(o)
    cuir_ms = median_ms(lambda: bwd(q, k, v, o, do, lse, **params))
    flex = torch.compile(flex_attention)
    bm = create_block_mask(mask_mod, B, H, N, N, device="cuda")
    of = flex(q, k, v, score_mod=score_mod, block_mask=bm)
    flex_ms = median_ms(lambda: torch.autograd.grad(of, (q, k, v), do, retain_graph=True))
    row = {"variant": name, "N": N, "cuir_bwd_ms": cuir_ms, "flex_bwd_ms": flex_ms, "cuir / flex": flex_ms / cuir_ms}
    print(json.dumps({a: (round(b, 3) if isinstance(b, float) else b) for a, b in row.items()}), flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--libs", default=str(ROOT / "build" / "variant-libs"))
    ap.add_argument("--names", default=None)
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    libs = pathlib.Path(args.libs)
    names = args.names.split(",") if args.names else sorted(
        p.name for p in libs.iterdir() if (p / f"lib{p.name}_bwd.so").exists())
    print(torch.cuda.get_device_name(), torch.__version__, "variants:", ",".join(names), flush=True)
    rows, bench_rows = [], []
    shapes = [(2, 4, 2, 300, 517), (1, 6, 1, 640, 256), (2, 8, 8, 1024, 1024)]
    for name in names:
        fwd = load_variant(libs / name / f"lib{name}.so")
        bwd = load_variant_backward(libs / name / f"lib{name}_bwd.so")
        for d in (64, 128):
            for shape in shapes:
                rows.append(check(fwd, bwd, name, shape, d, torch.bfloat16))
        rows.append(check(fwd, bwd, name, shapes[0], 128, torch.float16))
        if args.bench:
            for N in (2048, 8192):
                bench_rows.append(bench(fwd, bwd, name, N))
    bad = sum(not r["ok"] for r in rows)
    if bench_rows:
        geo = math.exp(sum(math.log(r["cuir / flex"]) for r in bench_rows) / len(bench_rows))
        print(f"backward CuIR / FlexAttention: geometric mean {geo:.2f}, min {min(r['cuir / flex'] for r in bench_rows):.2f}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"gradients": rows, "bench": bench_rows}, indent=1))
    print(f"{len(rows) - bad} of {len(rows)} gradient checks passed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
