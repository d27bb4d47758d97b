#!/usr/bin/env python3
"""Experiment (not in the product): would the sm_90 kernel's staged gathers (a bias or bool mask copied by each
consumer warp into shared memory with cp.async, docs/Lowering.md) gain from being issued one step ahead? As
lowered, a step issues its own copies at its top (the score hook's early phase) and waits for them once S has
landed: the copies have the step's wait for its ping-pong turn and its S = Q K^T to arrive. Here a step issues the
next step's copies into the same buffer as soon as its own scores have read it (the words are in registers by
then), so they have the softmax, the P V and the next S as well. Only an item's first step still gathers at its
top. Both hooks then share one gathered struct (they stage the same rows).

    here:   PYTHONPATH=python /usr/bin/python3 tools/gpu/check_catalogue.py --stage STAGE --shapes bench \\
                --kernels sm90 bias_tensor random_mask
            /usr/bin/python3 tools/gpu/experiments/prefetch_next/make.py STAGE OUT bias_tensor random_mask
    device: python3 tools/gpu/ab_catalogue.py --kernel sm90 asis=STAGE next=OUT bias_tensor random_mask

OUT holds STAGE's stage.json and the named entries, each one's sm_90 bench library rebuilt (as
lib/Lower/Compile.cpp builds it) from its patched .cu. The outputs must be bitwise equal to STAGE's (same
arithmetic, same data)."""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "prefetch_gathers"))
from make import rebuild_staged  # noqa: E402  (lib/Lower/Compile.cpp's command lines)

EARLY = "  score_hook(kv_tiles(n_block), true);  // the score hook's early phase: its loads for this step\n"
LATE = "  score_hook(kv_tile, false);\n"
SIGNATURE = "int n_block,\n                                              int n_block_max, "
CALL = "n_block, n_block_max, acc_o"


def replace_once(src, old, new, count=1):
    assert src.count(old) == count, (old, src.count(old))
    return src.replace(old, new)


def prefetch_next(src):
    s = replace_once(src, EARLY, "  if constexpr (FIRST) " + EARLY.lstrip())
    s = replace_once(s, LATE, LATE + "  if (n_block > n_block_min)  // experiment: the next step's copies, into the "
                     "buffer this step has read\n    score_hook(kv_tiles(n_block - 1), true);\n")
    s = replace_once(s, SIGNATURE, SIGNATURE + "int n_block_min, ")
    s = replace_once(s, CALL, "n_block, n_block_max, n_block_min, acc_o", 3)
    # One gathered struct for both hooks: a masking step may issue the copies an unmasked step reads.
    # (random_mask's unmasked steps gather nothing: every tile of a random mask is partial.)
    s = s.replace("    decltype(cuir_variant_gathered_of(acc_s)) cuir_gathered_1;", "")
    return s.replace("cuir_gathered_1", "cuir_gathered_0")


def main(stage, out, entries):
    rebuild_staged(stage, out, "sm90", entries, prefetch_next)


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:])
