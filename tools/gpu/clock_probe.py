#!/usr/bin/env python3
"""What the GPU's clocks do while a catalogue entry runs back to back: for each staged build of the entry (and
torch.compile(flex_attention) beside it), the callable is queued back to back for --seconds while nvidia-smi
samples the SM clock, the power draw and the active clock-event (throttle) reasons every 50 ms. A kernel that
runs slower back to back than per call (timing.py) because the board lowers its clock under load shows it here:
a lower SM clock, power at the limit, the power-cap reason active. Run on the GPU machine:

  python3 tools/gpu/clock_probe.py --kernel sm90 NAME=DIR [NAME=DIR] [--seconds 4] [--json f] entry ...

DIR is a staging of check_catalogue.py --stage; the bench shape's library of each entry is run. Callables run
one after another with a 2 s pause between (the board cools back toward idle), in the order given, then flex."""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "python"), str(HERE)]

import ab_catalogue  # noqa: E402
from timing import median_ms  # noqa: E402

FIELDS = "clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active"

# Bits of clocks_event_reasons.active (nvml's nvmlClocksEventReasons).
REASONS = {0x1: "idle", 0x2: "app-clock", 0x4: "sw-power-cap", 0x8: "hw-slowdown", 0x20: "sw-thermal",
           0x40: "hw-thermal", 0x80: "hw-power-brake", 0x100: "display-clock"}


def reason_names(mask):
    return [name for bit, name in REASONS.items() if mask & bit] or ["none"]


def sample_while(fn, seconds):
    """(ms per call back to back, samples): fn queued back to back for about `seconds` under nvidia-smi."""
    import torch
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={FIELDS}", "--format=csv,noheader,nounits", "-lms", "50"],
                           stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)  # the sampler's first line
    calls, start = 0, time.perf_counter()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            fn()
        calls += 10
        torch.cuda.synchronize()
    b.record()
    torch.cuda.synchronize()
    smi.terminate()
    out, _ = smi.communicate()
    samples = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        try:
            samples.append({"sm_mhz": float(parts[0]), "watts": float(parts[1]), "celsius": float(parts[2]),
                            "reasons": int(parts[3], 16)})
        except (ValueError, IndexError):
            continue
    return a.elapsed_time(b) / calls, samples


def summary(samples):
    if not samples:
        return {"samples": 0}
    busy = samples[len(samples) // 5:]  # past the ramp
    reasons = 0
    for s in busy:
        reasons |= s["reasons"]
    return {"samples": len(busy), "sm_mhz_median": statistics.median(s["sm_mhz"] for s in busy),
            "sm_mhz_min": min(s["sm_mhz"] for s in busy), "watts_median": statistics.median(s["watts"] for s in busy),
            "watts_max": max(s["watts"] for s in busy), "celsius_max": max(s["celsius"] for s in busy),
            "reasons": reason_names(reasons)}


def main():
    import torch
    from cuir import catalogue
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", choices=["sm80", "sm90"], required=True)
    ap.add_argument("specs", nargs="+", metavar="NAME=DIR or entry")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    builds = {n: pathlib.Path(d) for n, _, d in (s.partition("=") for s in args.specs if "=" in s)}
    entries = [s for s in args.specs if "=" not in s]
    if not builds or not entries or "flex" in builds:
        ap.error("give one or more NAME=DIR builds (NAME other than 'flex') and one or more entries")
    board = subprocess.run(["nvidia-smi", "--query-gpu=name,power.limit,clocks.max.sm",
                                  "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    print(f"{board}; {args.kernel}; back to back for {args.seconds} s each", flush=True)
    rows = []
    for name in entries:
        fns, _ = ab_catalogue.entry_calls(catalogue.get(name), builds, args.kernel)
        for who, fn in fns.items():
            per_call = median_ms(fn)
            time.sleep(2)
            loop, samples = sample_while(fn, args.seconds)
            s = summary(samples)
            rows.append({"entry": name, "build": who, "ms_call": per_call, "ms_loop": loop, **s})
            print(f"{name:<16} {who:<8} call {per_call:.3f} ms  loop {loop:.3f} ms  "
                  f"SM {s.get('sm_mhz_median', 0):.0f} MHz (min {s.get('sm_mhz_min', 0):.0f})  "
                  f"{s.get('watts_median', 0):.0f} W (max {s.get('watts_max', 0):.0f})  "
                  f"{s.get('celsius_max', 0):.0f} C  reasons {','.join(s.get('reasons', []))}", flush=True)
            time.sleep(2)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(), "board": board,
                                                       "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
