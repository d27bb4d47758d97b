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


# ---- a learned cap per head (a captured tensor that training updates) ---------------------------------
def _make_caps(B, H, Nq, Nkv, device):
    g = torch.Generator().manual_seed(1000 + H)
    # caps of a few units: the scaled scores reach the nonlinear part of tanh
    return {"softcap_caps": (2 + 3 * torch.rand(H, generator=g)).to(device)}


def _learned_softcap_mods(t):
    softcap_caps = t["softcap_caps"]  # the kernel parameter's name

    def learned_softcap(score, b, h, q_idx, kv_idx):
        return softcap_caps[h] * torch.tanh(score / softcap_caps[h])
    return learned_softcap, None


def _ref_learned_softcap(q, k, v, scale, t):
    c = t["softcap_caps"].cpu().double().view(1, -1, 1, 1)
    return attend(c * torch.tanh(scores(q, k, scale) / c), v)


register("learned_softcap", "cap", "tanh soft-capping with a cap per head, caps[h] * tanh(score / caps[h]) "
         "(float32 [H]; its gradient reads the score)",
         _learned_softcap_mods, _ref_learned_softcap, make=_make_caps)


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
