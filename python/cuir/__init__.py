"""CuIR from Python: FlexAttention-style variants as expert attention kernels.

    cuir.flex_attention(q, k, v, score_mod, block_mask)   ->  torch's flex_attention, on CuIR's kernels
    cuir.trace_variant(score_mod, mask_mod, normalizer)  ->  cuir.variant text
    cuir.compile("prefixlm") or cuir.compile(score_mod=...) ->  a callable on torch tensors (cached on disk)
    cuir.load_variant("out/libprefixlm.so")               ->  the same, for a built library
    attn.block_mask(B, H, Nq, Nkv, **params)             ->  a cuir.BlockMask, for attn(..., block_mask=bm)
    cuir.catalogue                                        ->  FlexAttention-style variants with references
    cuir.attention(q, k, v, causal=True)                  ->  differentiable attention on CuIR's kernels
"""
from .variant import VariantError, trace_variant  # noqa: F401
from .variant_lib import load_variant, load_variant_backward  # noqa: F401
from .autograd_variant import TrainableVariant, variant_attention  # noqa: F401
from .block_mask import BlockMask  # noqa: F401
from .compile import compile  # noqa: F401,A001
from .flex import flex_attention  # noqa: F401
from .attention_op import attention  # noqa: F401
