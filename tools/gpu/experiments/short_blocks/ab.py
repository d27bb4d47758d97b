#!/usr/bin/env python3
"""The GPU half of make.py's ablations: ab.py OUT [entry ...]. At check_catalogue.py's bench shape (B 4, H 16,
N 4096, d 128, bf16), the block mask made once by the unpatched library and passed to every ablation, then R
rounds (order alternating) of each library's per-call and back-to-back time. Prints, per entry, each ablation's
median and its difference to "orig" (the time the ablated piece costs), and orig's output against float64."""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[3]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tools" / "gpu")]
import torch  # noqa: E402
import check_catalogue as cc  # noqa: E402
from cuir import catalogue  # noqa: E402
from make import ENTRIES, NAMES as ABLATIONS  # noqa: E402
from timing import interleaved_medians  # noqa: E402

ROUNDS = 5


def run(out, entry):
    B, Hq, Hkv, Nq, Nkv, D = cc.SHAPES["bench"]
    tensors = {n: t.cuda() for n, t in entry.make(B, Hq, Nq, Nkv, "cpu").items()}
    calls = {name: cc._kernel_call(out / entry.name / f"{name}.so", entry, tensors) for name in ABLATIONS}
    q, k, v = cc._inputs(B, Hq, Hkv, Nq, Nkv, D, torch.bfloat16, seed=1)
    bm = calls["orig"].block_mask(q, k)
    fns = {name: (lambda c: lambda: c(q, k, v, False, bm))(c) for name, c in calls.items()}
    med, _ = interleaved_medians(fns, ROUNDS)
    base = med["orig"]
    for name in fns:
        m = med[name]
        print(f"{entry.name:<16} {name:<11} {m['call']:.4f} ms ({m['call'] - base['call']:+.4f})  back to back "
              f"{m['loop']:.4f} ms ({m['loop'] - base['loop']:+.4f})", flush=True)


def main():
    out = pathlib.Path(sys.argv[1])
    print(torch.cuda.get_device_name(), flush=True)
    for name in sys.argv[2:] or ENTRIES:
        run(out, catalogue.get(name))


if __name__ == "__main__":
    main()
