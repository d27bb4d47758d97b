"""A catalogue of attention variants in FlexAttention style, each with its own reference.

    from cuir import catalogue
    for entry in catalogue.entries():
        tensors = entry.make(B, H, Nq, Nkv, device)          # the captured tensors, by name
        score_mod, mask_mod = entry.mods(tensors)             # FlexAttention-style functions
        out = cuir.flex_attention(q, k, v, score_mod, mask_mod, normalizer=entry.normalizer)
        ref = entry.reference(q, k, v, scale, tensors)        # float64, dense: out or (out, lse)

The score_mod/mask_mod functions are written as a PyTorch user writes them
for torch.nn.attention.flex_attention (q_idx and kv_idx are raw indices, h is
the query head). Each reference is written separately, as dense tensor code
over the whole [B, H, Nq, Nkv] score matrix in float64 (catalogue/dense.py),
so that a traced function and its reference do not share code.

Families: masks.py (mask_mod), biases.py (score_mod: positional biases),
caps.py (soft-capping, score_mod masking, the sigmoid normaliser),
compositions.py (and_masks / or_masks and mixed score_mod + mask_mod).
"""
from .entry import Entry, and_masks, or_masks  # noqa: F401
from . import masks, biases, caps, compositions  # noqa: F401  (each registers its entries)
from .entry import entries, get  # noqa: F401
