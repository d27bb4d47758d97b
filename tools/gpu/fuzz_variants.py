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
      torch.where(g[2] >= g[3] + 30, S(q, k, sc), torch.tensor(-1e9, dtype=torch.float64)), v))(grids(q, k)),
  expect="refuse", note="refused at the constant: a 16-bit P overflows on rows at -1e9 (use -inf)")


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

V("s_masked_fill_causal", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                      score.masked_fill(kv_idx > q_idx, float("-inf"))), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc), v, g[3] <= g[2]))(grids(q, k)),
  note="plausible spelling of causal (refused when first written, traced since)")


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
  _make_reltab, note="a negative index wraps, as torch indexes")

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


# =========================================================================================================
# Batch 5 (round 2 sweep)
# =========================================================================================================
import operator  # noqa: E402

# ---- masks by meaning, spelled in new ways ---------------------------------------------------------------

V("m5_logical_and_window", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                      torch.logical_and(kv_idx <= q_idx, q_idx - kv_idx < 32)),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki >= 0) & (qi - ki <= 31)))

V("m5_operator_and_window", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                       operator.and_(q_idx >= kv_idx, kv_idx > q_idx - 32)),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki >= 0) & (qi - ki <= 31)))

V("m5_builtin_abs_window", lambda t: (None, lambda b, h, q_idx, kv_idx: abs(q_idx - kv_idx) <= 12),
  mask_ref(lambda b, h, qi, ki, t: (ki >= qi - 12) & (ki <= qi + 12)))

V("m5_max_minus_min_window", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                        torch.maximum(q_idx, kv_idx) - torch.minimum(q_idx, kv_idx) <= 12),
  mask_ref(lambda b, h, qi, ki, t: (ki >= qi - 12) & (ki <= qi + 12)))

V("m5_min_eq_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: torch.min(q_idx, kv_idx) == kv_idx),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m5_neg_both_sides_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: -q_idx <= -kv_idx),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m5_const_left_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: 0 <= q_idx - kv_idx),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m5_where_int_eq1_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: torch.where(q_idx >= kv_idx, 1, 0) == 1),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m5_float_cast_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: q_idx.float() >= kv_idx.float()),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m5_mixed_int_widths_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: q_idx.long() - kv_idx.int() >= 0),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m5_nested_where_prefix", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                       torch.where(kv_idx < 8, True, torch.where(kv_idx > q_idx, False, True))),
  mask_ref(lambda b, h, qi, ki, t: (ki < 8) | (ki <= qi)))

V("m5_demorgan_prefix", lambda t: (None, lambda b, h, q_idx, kv_idx: ~((kv_idx >= 8) & (kv_idx > q_idx))),
  mask_ref(lambda b, h, qi, ki, t: (ki < 8) | (ki <= qi)))

V("m5_logical_not_or_window", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                         torch.logical_not(torch.logical_or(kv_idx > q_idx, q_idx - kv_idx > 20))),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki >= 0) & (qi - ki <= 20)))

V("m5_bool_mul_window", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx >= kv_idx) * (q_idx - kv_idx < 16)),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki >= 0) & (qi - ki <= 15)))

V("m5_int_product_window", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                      (q_idx >= kv_idx).int() * (q_idx - kv_idx < 16).int() > 0),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki >= 0) & (qi - ki <= 15)))

V("m5_block_causal_floordiv", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx // 16) >= (kv_idx // 16)),
  mask_ref(lambda b, h, qi, ki, t: torch.div(qi, 16, rounding_mode="floor") >= torch.div(ki, 16, rounding_mode="floor")))

V("m5_dilated_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: ((q_idx - kv_idx) % 3 == 0) & (q_idx >= kv_idx)),
  mask_ref(lambda b, h, qi, ki, t: (torch.remainder(qi - ki, 3) == 0) & (ki <= qi)))

V("m5_global_rows_cols_window", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                           (kv_idx < 4) | (q_idx < 4) | (abs(q_idx - kv_idx) <= 8)),
  mask_ref(lambda b, h, qi, ki, t: (ki < 4) | (qi < 4) | ((qi - ki).abs() <= 8)))

V("m5_prev5_strict_neg_consts", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                           (kv_idx - q_idx >= -5) & (kv_idx - q_idx <= -1)),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki >= 1) & (qi - ki <= 5)), note="row 0 sees nothing")

V("m5_window_beyond_n", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx - kv_idx).abs() < 10 ** 6),
  mask_ref(lambda b, h, qi, ki, t: ki >= 0))

V("m5_int64_huge_lower_bound", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                          (kv_idx.long() >= q_idx.long() - 2 ** 40) & (kv_idx <= q_idx)),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m5_even_rows_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx % 2 == 0) & (kv_idx <= q_idx)),
  mask_ref(lambda b, h, qi, ki, t: (torch.remainder(qi, 2) == 0) & (ki <= qi)), note="odd rows see nothing")

V("m5_batch_parity_direction", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                          torch.where(b % 2 == 0, q_idx >= kv_idx, kv_idx >= q_idx)),
  mask_ref(lambda b, h, qi, ki, t: torch.where(torch.remainder(b, 2) == 0, ki <= qi, ki >= qi)))


def _make_prefix_b(B, H, Nq, Nkv):
    return {"prefix": torch.tensor([5, 60][:B] + [10] * max(0, B - 2), dtype=torch.int32)}


V("m5_prefix_per_batch_or_where", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                             torch.where(kv_idx < t["prefix"][b], True, kv_idx <= q_idx)),
  mask_ref(lambda b, h, qi, ki, t: (ki < t["prefix"].long()[b]) | (ki <= qi)), _make_prefix_b)


def _doc_causal_eq_mods(t):
    doc = t["doc"].long()

    def mask_mod(b, h, q_idx, kv_idx):
        return torch.eq(doc[q_idx], doc[kv_idx]) & torch.ge(q_idx, kv_idx)
    return None, mask_mod


V("m5_doc_causal_torch_eq_int64", _doc_causal_eq_mods,
  mask_ref(lambda b, h, qi, ki, t: (t["doc"].long()[qi] == t["doc"].long()[ki]) & (ki <= qi)), _make_doc)

# ---- score_mods: math not yet covered --------------------------------------------------------------------

V("s5_exp_decay_distance", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                      score + 2.0 * torch.exp(-(q_idx - kv_idx).abs().float() / 8), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + 2.0 * torch.exp(-(g[2] - g[3]).abs().double() / 8), v))(grids(q, k)))

V("s5_signed_log1p", lambda t: (lambda score, b, h, q_idx, kv_idx: torch.sign(score) * torch.log1p(score.abs()) * 3, None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(torch.sign(s) * torch.log1p(s.abs()) * 3, v))(S(q, k, sc)))

V("s5_rsqrt_distance_scale", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                        score * torch.rsqrt(1.0 + ((q_idx - kv_idx).float() / 16) ** 2) * 2, None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) * 2 / torch.sqrt(1.0 + ((g[2] - g[3]).double() / 16) ** 2), v))(grids(q, k)))

V("s5_floor_quantize", lambda t: (lambda score, b, h, q_idx, kv_idx: torch.floor(score * 4) / 4, None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(torch.floor(s * 4) / 4, v))(S(q, k, sc)),
  note="a score at a step edge may round the other way in bf16 inputs; measure zero in float64")

V("s5_ceil_index_buckets", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                      score - 0.25 * torch.ceil((q_idx - kv_idx).abs() / 10), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) - 0.25 * torch.ceil((g[2] - g[3]).abs().double() / 10), v))(grids(q, k)))

V("s5_gelu_erf", lambda t: (lambda score, b, h, q_idx, kv_idx:
                            score * 0.5 * (1.0 + torch.erf(score / math.sqrt(2.0))) * 2, None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(s * 0.5 * (1.0 + torch.erf(s / math.sqrt(2.0))) * 2, v))(S(q, k, sc)))

V("s5_sin_score_cos_pos", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                     score + 0.5 * torch.sin(score * 2) + torch.cos((q_idx - kv_idx).float() * 0.1), None),
  lambda q, k, v, sc, t: (lambda s, g: softmax_attend(s + 0.5 * torch.sin(s * 2) + torch.cos((g[2] - g[3]).double() * 0.1), v))(S(q, k, sc), grids(q, k)))

V("s5_reciprocal_distance", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                       score + 3 * torch.reciprocal(1.0 + (q_idx - kv_idx).abs().float()), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + 3 / (1.0 + (g[2] - g[3]).abs().double()), v))(grids(q, k)))

V("s5_where_threshold_piecewise", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                             torch.where(score > 0.5, score * 3 - 1.0, score), None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(torch.where(s > 0.5, s * 3 - 1.0, s), v))(S(q, k, sc)))

V("s5_clamp_min_max_methods", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                         (score * 3).clamp_min(-0.5).clamp_max(2.0), None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend((s * 3).clamp(-0.5, 2.0), v))(S(q, k, sc)))

V("s5_maximum_full_like", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                     torch.maximum(score * 2, torch.full_like(score, -0.25)), None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(torch.clamp(s * 2, min=-0.25), v))(S(q, k, sc)))

V("s5_exp2_log2_softplus", lambda t: (lambda score, b, h, q_idx, kv_idx: torch.log2(torch.exp2(score * 3) + 1.0), None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(torch.log2(torch.exp2(s * 3) + 1.0), v))(S(q, k, sc)))

V("s5_sqrt_hyperbola", lambda t: (lambda score, b, h, q_idx, kv_idx: torch.sqrt(score * score + 1.0) * 2 - 1.0, None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(torch.sqrt(s * s + 1.0) * 2 - 1.0, v))(S(q, k, sc)))

V("s5_square_plus_abs", lambda t: (lambda score, b, h, q_idx, kv_idx: torch.square(score) * 0.5 - score.abs(), None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(s * s * 0.5 - s.abs(), v))(S(q, k, sc)))

V("s5_float_neg_power", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                   score + 4.0 * (1.0 + (q_idx - kv_idx).abs().float()) ** -1.5, None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + 4.0 * (1.0 + (g[2] - g[3]).abs().double()) ** -1.5, v))(grids(q, k)))


def _loop_mod(score, b, h, q_idx, kv_idx):
    for i in range(3):  # a static Python loop
        score = score * 0.75 + 0.1 * i
    return score


V("s5_static_python_loop", lambda t: (_loop_mod, None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(((s * 0.75) * 0.75 + 0.1) * 0.75 + 0.2, v))(S(q, k, sc)))

V("s5_isnan_guard_batch_parity", lambda t: (lambda score, b, h, q_idx, kv_idx:
                                            torch.where(torch.isnan(score), 0.0, score) * (1 + b % 2), None),
  lambda q, k, v, sc, t: (lambda s, g: softmax_attend(s * (1 + torch.remainder(g[0], 2)).double(), v))(S(q, k, sc), grids(q, k)))

V("s5_ignores_all_args_const", lambda t: (lambda score, b, h, q_idx, kv_idx: 1.5, None),
  lambda q, k, v, sc, t: softmax_attend(torch.full_like(S(q, k, sc), 1.5), v))

# ---- captured float tensors (trained by the backward) ----------------------------------------------------


def _make_t5(B, H, Nq, Nkv):
    g = gen("t5", B, H, Nq, Nkv)
    return {"kv_bias": torch.randn(Nkv, generator=g), "q_bias": torch.randn(Nq, generator=g) * 0.5,
            "tab_hn": torch.randn(H, Nkv, generator=g), "rel": torch.randn(H, 32, generator=g),
            "scale_bh": torch.rand(B, H, generator=g) + 0.5, "logt": torch.randn(H, generator=g) * 0.3,
            "diag": torch.randn(H, Nq + Nkv - 1, generator=g) * 0.7}


V("t5_bias_per_kv", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["kv_bias"][kv_idx]), None),
  lambda q, k, v, sc, t: softmax_attend(S(q, k, sc) + t["kv_bias"].double().view(1, 1, 1, -1), v), _make_t5)

V("t5_bias_per_q_causal", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["q_bias"][q_idx] * 2 * (kv_idx % 2)),
                                     lambda b, h, q_idx, kv_idx: q_idx >= kv_idx),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + t["q_bias"].double().view(1, 1, -1, 1) * 2 * torch.remainder(g[3], 2).double(),
                                                   v, g[3] <= g[2]))(grids(q, k)), _make_t5)

V("t5_table_h_kv", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["tab_hn"][h, kv_idx]), None),
  lambda q, k, v, sc, t: softmax_attend(S(q, k, sc) + t["tab_hn"].double().view(1, q.shape[1], 1, -1), v), _make_t5)

V("t5_relpos_clamped_causal", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                          score + t["rel"][h, torch.clamp(q_idx - kv_idx, 0, 31)]),
                                         lambda b, h, q_idx, kv_idx: q_idx >= kv_idx),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + t["rel"].double()[g[1], (g[2] - g[3]).clamp(0, 31)],
                                                   v, g[3] <= g[2]))(grids(q, k)), _make_t5)

V("t5_scale_b_h", lambda t: ((lambda score, b, h, q_idx, kv_idx: score * t["scale_bh"][b, h]), None),
  lambda q, k, v, sc, t: softmax_attend(S(q, k, sc) * t["scale_bh"].double().view(q.shape[0], q.shape[1], 1, 1), v), _make_t5)

V("t5_exp_temperature", lambda t: ((lambda score, b, h, q_idx, kv_idx: score * torch.exp(t["logt"][h])), None),
  lambda q, k, v, sc, t: softmax_attend(S(q, k, sc) * torch.exp(t["logt"].double()).view(1, -1, 1, 1), v), _make_t5)

V("t5_diag_table_offset_window", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                             score + t["diag"][h, q_idx - kv_idx + 140]),
                                            lambda b, h, q_idx, kv_idx: abs(q_idx - kv_idx) <= 40),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + t["diag"].double()[g[1], g[2] - g[3] + 140],
                                                   v, (g[2] - g[3]).abs() <= 40))(grids(q, k)), _make_t5,
  note="index q - kv + 140 assumes Nkv = 141")

V("t5_tanh_of_kv_param", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + 2 * torch.tanh(t["kv_bias"][kv_idx] * 1.5)), None),
  lambda q, k, v, sc, t: softmax_attend(S(q, k, sc) + 2 * torch.tanh(t["kv_bias"].double() * 1.5).view(1, 1, 1, -1), v), _make_t5)

# ---- sigmoid normalizer ----------------------------------------------------------------------------------

V("g5_sigmoid_softcap_causal", lambda t: ((lambda score, b, h, q_idx, kv_idx: 5 * torch.tanh(score / 5) - 3.0),
                                          lambda b, h, q_idx, kv_idx: ~(kv_idx > q_idx)),
  lambda q, k, v, sc, t: (lambda g: sigmoid_attend(5 * torch.tanh(S(q, k, sc) / 5) - 3.0, v, g[3] <= g[2]))(grids(q, k)),
  normalizer="sigmoid")

V("g5_sigmoid_doc", lambda t: ((lambda score, b, h, q_idx, kv_idx: score - 1.0),
                               lambda b, h, q_idx, kv_idx: t["doc"][q_idx] == t["doc"][kv_idx]),
  lambda q, k, v, sc, t: (lambda g: sigmoid_attend(S(q, k, sc) - 1.0, v,
                                                   t["doc"].long()[g[2]] == t["doc"].long()[g[3]]))(grids(q, k)),
  _make_doc, normalizer="sigmoid")

V("g5_sigmoid_prefix_trained_bias", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["logt"][h] - 2.0),
                                               lambda b, h, q_idx, kv_idx: (kv_idx < 8) | (kv_idx <= q_idx)),
  lambda q, k, v, sc, t: (lambda g: sigmoid_attend(S(q, k, sc) + t["logt"].double().view(1, -1, 1, 1) - 2.0, v,
                                                   (g[3] < 8) | (g[3] <= g[2])))(grids(q, k)),
  _make_t5, normalizer="sigmoid")

V("g5_sigmoid_prev5_empty_row", lambda t: ((lambda score, b, h, q_idx, kv_idx: score * 2),
                                           lambda b, h, q_idx, kv_idx: (kv_idx - q_idx >= -5) & (kv_idx - q_idx <= -1)),
  lambda q, k, v, sc, t: (lambda g: sigmoid_attend(S(q, k, sc) * 2, v, (g[2] - g[3] >= 1) & (g[2] - g[3] <= 5)))(grids(q, k)),
  normalizer="sigmoid")

V("g5_sigmoid_score_threshold", lambda t: ((lambda score, b, h, q_idx, kv_idx: torch.where(score > 0.0, score, NEG_INF)), None),
  lambda q, k, v, sc, t: (lambda s: sigmoid_attend(s, v, s > 0.0))(S(q, k, sc)), normalizer="sigmoid")

# ---- expected refusals -----------------------------------------------------------------------------------

V("s5_round_quarter", lambda t: ((lambda score, b, h, q_idx, kv_idx: torch.round(score * 4) / 4), None),
  lambda q, k, v, sc, t: softmax_attend(torch.round(S(q, k, sc) * 4) / 4, v),
  note="halves to even, as torch.round")

V("s5_div_trunc", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                              score + 0.1 * torch.div(q_idx - kv_idx, 3, rounding_mode="trunc")), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(
      S(q, k, sc) + 0.1 * torch.div(g[2] - g[3], 3, rounding_mode="trunc").double(), v))(grids(q, k)),
  note="rounds toward zero: -4 / 3 is -1 where // gives -2")

V("s5_float_trunc", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                torch.trunc(score) + 0.5 * torch.div(score, 0.7, rounding_mode="trunc")), None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(torch.trunc(s) + 0.5 * torch.trunc(s / 0.7), v))(S(q, k, sc)),
  note="a score at a step edge may round the other way in float32")

V("r5_int_negative_power", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + (q_idx - kv_idx + 1000) ** -1), None),
  expect="refuse", note="torch rejects integer ** negative integer")

V("r5_varargs_mods", lambda t: ((lambda *a: a[0] * 0.5), (lambda *a: a[2] >= a[3])), expect="refuse",
  note="FlexAttention itself calls the mods positionally and would accept this")

V("r5_python_ternary_mask", lambda t: (None, lambda b, h, q_idx, kv_idx: True if q_idx >= kv_idx else False),
  expect="refuse")

V("s5_expm1", lambda t: ((lambda score, b, h, q_idx, kv_idx: torch.expm1(score)), None),
  lambda q, k, v, sc, t: softmax_attend(torch.expm1(S(q, k, sc)), v), note="refused when first written, traced since")

# ---- more causal / window / prefix spellings (static classification compared with canonical ones) --------

V("m5_select_int_window", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                     torch.where(q_idx >= kv_idx, q_idx - kv_idx, 1000) < 32),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki >= 0) & (qi - ki <= 31)))

V("m5_and_true_or_false", lambda t: (None, lambda b, h, q_idx, kv_idx: ((q_idx >= kv_idx) & True) | False),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m5_prefix_via_maximum", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                      kv_idx < torch.maximum(q_idx + 1, torch.full_like(q_idx, 8))),
  mask_ref(lambda b, h, qi, ki, t: (ki < 8) | (ki <= qi)))

V("m5_bool_cast_clamp_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx - kv_idx + 1).clamp(0, 1).bool()),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m5_window_and_not_ge", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx >= kv_idx) & ~(q_idx - kv_idx >= 32)),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki >= 0) & (qi - ki <= 31)))

V("m5_head_flag_same_branches", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                           torch.where(h < 2, q_idx >= kv_idx, kv_idx <= q_idx)),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m5_bottom_right_const", lambda t: (None, lambda b, h, q_idx, kv_idx: kv_idx - 58 <= q_idx),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi + 58), note="58 = Nkv - Nq at the harness shape")

V("m5_shift_window", lambda t: (None, lambda b, h, q_idx, kv_idx: ((q_idx - kv_idx) >> 5) == 0),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki >= 0) & (qi - ki <= 31)))

V("m5_mul_neg_coeff_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: kv_idx * -3 >= q_idx * -3),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("m5_sub_zeros_like", lambda t: (None, lambda b, h, q_idx, kv_idx: torch.ge(q_idx - kv_idx, torch.zeros_like(q_idx))),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

# ---- symbols with extreme values, int32 wrap near the top, views, scalars, rounding casts -----------------

# int32 + a constant that still fits int32: q_idx + C wraps for q_idx >= 100 (torch keeps int32)
V("m5_i32_near_max_wrap", lambda t: (None, lambda b, h, q_idx, kv_idx: q_idx + (2 ** 31 - 100) >= kv_idx + (2 ** 31 - 100)),
  mask_ref(lambda b, h, qi, ki, t: wrap32(qi + 2 ** 31 - 100) >= wrap32(ki + 2 ** 31 - 100)))


def _make_prefix_extreme(B, H, Nq, Nkv):
    return {"prefix_x": torch.tensor([-7, 500][:B] + [3] * max(0, B - 2), dtype=torch.int32)}


V("m5_prefix_negative_and_beyond", lambda t: (None, lambda b, h, q_idx, kv_idx: (kv_idx < t["prefix_x"][b]) | (kv_idx <= q_idx)),
  mask_ref(lambda b, h, qi, ki, t: (ki < t["prefix_x"].long()[b]) | (ki <= qi)), _make_prefix_extreme)


def _make_win_extreme(B, H, Nq, Nkv):
    return {"win_x": torch.tensor([-1, 0, 3, 1000][:H] + [2] * max(0, H - 4), dtype=torch.int32)}


V("m5_head_window_negative_zero_huge", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                                  (q_idx >= kv_idx) & (q_idx - kv_idx <= t["win_x"][h])),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki >= 0) & (qi - ki <= t["win_x"].long()[h])), _make_win_extreme,
  note="head 0 sees nothing; heads 0 and 1 share a KV head")


def _make_off64(B, H, Nq, Nkv):
    return {"off64": torch.tensor([2 ** 40, -(2 ** 40), 0, 5][:H] + [1] * max(0, H - 4), dtype=torch.int64)}


V("m5_head_offset_int64_huge", lambda t: (None, lambda b, h, q_idx, kv_idx: kv_idx <= q_idx + t["off64"][h]),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi + t["off64"][h]), _make_off64)


def _make_scalars(B, H, Nq, Nkv):
    g = gen("scalars", B, H, Nq, Nkv)
    base = torch.randn(H + 1, 2 * Nkv + 3, generator=g)
    return {"alpha0d": torch.tensor(0.7), "one_elem": torch.tensor([1.3]),
            "flag_h": torch.tensor([True, False, True, False][:H] + [False] * max(0, H - 4)),
            "colexp": torch.randn(H, 1, generator=g).expand(H, Nkv),
            "sliced": base[1:, 3::2]}


V("t5_scalar_0d_param", lambda t: ((lambda score, b, h, q_idx, kv_idx: score * t["alpha0d"] + t["one_elem"][0]), None),
  lambda q, k, v, sc, t: softmax_attend(S(q, k, sc) * t["alpha0d"].double() + t["one_elem"].double()[0], v), _make_scalars)

V("s5_bool_flag_per_head", lambda t: ((lambda score, b, h, q_idx, kv_idx: torch.where(t["flag_h"][h], score * 2, score)), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(torch.where(t["flag_h"][g[1]], S(q, k, sc) * 2, S(q, k, sc)), v))(grids(q, k)),
  _make_scalars)

V("t5_expanded_stride0_table", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["colexp"][h, kv_idx]), None),
  lambda q, k, v, sc, t: softmax_attend(S(q, k, sc) + t["colexp"].double().view(1, q.shape[1], 1, -1), v), _make_scalars,
  note="a [H, Nkv] view with stride 0 along kv")

V("t5_sliced_offset_view", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["sliced"][h, kv_idx]), None),
  lambda q, k, v, sc, t: softmax_attend(S(q, k, sc) + t["sliced"].double()[:, :k.shape[2]].reshape(1, q.shape[1], 1, -1), v),
  _make_scalars, note="storage offset and stride 2")

V("s5_round_score_to_bf16", lambda t: ((lambda score, b, h, q_idx, kv_idx: (score * 4).bfloat16().float()), None),
  lambda q, k, v, sc, t: softmax_attend((S(q, k, sc) * 4).float().bfloat16().double(), v),
  expect="refuse", note="torch rounds; CuIR refuses narrowing casts of the score (clear, located message)")

V("s5_round_score_to_half", lambda t: ((lambda score, b, h, q_idx, kv_idx: (score * 4).half().float()), None),
  lambda q, k, v, sc, t: softmax_attend((S(q, k, sc) * 4).float().half().double(), v),
  expect="refuse", note="torch rounds; CuIR refuses narrowing casts of the score (clear, located message)")

V("s5_int_tensor_as_float_bias", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + 0.1 * t["doc"][q_idx] - 0.1 * t["doc"][kv_idx]), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + 0.1 * t["doc"].double()[g[2]] - 0.1 * t["doc"].double()[g[3]], v))(grids(q, k)),
  _make_doc)

# ---- late additions: GQA group index, batch + head offsets ------------------------------------------------

V("t5_kv_head_group_bias", lambda t: ((lambda score, b, h, q_idx, kv_idx: score * t["scale_bh"][b, h // 2] + t["logt"][h // 2] * (kv_idx % 3)), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) * t["scale_bh"].double()[g[0], g[1] // 2]
                                                   + t["logt"].double()[g[1] // 2] * torch.remainder(g[3], 3).double(), v))(grids(q, k)),
  _make_t5, note="tensors indexed by the KV head h // 2 (Hq / Hkv = 2 at the harness shape)")

V("m5_batch_head_offset", lambda t: (None, lambda b, h, q_idx, kv_idx: kv_idx <= q_idx + b * 7 - h * 3),
  mask_ref(lambda b, h, qi, ki, t: ki - qi <= 7 * b - 3 * h), note="b 0, h >= 1: row 0 sees nothing")

V("s5_rsqrt_power_of_score", lambda t: ((lambda score, b, h, q_idx, kv_idx: 3.0 * (score.abs() + 1.0) ** -0.5), None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(3.0 * (s.abs() + 1.0) ** -0.5, v))(S(q, k, sc)))

# =========================================================================================================
# u9: written 2026-12-06 without looking at how the tracer spells anything (unseen-variant checks)
# =========================================================================================================


def _make_u9(B, H, Nq, Nkv):
    g = gen("u9", B, H, Nq, Nkv)
    return {"start": (torch.arange(Nq) // 23) * 23, "kv_slope": torch.rand(max(H // 2, 1), generator=g) * 0.2,
            "bias_qk": torch.randn(Nq, Nkv, generator=g) * 0.5}


V("u9_abs_band", lambda t: (None, lambda b, h, q_idx, kv_idx: torch.abs(q_idx - kv_idx) <= 7),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki).abs() <= 7))

V("u9_parity_product", lambda t: (None, lambda b, h, q_idx, kv_idx: ((q_idx * kv_idx) % 2) == 0),
  mask_ref(lambda b, h, qi, ki, t: (qi * ki) % 2 == 0))

V("u9_div_floor_blocks", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                    torch.div(q_idx, 16, rounding_mode="floor") ==
                                    torch.div(kv_idx, 16, rounding_mode="floor")),
  mask_ref(lambda b, h, qi, ki, t: qi // 16 == ki // 16))

V("u9_div_trunc_distance", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                      torch.div(q_idx - kv_idx, 5, rounding_mode="trunc") == 0),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki).abs() < 5))

V("u9_bitand_subset", lambda t: (None, lambda b, h, q_idx, kv_idx: (kv_idx & q_idx) == kv_idx),
  mask_ref(lambda b, h, qi, ki, t: (ki & qi) == ki))

V("u9_doc_start_lookup", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                    (kv_idx >= t["start"][q_idx]) & (kv_idx <= q_idx)),
  mask_ref(lambda b, h, qi, ki, t: (ki >= t["start"][qi]) & (ki <= qi)), _make_u9,
  note="a per-row lower bound looked up in a captured tensor")

V("u9_min_max_window", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                  torch.minimum(q_idx, kv_idx) >= torch.maximum(q_idx - 16, torch.zeros_like(q_idx))),
  mask_ref(lambda b, h, qi, ki, t: torch.minimum(qi, ki) >= torch.clamp(qi - 16, min=0)))

V("u9_not_lt_window", lambda t: (None, lambda b, h, q_idx, kv_idx: (kv_idx < q_idx + 1) & ~(kv_idx < q_idx - 9)),
  mask_ref(lambda b, h, qi, ki, t: (ki <= qi) & (ki >= qi - 9)))

V("u9_square_distance", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx - kv_idx) * (q_idx - kv_idx) <= 100),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki).abs() <= 10))

V("u9_batch_window", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                (kv_idx <= q_idx) & (kv_idx >= q_idx - (b + 1) * 10)),
  mask_ref(lambda b, h, qi, ki, t: (ki <= qi) & (ki >= qi - (b + 1) * 10)))

V("u9_piecewise_slope", lambda t: ((lambda score, b, h, q_idx, kv_idx: torch.where(score > 0, score * 2.0, score * 0.5)),
                                   None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(torch.where(s > 0, 2 * s, 0.5 * s), v))(S(q, k, sc)))

V("u9_int_true_div_bias", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + (q_idx - kv_idx) / 7), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + (g[2] - g[3]).double() / 7, v))(grids(q, k)))

V("u9_times_causal_float", lambda t: ((lambda score, b, h, q_idx, kv_idx: score * (q_idx >= kv_idx).float()), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) * (g[2] >= g[3]).double(), v))(grids(q, k)),
  note="not a mask: the hidden scores are 0, not -inf")

V("u9_kv_head_slope", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["kv_slope"][h // 2] * (kv_idx - q_idx)),
                                 lambda b, h, q_idx, kv_idx: kv_idx <= q_idx),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + t["kv_slope"].double()[g[1] // 2] * (g[3] - g[2]),
                                                   v, g[3] <= g[2]))(grids(q, k)), _make_u9)

V("u9_negated_score", lambda t: ((lambda score, b, h, q_idx, kv_idx: -score), None),
  lambda q, k, v, sc, t: softmax_attend(-S(q, k, sc), v))

V("u9_where_inf_every_fourth", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                           torch.where((q_idx - kv_idx) % 4 == 0, score, -float("inf"))), None),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki) % 4 == 0), note="Python's floored remainder of a negative difference")

V("u9_bias_qk_causal", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["bias_qk"][q_idx, kv_idx]),
                                  lambda b, h, q_idx, kv_idx: kv_idx <= q_idx + 3),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + t["bias_qk"].double().view(1, 1, *t["bias_qk"].shape),
                                                   v, g[3] <= g[2] + 3))(grids(q, k)), _make_u9)

V("u9_exp_kv_decay", lambda t: ((lambda score, b, h, q_idx, kv_idx: score - torch.exp(-(kv_idx.float()) / 50)), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) - torch.exp(-g[3].double() / 50), v))(grids(q, k)))

V("u9_sigmoid_abs_band", lambda t: ((lambda score, b, h, q_idx, kv_idx: score - 1.0),
                                    lambda b, h, q_idx, kv_idx: torch.abs(q_idx - kv_idx) < 12),
  lambda q, k, v, sc, t: (lambda g: sigmoid_attend(S(q, k, sc) - 1.0, v, (g[2] - g[3]).abs() < 12))(grids(q, k)),
  normalizer="sigmoid")

# The remainders' jumps are kept away from the scores (|score| < 5 here): a score within rounding of a jump
# lands on either side in float32 and in the float64 reference, a difference of the divisor, not a defect
# (the H100 run of 2026-12-06 met one with remainder(score, 2.0)). Both of torch's sign cases are taken;
# test/Python/float-mod.test checks the values at the jumps themselves.
V("u9_fmod_score", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                               torch.fmod(score - 20.0, 50.0) + torch.fmod(score + 20.0, -50.0)), None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(torch.fmod(s - 20.0, 50.0) + torch.fmod(s + 20.0, -50.0), v))(
      S(q, k, sc)))

V("u9_remainder_score", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                    torch.remainder(score - 20.0, 50.0) + (score + 20.0) % -50.0), None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(torch.remainder(s - 20.0, 50.0) + torch.remainder(s + 20.0, -50.0),
                                                   v))(S(q, k, sc)))

V("u9_logsigmoid_score", lambda t: ((lambda score, b, h, q_idx, kv_idx: torch.nn.functional.logsigmoid(score)), None),
  lambda q, k, v, sc, t: softmax_attend(torch.nn.functional.logsigmoid(S(q, k, sc)), v),
  expect="refuse", note="not among the traced functions: refused, naming it")


def _make_u9b(B, H, Nq, Nkv):
    g = gen("u9b", B, H, Nq, Nkv)
    return {"keep_kv": torch.rand(Nkv, generator=g) > 0.3, "lens": torch.tensor([61, 140][:B], dtype=torch.int32),
            "head_temp": torch.rand(H, generator=g) + 0.5, "pos_tab": torch.randn(2, 8, generator=g),
            "q_doc": torch.arange(Nq) // 19, "kv_doc": torch.arange(Nkv) // 31}


V("u9_bool_tensor_keep_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: t["keep_kv"][kv_idx] & (kv_idx <= q_idx)),
  mask_ref(lambda b, h, qi, ki, t: t["keep_kv"][ki] & (ki <= qi)), _make_u9b, note="a captured bool tensor")

V("u9_kv_len_per_batch", lambda t: (None, lambda b, h, q_idx, kv_idx: kv_idx < t["lens"][b]),
  mask_ref(lambda b, h, qi, ki, t: ki < t["lens"].long()[b]), _make_u9b, note="key padding per batch (int32 lengths)")

V("u9_ratio_float_mask", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                    (kv_idx.float() + 1.0) / (q_idx.float() + 1.0) <= 0.5),
  mask_ref(lambda b, h, qi, ki, t: (ki.float() + 1.0) / (qi.float() + 1.0) <= 0.5),
  note="a float32 quotient compared: the reference rounds as the kernel does (float32)")

V("u9_head_temperature_causal", lambda t: ((lambda score, b, h, q_idx, kv_idx: score / t["head_temp"][h]),
                                           lambda b, h, q_idx, kv_idx: kv_idx <= q_idx),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) / t["head_temp"].double()[g[1]], v, g[3] <= g[2]))(grids(q, k)),
  _make_u9b)

V("u9_2d_table_parity_bucket", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                           score + t["pos_tab"][(q_idx + kv_idx) % 2, torch.clamp((q_idx - kv_idx).abs(), max=7)]),
                                          None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(
      S(q, k, sc) + t["pos_tab"].double()[(g[2] + g[3]) % 2, (g[2] - g[3]).abs().clamp(max=7)], v))(grids(q, k)),
  _make_u9b)

V("u9_two_doc_tensors", lambda t: (None, lambda b, h, q_idx, kv_idx: t["q_doc"][q_idx] * 19 // 31 == t["kv_doc"][kv_idx]),
  mask_ref(lambda b, h, qi, ki, t: t["q_doc"][qi] * 19 // 31 == t["kv_doc"][ki]), _make_u9b,
  note="two different lookups compared after integer arithmetic")

V("u9_exp2_score", lambda t: ((lambda score, b, h, q_idx, kv_idx: torch.exp2(score * 0.1) - 1.0), None),
  lambda q, k, v, sc, t: softmax_attend(torch.exp2(S(q, k, sc) * 0.1) - 1.0, v))

V("u9_clamp_tensor_bounds", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                        torch.clamp(score, min=-(h + 1.0), max=h + 1.0)), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(torch.minimum(torch.maximum(S(q, k, sc), -(g[1] + 1.0)), g[1] + 1.0), v))(grids(q, k)),
  note="clamp bounds that depend on the head")

V("u9_where_mixed_int_float", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                          torch.where(kv_idx > q_idx, 0, score)), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(torch.where(g[3] > g[2], torch.zeros((), dtype=torch.float64), S(q, k, sc)), v))(grids(q, k)),
  note="an int literal in a float where")

V("u9_masked_fill_method", lambda t: ((lambda score, b, h, q_idx, kv_idx: score.masked_fill(kv_idx > q_idx + 5, -1e4)), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc).masked_fill(g[3] > g[2] + 5, -1e4), v))(grids(q, k)))

V("u9_isin_refused", lambda t: (None, lambda b, h, q_idx, kv_idx: torch.isin(kv_idx, torch.tensor([0, 5, 9]))),
  expect="refuse", note="torch.isin is not traced")

V("u9_bucketize_refused", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                      score + torch.bucketize(q_idx - kv_idx, torch.tensor([-8, 0, 8])).float()), None),
  expect="refuse", note="torch.bucketize is not traced")

V("u9_sigmoid_bias_per_head_window", lambda t: ((lambda score, b, h, q_idx, kv_idx: score - t["head_temp"][h] * 3.0),
                                                lambda b, h, q_idx, kv_idx: (kv_idx <= q_idx) & (q_idx - kv_idx < 20 + h)),
  lambda q, k, v, sc, t: (lambda g: sigmoid_attend(S(q, k, sc) - t["head_temp"].double()[g[1]] * 3.0, v,
                                                   (g[3] <= g[2]) & (g[2] - g[3] < 20 + g[1])))(grids(q, k)),
  _make_u9b, normalizer="sigmoid")


# =========================================================================================================
# Session 14: operator precedence, function and method spellings, closures, shifts, two-argument min / max
# =========================================================================================================

_W14_WINDOW = 17  # a Python int the mask_mod closes over


def _make_w14(B, H, Nq, Nkv):
    g = gen("w14", B, H, Nq, Nkv)
    return {"doc": torch.arange(max(Nq, Nkv)) // 23, "rel": torch.randn(Nq + Nkv, generator=g),
            "gate": torch.rand(B, H, generator=g)}


V("w14_precedence_or_binds_tighter",
  lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx - kv_idx).abs() <= 3 | (kv_idx == 0)),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki).abs() <= (3 | (ki == 0))),
  note="Python's | binds before <=: the window is |q - kv| <= 3, key 0 is not global")

V("w14_function_forms", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                   torch.logical_and(torch.ge(q_idx, kv_idx), torch.lt(q_idx - kv_idx, 40))),
  mask_ref(lambda b, h, qi, ki, t: (qi >= ki) & (qi - ki < 40)))

V("w14_method_forms", lambda t: (None, lambda b, h, q_idx, kv_idx: q_idx.ge(kv_idx) & kv_idx.gt(q_idx.sub(25))),
  mask_ref(lambda b, h, qi, ki, t: (qi >= ki) & (ki > qi - 25)))

V("w14_logical_xor_quadrants", lambda t: (None, lambda b, h, q_idx, kv_idx: torch.logical_xor(q_idx < 40, kv_idx < 70)),
  mask_ref(lambda b, h, qi, ki, t: (qi < 40) ^ (ki < 70)), note="rows >= 40 see keys < 70 and the rest the others")

V("w14_shift_blocks", lambda t: (None, lambda b, h, q_idx, kv_idx: (q_idx >> 4) == (kv_idx >> 4)),
  mask_ref(lambda b, h, qi, ki, t: (qi // 16) == (ki // 16)), note="block diagonal through right shifts")

V("w14_bitand_even_keys_causal", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                            (torch.bitwise_and(kv_idx, 1) == 0) & (kv_idx <= q_idx)),
  mask_ref(lambda b, h, qi, ki, t: (ki % 2 == 0) & (ki <= qi)))

V("w14_closure_int_window", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                       (q_idx - kv_idx >= 0) & (q_idx - kv_idx < _W14_WINDOW)),
  mask_ref(lambda b, h, qi, ki, t: (qi - ki >= 0) & (qi - ki < 17)))

V("w14_two_arg_min_max", lambda t: (None, lambda b, h, q_idx, kv_idx:
                                    (torch.min(q_idx, kv_idx) >= 10) & (torch.max(q_idx, kv_idx) < 120)),
  mask_ref(lambda b, h, qi, ki, t: (torch.minimum(qi, ki) >= 10) & (torch.maximum(qi, ki) < 120)),
  note="torch.min / torch.max of two tensors are element-wise")

V("w14_anti_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: kv_idx >= q_idx),
  mask_ref(lambda b, h, qi, ki, t: ki >= qi), note="rows past the last key see nothing (Nq < Nkv here, none)")

V("w14_batch_head_mod3", lambda t: (None, lambda b, h, q_idx, kv_idx: (b * 4 + h) % 3 != kv_idx % 3),
  mask_ref(lambda b, h, qi, ki, t: (b * 4 + h) % 3 != ki % 3))

V("w14_doc_eq_method", lambda t: (None, lambda b, h, q_idx, kv_idx: t["doc"][q_idx].eq(t["doc"][kv_idx])),
  mask_ref(lambda b, h, qi, ki, t: t["doc"][qi] == t["doc"][ki]), _make_w14)

V("w14_where_full_like_neginf", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                            torch.where(kv_idx <= q_idx, score, torch.full_like(score, float("-inf")))),
                                           None),
  mask_ref(lambda b, h, qi, ki, t: ki <= qi))

V("w14_relu_method_clamp", lambda t: ((lambda score, b, h, q_idx, kv_idx: torch.relu(score) - score.clamp(-2, 2)), None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(torch.relu(s) - s.clamp(-2, 2), v))(S(q, k, sc)))

V("w14_softcap_commuted", lambda t: ((lambda score, b, h, q_idx, kv_idx: 30 * torch.tanh(score * (1 / 30))),
                                     lambda b, h, q_idx, kv_idx: kv_idx <= q_idx),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(30 * torch.tanh(S(q, k, sc) / 30), v, g[3] <= g[2]))(grids(q, k)))

V("w14_floordiv_by_head", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + ((q_idx - kv_idx) // (h + 1)) * 0.05),
                                     None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + torch.div(g[2] - g[3], g[1] + 1, rounding_mode="floor")
                                                   * 0.05, v))(grids(q, k)),
  note="floored division of negative distances by a head-dependent divisor")

V("w14_relative_table_offset", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["rel"][kv_idx - q_idx + 82]), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + t["rel"].double()[g[3] - g[2] + 82], v))(grids(q, k)),
  _make_w14, note="a relative-position table indexed by kv - q + (Nq - 1)")

V("w14_pow_slopes_inline", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                       score - torch.pow(2.0, -(h + 1.0) * 0.5) * (q_idx - kv_idx).abs()), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) - torch.pow(2.0, -(g[1] + 1.0) * 0.5)
                                                   * (g[2] - g[3]).abs(), v))(grids(q, k)),
  note="ALiBi slopes computed in the score_mod from the head")

V("w14_gate_b_h_sigmoid_method", lambda t: ((lambda score, b, h, q_idx, kv_idx: score * t["gate"][b, h].sigmoid()),
                                            lambda b, h, q_idx, kv_idx: kv_idx <= q_idx + 10),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) * torch.sigmoid(t["gate"].double()[g[0], g[1]]), v,
                                                   g[3] <= g[2] + 10))(grids(q, k)), _make_w14)

V("w14_to_float32_identity", lambda t: ((lambda score, b, h, q_idx, kv_idx: score.to(torch.float32) + 0.0 * kv_idx),
                                        lambda b, h, q_idx, kv_idx: q_idx >= kv_idx),
  mask_ref(lambda b, h, qi, ki, t: qi >= ki))

V("w14_any_refused", lambda t: (None, lambda b, h, q_idx, kv_idx: torch.any(kv_idx <= q_idx)),
  expect="refuse", note="a reduction over the index, not elementwise")


# ---- session 14, for the backward: trained tensors read twice, divided by, gated; non-smooth score_mods ----

def _make_w14b(B, H, Nq, Nkv):
    g = gen("w14b", B, H, Nq, Nkv)
    return {"row_tab": torch.randn(H, 4, generator=g) * 0.5, "kv_tab": torch.randn(Nkv, generator=g) * 0.5,
            "gain": torch.randn(H, generator=g) * 0.3, "gate": torch.randn(B, H, generator=g),
            "rel17": torch.randn(17, generator=g) * 0.5, "head_b": torch.randn(H, generator=g),
            "bias8": torch.randn(H, 8, generator=g) * 0.5, "sq": torch.rand(H, generator=g) + 0.5}


# A table indexed by the row alone would have a gradient of exactly 0 (softmax ignores a per-row constant); every
# flash backward, this one included, gives the rounding of O to 16 bits in D = rowsum(dO * O) instead (0.03 here,
# as a float64 model of that rounding predicts), so the table's index also takes the key.
V("w14b_table_diag_mod4", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["row_tab"][h, (q_idx + kv_idx) % 4]),
                                     lambda b, h, q_idx, kv_idx: kv_idx <= q_idx + 40),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + t["row_tab"].double()[g[1], (g[2] + g[3]) % 4], v,
                                                   g[3] <= g[2] + 40))(grids(q, k)), _make_w14b,
  note="a trained table that many (row, key) pairs share: its gradient sums over them")

V("w14b_abs_score", lambda t: ((lambda score, b, h, q_idx, kv_idx: torch.abs(score) * 0.5 + score), None),
  lambda q, k, v, sc, t: (lambda s: softmax_attend(s.abs() * 0.5 + s, v))(S(q, k, sc)))

V("w14b_leaky_where", lambda t: ((lambda score, b, h, q_idx, kv_idx: torch.where(score > 0, score, 0.25 * score)),
                                 lambda b, h, q_idx, kv_idx: q_idx >= kv_idx),
  lambda q, k, v, sc, t: (lambda g, s: softmax_attend(torch.where(s > 0, s, 0.25 * s), v, g[3] <= g[2]))(
      grids(q, k), S(q, k, sc)))

V("w14b_gain_and_bias_trained", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                            score * (1.0 + t["gain"][h]) + t["kv_tab"][kv_idx]), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) * (1.0 + t["gain"].double()[g[1]])
                                                   + t["kv_tab"].double()[g[3]], v))(grids(q, k)), _make_w14b,
  note="two trained tensors, one multiplying the score")

V("w14b_log1p_exp_head_bias", lambda t: ((lambda score, b, h, q_idx, kv_idx: score - torch.log1p(torch.exp(t["head_b"][h]))
                                          * (q_idx - kv_idx).abs() * 0.05), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) - torch.log1p(torch.exp(t["head_b"].double()[g[1]]))
                                                   * (g[2] - g[3]).abs() * 0.05, v))(grids(q, k)), _make_w14b,
  note="a softplus-positive trained slope, spelled log1p(exp(.))")

V("w14b_tanh_gate_b_h", lambda t: ((lambda score, b, h, q_idx, kv_idx: score * torch.tanh(t["gate"][b, h])),
                                   lambda b, h, q_idx, kv_idx: kv_idx <= q_idx),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) * torch.tanh(t["gate"].double()[g[0], g[1]]), v,
                                                   g[3] <= g[2]))(grids(q, k)), _make_w14b)

V("w14b_same_table_twice", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                       score + t["rel17"][torch.clamp(kv_idx - q_idx, -8, 8) + 8]
                                       - 0.5 * t["rel17"][torch.clamp(q_idx - kv_idx, -8, 8) + 8]), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(
      S(q, k, sc) + t["rel17"].double()[(g[3] - g[2]).clamp(-8, 8) + 8]
      - 0.5 * t["rel17"].double()[(g[2] - g[3]).clamp(-8, 8) + 8], v))(grids(q, k)), _make_w14b,
  note="one trained table read at two indices: both reads' gradients add")

V("w14b_divide_by_trained", lambda t: ((lambda score, b, h, q_idx, kv_idx: score / (1.0 + torch.abs(t["gain"][h]))),
                                       None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) / (1.0 + t["gain"].double()[g[1]].abs()), v))(
      grids(q, k)), _make_w14b)

V("w14b_sigmoid_trained_bias_mod8", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["bias8"][h, kv_idx % 8] - 2.0),
                                               lambda b, h, q_idx, kv_idx: q_idx - kv_idx < 50),
  lambda q, k, v, sc, t: (lambda g: sigmoid_attend(S(q, k, sc) + t["bias8"].double()[g[1], g[3] % 8] - 2.0, v,
                                                   g[2] - g[3] < 50))(grids(q, k)), _make_w14b, normalizer="sigmoid")

V("w14b_trained_square_distance", lambda t: ((lambda score, b, h, q_idx, kv_idx:
                                              score - t["sq"][h] * ((q_idx - kv_idx) ** 2) * 1e-3),
                                             lambda b, h, q_idx, kv_idx: kv_idx <= q_idx),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) - t["sq"].double()[g[1]] * ((g[2] - g[3]) ** 2) * 1e-3,
                                                   v, g[3] <= g[2]))(grids(q, k)), _make_w14b)


# =========================================================================================================
# Session 18: masks and score_mods in the forms recent papers write them, spelled afresh
# =========================================================================================================

def _make_w18(B, H, Nq, Nkv):
    g = gen("w18", B, H, Nq, Nkv)
    doc = torch.cumsum((torch.rand(B, max(Nq, Nkv), generator=g) < 0.08).long(), dim=1)  # documents per batch
    return {"cap": torch.rand(H, generator=g) * 20 + 10, "kv_bias": torch.randn(Nkv, generator=g) * 0.5,
            "doc_b": doc, "log_slope": torch.rand(H, generator=g) * 0.5 + 0.1}


V("w18_natten_2d", lambda t: (None, lambda b, h, q_idx, kv_idx: ((q_idx // 8 - kv_idx // 8).abs() <= 1)
                              & ((q_idx % 8 - kv_idx % 8).abs() <= 2)),
  mask_ref(lambda b, h, qi, ki, t: ((qi // 8 - ki // 8).abs() <= 1) & ((qi % 8 - ki % 8).abs() <= 2)),
  note="2-D neighbourhood attention on an 8-wide grid (NATTEN)")

V("w18_chunk_causal_with_sink", lambda t: (None, lambda b, h, q_idx, kv_idx: ((q_idx // 32 == kv_idx // 32)
                                                                             | (kv_idx < 16)) & (kv_idx <= q_idx)),
  mask_ref(lambda b, h, qi, ki, t: ((qi // 32 == ki // 32) | (ki < 16)) & (ki <= qi)),
  note="chunked causal attention (Llama 4) with 16 sink tokens")

V("w18_softcap_per_head", lambda t: ((lambda score, b, h, q_idx, kv_idx: t["cap"][h] * torch.tanh(score / t["cap"][h])),
                                     lambda b, h, q_idx, kv_idx: kv_idx <= q_idx),
  lambda q, k, v, sc, t: (lambda g, cap: softmax_attend(cap * torch.tanh(S(q, k, sc) / cap), v, g[3] <= g[2]))(
      grids(q, k), t["cap"].double().view(1, -1, 1, 1)), _make_w18,
  note="a trained softcap per head")

V("w18_stripe_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: (kv_idx <= q_idx) & ((q_idx - kv_idx) % 3 != 1)),
  mask_ref(lambda b, h, qi, ki, t: (ki <= qi) & ((qi - ki) % 3 != 1)))

V("w18_where_far_penalty", lambda t: ((lambda score, b, h, q_idx, kv_idx: torch.where(q_idx - kv_idx > 16, score - 1.5,
                                                                                      score)),
                                      lambda b, h, q_idx, kv_idx: kv_idx <= q_idx),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(torch.where(g[2] - g[3] > 16, S(q, k, sc) - 1.5, S(q, k, sc)), v,
                                                   g[3] <= g[2]))(grids(q, k)))

V("w18_key_bias_gated", lambda t: ((lambda score, b, h, q_idx, kv_idx: score + t["kv_bias"][kv_idx] * (q_idx >= kv_idx)),
                                   None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) + t["kv_bias"].double()[g[3]] * (g[2] >= g[3]), v))(
      grids(q, k)), _make_w18, note="a trained per-key bias that only the keys up to the row receive")

V("w18_sigmoid_band", lambda t: ((lambda score, b, h, q_idx, kv_idx: score - 3.0),
                                 lambda b, h, q_idx, kv_idx: (q_idx - kv_idx).abs() <= 24),
  lambda q, k, v, sc, t: (lambda g: sigmoid_attend(S(q, k, sc) - 3.0, v, (g[2] - g[3]).abs() <= 24))(grids(q, k)),
  normalizer="sigmoid")

V("w18_log_distance_slope", lambda t: ((lambda score, b, h, q_idx, kv_idx: score - t["log_slope"][h]
                                        * torch.log1p((q_idx - kv_idx).abs().to(torch.float32))),
                                       lambda b, h, q_idx, kv_idx: kv_idx <= q_idx),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) - t["log_slope"].double()[g[1]]
                                                   * torch.log1p((g[2] - g[3]).abs().double()), v, g[3] <= g[2]))(
      grids(q, k)), _make_w18, note="a trained slope of log-distance")

V("w18_doc_per_batch_causal", lambda t: (None, lambda b, h, q_idx, kv_idx: (t["doc_b"][b, q_idx] == t["doc_b"][b, kv_idx])
                                         & (kv_idx <= q_idx)),
  mask_ref(lambda b, h, qi, ki, t: (t["doc_b"][b, qi] == t["doc_b"][b, ki]) & (ki <= qi)), _make_w18,
  note="packed documents whose boundaries differ per batch")

V("w18_alibi_inline_pow", lambda t: ((lambda score, b, h, q_idx, kv_idx: score - torch.exp2(-(h + 1) * 2.0)
                                      * (q_idx - kv_idx).abs()), None),
  lambda q, k, v, sc, t: (lambda g: softmax_attend(S(q, k, sc) - torch.exp2(-(g[1] + 1) * 2.0) * (g[2] - g[3]).abs(),
                                                   v))(grids(q, k)),
  note="ALiBi slopes computed from the head inside the score_mod")
