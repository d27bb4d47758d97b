#!/usr/bin/env python3
"""The GPU half of make.py's experiment: ab.py OUT [ENTRY NAME ...] (default: bias_tensor bias_orig bias_quad
bias_stage, make.py's libraries). Libraries OUT/<NAME>.so (with OUT/<NAME>.json) of the catalogue entry ENTRY
at the bench shape, the first the reference: each one's output against the first's (bitwise) at the bench
shape and at a ragged one, then per-call and back-to-back times interleaved (best of 3 rounds), and
FlexAttention's."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[4]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tools" / "gpu")]
import torch  # noqa: E402
import check_catalogue as cc  # noqa: E402
from cuir import catalogue  # noqa: E402
from timing import loop_ms, median_ms  # noqa: E402

OUT = pathlib.Path(sys.argv[1])
ENTRY, *LIBS = sys.argv[2:] or ["bias_tensor", "bias_orig", "bias_quad", "bias_stage"]
B, Hq, Hkv, Nq, Nkv, D = cc.SHAPES["bench"]
entry = catalogue.get(ENTRY)
tensors = {n: t.cuda() for n, t in entry.make(B, Hq, Nq, Nkv, "cpu").items()}
calls = {name: cc._kernel_call(OUT / f"{name}.so", entry, tensors) for name in LIBS}
# A runtime block mask (random_mask's) is made once per problem, as the catalogue's bench does.
for dtype in (torch.bfloat16, torch.float16):
    q, k, v = cc._inputs(B, Hq, Hkv, Nq, Nkv, D, dtype, seed=7)
    bm = calls[LIBS[0]].block_mask(q, k)
    ref = calls[LIBS[0]](q, k, v, True, bm)
    for name in LIBS[1:]:
        out = calls[name](q, k, v, True, bm)
        print(f"{dtype} {name}: output bitwise equal to {LIBS[0]}'s {torch.equal(out[0], ref[0])}, lse "
              f"{torch.equal(out[1], ref[1])}", flush=True)
# a problem whose last query block is ragged (rows past Nq: the gathers fall back there)
q, k, v = cc._inputs(B, Hq, Hkv, Nq - 77, Nkv, D, torch.bfloat16, seed=8)
bm = calls[LIBS[0]].block_mask(q, k)
ref = calls[LIBS[0]](q, k, v, False, bm)
for name in LIBS[1:]:
    print(f"ragged Nq {Nq - 77} {name}: bitwise equal {torch.equal(calls[name](q, k, v, False, bm), ref)}",
          flush=True)
q, k, v = cc._inputs(B, Hq, Hkv, Nq, Nkv, D, torch.bfloat16, seed=1)
bm = calls[LIBS[0]].block_mask(q, k)
times = {name: ([], []) for name in LIBS}
for _ in range(3):
    for name in LIBS:
        fn = lambda: calls[name](q, k, v, False, bm)  # noqa: E731
        times[name][0].append(median_ms(fn))
        times[name][1].append(loop_ms(fn))
flex = cc._flex_time(entry, tensors, q, k, v)
for name in LIBS:
    t, t_loop = min(times[name][0]), min(times[name][1])
    print(f"{ENTRY} {name:10s} per call {t:.3f} ms (Flex/CuIR {flex['flex_ms'] / t:.2f})  back to back "
          f"{t_loop:.3f} ms (Flex/CuIR {flex['flex_loop_ms'] / t_loop:.2f})  rounds "
          f"{['%.3f' % x for x in times[name][0]]}", flush=True)
print(f"{ENTRY} Flex per call {flex['flex_ms']:.3f} ms, back to back {flex['flex_loop_ms']:.3f} ms")
