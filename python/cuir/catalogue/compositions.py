"""Compositions: score_mods and mask_mods of the other families combined, and_masks / or_masks."""
import torch

from . import biases, caps, masks
from .dense import attend, grids, scores
from .entry import and_masks, generator, or_masks, register


def _grid_like(q, k):
    return grids(q.shape[0], q.shape[1], q.shape[2], k.shape[2])


def _causal(q, k):
    _, _, qi, ki = _grid_like(q, k)
    return ki <= qi


register("alibi_causal", "composition", "ALiBi + causal",
         lambda t: (biases.alibi_mods(t), masks.causal_mask),
         lambda q, k, v, scale, t: attend(scores(q, k, scale) + biases.ref_alibi_bias(q, k, t), v, _causal(q, k)),
         lambda B, H, Nq, Nkv, device: {"alibi_slope": biases.alibi_slopes(H).to(device)})


register("document_causal", "composition", "and_masks(causal, document): causal within each packed document",
         lambda t: (None, and_masks(masks.causal_mask, masks.document_mods(t))),
         lambda q, k, v, scale, t: attend(scores(q, k, scale), v, _causal(q, k) & _same_document(q, k, t)),
         lambda B, H, Nq, Nkv, device: masks.make_document_id("document_causal", B, H, Nq, Nkv, device,
                                                              torch.int32),
         needs=("and_masks of nested functions", "1-D per-token tensor"))


def _same_document(q, k, t):
    _, _, qi, ki = _grid_like(q, k)
    ids = t["document_id"].cpu().long()
    return ids[qi] == ids[ki]


def _softcap_alibi_window_mods(t):
    slope = t["alibi_slope"]

    def score_mod(score, b, h, q_idx, kv_idx):
        capped = caps.SOFTCAP * torch.tanh(score / caps.SOFTCAP)
        return capped + slope[h] * (kv_idx - q_idx)

    def window(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx <= masks.WINDOW)
    return score_mod, window


def _ref_softcap_alibi_window(q, k, v, scale, t):
    _, _, qi, ki = _grid_like(q, k)
    s = caps.SOFTCAP * torch.tanh(scores(q, k, scale) / caps.SOFTCAP) + biases.ref_alibi_bias(q, k, t)
    d = qi - ki
    return attend(s, v, (d >= 0) & (d <= masks.WINDOW))


register("softcap_alibi_window", "composition", "softcap, then ALiBi, under a causal sliding window",
         _softcap_alibi_window_mods, _ref_softcap_alibi_window,
         lambda B, H, Nq, Nkv, device: {"alibi_slope": biases.alibi_slopes(H).to(device)})


def _make_prefix_document(B, H, Nq, Nkv, device):
    t = masks.make_document_id("prefix_document", B, H, Nq, Nkv, device, torch.int32)
    g = generator("prefix_document", B, H, Nq, Nkv)
    t["prefix_length"] = torch.randint(0, 24, (B,), generator=g, dtype=torch.int32).to(device)
    return t


def _prefix_document_mods(t):
    prefix_length = t["prefix_length"]

    def in_prefix(b, h, q_idx, kv_idx):
        return kv_idx < prefix_length[b]
    return None, and_masks(masks.document_mods(t), or_masks(masks.causal_mask, in_prefix))


def _ref_prefix_document(q, k, v, scale, t):
    b, _, qi, ki = _grid_like(q, k)
    prefix = ki < t["prefix_length"].cpu().long()[b]
    return attend(scores(q, k, scale), v, _same_document(q, k, t) & (_causal(q, k) | prefix))


register("prefix_document", "composition",
         "and_masks(document, or_masks(causal, prefix)): per-batch prefixes in packed documents",
         _prefix_document_mods, _ref_prefix_document, _make_prefix_document,
         needs=("nested and_masks/or_masks", "1-D per-token tensor"))


def _alibi_sigmoid_document_mods(t):
    return biases.alibi_mods(t), masks.document_mods(t)


def _make_alibi_sigmoid_document(B, H, Nq, Nkv, device):
    t = masks.make_document_id("alibi_sigmoid_document", B, H, Nq, Nkv, device, torch.int32)
    t["alibi_slope"] = biases.alibi_slopes(H).to(device)
    return t


def _ref_alibi_sigmoid_document(q, k, v, scale, t):
    s = scores(q, k, scale) + biases.ref_alibi_bias(q, k, t)
    return attend(s, v, _same_document(q, k, t), sigmoid=True)


register("alibi_sigmoid_document", "composition", "ALiBi scores under the document mask, sigmoid normaliser",
         _alibi_sigmoid_document_mods, _ref_alibi_sigmoid_document, _make_alibi_sigmoid_document,
         normalizer="sigmoid", needs=("1-D per-token tensor",))
