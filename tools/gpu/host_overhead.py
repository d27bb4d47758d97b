#!/usr/bin/env python3
"""The host side of a CuIR call: how long Python and ctypes take to queue one call of a staged catalogue
library (check_catalogue.py --stage) at the bench shape, its block mask given, and what that does to the
per-call time that a caller who waits for each call sees.

  PYTHONPATH=python python3 tools/gpu/host_overhead.py STAGE [entries ...] [--package DIR] [--kernel sm90]

--package DIR imports the `cuir` package from DIR instead of this checkout's python/ (to compare two versions
of the binding on the same libraries, in separate processes). Per entry it prints the host microseconds per
call (calls queued, not synced: the GPU is busy, so this is Python's own time), the per-call median of
CUDA-event time around one call (timing.median_ms: the host time before the launch shows there), the median
of 10 calls back to back (timing.loop_ms: it hides the host time), and the top of a profile of the calls."""
import argparse
import cProfile
import json
import pathlib
import pstats
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stage", type=pathlib.Path)
    ap.add_argument("entries", nargs="*", default=["document_causal"])
    ap.add_argument("--package", type=pathlib.Path, default=ROOT / "python")
    ap.add_argument("--kernel", default="sm90")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--profile", type=int, default=12, help="lines of the profile to print (0: none)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tools" / "gpu"))
    import torch
    import check_catalogue as cc  # it puts this checkout's python/ first on sys.path: the package goes before
    sys.path.insert(0, str(args.package.resolve()))
    from cuir import catalogue
    from timing import loop_ms, median_ms
    print(f"cuir from {pathlib.Path(sys.modules['cuir'].__file__).parent}")
    info = json.loads((args.stage / "stage.json").read_text())
    B, Hq, Hkv, Nq, Nkv, D = cc.SHAPES["bench"]
    for name in args.entries:
        lib = next(i["library"] for i in info["staged"]
                   if i["entry"] == name and i["shape"] == "bench" and i["kernel"] == args.kernel)
        entry = catalogue.get(name)
        tensors = {n: t.cuda() for n, t in entry.make(B, Hq, Nq, Nkv, "cpu").items()}
        q, k, v = cc._inputs(B, Hq, Hkv, Nq, Nkv, D, torch.bfloat16, seed=1)
        call = cc._kernel_call(args.stage / lib, entry, tensors)
        comp = sys.modules["cuir.compile"]
        bm = call.block_mask(q, k)
        for _ in range(5):
            call(q, k, v, False, bm)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(args.calls):
            call(q, k, v, False, bm)
        host_us = (time.perf_counter() - start) / args.calls * 1e6
        torch.cuda.synchronize()
        per_call, loop = median_ms(lambda: call(q, k, v, False, bm)), loop_ms(lambda: call(q, k, v, False, bm))
        entry_us = _entry_alone_us(comp.load_once(args.stage / lib), lambda: call(q, k, v, False, bm), args.calls)
        print(f"{name}: host {host_us:.1f} us per call (queued, not synced), of which the library's entry alone "
              f"{entry_us:.1f} us; per call {per_call:.3f} ms; back to back {loop:.3f} ms", flush=True)
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(args.calls):
                call(q, k, v, False, bm)
            profile.disable()
            torch.cuda.synchronize()
            pstats.Stats(profile).sort_stats("tottime").print_stats(args.profile)


def _entry_alone_us(kern, one_call, calls):
    """Host microseconds per call of the library's entry point alone (its checks, tensor maps and launch),
    called again with the arguments that `one_call` passed it: the rest of host_us is Python's."""
    import torch
    seen = []
    entry = kern.entry
    kern.entry = lambda *a: seen.append(a) or entry(*a)
    try:
        result = one_call()  # keeps the output that the arguments point into
    finally:
        kern.entry = entry
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        entry(*seen[0])
    us = (time.perf_counter() - start) / calls * 1e6
    torch.cuda.synchronize()
    del result
    return us


if __name__ == "__main__":
    main()
