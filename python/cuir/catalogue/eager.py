"""The catalogue's functions evaluated eagerly, as FlexAttention's math does, on broadcast int64 grids
(FlexAttention passes int32 scalars; torch 1.x indexes only with int64 tensors, the values are the same).

A check of each entry's reference against its own score_mod/mask_mod run by PyTorch (no tracing): they
are written separately, so agreement means both say the same thing. Used by the tests and check_catalogue.
"""
import torch

from .dense import attend, scores


def eager(entry, q, k, v, scale, tensors):
    """out (and lse for softmax) of entry's score_mod/mask_mod applied to broadcast coordinate grids."""
    B, H, Nq, _ = q.shape
    Nkv = k.shape[2]
    b = torch.arange(B, dtype=torch.int64).view(B, 1, 1, 1)
    h = torch.arange(H, dtype=torch.int64).view(1, H, 1, 1)
    qi = torch.arange(Nq, dtype=torch.int64).view(1, 1, Nq, 1)
    ki = torch.arange(Nkv, dtype=torch.int64).view(1, 1, 1, Nkv)
    cpu = {n: t.cpu() for n, t in tensors.items()}
    score_mod, mask_mod = entry.mods(cpu)
    s = scores(q, k, scale).float()
    if score_mod is not None:
        s = score_mod(s, b, h, qi, ki).expand(B, H, Nq, Nkv)
    visible = None
    if mask_mod is not None:
        visible = mask_mod(b, h, qi, ki).expand(B, H, Nq, Nkv)
    return attend(s.double(), v, visible, sigmoid=entry.normalizer == "sigmoid")
