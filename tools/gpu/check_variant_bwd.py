#!/usr/bin/env python3
"""GPU check and benchmark of variants' backward passes: libraries lowered by
`BWD=1 tools/gpu/build_variants.sh` (<dir>/<name>/lib<name>.so, the forward, and lib<name>_bwd.so, the backward
from kernels/sm80/flash_bwd.cu; with KERNEL=sm90, both from the sm90 kernels, staged in build/variant-libs-sm90).

1. gradients: the variant's forward gives O and LSE, its backward dQ, dK, dV; compared with torch.autograd on the
   float64 eager variant of tools/gpu/variant_defs.py (fresh random inputs, bf16, d 64 and 128, GQA, Nq != Nkv),
   relative Frobenius error < 2e-2;
2. through autograd: cuir.TrainableVariant (what cuir.compile(..., backward=True) returns) in torch.autograd.grad
   gives the same gradients; with --train NAME, a tiny transformer trained --steps steps with the variant NAME
   through CuIR and through FlexAttention (same initialisation and data): the loss curves agree (last-50 mean);
3. with --compile: torch.compile(fullgraph=True) of a tiny attention model (projections, a TrainableVariant
   with the variant's tensors as its captured values, and its block mask where it has one, passed in and
   computed in the op) forward and backward: no graph break (the variant's custom ops, torch >= 2.4), the
   loss and the gradients of the input and every weight against eager's, max relative error < 1e-2 (the
   compiled projections round differently in bf16; dQ's float atomics vary between runs);
4. with --bench: the backward's time against FlexAttention's backward (torch.compile(flex_attention) with its
   block mask) in the same run, bf16, d 128, llama2-7b heads, 16k tokens, N = 2k and 8k; both block masks
   computed once (cuir_bwd_ms), ours also in every call (cuir_bwd_mask_each_call_ms).

5. with --trainable: ALiBi's slopes as a trained tensor (requires_grad) through TrainableVariant: their gradient,
   accumulated by the backward kernel in fp32, and dq, dk, dv against float64 autograd.

usage: python3 tools/gpu/check_variant_bwd.py --libs build/variant-libs [--names a,b] [--compile] [--bench]
       [--train NAME] [--steps 300] [--trainable] [--sanitize] [--json f]
--sanitize: two small shapes, no autograd check (run it under compute-sanitizer).
Exit code 0 iff every gradient check (and the compile and training checks) passes.
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
from cuir.autograd_variant import TrainableVariant  # noqa: E402
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


def check_autograd(fwd, bwd, name):
    """The autograd path equals the direct calls (same kernels): O, dK and dV bitwise; dQ, summed with float
    atomics in an order that varies between runs, to 1e-3."""
    B, Hq, Hkv, Nq, Nkv, d = 2, 4, 2, 300, 517, 128
    q = torch.randn(B, Hq, Nq, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k, v = (torch.randn(B, Hkv, Nkv, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(2))
    *_, params = variant_defs.make(name, B, Hq, Nq, Nkv)
    out = TrainableVariant(fwd, bwd)(q, k, v, **params)
    do = torch.randn_like(out)
    got = torch.autograd.grad(out, (q, k, v), do)
    o, lse = fwd(q.detach(), k.detach(), v.detach(), return_lse=True, **params)
    want = bwd(q.detach(), k.detach(), v.detach(), o, do, lse, **params)
    same = (torch.equal(out, o) and torch.equal(got[1], want[1]) and torch.equal(got[2], want[2]) and
            rel(got[0], want[0].double()) < 1e-3)
    print(f"{name:18} autograd.grad through TrainableVariant: {'the same' if same else 'DIFFERENT'} gradients as "
          f"the direct calls: {'ok' if same else 'FAIL'}", flush=True)
    return same


class TinyAttention(torch.nn.Module):
    """x [B, N, dim] -> x + proj(attend(q, k, v)): q from Hq heads, k and v from Hkv (GQA), all bf16."""

    def __init__(self, attend, dim, Hq, Hkv, d, params, block_mask=None):
        super().__init__()
        self.attend, self.params, self.block_mask = attend, params, block_mask
        self.Hq, self.Hkv, self.d = Hq, Hkv, d
        self.q, self.kv, self.proj = (torch.nn.Linear(dim, Hq * d), torch.nn.Linear(dim, 2 * Hkv * d),
                                      torch.nn.Linear(Hq * d, dim))

    def forward(self, x):
        B, N, _ = x.shape
        q = self.q(x).view(B, N, self.Hq, self.d).transpose(1, 2)  # not contiguous: the op's wrapper copies
        k, v = self.kv(x).view(B, N, 2, self.Hkv, self.d).permute(2, 0, 3, 1, 4)
        extra = {"block_mask": self.block_mask} if self.block_mask is not None else {}
        a = self.attend(q, k, v, **self.params, **extra)
        return x + self.proj(a.transpose(1, 2).reshape(B, N, self.Hq * self.d))


def check_compile(fwd, bwd, name, tol=1e-2):
    """torch.compile(model, fullgraph=True) (a graph break fails) of TinyAttention on a TrainableVariant, forward
    and backward, against eager: the relative error of the loss and of the gradients of x and every weight."""
    import torch._dynamo
    B, Hq, Hkv, N, d, dim = 2, 4, 2, 384, 64, 256
    *_, params = variant_defs.make(name, B, Hq, N, N)
    # tensors as the TrainableVariant's captured values (cuir.compile's), numbers as the call's arguments
    values = {n: t for n, t in params.items() if torch.is_tensor(t)}
    numbers = {n: x for n, x in params.items() if not torch.is_tensor(x)}
    trainable = TrainableVariant(fwd, bwd, values)
    cases = [("mask computed in the op", None)]
    if fwd.block_mask_info:
        cases.append(("block mask passed in", fwd.block_mask(B, Hq, N, N, head_dim=d, **params)))
    ok_all, worst_all = True, 0.0
    for label, bm in cases:
        torch._dynamo.reset()
        torch.manual_seed(0)
        model = TinyAttention(trainable, dim, Hq, Hkv, d, numbers, bm).cuda().to(torch.bfloat16)
        x = torch.randn(B, N, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        weights = [x] + list(model.parameters())

        def run(m):
            loss = m(x).float().square().mean()
            return [loss.detach()] + list(torch.autograd.grad(loss, weights))

        eager = run(model)
        try:
            compiled = run(torch.compile(model, fullgraph=True))
        except Exception as e:  # a graph break under fullgraph=True, or the ops missing
            print(f"{name:18} torch.compile(fullgraph=True), {label}: {type(e).__name__}: "
                  f"{str(e).splitlines()[0] if str(e) else ''}: FAIL", flush=True)
            ok_all = False
            continue
        errs = [rel(c, e.double()) for c, e in zip(compiled, eager)]
        worst = max(errs)
        ok = all(math.isfinite(e) for e in errs) and worst < tol
        ok_all, worst_all = ok_all and ok, max(worst_all, worst)
        print(f"{name:18} torch.compile(fullgraph=True), {label}: forward + backward, loss {errs[0]:.2e}, "
              f"max relative error of {len(errs) - 1} gradients against eager {max(errs[1:]):.2e} "
              f"({'ops ' + trainable.ops.names[0] if trainable.ops else 'no custom ops'}): "
              f"{'ok' if ok else 'FAIL'}", flush=True)
    return {"compiled": ok_all, "max_rel": worst_all, "ok": ok_all}


def check_trainable(fwd, bwd, name, dtype=torch.bfloat16):
    """ALiBi's slopes as a trained tensor (requires_grad) through TrainableVariant: dq, dk, dv and the slopes'
    gradient (accumulated by the kernel in fp32) against float64 autograd of ALiBi + causal, GQA, Nq != Nkv."""
    B, Hq, Hkv, Nq, Nkv, d = 2, 4, 2, 300, 517, 64
    g = torch.Generator(device="cuda").manual_seed(7)
    q, k, v = (torch.randn(B, H, N, d, generator=g, device="cuda").to(dtype).requires_grad_()
               for H, N in ((Hq, Nq), (Hkv, Nkv), (Hkv, Nkv)))
    *_, params = variant_defs.make(name, B, Hq, Nq, Nkv)
    slopes = (params["alibi_slopes"] * (1 + torch.rand(Hq, generator=g, device="cuda"))).requires_grad_()
    out = TrainableVariant(fwd, bwd)(q, k, v, **{**params, "alibi_slopes": slopes})
    do = torch.randn(out.shape, generator=g, device="cuda").to(dtype)
    got = torch.autograd.grad(out, (q, k, v, slopes), do)
    q64, k64, v64, s64 = (t.detach().double().requires_grad_() for t in (q, k, v, slopes))
    off, rep = Nkv - Nq, Hq // Hkv
    qi = torch.arange(Nq, device="cuda").view(1, 1, Nq, 1) + off
    ki = torch.arange(Nkv, device="cuda").view(1, 1, 1, Nkv)
    s = (q64 @ k64.repeat_interleave(rep, 1).transpose(-1, -2)) / math.sqrt(d) + s64.view(1, Hq, 1, 1) * (ki - qi)
    ref = torch.softmax(s.masked_fill(ki > qi, float("-inf")), -1).nan_to_num() @ v64.repeat_interleave(rep, 1)
    want = torch.autograd.grad(ref, (q64, k64, v64, s64), do.double())
    errs = {n: rel(a, b) for n, a, b in zip(("dq", "dk", "dv", "d_slopes"), got, want)}
    ok = all(math.isfinite(e) and e < 2e-2 for e in errs.values()) and got[3].dtype == slopes.dtype
    print(f"{name:18} trained alibi_slopes, {str(dtype)[6:]} B{B} H{Hq}/{Hkv} N{Nq}/{Nkv}: " +
          " ".join(f"{n} {e:.2e}" for n, e in errs.items()) + (" ok" if ok else " FAIL"), flush=True)
    return {"variant": name, "trainable": "alibi_slopes", **errs, "ok": ok}


def check_training(fwd, bwd, name, steps, tol=0.05):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    from check_attention_autograd import train
    flex, cache = torch.compile(flex_attention), {}
    trainable = TrainableVariant(fwd, bwd)

    def mods(q):
        key = q.shape
        if key not in cache:
            B, H, N, _ = q.shape
            score_mod, mask_mod, _, params = variant_defs.make(name, B, H, N, N)
            cache[key] = score_mod, create_block_mask(mask_mod, B, H, N, N, device="cuda"), params
        return cache[key]

    def cuir_attend(q, k, v):
        return trainable(q, k, v, **mods(q)[2])

    def flex_attend(q, k, v):
        score_mod, bm, _ = mods(q)
        return flex(q, k, v, score_mod=score_mod, block_mask=bm)

    curves = {"cuir": train(cuir_attend, steps), "flex": train(flex_attend, steps)}
    tail = {n: sum(c[-50:]) / len(c[-50:]) for n, c in curves.items()}
    for s in sorted({0, steps // 4, steps // 2, 3 * steps // 4, steps - 1}):
        print(f"{name} step {s:4}: " + "  ".join(f"{n} {c[s]:.4f}" for n, c in curves.items()), flush=True)
    ok = abs(tail["cuir"] - tail["flex"]) <= tol * tail["flex"]
    print(f"{name}: mean loss of the last 50 steps: cuir {tail['cuir']:.4f} flex {tail['flex']:.4f}: "
          f"{'ok' if ok else 'FAIL'} (tolerance {tol:.0%})", flush=True)
    return {"variant": name, "curves": curves, "last50": tail, "ok": ok}


def bench(fwd, bwd, name, N):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    import torch._functorch.config as functorch_config
    functorch_config.donated_buffer = False  # the timing replays one backward graph
    import torch._dynamo.config as dynamo_config
    # Every variant and shape is its own graph: past the default limit FlexAttention would run uncompiled.
    dynamo_config.cache_size_limit = dynamo_config.recompile_limit = 4096
    H, d, B = 32, 128, 16384 // N
    q, k, v = (torch.randn(B, H, N, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    score_mod, mask_mod, _, params = variant_defs.make(name, B, H, N, N)
    with torch.no_grad():
        o, lse = fwd(q, k, v, return_lse=True, **params)
    do = torch.randn_like(o)
    # The block mask computed once and reused, as FlexAttention's below; and computed in every call.
    bm_cuir = bwd.block_mask(B, H, N, N, head_dim=d, num_heads_kv=H, **params) if bwd.block_mask_info else None
    cuir_ms = median_ms(lambda: bwd(q, k, v, o, do, lse, block_mask=bm_cuir, **params))
    cuir_each_ms = median_ms(lambda: bwd(q, k, v, o, do, lse, **params)) if bm_cuir is not None else cuir_ms
    flex = torch.compile(flex_attention)
    bm = create_block_mask(mask_mod, B, H, N, N, device="cuda")
    of = flex(q, k, v, score_mod=score_mod, block_mask=bm)
    flex_ms = median_ms(lambda: torch.autograd.grad(of, (q, k, v), do, retain_graph=True))
    row = {"variant": name, "N": N, "cuir_bwd_ms": cuir_ms, "cuir_bwd_mask_each_call_ms": cuir_each_ms,
           "flex_bwd_ms": flex_ms, "cuir / flex": flex_ms / cuir_ms}
    print(json.dumps({a: (round(b, 3) if isinstance(b, float) else b) for a, b in row.items()}), flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--libs", default=str(ROOT / "build" / "variant-libs"))
    ap.add_argument("--names", default=None)
    ap.add_argument("--compile", action="store_true", help="torch.compile(fullgraph=True) of a model with it")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--train", default=None, help="a variant to train the tiny transformer with")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--sanitize", action="store_true", help="two small shapes only (for compute-sanitizer)")
    ap.add_argument("--n", type=int, nargs="+", default=[2048, 8192], help="sequence lengths of --bench")
    ap.add_argument("--trainable", action="store_true",
                    help="the ALiBi slopes as a trained tensor (variants with alibi_slopes)")
    ap.add_argument("--json")
    args = ap.parse_args()
    libs = pathlib.Path(args.libs)
    names = args.names.split(",") if args.names else sorted(
        p.name for p in libs.iterdir() if (p / f"lib{p.name}_bwd.so").exists())
    print(torch.cuda.get_device_name(), torch.__version__, "variants:", ",".join(names), flush=True)
    rows, bench_rows = [], []
    shapes = [(2, 4, 2, 300, 517), (1, 6, 1, 640, 256), (2, 8, 8, 1024, 1024)]
    if args.sanitize:
        shapes = [(1, 2, 1, 130, 197), (1, 2, 2, 200, 64)]
    for name in names:
        lib = variant_defs.LIBRARY.get(name, name)
        fwd = load_variant(libs / lib / f"lib{lib}.so")
        bwd = load_variant_backward(libs / lib / f"lib{lib}_bwd.so")
        for d in (64, 128):
            for shape in shapes:
                rows.append(check(fwd, bwd, name, shape, d, torch.bfloat16))
        rows.append(check(fwd, bwd, name, shapes[0], 128, torch.float16))
        if not args.sanitize:
            rows.append({"variant": name, "autograd": True, "ok": check_autograd(fwd, bwd, name)})
        if args.compile:
            rows.append({"variant": name, "compile": True, **check_compile(fwd, bwd, name)})
        if args.trainable and "alibi" in variant_defs.SPECS[name]:
            rows.append(check_trainable(fwd, bwd, name))
        if args.bench and name not in variant_defs.NO_FLEX:  # FlexAttention has no sigmoid normaliser
            for N in args.n:
                bench_rows.append(bench(fwd, bwd, name, N))
    training = None
    if args.train:
        training = check_training(load_variant(libs / args.train / f"lib{args.train}.so"),
                                  load_variant_backward(libs / args.train / f"lib{args.train}_bwd.so"),
                                  args.train, args.steps)
    bad = sum(not r["ok"] for r in rows) + (training is not None and not training["ok"])
    if bench_rows:
        geo = math.exp(sum(math.log(r["cuir / flex"]) for r in bench_rows) / len(bench_rows))
        print(f"backward CuIR / FlexAttention: geometric mean {geo:.2f}, min {min(r['cuir / flex'] for r in bench_rows):.2f}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"gradients": rows, "bench": bench_rows, "training": training},
                                                      indent=1))
    print(f"{len(rows) - bad} of {len(rows)} gradient checks passed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
