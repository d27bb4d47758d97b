#!/usr/bin/env python3
"""The GPU half of make.py's experiment: ab.py OUT STAGE. Each patched library's output against the unpatched
one's (bitwise) at the catalogue's bench shape, per-call times interleaved (best of 3 medians), FlexAttention's;
then the host cost of one call (document_causal, block mask given), not synced, and its profile."""
import cProfile
import json
import pathlib
import pstats
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[4]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tools" / "gpu")]
import torch
import check_catalogue as cc
from cuir import catalogue
from timing import median_ms
B, Hq, Hkv, Nq, Nkv, D = cc.SHAPES["bench"]
L = pathlib.Path(sys.argv[1])
for name, libs in (("random_mask", ["rm_orig", "rm_pre", "rm_early", "rm_orig_b", "rm_pre_b"]), ("bias_tensor", ["bias_orig", "bias_pre", "bias_early", "bias_orig_b", "bias_pre_b"])):
    entry = catalogue.get(name)
    tensors = {n: t.cuda() for n, t in entry.make(B, Hq, Nq, Nkv, "cpu").items()}
    q, k, v = cc._inputs(B, Hq, Hkv, Nq, Nkv, D, torch.bfloat16, seed=1)
    calls = {l: cc._kernel_call(L / f"{l}.so", entry, tensors) for l in libs}
    bm = calls[libs[0]].block_mask(q, k)
    ref = calls[libs[0]](q, k, v, False, bm)
    for l in libs[1:]:
        out = calls[l](q, k, v, False, bm)
        print(name, l, "max |diff| vs orig:", (out.float() - ref.float()).abs().max().item(), flush=True)
    times = {l: [] for l in libs}
    for _ in range(3):
        for l in libs:
            times[l].append(median_ms(lambda: calls[l](q, k, v, False, bm)))
    flex = cc._flex_time(entry, tensors, q, k, v)["flex_ms"]
    for l in libs:
        t = min(times[l])
        print(f"bench {name:12s} {l:11s} {t:.3f} ms  flex {flex:.3f}  flex/cuir {flex / t:.2f}  all {['%.3f' % x for x in times[l]]}", flush=True)

# host overhead of one call (document_causal at the bench shape, its block mask given)
entry = catalogue.get("document_causal")
stage = pathlib.Path(sys.argv[2])
info = json.loads((stage / "stage.json").read_text())
lib = [i["library"] for i in info["staged"] if i["entry"] == "document_causal" and i["shape"] == "bench"][0]
tensors = {n: t.cuda() for n, t in entry.make(B, Hq, Nq, Nkv, "cpu").items()}
q, k, v = cc._inputs(B, Hq, Hkv, Nq, Nkv, D, torch.bfloat16, seed=1)
call = cc._kernel_call(stage / lib, entry, tensors)
bm = call.block_mask(q, k)
for _ in range(5): call(q, k, v, False, bm)
torch.cuda.synchronize()
t = time.perf_counter()
for _ in range(50): call(q, k, v, False, bm)
host = (time.perf_counter() - t) / 50 * 1e3
torch.cuda.synchronize()
print(f"host per call (queued, not synced) {host:.3f} ms")
pr = cProfile.Profile(); pr.enable()
for _ in range(50): call(q, k, v, False, bm)
pr.disable(); torch.cuda.synchronize()
pstats.Stats(pr).sort_stats("tottime").print_stats(14)
