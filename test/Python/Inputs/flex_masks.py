"""torch.nn.attention.flex_attention's own and_masks / or_masks, where this torch has them."""
import torch

from cuir.variant import trace

try:
    from torch.nn.attention.flex_attention import and_masks, or_masks
except ImportError:
    print(f"skipped: torch {torch.__version__} has no torch.nn.attention.flex_attention")
    raise SystemExit(0)

doc = torch.tensor([0, 0, 1, 1, 1], dtype=torch.int32)
mask_mod = and_masks(lambda b, h, q, kv: q >= kv,
                     or_masks(lambda b, h, q, kv: doc[q] == doc[kv], lambda b, h, q, kv: kv == 0))
print(trace(mask_mod=mask_mod, verify=False).text)
