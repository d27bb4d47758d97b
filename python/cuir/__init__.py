"""CuIR from Python: FlexAttention-style variants as expert attention kernels.

    cuir.trace_variant(score_mod, mask_mod, normalizer)  ->  cuir.variant text
    cuir.compile("prefixlm") or cuir.compile(score_mod=...) ->  a callable on torch tensors
    cuir.load_variant("out/libprefixlm.so")               ->  the same, for a built library
"""
from .variant import VariantError, trace_variant  # noqa: F401
from .variant_lib import load_variant  # noqa: F401
from .compile import compile  # noqa: F401,A001
