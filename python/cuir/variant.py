"""FlexAttention-style attention variants as CuIR.

    from cuir.variant import trace_variant
    slopes = torch.tensor([...])
    def score_mod(score, b, h, q_idx, kv_idx):
        return 30.0 * torch.tanh(score / 30.0) + slopes[h] * (kv_idx - q_idx)
    text = trace_variant(score_mod=score_mod, name="softcap_alibi")

`score_mod(score, b, h, q_idx, kv_idx)` receives the scaled score and returns
the score the normaliser sees; `mask_mod(b, h, q_idx, kv_idx)` returns whether
the pair is visible; `normalizer` is "softmax" or "sigmoid". The functions run
once on traced values (python/cuir/trace) with PyTorch's semantics, into a
`cuir.variant` op that `cuir-opt --transfer=<file>` accepts. Tensors they
capture become parameters named after their variables, with static shapes;
`trace(...)` gives their values apart from the text (`.text`, `.params`,
`.values`). Anything unsupported is a VariantError naming the user's
file:line. docs/Tracing.md lists what is supported.

Command line: python3 -m cuir.trace spec.py -o variant.mlir
(spec.py defines score_mod and/or mask_mod, optionally NORMALIZER and NAME).
"""
import argparse
import runpy
import sys

from .trace import Traced, VariantError, trace  # noqa: F401


def trace_variant(score_mod=None, mask_mod=None, normalizer="softmax", name="traced",
                  defaults=True, verify=True):
    """The text of a `cuir.variant` computing score_mod / mask_mod.

    defaults=False leaves out the captured tensors' values (cuir.default), so
    the text depends only on the code and the tensors' shapes and dtypes."""
    return trace(score_mod, mask_mod, normalizer, name, defaults, verify).text


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m cuir.trace", 
        description="Trace score_mod/mask_mod of a Python file into a cuir.variant")
    ap.add_argument("spec", help="file defining score_mod and/or mask_mod "
                                 "(optional NORMALIZER, NAME)")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--no-defaults", action="store_true",
                    help="leave the captured tensors' values out of the text")
    ap.add_argument("--no-verify", action="store_true", help="do not run cuir-opt on it")
    args = ap.parse_args(argv)
    ns = runpy.run_path(args.spec)
    try:
        text = trace_variant(ns.get("score_mod"), ns.get("mask_mod"),
                             ns.get("NORMALIZER", "softmax"), ns.get("NAME", "traced"),
                             defaults=not args.no_defaults, verify=not args.no_verify)
    except VariantError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
