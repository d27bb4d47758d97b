"""Positional biases (score_mod): ALiBi, relative-position tables, T5 buckets, log distance, a bias tensor."""
import math

import torch

from .dense import attend, grids, scores
from .entry import generator, register
from .masks import causal_mask

T5_BUCKETS = 32        # T5: buckets of relative positions, half of them for each direction
T5_MAX_DISTANCE = 100  # distances from here on share the last bucket (not a power of two: see _ref_t5)


def alibi_slopes(H):
    """ALiBi's geometric slopes 2^(-8 i / H), i = 1..H."""
    return torch.tensor([2.0 ** (-8.0 * (i + 1) / H) for i in range(H)], dtype=torch.float32)


def _grid_like(q, k):
    return grids(q.shape[0], q.shape[1], q.shape[2], k.shape[2])


# ---- ALiBi ----------------------------------------------------------------------------------------------

def _make_alibi(B, H, Nq, Nkv, device):
    return {"alibi_slope": alibi_slopes(H).to(device)}


def alibi_mods(t):
    alibi_slope = t["alibi_slope"]

    def alibi(score, b, h, q_idx, kv_idx):
        return score + alibi_slope[h] * (kv_idx - q_idx)
    return alibi


def ref_alibi_bias(q, k, t):
    _, h, qi, ki = _grid_like(q, k)
    return t["alibi_slope"].cpu().double()[h] * (ki - qi).double()


def _ref_alibi(q, k, v, scale, t):
    return attend(scores(q, k, scale) + ref_alibi_bias(q, k, t), v)


register("alibi", "bias", "ALiBi: score + alibi_slope[h] * (kv_idx - q_idx), float32 slopes [H]",
         lambda t: (alibi_mods(t), None), _ref_alibi, _make_alibi)


# ---- a learned relative-position table [H, 2N - 1], N = max(Nq, Nkv) -----------------------------------

def _make_relative(B, H, Nq, Nkv, device):
    g = generator("relative_bias", B, H, Nq, Nkv)
    table = torch.randn(H, 2 * max(Nq, Nkv) - 1, generator=g).to(torch.bfloat16)
    return {"relative_bias": table.to(device)}


def _relative_mods(t):
    relative_bias = t["relative_bias"]
    center = (relative_bias.shape[1] - 1) // 2  # a Python int: a constant of the variant

    def relative(score, b, h, q_idx, kv_idx):
        return score + relative_bias[h, kv_idx - q_idx + center]
    return relative, None


def _ref_relative(q, k, v, scale, t):
    _, h, qi, ki = _grid_like(q, k)
    table = t["relative_bias"].cpu().double()
    n = (table.shape[1] + 1) // 2
    return attend(scores(q, k, scale) + table[h, ki - qi + n - 1], v)


register("relative_bias", "bias", "relative-position bias table [H, 2N-1] (bfloat16) at kv_idx - q_idx + N - 1",
         _relative_mods, _ref_relative, _make_relative, needs=("2-D tensor, computed index", "bfloat16"))


# ---- T5's bucketed relative positions --------------------------------------------------------------------

def _make_t5(B, H, Nq, Nkv, device):
    g = generator("t5_bucket", B, H, Nq, Nkv)
    return {"t5_bias": torch.randn(H, T5_BUCKETS, generator=g).to(device)}


def t5_bucket(relative_position):
    """T5's bidirectional bucket of kv_idx - q_idx: exact for small distances, logarithmic beyond."""
    half = T5_BUCKETS // 2
    exact = half // 2
    direction = (relative_position > 0).to(torch.int32) * half
    distance = torch.abs(relative_position)
    # clamp: log(0) is never taken (small distances use the exact bucket anyway)
    log_ratio = torch.log(torch.clamp(distance, min=1).float() / exact) / math.log(T5_MAX_DISTANCE / exact)
    far = exact + (log_ratio * (half - exact)).to(torch.int32)
    far = torch.clamp(far, max=half - 1)
    return direction + torch.where(distance < exact, distance, far)


def _t5_mods(t):
    t5_bias = t["t5_bias"]

    def t5(score, b, h, q_idx, kv_idx):
        return score + t5_bias[h, t5_bucket(kv_idx - q_idx)]
    return t5, None


def _ref_t5(q, k, v, scale, t):
    # Buckets in float64 from the formula; T5_MAX_DISTANCE = 100 keeps every bucket boundary away from an
    # integer distance (log(n / 8) / log(12.5) * 8 is an integer only at n = 8 and n = 100, where float32 and
    # float64 agree or the clamp decides), so float32 in the kernel and float64 here give the same buckets.
    _, h, qi, ki = _grid_like(q, k)
    rel = ki - qi
    half, exact = T5_BUCKETS // 2, T5_BUCKETS // 4
    n = rel.abs()
    far = exact + (torch.log(n.clamp(min=1).double() / exact) / math.log(T5_MAX_DISTANCE / exact)
                   * (half - exact)).floor().long()
    bucket = (rel > 0).long() * half + torch.where(n < exact, n, far.clamp(max=half - 1))
    return attend(scores(q, k, scale) + t["t5_bias"].cpu().double()[h, bucket], v)


register("t5_bucket", "bias", f"T5 bucketed relative bias: table [H, {T5_BUCKETS}] at a log-spaced bucket",
         _t5_mods, _ref_t5, _make_t5,
         needs=("nested helper", "log", "casts", "clamp", "computed index"))


# ---- log-distance bias (KERPLE-log style) ----------------------------------------------------------------

def _log_distance_mods(t):
    alibi_slope = t["alibi_slope"]

    def log_distance(score, b, h, q_idx, kv_idx):
        return score - alibi_slope[h] * torch.log1p(torch.abs(q_idx - kv_idx).float())
    return log_distance, None


def _ref_log_distance(q, k, v, scale, t):
    _, h, qi, ki = _grid_like(q, k)
    bias = -t["alibi_slope"].cpu().double()[h] * torch.log1p((qi - ki).abs().double())
    return attend(scores(q, k, scale) + bias, v)


register("log_distance", "bias", "score - slope[h] * log1p(|q_idx - kv_idx|) (KERPLE-log)",
         _log_distance_mods, _ref_log_distance, _make_alibi, needs=("log1p", "abs", ".float()"))


# ---- an additive bias tensor [H, Nq, Nkv] ----------------------------------------------------------------

def _make_bias_tensor(B, H, Nq, Nkv, device):
    g = generator("bias_tensor", B, H, Nq, Nkv)
    return {"attn_bias": torch.randn(H, Nq, Nkv, generator=g).to(torch.float16).to(device)}


def _bias_tensor_mods(t):
    attn_bias = t["attn_bias"]

    def bias(score, b, h, q_idx, kv_idx):
        return score + attn_bias[h, q_idx, kv_idx]
    return bias, None


def _ref_bias_tensor(q, k, v, scale, t):
    return attend(scores(q, k, scale) + t["attn_bias"].cpu().double().unsqueeze(0), v)


register("bias_tensor", "bias", "an additive float16 bias tensor [H, Nq, Nkv] at [h, q_idx, kv_idx]",
         _bias_tensor_mods, _ref_bias_tensor, _make_bias_tensor, needs=("3-D tensor", "float16"))
