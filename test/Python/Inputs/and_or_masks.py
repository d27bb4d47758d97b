# and_masks / or_masks composition written as FlexAttention writes it (new_ones /
# new_zeros, a loop over captured mask_mods), over masks that capture tensors.
import torch

GRID = dict(B=2, Q=12, KV=12)
prefix = torch.tensor([3, 5], dtype=torch.int32)


def all_of(*mask_mods):
    def combined(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=torch.bool)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result
    return combined


def any_of(*mask_mods):
    def combined(b, h, q_idx, kv_idx):
        result = q_idx.new_zeros((), dtype=torch.bool)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result
    return combined


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def in_prefix(b, h, q_idx, kv_idx):
    return kv_idx < prefix[b]


def window(b, h, q_idx, kv_idx):
    return q_idx - kv_idx <= 4


mask_mod = all_of(any_of(causal, in_prefix), any_of(window, in_prefix))
