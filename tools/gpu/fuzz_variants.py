"""Variants written to find defects, outside the catalogue: FlexAttention-style mods, each with its own float64
dense reference written over coordinate grids (not with the mods). Masks and score_mods spelled unusually,
integer wrap-around, divisions and casts, captured tensors indexed oddly, score-dependent masks, sigmoid,
compositions. `expect` says whether CuIR should build the variant ("accept") or refuse it with a message
("refuse").

Each V(...) has: name, mods(t) -> (score_mod, mask_mod), ref(q, k, v, scale, t) -> (out, lse) or out,
make(B, H, Nq, Nkv) -> {name: tensor}, normalizer, expect. Some references assume the shape they were
written for (B 2, Hq 4, Hkv 2, Nq 83, Nkv 141): tools/gpu/check_fuzz_variants.py runs them there.
"""
import functools
import math
import zlib

import numpy as np
import torch

VARIANTS = {}


def V(name, mods, ref=None, make=None, normalizer="softmax", expect="accept", note=""):
    VARIANTS[name] = dict(name=name, mods=mods, ref=ref, make=make or (lambda B, H, Nq, Nkv: {}),
                          normalizer=normalizer, expect=expect, note=note)


def gen(name, *shape):
    g = torch.Generator()
    g.manual_seed(zlib.crc32(f"fuzz:{name}:{shape}".encode()))
    return g


# ---- dense helpers (float64) ---------------------------------------------------------------------------

def grids(q, k):
    B, H, Nq, Nkv = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    return (torch.arange(B).view(B, 1, 1, 1), torch.arange(H).view(1, H, 1, 1),
            torch.arange(Nq).view(1, 1, Nq, 1), torch.arange(Nkv).view(1, 1, 1, Nkv))


def S(q, k, scale):
    Hq, Hkv = q.shape[1], k.shape[1]
    kk = k.double().repeat_interleave(Hq // Hkv, dim=1)
    return (q.double() @ kk.transpose(-1, -2)) * scale


def softmax_attend(s, v, visible=None):
    Hq, Hkv = s.shape[1], v.shape[1]
    vv = v.double().repeat_interleave(Hq // Hkv, dim=1)
    if visible is not None:
        s = s.masked_fill(~visible.expand(s.shape), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    w = torch.exp(s - lse.unsqueeze(-1)).nan_to_num(0.0)
    return w @ vv, lse


def sigmoid_attend(s, v, visible=None):
    Hq, Hkv = s.shape[1], v.shape[1]
    vv = v.double().repeat_interleave(Hq // Hkv, dim=1)
    w = torch.sigmoid(s)
    if visible is not None:
        w = torch.where(visible.expand(s.shape), w, torch.zeros((), dtype=w.dtype))
    return w @ vv


def mask_ref(fn):
    """A reference from a dense visibility function fn(b, h, qi, ki, t) -> bool grid."""
    def ref(q, k, v, scale, t):
        b, h, qi, ki = grids(q, k)
        return softmax_attend(S(q, k, scale), v, fn(b, h, qi, ki, t))
    return ref


def wrap32(x):
    """int64 values wrapped to int32 two's complement."""
    return ((x + 2 ** 31) % 2 ** 32) - 2 ** 31


# =========================================================================================================
# Masks: causal spelled unusually
# =========================================================================================================

V("m_not_gt", lambda t: (None, lambda b, h, q_idx, kv_idx: ~(kv_idx > q_idx)),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m_diff_ge0", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx - kv_idx) >= 0),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m_where_true_false", lambda t: (None, lambda b, h, q_idx, kv_idx: torch.where(q_idx >= kv_idx, True, False)),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m_le_plus0", lambda t: (None, lambda b, h, q_idx, kv_idx: kv_idx <= q_idx + 0),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))


def _chain(b, h, q_idx, kv_idx):
    return ((q_idx >= kv_idx) & (kv_idx >= 0)) | ((q_idx < 0) & (kv_idx == 3)) | ((q_idx == kv_idx) & (b >= 0))


V("m_chain_and_or", lambda t: (None, _chain), mask_ref(lambda b, h, qi, ki, t: ki <= qi))

# ---- windows -------------------------------------------------------------------------------------------

V("m_asym_window", lambda t: (None, lambda b, h, q_idx, kv_idx: (kv_idx >= q_idx - 20) & (kv_idx <= q_idx + 7)),
  mask_ref(lambda b, h, qi, ki, t: ((ki - qi) >= -20) & ((ki - qi) <= 7)))

V("m_window_ahead", lambda t: (None, lambda b, h, q_idx, kv_idx: (kv_idx - q_idx >= 30) & (kv_idx - q_idx < 60)),
  mask_ref(lambda b, h, qi, ki, t: ((ki - qi) >= 30) & ((ki - qi) <= 59)))

V("m_clamp_eq_window", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                  torch.clamp(q_idx - kv_idx, 0, 16) == q_idx - kv_idx),
  mask_ref(lambda b, h, qi, ki, t: ((qi - ki) >= 0) & ((qi - ki) <= 16)))

V("m_sign", lambda t: (None, lambda b, h, q_idx, kv_idx: torch.sign(q_idx - kv_idx) >= 0),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m_capped_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: torch.clamp(q_idx, max=50) >= kv_idx),
  mask_ref(lambda b, h, qi, ki, t: ki <= torch.minimum(qi, torch.tensor(50))))

V("m_max_floor", lambda t: (None, lambda b, h, q_idx, kv_idx:
                            kv_idx <= torch.max(q_idx, torch.full_like(q_idx, 20))),
  mask_ref(lambda b, h, qi, ki, t: (ki <= qi) | (ki <= 20)))

# rows q < 40 only; the others see nothing
V("m_rows_only", lambda t: (None, lambda b, h, q_idx, kv_idx: q_idx < 40),
  mask_ref(lambda b, h, qi, ki, t: (qi < 40) & (ki >= 0)))

# per-head offset through h (query head, GQA): h=0 rows q < 3 see nothing
V("m_head_offset", lambda t: (None, lambda b, h, q_idx, kv_idx: kv_idx <= q_idx + h * 5 - 3),
  mask_ref(lambda b, h, qi, ki, t: ki - qi <= 5 * h - 3))

# ---- bool algebra ----------------------------------------------------------------------------------------

V("m_bool_unsigned_gt", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx >= kv_idx) > (kv_idx > 100)),
  mask_ref(lambda b, h, qi, ki, t: (ki <= qi) & (ki <= 100)))

V("m_bool_int_sum", lambda t: (None, lambda b, h, q_idx, kv_idx:
                               (q_idx >= kv_idx).int() + (kv_idx < 10).int() >= 1),
  mask_ref(lambda b, h, qi, ki, t: (ki <= qi) | (ki < 10)))

V("m_bool_plus_bool", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx >= kv_idx) + (kv_idx % 7 == 0)),
  mask_ref(lambda b, h, qi, ki, t: (ki <= qi) | (torch.remainder(ki, 7) == 0)))

V("m_xor_ne", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx >= kv_idx) != (kv_idx < 5)),
  mask_ref(lambda b, h, qi, ki, t: (ki <= qi) ^ (ki < 5)))

V("m_bool_mul_minus", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                 ((q_idx >= kv_idx) * 2 - (kv_idx > q_idx - 10) * 1) == 1),
  mask_ref(lambda b, h, qi, ki, t: (ki <= qi) & (qi - ki < 10)))

# ---- integer division / modulo / shifts / wrap -----------------------------------------------------------

V("m_block_bidir_divmod", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                     (q_idx // 24 == kv_idx // 24) | (kv_idx % 24 == 0)),
  mask_ref(lambda b, h, qi, ki, t: (torch.div(qi, 24, rounding_mode="floor") == torch.div(ki, 24, rounding_mode="floor"))
           | (torch.remainder(ki, 24) == 0)))

V("m_shift_blocks", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx >> 4) == (kv_idx >> 4)),
  mask_ref(lambda b, h, qi, ki, t: torch.div(qi, 16, rounding_mode="floor") == torch.div(ki, 16, rounding_mode="floor")))

V("m_dilated_neg_divisor", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                      ((kv_idx - q_idx) % -4 == 0) & (torch.abs(kv_idx - q_idx) < 40)),
  mask_ref(lambda b, h, qi, ki, t: (((ki - qi) % 4) == 0) & ((ki - qi).abs() < 40)))

V("m_ahead_floordiv", lambda t: (None, lambda b, h, q_idx, kv_idx: (kv_idx - q_idx) // 16 == 0),
  mask_ref(lambda b, h, qi, ki, t: (ki >= qi) & (ki <= qi + 15)))

V("m_wide_const", lambda t: (None, lambda b, h, q_idx, kv_idx: q_idx + 2 ** 31 >= kv_idx + 2 ** 31),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

# int32 wraps as torch's int32 does: 1e8 * q overflows for q >= 22
V("m_int32_wrap", lambda t: (None, lambda b, h, q_idx, kv_idx: q_idx * 100000000 >= kv_idx * 100000000),
  mask_ref(lambda b, h, qi, ki, t: wrap32(qi * 100000000) >= wrap32(ki * 100000000)))

V("m_float_div_cmp", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx / 3) >= (kv_idx / 3)),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

# ---- captured tensors ------------------------------------------------------------------------------------

def _make_lens(B, H, Nq, Nkv):
    g = gen("lens", B, H, Nq, Nkv)
    return {"q_len": torch.randint(1, Nq + 1, (B,), generator=g, dtype=torch.int32),
            "kv_len": torch.randint(1, Nkv + 1, (B,), generator=g, dtype=torch.int64)}


def _lens_mods(t):
    q_len, kv_len = t["q_len"], t["kv_len"]

    def padding(b, h, q_idx, kv_idx):
        return (q_idx < q_len[b]) & (kv_idx < kv_len[b])
    return None, padding


V("m_q_and_kv_padding", _lens_mods,
  mask_ref(lambda b, h, qi, ki, t: (qi < t["q_len"].long()[b]) & (ki < t["kv_len"].long()[b])), _make_lens)


def _make_win64(B, H, Nq, Nkv):
    return {"win": torch.tensor([3, 17, 0, 40][:H] + [5] * max(0, H - 4), dtype=torch.int64)}


def _win64_mods(t):
    win = t["win"]

    def sym_window(b, h, q_idx, kv_idx):
        return (kv_idx >= q_idx - win[h]) & (kv_idx <= q_idx + win[h])
    return None, sym_window


V("m_head_window_int64_sym", _win64_mods,
  mask_ref(lambda b, h, qi, ki, t: (qi - ki).abs() <= t["win"][h]), _make_win64)


def _make_doc(B, H, Nq, Nkv):
    n = max(Nq, Nkv)
    g = gen("doc", B, H, Nq, Nkv)
    lens = []
    while sum(lens) < n:
        lens.append(int(torch.randint(5, 40, (1,), generator=g)))
    ids = torch.cat([torch.full((l,), i, dtype=torch.int64) for i, l in enumerate(lens)])[:n]
    return {"doc": ids.to(torch.int32)}


def _doc_global_mods(t):
    doc = t["doc"]

    def same_doc(b, h, q_idx, kv_idx):
        return doc[q_idx.long()] == doc[kv_idx.long()]

    def glob(b, h, q_idx, kv_idx):
        return kv_idx < 4

    def mask_mod(b, h, q_idx, kv_idx):
        return same_doc(b, h, q_idx, kv_idx) | glob(b, h, q_idx, kv_idx)
    return None, mask_mod


V("m_doc_long_index_global", _doc_global_mods,
  mask_ref(lambda b, h, qi, ki, t: (t["doc"].long()[qi] == t["doc"].long()[ki]) | (ki < 4)), _make_doc)


def _make_keepT(B, H, Nq, Nkv):
    g = gen("keepT", B, H, Nq, Nkv)
    return {"keep_kv_q": torch.rand(Nkv, Nq, generator=g) < 0.6}


def _keepT_mods(t):
    keep = t["keep_kv_q"].t()  # a non-contiguous view [Nq, Nkv]

    def mask_mod(b, h, q_idx, kv_idx):
        return keep[q_idx, kv_idx] | (q_idx == kv_idx)
    return None, mask_mod


V("m_transposed_bool_view", _keepT_mods,
  mask_ref(lambda b, h, qi, ki, t: t["keep_kv_q"].t().contiguous()[qi, ki] | (qi == ki)), _make_keepT)


def _make_kvkeep(B, H, Nq, Nkv):
    g = gen("kvkeep", B, H, Nq, Nkv)
    return {"key_keep": torch.rand(B, Nkv, generator=g) < 0.5}


def _kvkeep_mods(t):
    key_keep = t["key_keep"]
    return None, lambda b, h, q_idx, kv_idx: key_keep[b][kv_idx] & (q_idx >= kv_idx - 30)


V("m_key_keep_2d_chained_index", _kvkeep_mods,
  mask_ref(lambda b, h, qi, ki, t: t["key_keep"][b, ki] & (ki <= qi + 30)), _make_kvkeep)

# =========================================================================================================
# score_mods
# =========================================================================================================

V("s_softcap_int_consts", lambda t: (lambda score, b, h, q_idx, kv_idx: 3 * torch.tanh(score / 3), None),
  lambda q, k, v, sc, t: softmax_attend(3.0 * torch.tanh(S(q, k, sc) / 3.0), v))

V("s_softplus_explog", lambda t: (lambda score, b, h, q_idx, kv_idx: torch.log(torch.exp(score * 2) + 1), None),
  lambda q, k, v, sc, t: softmax_attend(torch.nn.functional.softplus(S(q, k, sc) * 2), v))


def _sqrt_dist(score, b, h, q_idx, kv_idx):
    return score - 0.3 * torch.sqrt(torch.abs(q_idx - kv_idx).float())


V("s_sqrt_distance", lambda t: (_sqrt_dist, None),
  lambda q, k, v, sc, t: softmax_attend(S(q, k, sc) - 0.3 * (lambda g: (g[2] - g[3]).abs().double().sqrt())(grids(q, k)), v))

V("s_clamp", lambda t: (lambda score, b, h, q_idx, kv_idx: torch.clamp(score * 4, min=-1.0, max=1.5), None),
  lambda q, k, v, sc, t: softmax_attend((S(q, k, sc) * 4).clamp(-1.0, 1.5), v))


def _make_gate(B, H, Nq, Nkv):
    g = gen("gate", B, H, Nq, Nkv)
    return {"gate": torch.nn.Parameter(torch.randn(H, generator=g) * 2), "temp": torch.tensor([0.5, 3.0][:B] + [1.0] * max(0, B - 2))}


def _gate_mods(t):
    gate, temp = t["gate"], t["temp"]

    def score_mod(score, b, h, q_idx, kv_idx):
        return score * torch.sigmoid(gate[h]) * 4 * temp[b]
    return score_mod, None


def _gate_ref(q, k, v, sc, t):
    b, h, qi, ki = grids(q, k)
    g = torch.sigmoid(t["gate"].double())[h] * 4 * t["temp"].double()[b]
    return softmax_attend(S(q, k, sc) * g, v)


V("s_sigmoid_gate_param_b_h", _gate_mods, _gate_ref, _make_gate)


def _make_bucket(B, H, Nq, Nkv):
    g = gen("bucket", B, H, Nq, Nkv)
    n = Nq + Nkv - 1
    rel = torch.arange(n) - (Nq - 1)          # q - kv for index q - kv + Nkv - 1 ... see mods
    bucket = (torch.sign(rel) * torch.log2(rel.abs().float() + 1).floor()).to(torch.int32) + 8
    return {"bucket": bucket, "table": torch.randn(H, 17, generator=g).to(torch.bfloat16)}


def _bucket_mods(t):
    bucket, table = t["bucket"], t["table"]
    off = t["bucket"].shape[0] - (t["bucket"].shape[0] + 1) // 2  # unused decoy constant

    def score_mod(score, b, h, q_idx, kv_idx):
        return score + table[h, bucket[kv_idx - q_idx + 82]]
    return score_mod, None


def _bucket_ref(q, k, v, sc, t):
    b, h, qi, ki = grids(q, k)
    Nq = q.shape[2]
    rel = ki - qi  # kv - q in [-(Nq-1), Nkv-1]; index kv - q + Nq - 1
    return softmax_attend(S(q, k, sc) + t["table"].double()[h, t["bucket"].long()[rel + Nq - 1]], v)


V("s_bucket_double_gather", _bucket_mods, _bucket_ref, _make_bucket,
  note="index kv - q + 82 assumes Nq = 83")


def _make_bias_b(B, H, Nq, Nkv):
    g = gen("bias_b", B, H, Nq, Nkv)
    return {"col_bias": torch.randn(B, H, Nkv, generator=g)}


def _bias_b_mods(t):
    col_bias = t["col_bias"]
    return (lambda score, b, h, q_idx, kv_idx: score + col_bias[b, h, kv_idx]), None


V("s_bias_b_h_kv", _bias_b_mods,
  lambda q, k, v, sc, t: softmax_attend(S(q, k, sc) + t["col_bias"].double().unsqueeze(2), v), _make_bias_b)

V("s_const_zero_causal", lambda t: (lambda score, b, h, q_idx, kv_idx: torch.zeros_like(score),
                                    lambda b, h, q_idx, kv_idx: q_idx >= kv_idx),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(torch.zeros_like(S(q, k, sc)), v, g[3] <= g[2]))(grids(q, k)))

V("s_int_return", lambda t: (lambda score, b, h, q_idx, kv_idx: -(q_idx - kv_idx).abs() // 4, None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(
      torch.div(-(g[2] - g[3]).abs(), 4, rounding_mode="floor").double().expand(S(q, k, sc).shape).clone(), v))(grids(q, k)))

# -inf through score_mod: rows q >= 41 see nothing (out 0, lse -inf)
V("s_neginf_empty_rows", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                    torch.where(kv_idx > q_idx + 100, score, -float("inf")), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc), v, g[3] > g[2] + 100))(grids(q, k)))

# a large finite negative (finfo.min) instead of -inf: torch gives rows with no other key a uniform average
V("s_finfo_min_mask", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                 torch.where(q_idx >= kv_idx + 30, score, torch.finfo(torch.float32).min), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(
      torch.where(g[2] >= g[3] + 30, S(q, k, sc), torch.tensor(float(torch.finfo(torch.float32).min), dtype=torch.float64)), v))(grids(q, k)))

V("s_minus_1e9_mask", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                 torch.where(q_idx >= kv_idx + 30, score, -1e9), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(
      torch.where(g[2] >= g[3] + 30, S(q, k, sc), torch.tensor(-1e9, dtype=torch.float64)), v))(grids(q, k)))


def _make_slope(B, H, Nq, Nkv):
    return {"slope": torch.tensor([2.0 ** (-(i + 1)) for i in range(H)])}


def _combo_mods(t):
    slope, doc = t["slope"], t["doc"]
    cap = 5  # an int

    def capped(x):
        return cap * torch.tanh(x / cap)

    def alibi(score, h, d):
        return score - slope[h] * d

    def score_mod(score, b, h, q_idx, kv_idx):
        return alibi(capped(score), h, (q_idx - kv_idx).abs())

    def mask_mod(b, h, q_idx, kv_idx):
        return (doc[q_idx] == doc[kv_idx]) & ~(kv_idx > q_idx + 2)
    return score_mod, mask_mod


def _combo_ref(q, k, v, sc, t):
    b, h, qi, ki = grids(q, k)
    s = 5.0 * torch.tanh(S(q, k, sc) / 5.0) - t["slope"].double()[h] * (qi - ki).abs().double()
    d = t["doc"].long()
    return softmax_attend(s, v, (d[qi] == d[ki]) & (ki <= qi + 2))


V("c_softcap_alibi_doc_lookahead", _combo_mods, _combo_ref, lambda *a: {**_make_slope(*a), **_make_doc(*a)})


def _sig_mods(t):
    slope = t["slope"]

    def score_mod(score, b, h, q_idx, kv_idx):
        return score - 2.0 - slope[h] * (kv_idx // 8).float()

    return score_mod, lambda b, h, q_idx, kv_idx: (kv_idx >= q_idx - 20) & (kv_idx <= q_idx + 7)


def _sig_ref(q, k, v, sc, t):
    b, h, qi, ki = grids(q, k)
    s = S(q, k, sc) - 2.0 - t["slope"].double()[h] * torch.div(ki, 8, rounding_mode="floor").double()
    return sigmoid_attend(s, v, ((ki - qi) >= -20) & ((ki - qi) <= 7))


V("c_sigmoid_window_head", _sig_mods, _sig_ref, _make_slope, normalizer="sigmoid")


def _partial_mods(t):
    def bias(score, b, h, q_idx, kv_idx, strength=0.0, period=12.0):
        return score + strength * torch.cos(math.pi * (q_idx - kv_idx) / period)
    return functools.partial(bias, strength=1.5), None


V("s_partial_cos", _partial_mods,
  lambda q, k, v, sc, t: (lambda g: softmax_attend(
      S(q, k, sc) + 1.5 * torch.cos(math.pi * (g[2] - g[3]).double() / 12.0), v))(grids(q, k)),
  note="cos computed in f32 by the kernel, f64 here")

V("s_diag_boost_bool_float", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                        score + (q_idx == kv_idx).float() * 2 + h / 4, None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + (g[2] == g[3]).double() * 2 + g[1] / 4, v))(grids(q, k)))

V("s_pow_signed_sqrt", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                  torch.sign(score) * torch.abs(score) ** 0.5 * 2, None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(torch.sign(s) * s.abs().sqrt() * 2, v))(S(q, k, sc)))


class _Rel:
    """A callable object holding a bias tensor (nn.Module style)."""

    def __init__(self, w):
        self.w = w

    def __call__(self, score, b, h, q_idx, kv_idx):
        return score + self.w[h, torch.clamp(kv_idx - q_idx, -8, 8) + 8]


def _make_relw(B, H, Nq, Nkv):
    return {"w": torch.randn(H, 17, generator=gen("relw", B, H, Nq, Nkv))}


V("s_callable_obj_clamped_rel", lambda t: (_Rel(t["w"]), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + t["w"].double()[g[1], (g[3] - g[2]).clamp(-8, 8) + 8], v))(grids(q, k)),
  _make_relw)

# =========================================================================================================
# Expected refusals
# =========================================================================================================

def _if_mod(score, b, h, q_idx, kv_idx):
    if score > 0:
        return score
    return score * 0.5


V("r_data_dependent_if", lambda t: (_if_mod, None), expect="refuse")


def _f64_make(B, H, Nq, Nkv):
    return {"s64": torch.linspace(0.5, 1.0, H, dtype=torch.float64)}


V("r_float64_tensor", lambda t: ((lambda score, b, h, q_idx, kv_idx: score * t["s64"][h]), None),
  make=_f64_make, expect="refuse")

V("r_rand", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + torch.rand_like(score)), None),
  expect="refuse")

V("r_atan", lambda t: ((lambda score, b, h, q_idx, kv_idx: torch.atan(score)), None), expect="refuse")

V("r_python_and", lambda t: (None, lambda b, h, q_idx, kv_idx: q_idx >= kv_idx and kv_idx > 3), expect="refuse")

V("r_math_exp", lambda t: ((lambda score, b, h, q_idx, kv_idx: math.exp(score)), None), expect="refuse")

V("r_list_by_h", lambda t: ((lambda score, b, h, q_idx, kv_idx: score * [1.0, 0.5, 0.25, 0.125][h]), None),
  expect="refuse")


def _u8_make(B, H, Nq, Nkv):
    return {"keep_u8": (torch.rand(Nq, Nkv, generator=gen("u8", B, H, Nq, Nkv)) < 0.5).to(torch.uint8)}


V("r_uint8_mask_tensor", lambda t: (None, lambda b, h, q_idx, kv_idx: t["keep_u8"][q_idx, kv_idx] != 0),
  make=_u8_make, expect="refuse")

V("r_np_tanh", lambda t: ((lambda score, b, h, q_idx, kv_idx: np.tanh(score)), None), expect="refuse")

V("r_item", lambda t: ((lambda score, b, h, q_idx, kv_idx: score * (2.0 if score.item() > 0 else 1.0)), None),
  expect="refuse")

V("r_softplus_functional", lambda t: ((lambda score, b, h, q_idx, kv_idx: torch.nn.functional.softplus(score)), None),
  expect="refuse")

V("r_mask_returns_float", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx >= kv_idx).float()),
  expect="refuse")

V("r_float_index", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["w"][h, score.long() % 17 + 0 * score]), None),
  make=_make_relw, expect="refuse")


# =========================================================================================================
# Batch 2: integer width, score-dependent masks, empty / full masks, parameter names
# =========================================================================================================

def wrap64(x):
    """Python ints wrapped to int64 two's complement."""
    return ((x + 2 ** 63) % 2 ** 64) - 2 ** 63


# .int() of an int64 wraps (torch): (q + 2**32).int() == q, so this is causal
V("m_trunc_wrap", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx.long() + 2 ** 32).int() >= kv_idx),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))


def _ref_i64_wrap(b, h, qi, ki, t):
    lut = torch.tensor([wrap64(n * 2 ** 62) for n in range(4)])  # n * 2**62 wraps with period 4
    return lut[qi % 4] >= lut[ki % 4]


V("m_i64_mul_wrap", lambda t: (None, lambda b, h, q_idx, kv_idx: q_idx.long() * 2 ** 62 >= kv_idx.long() * 2 ** 62),
  mask_ref(_ref_i64_wrap))

V("m_select_int", lambda t: (None, lambda b, h, q_idx, kv_idx: torch.where(q_idx > 50, kv_idx, q_idx) >= kv_idx),
  mask_ref(lambda b, h, qi, ki, t: (qi > 50) | (ki <= qi)))

V("m_neg_min_window", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                 torch.minimum(q_idx - kv_idx, kv_idx - q_idx) >= -5),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki).abs() <= 5))

V("m_bool_minus_int", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx >= kv_idx) - 1 == 0),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi), expect="refuse", note="torch refuses bool - int")

V("m_mul3_strict", lambda t: (None, lambda b, h, q_idx, kv_idx: q_idx * 3 >= kv_idx * 3 + 2),
  mask_ref(lambda b, h, qi, ki, t: ki < qi))

V("m_all_masked", lambda t: (None, lambda b, h, q_idx, kv_idx: kv_idx >= q_idx + 200),
  mask_ref(lambda b, h, qi, ki, t: ki >= qi + 200))

V("m_all_visible_tautology", lambda t: (None, lambda b, h, q_idx, kv_idx: q_idx == q_idx),
  mask_ref(lambda b, h, qi, ki, t: ki >= 0))

NEG_INF = -float("inf")

V("s_score_threshold", lambda t: (lambda score, b, h, q_idx, kv_idx: torch.where(score > 0.0, score, NEG_INF), None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(s, v, s > 0.0))(S(q, k, sc)),
  note="float32 score vs float64 reference at the threshold: ties are measure-zero")

V("s_score_threshold_causal", lambda t: (lambda score, b, h, q_idx, kv_idx: torch.where(score > -0.5, score, NEG_INF),
                                         lambda b, h, q_idx, kv_idx: q_idx >= kv_idx),
  lambda q, k, v, sc, t: (lambda s, g: softmax_attend(s, v, (s > -0.5) & (g[3] <= g[2])))(S(q, k, sc), grids(q, k)))

V("s_head_off_neginf", lambda t: (lambda score, b, h, q_idx, kv_idx: torch.where(h == 1, NEG_INF, score), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc), v, (g[1] != 1) & (g[3] >= 0)))(grids(q, k)))

V("s_batch_select_neginf", lambda t: (lambda score, b, h, q_idx, kv_idx: torch.where(b == 0, score, NEG_INF), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc), v, (g[0] == 0) & (g[3] >= 0)))(grids(q, k)))


def _make_B(B_, H, Nq, Nkv):
    return {"B": torch.randn(H, Nq, Nkv, generator=gen("B", B_, H, Nq, Nkv))}


def _B_mods(t):
    B = t["B"]  # a bias matrix named B ("A + B")

    def score_mod(score, b, h, q_idx, kv_idx):
        return score + B[h, q_idx, kv_idx]
    return score_mod, None


V("s_bias_named_B", _B_mods, lambda q, k, v, sc, t: softmax_attend(S(q, k, sc) + t["B"].double().unsqueeze(0), v),
  _make_B, note="a captured tensor whose variable name is B")


# =========================================================================================================
# Batch 3
# =========================================================================================================

V("s_score_threshold_and_causal", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                             torch.where((score > 0.0) & (q_idx >= kv_idx), score, NEG_INF), None),
  lambda q, k, v, sc, t: (lambda s, g: softmax_attend(s, v, (s > 0.0) & (g[3] <= g[2])))(S(q, k, sc), grids(q, k)))

V("s_tensor_literal_inside", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                        score * torch.tensor([0.5, 1.0, 2.0, 4.0])[h], None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) * torch.tensor([0.5, 1.0, 2.0, 4.0], dtype=torch.float64)[g[1]], v))(grids(q, k)))

V("s_returns_python_float", lambda t: (lambda score, b, h, q_idx, kv_idx: 0.0,
                                       lambda b, h, q_idx, kv_idx: kv_idx <= q_idx + 5),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(torch.zeros_like(S(q, k, sc)), v, g[3] <= g[2] + 5))(grids(q, k)))

V("m_returns_True", lambda t: (None, lambda b, h, q_idx, kv_idx: True),
  mask_ref(lambda b, h, qi, ki, t: ki >= 0))

V("m_returns_False", lambda t: (None, lambda b, h, q_idx, kv_idx: False),
  mask_ref(lambda b, h, qi, ki, t: ki < 0))

V("m_batch_only", lambda t: (None, lambda b, h, q_idx, kv_idx: b == 1),
  mask_ref(lambda b, h, qi, ki, t: (b == 1) & (ki >= 0)))

# a score-dependent bound: the diagonal key is kept only where its score is positive
V("s_score_flag_in_bound", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                      torch.where(kv_idx + (score <= 0.0).int() <= q_idx, score, NEG_INF), None),
  lambda q, k, v, sc, t: (lambda s, g: softmax_attend(s, v, g[3] + (s <= 0.0).long() <= g[2]))(S(q, k, sc), grids(q, k)))

V("s_score_select_bound", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                     torch.where(torch.where(score <= 0.0, q_idx - 1, q_idx) >= kv_idx, score, NEG_INF), None),
  lambda q, k, v, sc, t: (lambda s, g: softmax_attend(s, v, g[3] + (s <= 0.0).long() <= g[2]))(S(q, k, sc), grids(q, k)))

# two diagonals only (each row sees at most 2 keys; some rows none): linear, not one interval
V("m_two_diagonals", lambda t: (None, lambda b, h, q_idx, kv_idx: (kv_idx == q_idx + 50) | (kv_idx == q_idx - 60)),
  mask_ref(lambda b, h, qi, ki, t: (ki == qi + 50) | (ki == qi - 60)))

# a window spelled as a touching union
V("m_touching_union", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                 (kv_idx <= q_idx) | ((kv_idx > q_idx) & (kv_idx <= q_idx + 3))),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi + 3))

# a sink + a window that do not always touch
V("m_sink_plus_window", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                   (kv_idx < 10) | ((kv_idx >= q_idx - 5) & (kv_idx <= q_idx))),
  mask_ref(lambda b, h, qi, ki, t: (ki < 10) | ((qi - ki >= 0) & (qi - ki <= 5))))

# a window that ends at a constant: rows q > 69 see nothing
V("m_window_const_end", lambda t: (None, lambda b, h, q_idx, kv_idx: (kv_idx >= q_idx - 10) & (kv_idx < 60)),
  mask_ref(lambda b, h, qi, ki, t: (ki >= qi - 10) & (ki < 60)))

# =========================================================================================================
# Batch 4
# =========================================================================================================

V("s_additive_mask_bool_mul", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                         score - 1e4 * (kv_idx > q_idx).float(), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) - 1e4 * (g[3] > g[2]).double(), v))(grids(q, k)))

V("s_pow_const_base", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                 score + 3.0 * 0.5 ** torch.abs(q_idx - kv_idx), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + 3.0 * 0.5 ** (g[2] - g[3]).abs().double(), v))(grids(q, k)))

V("r_masked_fill", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                               score.masked_fill(kv_idx > q_idx, float("-inf"))), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc), v, g[3] <= g[2]))(grids(q, k)),
  expect="refuse", note="plausible spelling of causal")


def _if_head(score, b, h, q_idx, kv_idx):
    if h == 0:
        return score * 2
    return score


V("r_python_if_on_h", lambda t: (_if_head, None), expect="refuse")

V("r_float_floordiv", lambda t: (None, lambda b, h, q_idx, kv_idx: q_idx // 16.0 == kv_idx // 16.0),
  mask_ref(lambda b, h, qi, ki, t: torch.div(qi, 16, rounding_mode="floor") == torch.div(ki, 16, rounding_mode="floor")),
  expect="refuse")

# legacy cast spelling: .type(torch.LongTensor) (torch: truncates to int64)
V("m_type_legacy_tensor_class", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                           (q_idx / 16).type(torch.LongTensor) == (kv_idx / 16).type(torch.LongTensor)),
  mask_ref(lambda b, h, qi, ki, t: torch.div(qi, 16, rounding_mode="floor") == torch.div(ki, 16, rounding_mode="floor")))

V("s_type_legacy_string", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                     score - 0.5 * (torch.abs(q_idx - kv_idx) / 8).type("torch.IntTensor"), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) - 0.5 * torch.div((g[2] - g[3]).abs(), 8, rounding_mode="floor").double(), v))(grids(q, k)))

# Tensor.where(condition, other) as a method: rows q < 16 see keys < 16 (bidirectional), later rows causal
V("m_where_method_bool", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                    (q_idx >= kv_idx).where(q_idx >= 16, kv_idx < 16)),
  mask_ref(lambda b, h, qi, ki, t: torch.where(qi >= 16, ki <= qi, ki < 16)))

V("s_cube", lambda t: (lambda score, b, h, q_idx, kv_idx: score ** 3 * 0.5, None),
  lambda q, k, v, sc, t: softmax_attend(S(q, k, sc) ** 3 * 0.5, v), note="math.powf with a negative base")

# relative table indexed by a possibly negative offset, relying on torch's negative-index wrap
def _make_reltab(B, H, Nq, Nkv):
    return {"reltab": torch.randn(H, Nq + Nkv, generator=gen("reltab", B, H, Nq, Nkv))}


V("s_negative_index_wrap", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["reltab"][h, kv_idx - q_idx]), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + t["reltab"].double()[g[1], (g[3] - g[2]) % t["reltab"].shape[1]], v))(grids(q, k)),
  _make_reltab, note="documented: negative indices are not wrapped")

# chunked attention with float division + truncation (chunk of 41 keys): exact in torch (x / 41 is correctly
# rounded), but the GPU lowering writes x * (1/41)
V("m_chunk_float_div_int", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx / 41).int() == (kv_idx / 41).int()),
  mask_ref(lambda b, h, qi, ki, t: torch.div(qi, 41, rounding_mode="floor") == torch.div(ki, 41, rounding_mode="floor")))

# additive -inf bias (rows q < 30 see nothing)
V("s_additive_neginf_bias", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                       score + torch.where(q_idx >= kv_idx + 30, 0.0, NEG_INF), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc), v, g[2] >= g[3] + 30))(grids(q, k)))


def _doc_score_mods(t):
    doc = t["doc"]
    return (lambda score, b, h, q_idx, kv_idx: torch.where(doc[q_idx] == doc[kv_idx], score, NEG_INF)), None


V("s_doc_via_score_mod", _doc_score_mods,
  mask_ref(lambda b, h, qi, ki, t: t["doc"].long()[qi] == t["doc"].long()[ki]), _make_doc)
