#!/usr/bin/env python3
"""ptxas spills of the catalogue's lowered kernels: each entry (or built-in) traced, lowered on each forward
kernel (and with --backward, each backward kernel) with cuir-opt, and the most bytes any instantiation of the
attention kernel spills, from the ptxas -v log the lowering writes. Runs here (clang, MLIR); no GPU.

A spill in a patched kernel is a variant running slower than its source would: cuir-opt warns at build time,
and this gathers the warnings of a whole catalogue into one table.

  PYTHONPATH=python /usr/bin/python3 tools/spill_survey.py [--kernels sm90,sm80] [--backward] [--builtins]
                                                           [--opt build/bin/cuir-opt] [--jobs 2] [entry ...]
"""
import argparse
import concurrent.futures
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

ARCHS = {"sm80": "sm_90", "sm90": "sm_90a"}  # as the H200 runs them (sm_80 code compiled for sm_90)
BENCH_SHAPE = (4, 16, 4096, 4096)           # B, H, Nq, Nkv: check_catalogue.py's bench shape
BUILTINS = ("causal", "prefixlm", "softcap", "sigmoid", "alibi", "window", "global-window", "document")
KERNEL_FUNCTION = re.compile(r"Function properties for (\S*flash_(?:fwd|bwd)_sm\d+\S*)")
SPILLS = re.compile(r"(\d+) bytes spill stores")
HEAD_DIM = re.compile(r"Li(\d+)E")  # the first integer template argument of every attention kernel


def by_head_dim(found):
    """{head dim: most spill-store bytes} of the instantiations in `found` (spills()' result)."""
    out = {}
    for name, spilled in found.items():
        m = HEAD_DIM.search(name)
        if m:
            d = int(m.group(1))
            out[d] = max(out.get(d, 0), spilled)
    return dict(sorted(out.items()))


def spills(log):
    """{instantiation: spill-store bytes} of the attention kernels in a ptxas -v log."""
    out, current = {}, None
    for line in log.splitlines():
        m = KERNEL_FUNCTION.search(line)
        if m:
            current = m.group(1)
            continue
        s = SPILLS.search(line)
        if current and s:
            out[current] = int(s.group(1))
            current = None
    return out


def survey_one(opt, kernel, backward, name, spec):
    """(name, kernel, direction, max spill bytes or None, instantiations spilling, error, by head dim)."""
    source = ROOT / "kernels" / kernel / ("flash_bwd.cu" if backward else "flash_fwd.cu")
    arch = ARCHS[kernel]
    with tempfile.TemporaryDirectory() as tmp:
        if spec.startswith("cuir.variant") or "\n" in spec:
            path = pathlib.Path(tmp) / f"{name}.variant.mlir"
            path.write_text(spec)
            spec = str(path)
        cmd = [opt, str(source), "--lift", f"--transfer={spec}", "--cuir-split-full-partial",
               f"--lower=archs={arch}", "-o", str(pathlib.Path(tmp) / "out" / "v.cu")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        direction = "backward" if backward else "forward"
        if r.returncode != 0:
            err = next((l for l in r.stderr.splitlines() if "error" in l), r.stderr.strip()[-200:])
            return name, kernel, direction, None, 0, err, {}
        logs = list((pathlib.Path(tmp) / "out").glob("*.ptxas.log"))
        found = spills(logs[0].read_text()) if logs else {}
        worst = max(found.values(), default=0)
        return name, kernel, direction, worst, sum(v > 0 for v in found.values()), "", by_head_dim(found)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("entries", nargs="*", help="catalogue entries (default: all)")
    ap.add_argument("--kernels", default="sm90,sm80")
    ap.add_argument("--backward", action="store_true", help="also the backward kernels")
    ap.add_argument("--builtins", action="store_true", help="the built-in variants instead of the catalogue")
    ap.add_argument("--opt", default=str(ROOT / "build" / "bin" / "cuir-opt"))
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    if args.builtins:
        specs = [(b, b) for b in (args.entries or BUILTINS)]
    else:
        from cuir import catalogue
        from cuir.catalogue.check import trace_entry
        chosen = [catalogue.get(n) for n in args.entries] if args.entries else catalogue.entries()
        specs = []
        for entry in chosen:
            try:
                specs.append((entry.name, trace_entry(entry, *BENCH_SHAPE, defaults=False)[0]))
            except Exception as e:  # reported, the others surveyed
                print(f"{entry.name}: not traced ({type(e).__name__}: {str(e)[:120]})", flush=True)
    jobs = [(k, bwd, n, s) for n, s in specs for k in args.kernels.split(",")
            for bwd in ((False, True) if args.backward else (False,))]
    rows = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for row in pool.map(lambda j: survey_one(args.opt, *j), jobs):
            name, kernel, direction, worst, count, err, dims = row
            per_dim = ", ".join(f"d {d}: {b}" for d, b in dims.items())
            what = f"error: {err}" if worst is None else (f"{worst} bytes ({count} instantiations; {per_dim})"
                                                          if worst else "no spills")
            print(f"{name} {kernel} {direction}: {what}", flush=True)
            rows.append(row)
    dims = sorted({d for row in rows for d in row[6]})
    print("\n| entry | kernel | pass | most bytes spilled | instantiations spilling | " +
          " | ".join(f"d = {d}" for d in dims) + " |\n|" + "---|" * (5 + len(dims)))
    for name, kernel, direction, worst, count, err, by_dim in rows:
        print(f"| {name} | {kernel} | {direction} | {'error' if worst is None else worst} | {count} | " +
              " | ".join(str(by_dim.get(d, "-")) for d in dims) + " |")
    bad = [r for r in rows if r[3]]
    print(f"\n{len(bad)} of {len(rows)} kernels spill")
    return 0


if __name__ == "__main__":
    sys.exit(main())
