#!/usr/bin/env python3
"""Times the reference interpreter on the sm_80 Source CuIR: wall time of
`cuir-opt --cuir-interpret` (built-in reference included) for one head at
several sizes, median of a few runs. Prints a table; not a pass/fail test.

    tools/bench/interpreter_speed.py [--cuir-opt build/bin/cuir-opt] [--runs 3]
"""
import argparse
import statistics
import subprocess
import time
from pathlib import Path

root = Path(__file__).resolve().parents[2]
ap = argparse.ArgumentParser()
ap.add_argument("--cuir-opt", default=str(root / "build/bin/cuir-opt"))
ap.add_argument("--source", default=str(root / "kernels/sm80/flash_fwd.cuir.mlir"))
ap.add_argument("--runs", type=int, default=3)
args = ap.parse_args()

configs = [
    ("1 head, N=1024, d=128", "Nq=1024 Nkv=1024 d=128"),
    ("1 head, N=1024, d=128, causal", "Nq=1024 Nkv=1024 d=128 causal=1"),
    ("1 head, N=1024, d=64", "Nq=1024 Nkv=1024 d=64"),
    ("1 head, N=2048, d=128", "Nq=2048 Nkv=2048 d=128"),
    ("4 heads (GQA 4/1), N=1024, d=128", "Hq=4 Hkv=1 Nq=1024 Nkv=1024 d=128"),
]
print(f"{'problem':36} {'median s':>9} {'min s':>7}")
for name, opts in configs:
    times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        r = subprocess.run([args.cuir_opt, args.source, "-o", "/dev/null",
                            f"--cuir-interpret={opts} kernel=flash_fwd_bf16_d{opts.split('d=')[1].split()[0]}"],
                           capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        if r.returncode != 0 or "matches the reference" not in r.stderr:
            raise SystemExit(f"{name}: interpreter failed:\n{r.stderr[-2000:]}")
    print(f"{name:36} {statistics.median(times):9.2f} {min(times):7.2f}")
