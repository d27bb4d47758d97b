"""Soft-capping, masking through score_mod, and the sigmoid normaliser."""
import torch

from .dense import attend, grids, scores
from .entry import register
from .masks import causal_mask

SOFTCAP = 20.0        # Gemma 2 style tanh soft-capping of the scores
SIGMOID_BIAS = -5.0   # sigmoid attention: a constant bias, about -log(Nkv), keeps the outputs near 1


def _grid_like(q, k):
    return grids(q.shape[0], q.shape[1], q.shape[2], k.shape[2])


def softcap(score, b, h, q_idx, kv_idx):
    return SOFTCAP * torch.tanh(score / SOFTCAP)


def _ref_softcap_scores(q, k, scale):
    return SOFTCAP * torch.tanh(scores(q, k, scale) / SOFTCAP)


def _causal_visible(q, k):
    _, _, qi, ki = _grid_like(q, k)
    return ki <= qi


register("softcap", "cap", f"tanh soft-capping: {SOFTCAP:g} * tanh(score / {SOFTCAP:g})",
         lambda t: (softcap, None), lambda q, k, v, scale, t: attend(_ref_softcap_scores(q, k, scale), v))

register("softcap_causal", "cap", "tanh soft-capping + the causal mask_mod",
         lambda t: (softcap, causal_mask),
         lambda q, k, v, scale, t: attend(_ref_softcap_scores(q, k, scale), v, _causal_visible(q, k)))


def causal_by_score(score, b, h, q_idx, kv_idx):
    return torch.where(q_idx >= kv_idx, score, -float("inf"))


register("causal_score_mod", "cap", "causal through score_mod: where(q_idx >= kv_idx, score, -inf)",
         lambda t: (causal_by_score, None),
         lambda q, k, v, scale, t: attend(scores(q, k, scale), v, _causal_visible(q, k)),
         needs=("-inf literal",))


def sigmoid_bias(score, b, h, q_idx, kv_idx):
    return score + SIGMOID_BIAS


def _ref_sigmoid(q, k, v, scale, t, visible=None):
    return attend(scores(q, k, scale) + SIGMOID_BIAS, v, visible, sigmoid=True)


register("sigmoid", "cap", f"sigmoid attention: sigmoid(score {SIGMOID_BIAS:+g}), no normalisation",
         lambda t: (sigmoid_bias, None), _ref_sigmoid, normalizer="sigmoid")

register("sigmoid_causal", "cap", "sigmoid attention with the causal mask_mod",
         lambda t: (sigmoid_bias, causal_mask),
         lambda q, k, v, scale, t: _ref_sigmoid(q, k, v, scale, t, _causal_visible(q, k)), normalizer="sigmoid")
