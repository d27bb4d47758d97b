"""The tracer of FlexAttention score_mod / mask_mod functions (see docs/Tracing.md).

    literals  MLIR text of literals, types, dense values and names
    symbolic  the traced values (Sym) the functions compute with
    ops       the IR of each operation, with torch's dtype semantics
    captures  captured tensors as variant parameters
    tracer    running the functions and assembling the cuir.variant
    verify    cuir-opt's check of the text
"""
from .errors import VariantError  # noqa: F401
from .tracer import Traced, trace  # noqa: F401
