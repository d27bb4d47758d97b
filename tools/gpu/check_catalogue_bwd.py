#!/usr/bin/env python3
"""The backward pass of every catalogue entry (softmax and sigmoid) (python/cuir/catalogue), on the GPU: each entry's
score_mod/mask_mod is traced, transferred onto the sm_80 backward kernel (--kernel sm90: the sm_90 one) and
lowered (cuir.compile's backward pipeline); its dQ, dK, dV, and the gradients of the captured float tensors it
trains (d_<tensor>), are compared with torch.autograd of the entry's own float64 reference, at ragged, GQA and more-queries-than-keys
shapes, bf16 and fp16. O and LSE come from that float64 reference (O rounded to the input type), as
tools/gpu/check_bwd.py does for the base kernel: the check is of the backward alone, against the exact backward
of the kernel's own inputs (dO and O as rounded to the input type; for softmax, the D of the rounded O).

Two modes, as tools/gpu/check_catalogue.py (the GPU machine has neither clang nor cuir-opt):
  --stage DIR  (here): trace and build DIR/<entry>/<shape>/lib<entry>_bwd.so, write DIR/stage.json;
  --run DIR    (the GPU machine): check, print a line per run, write DIR/results.json (or --json).
With --bench at staging, each entry is also built at the bench shape, whose backward --run times against
FlexAttention's backward in the same run (lists computed once; O and LSE from FlexAttention's forward).
Usage: tools/gpu/check_catalogue_bwd.py --stage build/catalogue-bwd [--bench] [entry ...]
       PYTHONPATH=python python3 tools/gpu/check_catalogue_bwd.py --run build/catalogue-bwd
"""
import argparse
import json
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tools" / "gpu"))
from check_catalogue import ARCHS, CHECKS, SHAPES, _inputs  # noqa: E402

REL_TOL = {"bf16": 2e-2, "fp16": 1e-2}


def stage(out, names, opt, workers, bench=False, kernel="sm80"):
    import concurrent.futures
    import importlib
    from cuir import cache, catalogue
    from cuir.catalogue.check import first_error, trace_entry
    comp = importlib.import_module("cuir.compile")
    os.environ.setdefault("CUIR_OPT", opt)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [catalogue.get(n) for n in names] if names else catalogue.entries()
    jobs, failed, builds = [], [], {}
    for entry in chosen:
        for tag in CHECKS + (("bench",) if bench else ()):
            B, Hq, Hkv, Nq, Nkv, D = SHAPES[tag]
            try:
                text, _ = trace_entry(entry, B, Hq, Nq, Nkv, defaults=False)
            except Exception as e:
                failed.append({"entry": entry.name, "shape": tag, "error": first_error(str(e)) or repr(e)})
                break
            job = (entry, tag, out / entry.name / tag, text)
            jobs.append(job)
            builds.setdefault(cache.strip_locations(text), job)

    def build(job):
        entry, tag, where, text = job
        where.mkdir(parents=True, exist_ok=True)
        (where / "variant.mlir").write_text(text)
        cmd = comp.lower_command(kernel, where / "variant.mlir", where / f"{entry.name}_bwd.cu", ARCHS[kernel],
                                 backward=True)
        cache.run_with_progress(cmd, f"the backward of {entry.name} ({tag})")

    print(f"{len(jobs)} kernels: {len(builds)} distinct builds, {workers} at a time", file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        results = {key: pool.submit(build, job) for key, job in builds.items()}
    broken = set()
    for key, future in results.items():
        if future.exception() is not None:
            entry, tag = builds[key][:2]
            broken.add(key)
            failed.append({"entry": entry.name, "shape": tag,
                           "error": first_error(str(future.exception())) or repr(future.exception())})
            print(f"FAIL {entry.name} {tag}: {failed[-1]['error']}", file=sys.stderr)
    staged = []
    for entry, tag, where, text in jobs:
        key = cache.strip_locations(text)
        if key not in broken:
            lib = builds[key][2] / f"lib{entry.name}_bwd.so"
            staged.append({"entry": entry.name, "shape": tag, "library": str(lib.relative_to(out))})
    for p in out.rglob("*"):
        if p.is_file() and (p.suffix in (".ptx", ".cubin", ".o") or p.name.endswith(".ptxas.log")):
            p.unlink()
    (out / "stage.json").write_text(json.dumps({"staged": staged, "failed": failed}, indent=1))
    print(f"staged {len(staged)} kernels into {out}, {len(failed)} failed")
    return 0


def centring_term(entry, t64, name, delta, Nq, Nkv):
    """What a gradient centred on the row's reference key (the manifest's "centred": "row-diagonal") leaves
    out of the rounded-D backward: the kernel adds dS * (partial - partial at the reference key), and a row's
    dS sum to delta there, so it is short of sum over rows of delta * that partial. The reference key is the
    row's top-left diagonal min(q, Nkv - 1) or its bottom-right one, q + Nkv - Nq clamped to the keys, whichever
    gives the smaller partial (the entry's score_mod, differentiated per row with respect to tensor `name`;
    chosen per element of the tensor, as the kernel chooses per load)."""
    import torch
    B, H, rows = delta.shape
    b, h, q = (torch.arange(n).view(*(n if i == j else 1 for j in range(3))) for i, n in enumerate((B, H, rows)))

    def partials(key):
        def score_at(tensor):
            score_mod, _ = entry.mods({**t64, name: tensor})
            return score_mod(torch.zeros(B, H, rows, dtype=torch.float64), b, h, q, key)
        return torch.autograd.functional.jacobian(score_at, t64[name].detach(), vectorize=True)
    top_left, bottom_right = partials(q.clamp(max=Nkv - 1)), partials((q + Nkv - Nq).clamp(0, Nkv - 1))
    reference = torch.where(top_left.abs() <= bottom_right.abs(), top_left, bottom_right)
    return (delta.view(B, H, rows, *[1] * t64[name].dim()) * reference).sum((0, 1, 2))


def check_one(entry, library, tag, dtype, name):
    """dQ, dK, dV, and the gradient of every captured float tensor the backward can train (accumulated by the
    kernel in fp32: d_<name>), against autograd of the entry's float64 reference."""
    import importlib
    import torch
    comp = importlib.import_module("cuir.compile")
    B, Hq, Hkv, Nq, Nkv, D = SHAPES[tag]
    tensors = entry.make(B, Hq, Nq, Nkv, "cpu")
    bwd = comp.load_once(library, backward=True)
    on_gpu = {n: t.cuda() for n, t in tensors.items()}
    score_mod, mask_mod = entry.mods(on_gpu)
    values = comp.trace(score_mod, mask_mod, entry.normalizer, entry.name, defaults=False)[1] if tensors else {}
    # The kernel names a captured tensor by its variable in the score_mod; the tracer keeps a copy of it:
    # the entry's tensor of the same value.
    of = {p: n for p, x in values.items() for n, t in tensors.items()
          if t.shape == x.shape and t.dtype == x.dtype and torch.equal(t, x.cpu())}
    trained = {p: of[p] for p in bwd.trainable() if p in of and tensors[of[p]].is_floating_point()}
    if set(bwd.trainable()) - set(trained):
        raise RuntimeError(f"the backward trains {bwd.trainable()}, but only {sorted(trained)} are entry tensors")
    t64 = {n: t.double().requires_grad_() if n in trained.values() else t for n, t in tensors.items()}
    q, k, v = _inputs(B, Hq, Hkv, Nq, Nkv, D, dtype, seed=hash((entry.name, tag)) & 0xFFFF)
    q64, k64, v64 = (t.cpu().double().requires_grad_() for t in (q, k, v))
    res = entry.reference(q64, k64, v64, D ** -0.5, t64)
    out, lse = res if isinstance(res, tuple) else (res, None)  # sigmoid: O alone, no log-sum-exp
    d_o = torch.randn(out.shape, dtype=torch.float64).to(dtype).double()  # the kernel's dO, exactly
    wrt = (q64, k64, v64, *(t64[n] for n in trained.values()))
    # A score_mod that reads no argument of the scores leaves dQ and dK with no graph: their gradient is 0.
    refs = torch.autograd.grad(out, wrt, d_o, retain_graph=lse is not None, allow_unused=True)
    refs = tuple(torch.zeros_like(x) if r is None else r for r, x in zip(refs, wrt))
    o = out.detach().to(dtype).cuda()
    if lse is not None:
        # The exact backward of the kernel's inputs: its O is rounded to `dtype`, so its D = rowsum(dO * O)
        # differs by delta from the exact one, and dS by P * delta, whose contribution is that of LSE with
        # upstream gradient delta. It matters where the summands cancel: the ALiBi slopes' gradient
        # sums dS * (kv - q) over whole rows, and the rounding of O alone moves it by 4e-2 in bf16.
        delta = (d_o * (out.detach() - o.cpu().double())).sum(-1)
        if lse.requires_grad:  # (an LSE that reads no input, as of a constant score_mod, moves no gradient)
            fix = torch.autograd.grad(lse, wrt, delta, allow_unused=True)
            refs = tuple(r if f is None else r + f for r, f in zip(refs, fix))
        refs = refs[:3] + tuple(r - centring_term(entry, t64, n, delta, Nq, Nkv) if p in bwd.centred() else r
                                for r, (p, n) in zip(refs[3:], trained.items()))
    lse = lse.detach().float().cuda().contiguous() if lse is not None else None
    bufs = {p: torch.zeros(tensors[n].shape, dtype=torch.float32, device="cuda") for p, n in trained.items()}
    grads = bwd(q, k, v, o, d_o.to(dtype).cuda(), lse, param_grads=bufs,
                **{n: comp.tensor_for(bwd, n, t, q.device) for n, t in values.items()})
    names = ("dq", "dk", "dv", *(f"d_{n}" for n in trained.values()))
    errs = {g: ((a.double().cpu() - r).norm() / r.norm().clamp_min(1e-30)).item()
            for g, a, r in zip(names, (*grads, *bufs.values()), refs)}
    ok = all(e == e and e < REL_TOL[name] for e in errs.values())
    return ok, errs


def bench_one(entry, library):
    """The backward's time at the bench shape (bf16), its lists computed once, against FlexAttention's backward
    (torch.compile(flex_attention) with create_block_mask of the entry's mask_mod) in the same run."""
    import importlib
    import torch
    import torch._functorch.config as functorch_config
    from torch.nn.attention.flex_attention import create_block_mask
    from timing import compiled_flex_attention, median_ms
    functorch_config.donated_buffer = False  # the timing replays one backward graph
    comp = importlib.import_module("cuir.compile")
    B, Hq, Hkv, Nq, Nkv, D = SHAPES["bench"]
    tensors = {n: t.cuda() for n, t in entry.make(B, Hq, Nq, Nkv, "cpu").items()}
    score_mod, mask_mod = entry.mods(tensors)
    bwd = comp.load_once(library, backward=True)
    values = comp.trace(score_mod, mask_mod, entry.normalizer, entry.name, defaults=False)[1] if tensors else {}
    params = {n: comp.tensor_for(bwd, n, t, "cuda") for n, t in values.items()}
    q, k, v = _inputs(B, Hq, Hkv, Nq, Nkv, D, torch.bfloat16, seed=1)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    flex = compiled_flex_attention()
    bm = create_block_mask(mask_mod, B, Hq, Nq, Nkv, device="cuda") if mask_mod else None
    out = flex(q, k, v, score_mod=score_mod, block_mask=bm, enable_gqa=Hq != Hkv)
    d_o = torch.randn_like(out)
    flex_grads = [g.clone() for g in torch.autograd.grad(out, (q, k, v), d_o, retain_graph=True)]
    flex_ms = median_ms(lambda: torch.autograd.grad(out, (q, k, v), d_o, retain_graph=True))
    # O and LSE (natural log) from FlexAttention's forward: the backward is timed alone.
    o, lse = flex(q, k, v, score_mod=score_mod, block_mask=bm, enable_gqa=Hq != Hkv, return_lse=True)
    o, lse = o.detach(), lse.detach().float().contiguous()
    own = bwd.block_mask(B, Hq, Nq, Nkv, head_dim=D, num_heads_kv=Hkv, **params) if bwd.block_mask_info else None
    kw = {"block_mask": own} if own is not None else {}
    call = lambda: bwd(q.detach(), k.detach(), v.detach(), o, d_o, lse, **params, **kw)  # noqa: E731
    # The same gradients as FlexAttention's (both bf16): the inputs and conventions are right.
    agree = max(((a.float() - b.float()).norm() / b.float().norm()).item() for a, b in zip(call(), flex_grads))
    cuir_ms = median_ms(call)
    row = {"entry": entry.name, "shape": list(SHAPES["bench"]), "cuir_bwd_ms": cuir_ms, "flex_bwd_ms": flex_ms,
           "cuir / flex": flex_ms / cuir_ms, "lists": own is not None, "vs flex gradients": agree}
    if own is not None:
        dense = own.to_dense()
        row["visited_tiles"] = (dense > 0).float().mean().item()
    return row


def run(stage_dir, json_path, names=(), bench=True):
    import torch
    from cuir import catalogue
    info = json.loads((stage_dir / "stage.json").read_text())
    rows, bench_rows = [], []
    for item in info["staged"]:
        if names and item["entry"] not in names:
            continue
        if item["shape"] == "bench":
            if not bench:
                continue
            entry = catalogue.get(item["entry"])
            try:
                bench_rows.append(bench_one(entry, stage_dir / item["library"]))
                print(json.dumps({a: (round(b, 3) if isinstance(b, float) else b) for a, b in bench_rows[-1].items()}),
                      flush=True)
            except Exception as e:
                print(f"{entry.name:22} bench: {type(e).__name__}: {str(e)[:300]}", flush=True)
            continue
        entry = catalogue.get(item["entry"])
        row = {"entry": entry.name, "shape": item["shape"]}
        try:
            for dtype, name in ((torch.bfloat16, "bf16"), (torch.float16, "fp16")):
                ok, errs = check_one(entry, stage_dir / item["library"], item["shape"], dtype, name)
                row[name] = {"ok": ok, **errs}
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        rows.append(row)
        cells = [f"{d} " + ("ok" if row[d]["ok"] else "FAIL") + " " +
                 " ".join(f"{g} {e:.1e}" for g, e in row[d].items() if g != "ok") for d in ("bf16", "fp16") if d in row]
        print(f"{entry.name:22} {item['shape']:6} " + ("; ".join(cells) or row.get("error", "")), flush=True)
    json_path.write_text(json.dumps({"rows": rows, "bench": bench_rows, "failed_to_stage": info["failed"],
                                     "device": torch.cuda.get_device_name()}, indent=1))
    bad = [r for r in rows if "error" in r or not all(r[d]["ok"] for d in ("bf16", "fp16"))]
    for f in info["failed"]:
        print(f"not staged: {f['entry']}: {f['error']}")
    print(f"{len(rows)} runs, {len(bad)} failed, {len(info['failed'])} entries not staged; wrote {json_path}")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--stage", type=pathlib.Path)
    mode.add_argument("--run", type=pathlib.Path)
    ap.add_argument("--opt", default=str(ROOT / "build" / "bin" / "cuir-opt"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", type=pathlib.Path)
    ap.add_argument("--kernel", choices=sorted(ARCHS), default="sm80",
                    help="--stage: the backward kernel to lower onto (kernels/<kernel>/flash_bwd.cu)")
    ap.add_argument("--bench", action="store_true",
                    help="--stage: also build each entry at the bench shape; --run then times those builds' "
                         "backward against FlexAttention's")
    ap.add_argument("--no-bench", action="store_true", help="--run: the checks only")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    if args.stage:
        return stage(args.stage, args.names, args.opt, args.jobs, args.bench, args.kernel)
    return run(args.run, args.json or args.run / "results.json", args.names, not args.no_bench)


if __name__ == "__main__":
    sys.exit(main())
