#!/usr/bin/env python3
"""A few launches of one variant kernel, for ncu: llama2-7b heads, N = 2048, B = 8, bf16, d = 128.

    ncu --launch-count 1 -k regex:flash_fwd_sm90 --section SpeedOfLight --section InstructionStats \\
        python3 tools/gpu/profile_variant.py alibi_causal build/variant-libs-sm90
"""
import pathlib
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cuir.variant_lib import load_variant  # noqa: E402
import variant_defs as vd  # noqa: E402

name, libs = sys.argv[1], pathlib.Path(sys.argv[2])
attn = load_variant(libs / name / f"lib{name}.so")
B, H, N, d = 8, 32, 2048, 128
q, k, v = (torch.randn(B, H, N, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
_, _, _, params = vd.make(name, B, H, N, N)
for _ in range(3):
    attn(q, k, v, **params)
torch.cuda.synchronize()
