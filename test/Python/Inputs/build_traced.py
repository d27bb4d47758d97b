"""Builds a FlexAttention-style variant with cuir.compile (no GPU needed to
build) and prints what a loader sees: the library and the manifest."""
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
lib = cuir.compile(score_mod=score_mod, mask_mod=mask_mod, out_dir=out, name="alibi_traced",
                   archs=("sm_80",), load=False)
print("library:", lib.name, lib.stat().st_size > 0)
print("manifest:", json.dumps(json.loads((out / "alibi_traced.json").read_text())))
