"""Masks (mask_mod): which (query, key) pairs are visible, FlexAttention style.

Each entry's mask_mod is written as a user writes it for flex_attention; its reference builds the same
mask over the dense coordinate grids of dense.py.
"""
import torch

from .dense import attend, grids, scores
from .entry import generator, or_masks, register

WINDOW = 48          # sliding windows: keys at most WINDOW positions behind (or around) the query
GLOBAL_TOKENS = 8    # global tokens: the first GLOBAL_TOKENS positions see and are seen by everything
DILATION = 3         # dilated window: every DILATION-th key within DILATED_SPAN
DILATED_SPAN = 96
BLOCK = 32           # block-diagonal attention in blocks of BLOCK positions
STRIDE = 16          # fixed sparse pattern: local blocks of STRIDE, the last SUMMARY of each block summarises it
SUMMARY = 4
KEEP = 0.7           # random mask: probability that a pair is kept


def _grid_like(q, k):
    return grids(q.shape[0], q.shape[1], q.shape[2], k.shape[2])


def _run(q, k, v, scale, visible):
    return attend(scores(q, k, scale), v, visible)


# ---- causal ---------------------------------------------------------------------------------------------

def causal_mask(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def _ref_causal(q, k, v, scale, t):
    _, _, qi, ki = _grid_like(q, k)
    return _run(q, k, v, scale, ki <= qi)


register("causal", "mask", "causal (top-left aligned, as FlexAttention's q_idx >= kv_idx)",
         lambda t: (None, causal_mask), _ref_causal)


# ---- sliding windows ------------------------------------------------------------------------------------

def _sliding_window_mods(t):
    def sliding_window(b, h, q_idx, kv_idx):
        causal = q_idx >= kv_idx
        near = q_idx - kv_idx <= WINDOW
        return causal & near
    return None, sliding_window


def _ref_sliding_window(q, k, v, scale, t):
    _, _, qi, ki = _grid_like(q, k)
    d = qi - ki
    return _run(q, k, v, scale, (d >= 0) & (d <= WINDOW))


register("sliding_window", "mask", f"causal sliding window of {WINDOW} keys behind the query",
         _sliding_window_mods, _ref_sliding_window)


def _bidirectional_window_mods(t):
    def local(b, h, q_idx, kv_idx):
        return torch.abs(q_idx - kv_idx) <= WINDOW
    return None, local


def _ref_bidirectional_window(q, k, v, scale, t):
    _, _, qi, ki = _grid_like(q, k)
    return _run(q, k, v, scale, (qi - ki).abs() <= WINDOW)


register("bidirectional_window", "mask", f"|q_idx - kv_idx| <= {WINDOW} (abs)",
         _bidirectional_window_mods, _ref_bidirectional_window, needs=("abs",))


def _make_window_per_head(B, H, Nq, Nkv, device):
    sizes = torch.tensor([8 * (2 ** (i % 4)) for i in range(H)], dtype=torch.int32)
    return {"window_size": sizes.to(device)}


def _window_per_head_mods(t):
    window_size = t["window_size"]

    def per_head_window(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx <= window_size[h])
    return None, per_head_window


def _ref_window_per_head(q, k, v, scale, t):
    _, h, qi, ki = _grid_like(q, k)
    w = t["window_size"].cpu().long()[h]
    d = qi - ki
    return _run(q, k, v, scale, (d >= 0) & (d <= w))


register("window_per_head", "mask", "causal window whose size is a per-head int32 tensor [H]",
         _window_per_head_mods, _ref_window_per_head, _make_window_per_head)


# ---- prefix LM ------------------------------------------------------------------------------------------

def _make_prefix(B, H, Nq, Nkv, device):
    g = generator("prefix_lm", B, H, Nq, Nkv)
    lengths = torch.randint(0, max(Nkv, 1), (B,), generator=g, dtype=torch.int32)
    return {"prefix_length": lengths.to(device)}


def _prefix_lm_mods(t):
    prefix_length = t["prefix_length"]

    def prefix(b, h, q_idx, kv_idx):
        return kv_idx < prefix_length[b]
    return None, or_masks(causal_mask, prefix)


def _ref_prefix_lm(q, k, v, scale, t):
    b, _, qi, ki = _grid_like(q, k)
    p = t["prefix_length"].cpu().long()[b]
    return _run(q, k, v, scale, (ki <= qi) | (ki < p))


register("prefix_lm", "mask", "prefix LM: or_masks(causal, kv_idx < prefix_length[b]), an int32 [B] tensor",
         _prefix_lm_mods, _ref_prefix_lm, _make_prefix, needs=("or_masks of nested functions",))


# ---- documents (packed sequences) -----------------------------------------------------------------------

def make_document_id(name, B, H, Nq, Nkv, device, dtype=torch.int64):
    """Document ids of max(Nq, Nkv) packed positions: runs of random lengths, ids 0, 1, 2, ..."""
    n = max(Nq, Nkv)
    g = generator(name, B, H, Nq, Nkv)
    starts = torch.zeros(n, dtype=torch.bool)
    starts[torch.randint(1, max(n, 2), (max(n // 40, 1),), generator=g)] = True
    starts[0] = False
    return {"document_id": torch.cumsum(starts.long(), 0).to(dtype).to(device)}


def document_mods(t):
    document_id = t["document_id"]

    def document(b, h, q_idx, kv_idx):
        return document_id[q_idx] == document_id[kv_idx]
    return document


def _ref_document(q, k, v, scale, t):
    _, _, qi, ki = _grid_like(q, k)
    ids = t["document_id"].cpu().long()
    return _run(q, k, v, scale, ids[qi] == ids[ki])


register("document", "mask", "packed documents: document_id[q_idx] == document_id[kv_idx], int64 [N]",
         lambda t: (None, document_mods(t)), _ref_document,
         lambda B, H, Nq, Nkv, device: make_document_id("document", B, H, Nq, Nkv, device),
         needs=("1-D per-token tensor", "int64"))


def _make_key_padding(B, H, Nq, Nkv, device):
    g = generator("key_padding", B, H, Nq, Nkv)
    return {"kv_length": torch.randint(1, Nkv + 1, (B,), generator=g, dtype=torch.int32).to(device)}


def _key_padding_mods(t):
    kv_length = t["kv_length"]

    def key_padding(b, h, q_idx, kv_idx):
        return kv_idx < kv_length[b]
    return None, key_padding


def _ref_key_padding(q, k, v, scale, t):
    b, _, _, ki = _grid_like(q, k)
    return _run(q, k, v, scale, ki < t["kv_length"].cpu().long()[b])


register("key_padding", "mask", "padded batches: kv_idx < kv_length[b], an int32 [B] tensor",
         _key_padding_mods, _ref_key_padding, _make_key_padding)


# ---- global tokens, dilation, blocks, fixed sparse patterns ---------------------------------------------

def _global_window_mods(t):
    def global_window(b, h, q_idx, kv_idx):
        is_global = (q_idx < GLOBAL_TOKENS) | (kv_idx < GLOBAL_TOKENS)
        return is_global | ((q_idx - kv_idx <= WINDOW) & (kv_idx - q_idx <= WINDOW))
    return None, global_window


def _ref_global_window(q, k, v, scale, t):
    _, _, qi, ki = _grid_like(q, k)
    glob = (qi < GLOBAL_TOKENS) | (ki < GLOBAL_TOKENS)
    return _run(q, k, v, scale, glob | ((qi - ki).abs() <= WINDOW))


register("global_window", "mask", f"{GLOBAL_TOKENS} global tokens + a window of {WINDOW} (Longformer style)",
         _global_window_mods, _ref_global_window)


def _dilated_mods(t):
    def dilated(b, h, q_idx, kv_idx):
        offset = q_idx - kv_idx
        return ((offset % DILATION) == 0) & (offset <= DILATED_SPAN) & (offset >= -DILATED_SPAN)
    return None, dilated


def _ref_dilated(q, k, v, scale, t):
    _, _, qi, ki = _grid_like(q, k)
    d = qi - ki
    return _run(q, k, v, scale, (torch.remainder(d, DILATION) == 0) & (d.abs() <= DILATED_SPAN))


register("dilated", "mask", f"dilated window: (q_idx - kv_idx) % {DILATION} == 0 (Python modulo of negatives)",
         _dilated_mods, _ref_dilated, needs=("floor modulo",))


def _block_diagonal_mods(t):
    def block_diagonal(b, h, q_idx, kv_idx):
        return q_idx // BLOCK == kv_idx // BLOCK
    return None, block_diagonal


def _ref_block_diagonal(q, k, v, scale, t):
    _, _, qi, ki = _grid_like(q, k)
    same = torch.div(qi, BLOCK, rounding_mode="floor") == torch.div(ki, BLOCK, rounding_mode="floor")
    return _run(q, k, v, scale, same)


register("block_diagonal", "mask", f"block-diagonal: q_idx // {BLOCK} == kv_idx // {BLOCK} (floor division)",
         _block_diagonal_mods, _ref_block_diagonal, needs=("floor division",))


def _fixed_sparse_mods(t):
    def fixed_sparse(b, h, q_idx, kv_idx):
        local = q_idx // STRIDE == kv_idx // STRIDE
        summary = kv_idx % STRIDE >= STRIDE - SUMMARY
        return (q_idx >= kv_idx) & (local | summary)
    return None, fixed_sparse


def _ref_fixed_sparse(q, k, v, scale, t):
    _, _, qi, ki = _grid_like(q, k)
    local = torch.div(qi, STRIDE, rounding_mode="floor") == torch.div(ki, STRIDE, rounding_mode="floor")
    summary = torch.remainder(ki, STRIDE) >= STRIDE - SUMMARY
    return _run(q, k, v, scale, (ki <= qi) & (local | summary))


register("fixed_sparse", "mask",
         f"Sparse Transformer's fixed pattern: causal, local blocks of {STRIDE} | the last {SUMMARY} of each block",
         _fixed_sparse_mods, _ref_fixed_sparse, needs=("floor division", "floor modulo"))


def _make_random(B, H, Nq, Nkv, device):
    g = generator("random_mask", B, H, Nq, Nkv)
    return {"keep": (torch.rand(Nq, Nkv, generator=g) < KEEP).to(device)}


def _random_mods(t):
    keep = t["keep"]

    def random_mask(b, h, q_idx, kv_idx):
        return keep[q_idx, kv_idx]
    return None, random_mask


def _ref_random(q, k, v, scale, t):
    return _run(q, k, v, scale, t["keep"].cpu().bool().view(1, 1, *t["keep"].shape))


register("random_mask", "mask", f"a bool [Nq, Nkv] tensor looked up at [q_idx, kv_idx] (keeps {KEEP:.0%})",
         _random_mods, _ref_random, _make_random, needs=("2-D bool tensor",))
