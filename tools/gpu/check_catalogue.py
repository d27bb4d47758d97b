#!/usr/bin/env python3
"""Every catalogue entry (python/cuir/catalogue) on both kernels, on the GPU: correctness against the entry's
float64 reference (ragged, GQA and more-queries-than-keys shapes, bf16 and fp16, optionally under compute-sanitizer memcheck), then
time against torch.compile(flex_attention) with a create_block_mask block mask, in the same run.

Two modes, because the GPU machine has nvcc but neither clang nor cuir-opt:
  --stage DIR  (here, CPU): trace each entry at each shape below, lower and compile it with cuir-opt
               (cuir.compile's pipeline) into DIR/<kernel>/<entry>/<shape>/, and write DIR/stage.json.
  --run DIR    (the GPU machine): load the staged libraries, check, time, print a table, write
               DIR/results.json (or --json). --memcheck first runs the checks under compute-sanitizer.
Usage: tools/gpu/check_catalogue.py --stage build/catalogue [entry ...]
       PYTHONPATH=python python3 tools/gpu/check_catalogue.py --run build/catalogue [--memcheck]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tools" / "gpu"))
from timing import compiled_flex_attention, loop_ms, median_ms  # noqa: E402


# (B, Hq, Hkv, Nq, Nkv, D): ragged lengths (not multiples of the 128/64/176-row tiles), grouped-query heads,
# more queries than keys (rows past the last key, where each mask's alignment of q_idx with kv_idx shows), and
# the benchmark's shape. The captured tensors depend on the shape, so each is a staged kernel. (The tall shape is
# the one at which check_variant_bwd.py found the block-mask bits bug of c84b515, but no catalogue mask makes a
# query block of full tiles only there, which that bug needed: built with the classification from before the
# fix, global_window and document pass.)
SHAPES = {"ragged": (2, 4, 4, 1000, 1313, 128), "gqa": (2, 8, 2, 777, 1024, 64),
          "tall": (1, 6, 1, 640, 256, 128), "bench": (4, 16, 16, 4096, 4096, 128)}
CHECKS = ("ragged", "gqa", "tall")
ARCHS = {"sm80": ("sm_90",), "sm90": ("sm_90a",)}  # the H200 runs both: sm_80 code is compiled for sm_90

# Tolerances. The kernels round P = exp(s - max) to the input type before the P.V GEMM and O to it at the end
# (bf16: 8 significant bits, relative step 2^-8 = 0.0039; fp16: 11 bits, 2^-11), accumulate in fp32, and
# the sm_80 softcap uses tanh.approx (about 2^-11 relative). Each output element is a convex combination of
# V rows (|v| <= ~5 for N(0, 1) data), so its error is a few rounding steps of max|v|: 3 steps for bf16 and
# 8 for fp16 (whose step is 8x smaller, but then fp32 accumulation order and approx tanh show) bound it, as a
# fraction of max(1, max|ref|). The relative Frobenius error averages the roundings: 1% (bf16), 0.3% (fp16).
# LSE is computed in fp32 from fp32 scores: 2e-3 absolute (natural log), and -inf exactly where ref is.
TOLERANCE = {"bf16": {"max": 3 * 2 ** -8, "rel": 1e-2, "lse": 2e-3},
             "fp16": {"max": 8 * 2 ** -11, "rel": 3e-3, "lse": 2e-3}}


def _trace_jobs(out, chosen, kernels, shapes):
    """The kernels to build: (entry, kernel, shape tag, directory, variant text), and the failures."""
    from cuir.catalogue.check import first_error, trace_entry
    jobs, failed = [], []
    for entry in chosen:
        for kernel in kernels:
            for tag, (B, Hq, Hkv, Nq, Nkv, D) in SHAPES.items():
                if tag not in shapes:
                    continue
                try:
                    text, _ = trace_entry(entry, B, Hq, Nq, Nkv, defaults=False)  # values: at each call
                except Exception as e:  # one entry's failure is reported, the others are staged
                    failed.append({"entry": entry.name, "kernel": kernel, "shape": tag,
                                   "error": first_error(str(e)) or type(e).__name__})
                    break  # the other shapes would fail the same way
                jobs.append((entry, kernel, tag, out / kernel / entry.name / tag, text))
    return jobs, failed


def stage(out, names, kernels, opt, workers, shapes=tuple(SHAPES)):
    """Trace every entry at every shape, then build each distinct variant text once per kernel (a shape
    whose text differs only in the captured values reuses the library: values are passed at each call)."""
    import concurrent.futures
    import importlib
    from cuir import cache, catalogue
    from cuir.catalogue.check import first_error
    comp = importlib.import_module("cuir.compile")
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("CUIR_OPT", opt)
    chosen = [catalogue.get(n) for n in names] if names else catalogue.entries()
    jobs, failed = _trace_jobs(out, chosen, kernels, shapes)
    # (kernel, text without locations; traced without values) -> the job that builds it
    keys = [(job[1], cache.strip_locations(job[4])) for job in jobs]
    builds = {}
    for key, job in zip(keys, jobs):
        builds.setdefault(key, job)

    def build(job):
        entry, kernel, tag, where, text = job
        where.mkdir(parents=True, exist_ok=True)
        (where / "variant.mlir").write_text(text)
        cmd = comp.lower_command(kernel, where / "variant.mlir", where / f"{entry.name}.cu", ARCHS[kernel])
        cache.run_with_progress(cmd, f"{entry.name} on {kernel} ({tag})")

    print(f"{len(jobs)} kernels of {len(chosen)} entries: {len(builds)} distinct builds, {workers} at a time",
          file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        results = {key: pool.submit(build, job) for key, job in builds.items()}
    staged, broken = [], set()
    for key, future in results.items():
        if future.exception() is not None:
            entry, kernel, tag = builds[key][:3]
            broken.add(key)
            failed.append({"entry": entry.name, "kernel": kernel, "shape": tag,
                           "error": first_error(str(future.exception())) or type(future.exception()).__name__})
            print(f"FAIL {entry.name} {kernel} {tag}: {failed[-1]['error']}", file=sys.stderr)
    for key, (entry, kernel, tag, where, text) in zip(keys, jobs):
        if key not in broken:
            built = builds[key]
            staged.append({"entry": entry.name, "kernel": kernel, "shape": tag,
                           "library": str((built[3] / f"lib{entry.name}.so").relative_to(out))})
    for p in out.rglob("*"):  # the GPU machine needs the libraries and manifests only
        if p.is_file() and p.suffix in (".ptx", ".cubin", ".o") or p.name.endswith(".ptxas.log"):
            p.unlink()
    (out / "stage.json").write_text(json.dumps({"shapes": SHAPES, "staged": staged, "failed": failed}, indent=1))
    print(f"staged {len(staged)} kernels ({len(builds) - len(broken)} libraries) into {out}, "
          f"{len(failed)} failed")
    return 0 if not failed else 1


def _inputs(B, Hq, Hkv, Nq, Nkv, D, dtype, seed):
    import torch
    g = torch.Generator(device="cuda").manual_seed(seed)
    mk = lambda H, N: torch.randn(B, H, N, D, generator=g, device="cuda").to(dtype)  # noqa: E731
    return mk(Hq, Nq), mk(Hkv, Nkv), mk(Hkv, Nkv)


def _compare(out, ref, lse, ref_lse, tol):
    import torch
    ref = ref.float().to(out.device)
    o = out.float()
    scale = max(1.0, ref.abs().max().item())
    max_err = (o - ref).abs().max().item() / scale
    rel = ((o - ref).norm() / ref.norm().clamp(min=1e-30)).item()
    ok = max_err <= tol["max"] and rel <= tol["rel"] and bool(torch.isfinite(o).all())
    lse_err = 0.0
    if ref_lse is not None and lse is not None:
        ref_lse = ref_lse.float().to(lse.device)
        finite = torch.isfinite(ref_lse)
        same_inf = bool((torch.isinf(lse) == ~finite).all())
        lse_err = (lse[finite] - ref_lse[finite]).abs().max().item() if finite.any() else 0.0
        ok = ok and same_inf and lse_err <= tol["lse"]
    return ok, {"max_err": max_err, "rel_err": rel, "lse_err": lse_err}


def _kernel_call(library, entry, tensors):
    import importlib
    comp = importlib.import_module("cuir.compile")
    kern = comp.load_once(library)
    score_mod, mask_mod = entry.mods(tensors)
    values = comp.trace(score_mod, mask_mod, entry.normalizer, entry.name, defaults=False)[1] if tensors else {}
    def call(q, k, v, lse, block_mask=None):
        return kern(q, k, v, layout="bhnd", return_lse=lse, block_mask=block_mask,
                    **{n: comp.tensor_for(kern, n, t, q.device) for n, t in values.items()})

    def block_mask(q, k, **options):
        """The runtime block mask of q, k's problem (None where the library's tiles are static); options go to
        the library's block_mask (mask_bits=False: no partial tiles' bits)."""
        if not kern.block_mask_info:
            return None
        B, Hq, Nq, D = q.shape
        return kern.block_mask(B, Hq, Nq, k.shape[2], head_dim=D, num_heads_kv=k.shape[1], **options,
                               **{n: comp.tensor_for(kern, n, t, q.device) for n, t in values.items()})
    call.block_mask = block_mask
    return call


def _through_flex_attention(library, kernel, entry, tensors, q, k, v):
    """(out, lse) of cuir.flex_attention, FlexAttention's drop-in, with the entry's score_mod and a
    create_block_mask BlockMask of its mask_mod. The GPU machine has no cuir-opt, so the one step that
    compiles (cuir.compile.build_cached) is answered with the staged library; the rest (tracing, the
    BlockMask, argument checks, captured tensors as parameters, kernel choice, scale, lse) runs as a user's
    call does."""
    import importlib
    import cuir
    from torch.nn.attention.flex_attention import create_block_mask
    comp = importlib.import_module("cuir.compile")
    score_mod, mask_mod = entry.mods(tensors)
    real = comp.build_cached
    comp.build_cached = lambda *args, **kwargs: library
    try:
        B, Hq, Nq, _ = q.shape
        if entry.normalizer == "softmax":
            bm = create_block_mask(mask_mod, B, Hq, Nq, k.shape[2], device="cuda") if mask_mod else None
            return cuir.flex_attention(q, k, v, score_mod=score_mod, block_mask=bm, enable_gqa=Hq != k.shape[1],
                                       return_lse=True, kernel=kernel)
        out = cuir.flex_attention(q, k, v, score_mod=score_mod, block_mask=mask_mod, enable_gqa=Hq != k.shape[1],
                                  kernel=kernel, normalizer=entry.normalizer)
        return out, None
    finally:
        comp.build_cached = real


def _flex_call(entry, tensors, q, k, v):
    """torch.compile(flex_attention) with the entry's functions and a create_block_mask mask (made once,
    outside the timing), as a callable; None for an entry FlexAttention cannot run."""
    from torch.nn.attention.flex_attention import create_block_mask
    score_mod, mask_mod = entry.mods(tensors)
    if entry.normalizer != "softmax":
        return None
    B, H, Nq, _ = q.shape
    bm = create_block_mask(mask_mod, B, H, Nq, k.shape[2], device="cuda") if mask_mod else None
    compiled = compiled_flex_attention()
    gqa = q.shape[1] != k.shape[1]
    return lambda: compiled(q, k, v, score_mod=score_mod, block_mask=bm, enable_gqa=gqa)


def _flex_time(entry, tensors, q, k, v):
    """Per-call and back-to-back ms of FlexAttention on the entry (_flex_call)."""
    flex = _flex_call(entry, tensors, q, k, v)
    if flex is None:
        return {"flex_ms": None, "flex_note": "FlexAttention has no sigmoid normaliser"}
    return {"flex_ms": median_ms(flex), "flex_loop_ms": loop_ms(flex), "flex_note": None}


def _interleaved_times(cuir, entry, tensors, q, k, v, rounds):
    """CuIR's and FlexAttention's per-call and back-to-back ms, timed in `rounds` interleaved rounds
    (timing.interleaved_medians: clock and temperature drift affect both alike), the medians over them.
    FlexAttention's own failure is a note, CuIR timed alone."""
    from timing import interleaved_medians
    try:
        flex, note = _flex_call(entry, tensors, q, k, v), "FlexAttention has no sigmoid normaliser"
    except Exception as e:
        flex, note = None, f"{type(e).__name__}: {str(e)[:200]}"
    fns = {"cuir": cuir} if flex is None else {"cuir": cuir, "flex": flex}
    medians, _ = interleaved_medians(fns, rounds)
    times = {"cuir_ms": medians["cuir"]["call"], "cuir_loop_ms": medians["cuir"]["loop"]}
    if flex is None:
        return {**times, "flex_ms": None, "flex_note": note}
    return {**times, "flex_ms": medians["flex"]["call"], "flex_loop_ms": medians["flex"]["loop"],
            "flex_note": None}


def run(stage_dir, json_path, bench, checks_only, names=(), md_path=None, rounds=1):
    import torch
    from cuir import catalogue
    info = json.loads((stage_dir / "stage.json").read_text())
    rows, flex_times = [], {}  # FlexAttention is timed (and compiled) once per entry, not per kernel
    for item in info["staged"]:
        if names and item["entry"] not in names:
            continue
        entry, tag = catalogue.get(item["entry"]), item["shape"]
        B, Hq, Hkv, Nq, Nkv, D = info["shapes"][tag]
        tensors = {n: t.cuda() for n, t in entry.make(B, Hq, Nq, Nkv, "cpu").items()}
        cpu_tensors = {n: t.cpu() for n, t in tensors.items()}
        call = _kernel_call(stage_dir / item["library"], entry, tensors)
        row = {"entry": entry.name, "kernel": item["kernel"], "shape": tag}
        try:
            if tag in CHECKS:
                for dtype, name in ((torch.bfloat16, "bf16"), (torch.float16, "fp16")):
                    q, k, v = _inputs(B, Hq, Hkv, Nq, Nkv, D, dtype, seed=hash((entry.name, tag)) & 0xFFFF)
                    softmax = entry.normalizer == "softmax"
                    res = call(q, k, v, softmax)
                    out, lse = res if softmax else (res, None)
                    ref = entry.reference(q.cpu(), k.cpu(), v.cpu(), D ** -0.5, cpu_tensors)
                    ref, ref_lse = ref if isinstance(ref, tuple) else (ref, None)
                    ok, errs = _compare(out, ref, lse, ref_lse, TOLERANCE[name])
                    row[name] = {"ok": ok, **errs}
                    if tag == "ragged" and not checks_only:  # and once through the drop-in API
                        out, lse = _through_flex_attention(stage_dir / item["library"], item["kernel"], entry,
                                                           tensors, q, k, v)
                        ok, errs = _compare(out, ref, lse, ref_lse, TOLERANCE[name])
                        row[f"api_{name}"] = {"ok": ok, **errs}
            elif bench and not checks_only:
                q, k, v = _inputs(B, Hq, Hkv, Nq, Nkv, D, torch.bfloat16, seed=1)
                # The block mask is made once, as FlexAttention's create_block_mask is; its time apart.
                bm = call.block_mask(q, k)
                if bm is not None:
                    row["classify_ms"] = median_ms(lambda: call.block_mask(q, k))
                if rounds > 1:  # both sides each round, alternating
                    row.update(_interleaved_times(lambda: call(q, k, v, False, bm), entry, tensors, q, k, v,
                                                  rounds))
                else:
                    row["cuir_ms"] = median_ms(lambda: call(q, k, v, False, bm))
                    row["cuir_loop_ms"] = loop_ms(lambda: call(q, k, v, False, bm))
                    if entry.name not in flex_times:
                        try:
                            flex_times[entry.name] = _flex_time(entry, tensors, q, k, v)
                        except Exception as e:  # FlexAttention's own failure is a row note, not a crash
                            flex_times[entry.name] = {"flex_ms": None,
                                                      "flex_note": f"{type(e).__name__}: {str(e)[:200]}"}
                    row.update(flex_times[entry.name])
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        rows.append(row)
        print(_line(row), flush=True)
    json_path.write_text(json.dumps({"rows": rows, "failed_to_stage": info["failed"],
                                     "device": torch.cuda.get_device_name()}, indent=1))
    if md_path:
        md_path.write_text(markdown(rows, torch.cuda.get_device_name(), rounds))
    bad = [r for r in rows if "error" in r or any(not r[d]["ok"] for d in ("bf16", "fp16", "api_bf16", "api_fp16")
                                                    if d in r)]
    print(f"{len(rows)} runs, {len(bad)} failed, {len(info['failed'])} entries not staged; wrote {json_path}")
    return 1 if bad or info["failed"] else 0


def markdown(rows, device, rounds=1):
    """The benchmark table (bench shape, bf16) and the checks' summary, as docs/benchmarks shows them."""
    B, Hq, Hkv, Nq, Nkv, D = SHAPES["bench"]
    out = [f"CuIR against torch.compile(flex_attention) with a create_block_mask BlockMask, {device}, "
           f"{time.strftime('%Y-%m-%d')}: bf16, B={B}, H={Hq}, N={Nq}, d={D}. Per call: the median of 20 single "
           f"calls after 5 warm-up runs (CUDA events around each call, so each side's host overhead counts); "
           f"back to back: the median of 7 loops of 10 queued calls" +
           (f"; each the median over {rounds} rounds that time CuIR and FlexAttention alternately" if rounds > 1
            else "") + ". Both block masks made once, outside the timing; CuIR's classification timed apart.", "",
           "| entry | kernel | CuIR ms | Flex ms | Flex / CuIR | CuIR ms, back to back | Flex ms, back to back "
           "| Flex / CuIR, back to back | classification ms |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "cuir_ms" in r:
            flex = f"{r['flex_ms']:.3f}" if r.get("flex_ms") else f"– ({r.get('flex_note')})"
            ratio = f"{r['flex_ms'] / r['cuir_ms']:.2f}" if r.get("flex_ms") else "–"
            loop = f"{r['flex_loop_ms']:.3f}" if r.get("flex_loop_ms") else "–"
            loop_ratio = f"{r['flex_loop_ms'] / r['cuir_loop_ms']:.2f}" if r.get("flex_loop_ms") else "–"
            classify = f"{r['classify_ms']:.3f}" if "classify_ms" in r else "– (static tiles)"
            out.append(f"| {r['entry']} | {r['kernel']} | {r['cuir_ms']:.3f} | {flex} | {ratio} | "
                       f"{r['cuir_loop_ms']:.3f} | {loop} | {loop_ratio} | {classify} |")
    checks = [r for r in rows if "bf16" in r]
    bad = [r for r in checks if any(not r[d]["ok"] for d in ("bf16", "fp16", "api_bf16", "api_fp16") if d in r)]
    out += ["", f"Checks against each entry's float64 reference (ragged {SHAPES['ragged']}, GQA {SHAPES['gqa']}, "
            f"tall {SHAPES['tall']}; "
            f"bf16 and fp16; the ragged shape also through cuir.flex_attention): {len(checks) - len(bad)} of "
            f"{len(checks)} (entry, kernel, shape) runs pass."]
    return "\n".join(out) + "\n"


def _line(r):
    head = f"{r['entry']:<24} {r['kernel']:<5} {r['shape']:<7}"
    if "error" in r:
        return f"{head} ERROR {r['error']}"
    if "bf16" in r:
        return head + "  ".join(f" {d} {'ok ' if r[d]['ok'] else 'BAD'} max {r[d]['max_err']:.2e} rel "
                                f"{r[d]['rel_err']:.2e} lse {r[d]['lse_err']:.1e}"
                                for d in ("bf16", "fp16", "api_bf16", "api_fp16") if d in r)
    if "cuir_ms" in r:
        flex = f"{r['flex_ms']:.3f} ms" if r.get("flex_ms") else f"- ({r.get('flex_note')})"
        speed = f"  x{r['flex_ms'] / r['cuir_ms']:.2f}" if r.get("flex_ms") else ""
        loop = (f"  back to back cuir {r['cuir_loop_ms']:.3f} flex {r['flex_loop_ms']:.3f} "
                f"x{r['flex_loop_ms'] / r['cuir_loop_ms']:.2f}") if r.get("flex_loop_ms") else ""
        classify = f"  classify {r['classify_ms']:.3f} ms" if "classify_ms" in r else ""
        return f"{head} cuir {r['cuir_ms']:.3f} ms  flex {flex}{speed}{loop}{classify}"
    return head


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--stage", type=pathlib.Path)
    mode.add_argument("--run", type=pathlib.Path)
    ap.add_argument("--kernels", default="sm80,sm90")
    ap.add_argument("--opt", default=str(ROOT / "build" / "bin" / "cuir-opt"))
    ap.add_argument("--json", type=pathlib.Path)
    ap.add_argument("--md", type=pathlib.Path, help="--run: also write the tables in markdown here")
    ap.add_argument("--shapes", default=",".join(SHAPES),
                    help="--stage: only these shapes (e.g. bench, for ab_catalogue.py; the checks run on the others)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="--stage: builds at a time")
    ap.add_argument("--memcheck", action="store_true", help="first run the checks under compute-sanitizer")
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--rounds", type=int, default=1,
                    help="--run: time CuIR and FlexAttention alternately in this many rounds, the medians over them")
    ap.add_argument("--checks-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("names", nargs="*", help="catalogue entries (default: all), for --stage and --run")
    args = ap.parse_args()
    if args.stage:
        shapes = args.shapes.split(",")
        if not set(shapes) <= set(SHAPES):
            ap.error(f"--shapes: {args.shapes}: each of {', '.join(SHAPES)}")
        return stage(args.stage, args.names, args.kernels.split(","), args.opt, args.jobs, shapes)
    rc = 0
    if args.memcheck:
        sanitizer = os.environ.get("COMPUTE_SANITIZER", "/usr/local/cuda/bin/compute-sanitizer")
        r = subprocess.run([sanitizer, "--tool", "memcheck", "--error-exitcode", "3", sys.executable, __file__,
                            "--run", str(args.run), "--checks-only", "--json",
                            str((args.json or args.run / "results.json").with_suffix(".memcheck.json")),
                            *args.names])
        print(f"compute-sanitizer memcheck: exit {r.returncode}" + (" (clean)" if r.returncode == 0 else ""))
        rc = r.returncode
    return run(args.run, args.json or args.run / "results.json", not args.no_bench, args.checks_only,
               args.names, args.md, args.rounds) or rc


if __name__ == "__main__":
    sys.exit(main())
