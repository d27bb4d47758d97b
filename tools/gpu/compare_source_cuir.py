#!/usr/bin/env python3
"""Compares the Source CuIR's output with the CUDA kernel's own output.

The interpreter runs the Source CuIR here (CPU, MLIR) and dumps its inputs
and outputs (`cuir-opt flash_fwd.cuir.mlir --cuir-interpret="... dump=DIR"`);
this script, run on the GPU, feeds the same inputs to the built kernel and
compares both outputs with each other and with a float64 reference.

    python3 tools/gpu/compare_source_cuir.py build/cuir-dumps/*
"""
import json
import math
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from cuir.kernel_lib import flash_fwd_sm80  # noqa: E402


def reference(q, k, v, scale, causal):
    q, k, v = (t.double().permute(0, 2, 1, 3) for t in (q, k, v))
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
    s = q @ k.transpose(-1, -2) * scale
    if causal:
        nq, nkv = s.shape[-2:]
        s = s.masked_fill(~torch.ones(nq, nkv, dtype=torch.bool, device=s.device).tril(nkv - nq), -math.inf)
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return (p @ v).permute(0, 2, 1, 3), torch.logsumexp(s, -1)


def rel(a, b):
    return ((a.double() - b.double()).norm() / b.double().norm()).item()


worst = 0.0
print(f"{'dump':24} {'kernel':22} {'IR vs CUDA':>11} {'IR vs ref':>10} {'CUDA vs ref':>11} {'LSE IR-CUDA':>11}")
for d in map(Path, sys.argv[1:]):
    meta = json.loads((d / "meta.json").read_text())
    dt = torch.bfloat16 if meta["dtype"] == "bf16" else torch.float16
    load = lambda n: torch.from_numpy(np.load(d / f"{n}.npy")).cuda()  # noqa: E731
    q, k, v = (load(n).to(dt) for n in ("q", "k", "v"))
    assert torch.equal(load("q").to(dt).float(), load("q")), "inputs must be exact in the element type"
    o_ir, lse_ir = load("o"), load("lse")
    o_cuda, lse_cuda = flash_fwd_sm80(q, k, v, causal=meta["causal"], softmax_scale=meta["scale"])
    torch.cuda.synchronize()
    o_ref, lse_ref = reference(q, k, v, meta["scale"], meta["causal"])
    finite = torch.isfinite(lse_ref)
    lse_diff = (lse_ir[finite] - lse_cuda.float()[finite]).abs().max().item() if finite.any() else 0.0
    e_ir_cuda = rel(o_ir, o_cuda.float())
    worst = max(worst, e_ir_cuda)
    print(f"{d.name:24} {meta['kernel']:22} {e_ir_cuda:11.2e} {rel(o_ir, o_ref):10.2e} "
          f"{rel(o_cuda.float(), o_ref):11.2e} {lse_diff:11.2e}")
print(f"worst relative difference IR vs CUDA: {worst:.2e}")
sys.exit(0 if worst < 1e-2 else 1)
