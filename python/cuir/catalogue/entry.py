"""The catalogue's entry type, its registry and FlexAttention-style mask composition."""
import dataclasses
from typing import Callable, Optional

_REGISTRY = {}


@dataclasses.dataclass(frozen=True)
class Entry:
    """One variant.

    mods(tensors) -> (score_mod or None, mask_mod or None): the functions, capturing the tensors of
        `tensors` under the variable names that become kernel parameters.
    make(B, H, Nq, Nkv, device) -> {name: tensor}: the captured tensors for one problem shape (H is the
        number of query heads), deterministic (seeded), so that a reference process rebuilds them.
    reference(q, k, v, scale, tensors) -> out, or (out, lse) for softmax: float64, dense, GQA by
        repeating k/v heads; q [B, Hq, Nq, d], k/v [B, Hkv, Nkv, d].
    """
    name: str
    family: str
    summary: str
    mods: Callable
    reference: Callable
    make: Callable = lambda B, H, Nq, Nkv, device: {}
    normalizer: str = "softmax"
    # what the entry exercises beyond today's tracer (documentation for the report and tests)
    needs: tuple = ()


def register(name, family, summary, mods, reference, make=None, normalizer="softmax", needs=()):
    if name in _REGISTRY:
        raise ValueError(f"catalogue entry {name!r} registered twice")
    entry = Entry(name, family, summary, mods, reference, make or (lambda B, H, Nq, Nkv, device: {}),
                  normalizer, tuple(needs))
    _REGISTRY[name] = entry
    return entry


def entries(family: Optional[str] = None):
    """All entries (in registration order), or those of one family."""
    return [e for e in _REGISTRY.values() if family is None or e.family == family]


def get(name):
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no catalogue entry {name!r}; known: {', '.join(_REGISTRY)}") from None


def and_masks(*mask_mods):
    """A mask_mod that sees a pair only where every one of mask_mods does (FlexAttention's and_masks)."""
    def mask_mod(b, h, q_idx, kv_idx):
        visible = mask_mods[0](b, h, q_idx, kv_idx)
        for other in mask_mods[1:]:
            visible = visible & other(b, h, q_idx, kv_idx)
        return visible
    return mask_mod


def or_masks(*mask_mods):
    """A mask_mod that sees a pair where any one of mask_mods does (FlexAttention's or_masks)."""
    def mask_mod(b, h, q_idx, kv_idx):
        visible = mask_mods[0](b, h, q_idx, kv_idx)
        for other in mask_mods[1:]:
            visible = visible | other(b, h, q_idx, kv_idx)
        return visible
    return mask_mod


def generator(name, *shape):
    """A CPU generator seeded by the entry's name and the problem shape (the same in every process)."""
    import zlib
    import torch
    g = torch.Generator()
    g.manual_seed(zlib.crc32(f"{name}:{':'.join(str(int(x)) for x in shape)}".encode()))
    return g
