#!/usr/bin/env python3
"""Experiment (not in the product): does a spill in the evaluated-mask path of a score helper cost time when the
kernel never takes that path? With a runtime block mask's bits, the masking steps read the tile's bits; the mask
is evaluated per score only without them (a FlexAttention BlockMask, or CUIR_MASK_BITS=0), yet ptxas allocates
registers for both paths, and the traced document mask spills 268 bytes on the sm_80 forward at d = 128, all
from the evaluated path (docs/benchmarks/spills.md).

    here:   PYTHONPATH=python /usr/bin/python3 tools/gpu/check_catalogue.py --stage STAGE --shapes bench \\
                --kernels sm80 document prefix_document
            /usr/bin/python3 tools/gpu/experiments/mask_fallback/make.py STAGE OUT document prefix_document
    device: python3 tools/gpu/ab_catalogue.py --kernel sm80 asis=STAGE nofallback=OUT document prefix_document

OUT holds STAGE's stage.json and the named entries, each one's sm_80 bench library rebuilt (as
lib/Lower/Compile.cpp builds it) from its .cu patched with the masking steps' evaluated path made unreachable: a
masking step without bits returns its scores unmasked. The library is then wrong without bits and must only run
with them (as ab_catalogue.py runs it, comparing its outputs with STAGE's first)."""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "prefetch_gathers"))
from make import rebuild_staged  # noqa: E402  (lib/Lower/Compile.cpp's command lines)

BITS_END = "      return;\n    }\n  }\n"


def without_fallback(src):
    """The .cu with `if constexpr (MASK) return;` after the helper's bits path."""
    helper = src.index("void cuir_variant_scores")
    at = src.index(BITS_END, helper) + len(BITS_END)
    return src[:at] + "  if constexpr (MASK) return;  // experiment: the evaluated path made unreachable\n" + src[at:]


def main(stage, out, entries):
    rebuild_staged(stage, out, "sm80", entries, without_fallback)


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:])
