"""Builds a FlexAttention-style variant with cuir.compile (no GPU needed to
build) and prints what a loader sees: the library and the manifest.
Usage: build_traced.py <out dir> [sm80|sm90]"""
import json
import pathlib
import sys

import torch

import cuir

slopes = torch.tensor([0.5, 0.25])


def score_mod(score, b, h, q_idx, kv_idx):
    return score + slopes[h] * (kv_idx - q_idx)


def mask_mod(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


out = pathlib.Path(sys.argv[1])
kernel = sys.argv[2] if len(sys.argv) > 2 else "sm80"  # sm80 or sm90: the expert kernel to build on
lib = cuir.compile(score_mod=score_mod, mask_mod=mask_mod, out_dir=out, name="alibi_traced", kernel=kernel,
                   archs=("sm_80",) if kernel == "sm80" else None, load=False)
print("library:", lib.name, lib.stat().st_size > 0)
print("manifest:", json.dumps(json.loads((out / "alibi_traced.json").read_text())))
