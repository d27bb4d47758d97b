"""`cuir.flex_attention`: torch.nn.attention.flex_attention's call, run on CuIR's expert kernels.

    import cuir
    def score_mod(score, b, h, q_idx, kv_idx):
        return score + alibi_slope[h] * (kv_idx - q_idx)
    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx
    out = cuir.flex_attention(q, k, v, score_mod=score_mod, block_mask=causal)
    out, lse = cuir.flex_attention(q, k, v, block_mask=create_block_mask(causal, B, H, Nq, Nkv), return_lse=True)

Same tensors and results as FlexAttention: q [B, Hq, Nq, D], k/v [B, Hkv, Nkv, D]; out like q; lse float32
[B, Hq, Nq], the natural log of the row's sum of exp(modified scores) (torch's flex_attention returns its
base-2 kernel value times ln 2, so both are natural logs; -inf and a zero row of out where a row sees no key).

The score_mod and mask_mod are traced into a cuir.variant, and the kernel that variant gives is built once
(tens of seconds, progress on stderr) and cached in memory and on disk (cuir/cache.py), so a second call, or a
second process, runs at once. The tensors the functions capture are kernel parameters: each call passes their
current values, so changing them (in place or by rebinding the captured variable to a tensor of the same shape
and dtype) does not recompile; Python numbers, 0-d tensors and elements read at constant indices are
constants of the kernel, so a call after one of them changed traces and builds again (a tensor that requires
grad is refused there: as a constant it would not be trained).
"""
import importlib
import math
import weakref

from . import block_mask as _block_mask
from . import cache as _cache
from .trace import captures as _captures
from . import kernel_lib

_compile = importlib.import_module(__package__ + ".compile")  # the module (cuir.compile is the function)

_NEEDS = ("4-D", "bf16/fp16", "head dim 64 or 128", "CUDA")
_MAX_GRID = 65535  # batch, heads and query blocks of 128 rows: the kernels' grid limits
_TRACED = {}       # (fingerprints, normaliser) -> (variant text, {name: tensor}, sources, baked): _traced
_OWN_MASKS = {}    # id(FlexAttention BlockMask) -> (weak reference to it, problem, CuIR's cuir.BlockMask)


def _check_tensors(query, key, value, enable_gqa):
    import torch
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"flex_attention: {name} must be a torch.Tensor, not {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"flex_attention: {name} must be 4-D [B, H, N, D], got shape {tuple(t.shape)}")
    if not (query.dtype == key.dtype == value.dtype):
        raise ValueError(f"flex_attention: query, key and value must have one dtype, got {query.dtype}, "
                         f"{key.dtype} and {value.dtype}")
    if query.dtype not in (torch.bfloat16, torch.float16):
        raise ValueError(f"flex_attention: CuIR's kernels take bfloat16 or float16, got {query.dtype}")
    (B, Hq, Nq, D), (Bk, Hkv, Nkv, Dk), (Bv, Hv, Nv, Dv) = query.shape, key.shape, value.shape
    if not (B == Bk == Bv):
        raise ValueError(f"flex_attention: query, key and value must have one batch size, got {B}, {Bk}, {Bv}")
    if (Hkv, Nkv) != (Hv, Nv):
        raise ValueError(f"flex_attention: key {tuple(key.shape)} and value {tuple(value.shape)} must have "
                         f"the same heads and length")
    if D != Dk or D != Dv:
        raise ValueError(f"flex_attention: CuIR's kernels need one head dim for query, key and value, got "
                         f"{D}, {Dk} and {Dv}")
    if D not in (64, 128):
        raise ValueError(f"flex_attention: CuIR's kernels take head dim 64 or 128, got {D}")
    if not enable_gqa and Hq != Hkv:
        raise ValueError(f"flex_attention: query has {Hq} heads and key/value {Hkv}; set enable_gqa=True for "
                         f"grouped-query attention")
    if Hkv == 0 or Hq % Hkv != 0:
        raise ValueError(f"flex_attention: the query heads ({Hq}) must be a multiple of the key/value heads "
                         f"({Hkv})")
    if B > _MAX_GRID or Hq > _MAX_GRID or (Nq + 127) // 128 > _MAX_GRID:
        raise ValueError(f"flex_attention: at most {_MAX_GRID} batches, {_MAX_GRID} heads and "
                         f"{_MAX_GRID * 128} query rows (the kernels' grid), got B={B} Hq={Hq} Nq={Nq}")
    if max(Nq, Nkv) >= 2 ** 30:
        raise ValueError(f"flex_attention: sequence lengths are below 2^30 (the kernels' mask analysis), got "
                         f"Nq={Nq} Nkv={Nkv}")
    if not (query.device == key.device == value.device):
        raise ValueError(f"flex_attention: query, key and value must be on one device, got {query.device}, "
                         f"{key.device} and {value.device}")
    if query.device.type != "cuda":
        raise ValueError(f"flex_attention: CuIR's kernels run on CUDA tensors, got {query.device.type} ones")


def _arity(fn):
    import inspect
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return sum(1 for p in params if p.default is inspect.Parameter.empty and p.kind in
               (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD))


def _mask_mod_of(block_mask, Nq, Nkv):
    """The mask_mod of a BlockMask (checking the lengths it was made for), of a callable, or None."""
    if block_mask is None:
        return None
    if isinstance(block_mask, _block_mask.BlockMask) and block_mask.mask_mod is None:
        raise TypeError("flex_attention: this cuir.BlockMask (from attn.block_mask) does not carry its mask_mod; "
                        "pass it to that attn(..., block_mask=...), or give flex_attention FlexAttention's "
                        "BlockMask or the mask_mod")
    if _is_flex_block_mask(block_mask):  # FlexAttention's BlockMask
        lengths = getattr(block_mask, "seq_lengths", None)
        if lengths is not None and tuple(lengths) != (Nq, Nkv):
            raise ValueError(f"flex_attention: block_mask was made for (Nq, Nkv) = {tuple(lengths)}, the "
                             f"inputs have ({Nq}, {Nkv}); make it for these lengths")
        mask_mod = block_mask.mask_mod
        return None if getattr(mask_mod, "__name__", "") == "noop_mask" else mask_mod
    if callable(block_mask):
        return block_mask
    raise TypeError(f"flex_attention: block_mask must be a BlockMask or a mask_mod(b, h, q_idx, kv_idx), "
                    f"not {type(block_mask).__name__}")


def _check_mods(score_mod, mask_mod):
    for what, fn, n, sig in (("score_mod", score_mod, 5, "(score, b, h, q_idx, kv_idx)"),
                             ("mask_mod", mask_mod, 4, "(b, h, q_idx, kv_idx)")):
        if fn is None:
            continue
        if not callable(fn):
            raise TypeError(f"flex_attention: {what} must be callable, not {type(fn).__name__}")
        if _arity(fn) not in (None, n):
            raise TypeError(f"flex_attention: {what} must take {n} positional arguments {sig}")


def _pick_kernel(kernel, device):
    import torch
    if kernel not in ("auto", "sm80", "sm90"):
        raise ValueError(f"flex_attention: kernel must be 'auto', 'sm80' or 'sm90', not {kernel!r}")
    major = torch.cuda.get_device_capability(device)[0]
    if kernel == "auto":
        return "sm90" if major == 9 else "sm80"
    if kernel == "sm90" and major != 9:
        raise ValueError(f"flex_attention: the sm90 kernel runs on compute capability 9.x (Hopper), this "
                         f"device is {major}.x; use kernel='sm80' or 'auto'")
    if major < 8:
        raise ValueError(f"flex_attention: CuIR's kernels need compute capability 8.0 or later, got {major}.x")
    return kernel


class _NoMemo(Exception):
    """The functions reach a value the memo cannot key on: trace at every call."""


_MAX_NODES = 65536  # values a fingerprint visits at most (beyond: traced at every call)


def _fingerprint(value, seen):
    """What of `value` can change a trace's text: Python values by value, tensors by shape and dtype (their
    elements are parameters; those the trace wrote as constants are checked apart, _still_valid), functions by
    code, defaults and everything they reach (closures, globals, the functions and objects they call)."""
    import types
    import torch
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return (type(value).__name__, repr(value))
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype))
    if isinstance(value, (torch.dtype, torch.device)):
        return repr(value)
    if isinstance(value, types.ModuleType):
        return ("module", value.__name__)
    if isinstance(value, type):
        return ("type", value.__module__, value.__qualname__)
    if isinstance(value, (types.BuiltinFunctionType, types.BuiltinMethodType)) or \
            getattr(value, "__module__", "") == "torch":
        return ("builtin", getattr(value, "__module__", None), getattr(value, "__qualname__", repr(value)))
    if id(value) in seen:
        return ("seen", seen[id(value)])
    seen[id(value)] = len(seen)
    if len(seen) > _MAX_NODES:
        raise _NoMemo
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_fingerprint(v, seen) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((repr(k), _fingerprint(v, seen)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return (type(value).__name__, tuple(sorted(repr(v) for v in value)))
    if callable(value):
        fn = getattr(value, "__func__", value)
        return ("callable", type(value).__qualname__, getattr(fn, "__code__", None),
                _fingerprint(getattr(fn, "__defaults__", None), seen),
                _fingerprint(getattr(fn, "__kwdefaults__", None), seen),
                tuple((name, _fingerprint(v, seen)) for name, v in _captures._referenced(value)))
    if hasattr(value, "__dict__"):
        return ("object", type(value).__qualname__, _fingerprint(vars(value), seen))
    # No state the code can read as a number or tensor (a weakref, a C object): the object itself.
    return ("opaque", type(value).__qualname__, id(value))


def _still_valid(hit, current):
    """Whether a memoised trace still describes the functions: each parameter's variable holds a tensor of
    the traced shape and dtype, and each element written as a constant still has its value."""
    import torch
    _, values, sources, baked = hit
    for name, traced in values.items():
        now = current.get(sources.get(name))
        if not isinstance(now, torch.Tensor) or now.shape != traced.shape or now.dtype != traced.dtype:
            return False
    for source, index, value in baked:
        now = current.get(source)
        if not isinstance(now, torch.Tensor):
            return False
        if index[:1] == ("storage",):  # an element a view of the tensor read
            _, offset, shape, strides = index
            if tuple(now.shape) != shape or now.stride() != strides:
                return False
            element = now.as_strided((), (), now.storage_offset() + offset).item()
        elif now.dim() == len(index):
            element = now[index].item()
        else:
            return False
        if element != value and not (element != element and value != value):  # NaN equals NaN here
            return False
    return True


def _traced(score_mod, mask_mod, normalizer):
    """(variant text without values, {name: captured tensor}) of the functions, traced once per fingerprint
    and reused while _still_valid; the tensors are those the functions reach now."""
    functions = [f for f in (score_mod, mask_mod) if f is not None]
    try:
        memo = (_fingerprint(score_mod, {}), _fingerprint(mask_mod, {}), normalizer)
        hash(memo)
    except (_NoMemo, TypeError):
        memo = None
    current = _captures.current_sources(functions)
    hit = _TRACED.get(memo) if memo is not None else None
    if hit is None or not _still_valid(hit, current):
        detail = {}
        text, values = _compile.trace(score_mod, mask_mod, normalizer, "flex", defaults=False, detail=detail)
        hit = (text, values, detail["sources"], detail["baked"])
        # A constant read from a tensor the functions do not reach (made by their code) cannot be checked
        # again: such functions are traced at every call.
        if memo is not None and all(source is not None for source, _, _ in hit[3]):
            _TRACED[memo] = hit
    text, values, sources, _ = hit
    return text, {name: _current(current.get(sources.get(name)), traced) for name, traced in values.items()}


def _current(now, traced):
    """The tensor a parameter's variable holds now, else (a name two tensors share) the traced one."""
    import torch
    return now if isinstance(now, torch.Tensor) else traced


def _is_flex_block_mask(block_mask):
    return hasattr(block_mask, "mask_mod") and hasattr(block_mask, "kv_num_blocks")


def _runtime_block_mask(variant, block_mask, params, query, key):
    """The lists a variant with a runtime block mask walks: a FlexAttention BlockMask's own where the kernel
    can walk them (block_mask.from_flex says when), else CuIR's, computed once per BlockMask object and problem
    (reused across layers, as FlexAttention's lists are) from the captured values of that first call. None
    for a bare mask_mod: the variant then computes them at each call."""
    if not _is_flex_block_mask(block_mask):
        return None
    B, Hq, Nq, D = query.shape
    Nkv = key.shape[2]
    tiles = _block_mask.tiles_for(variant.block_mask_info, D)
    own, _ = _block_mask.from_flex(block_mask, tiles, B, Hq, Nq, Nkv, query.device)
    if own is not None:
        return own
    problem = (id(variant), B, Hq, Nq, Nkv, D, str(query.device))
    hit = _OWN_MASKS.get(id(block_mask))
    if hit is not None and hit[0]() is block_mask and hit[1] == problem:
        return hit[2]
    own = variant.block_mask(B, Hq, Nq, Nkv, head_dim=D, device=query.device, **params)
    try:
        ref = weakref.ref(block_mask)
    except TypeError:  # not weakly referenceable: computed at every call
        return own
    for k in [k for k, v in _OWN_MASKS.items() if v[0]() is None]:
        del _OWN_MASKS[k]
    _OWN_MASKS[id(block_mask)] = (ref, problem, own)
    return own


def _ready(t):
    """t as the kernels take it: head dim contiguous, strides multiples of 8, 16-byte aligned."""
    ok = t.stride(-1) == 1 and all(s % 8 == 0 for s in t.stride()[:-1]) and t.data_ptr() % 16 == 0
    return t if ok else t.contiguous()


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False,
                   return_lse=False, kernel="auto", *, normalizer="softmax"):
    """Attention with a FlexAttention score_mod and mask, on CuIR's sm_80 or sm_90 kernel.

    query [B, Hq, Nq, D], key/value [B, Hkv, Nkv, D]: CUDA, bfloat16 or float16, D 64 or 128, Hq a multiple
    of Hkv (enable_gqa=True when they differ, as torch requires).
    score_mod(score, b, h, q_idx, kv_idx) -> score; block_mask: FlexAttention's BlockMask or a
    mask_mod(b, h, q_idx, kv_idx). The variant is traced from the mask_mod (a BlockMask's own). Tiles the
    mask decides statically need no lists; for a mask decided at run time, a BlockMask's lists are walked
    where its BLOCK_SIZE is the kernel's tiles and Nkv a multiple of its KV tile, else CuIR computes its own
    once per BlockMask (see docs/Python.md); a bare mask_mod's are computed at each call.
    scale: the score scale, default 1/sqrt(D). return_lse: also return the log-sum-exp (float32 [B, Hq, Nq],
    natural log, as FlexAttention's).
    kernel: "auto" (sm90 on compute capability 9.x, sm80 elsewhere), "sm80" or "sm90".
    normalizer (CuIR's, keyword-only): "softmax", or "sigmoid" (weights sigmoid(score), no row sum; no lse).
    Differentiable in query, key and value (the variant's backward pass, from the sm_80 backward kernel;
    not with return_lse, nor for the sigmoid normaliser). Returns out like query, or (out, lse)."""
    import torch
    _check_tensors(query, key, value, enable_gqa)
    Nq, Nkv = query.shape[2], key.shape[2]
    mask_mod = _mask_mod_of(block_mask, Nq, Nkv)
    _check_mods(score_mod, mask_mod)
    if normalizer not in ("softmax", "sigmoid"):
        raise ValueError(f"flex_attention: normalizer must be 'softmax' or 'sigmoid', not {normalizer!r}")
    if return_lse and normalizer == "sigmoid":
        raise ValueError("flex_attention: the sigmoid normaliser has no log-sum-exp; return_lse=False")
    if scale is not None and not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"flex_attention: scale must be a finite positive number, got {scale!r}")
    chosen = _pick_kernel(kernel, query.device)
    q, k, v = _ready(query), _ready(key), _ready(value)
    needs_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (query, key, value))
    if score_mod is None and mask_mod is None and normalizer == "softmax":
        if needs_grad and not return_lse:
            from .attention_op import attention
            return attention(query, key, value, scale=scale)
        run = getattr(kernel_lib, f"flash_fwd_{chosen}")
        return run(q, k, v, softmax_scale=scale, return_lse=return_lse, layout="bhnd")
    text, values = _traced(score_mod, mask_mod, normalizer)
    library = _compile.build_cached(chosen, text, "flex", _compile.DEFAULT_ARCHS[chosen])
    variant = _compile.load_once(library)
    params = {name: _compile.tensor_for(variant, name, t, query.device) for name, t in values.items()}
    if variant.block_mask_info:
        params["block_mask"] = _runtime_block_mask(variant, block_mask, params, query, key)
    if needs_grad:
        if return_lse:
            raise NotImplementedError("flex_attention: the backward pass takes no return_lse yet; call it under "
                                      "torch.no_grad() for that")
        from .autograd_variant import variant_attention
        # The backward on the forward's kernel, its query steps over its own transposed lists.
        bwd = _compile.load_once(_compile.build_cached(chosen, text, "flex_bwd", _compile.DEFAULT_ARCHS[chosen],
                                                       backward=True), backward=True)
        block = params.pop("block_mask", None)
        return variant_attention(variant, bwd, query, key, value, scale, block, **params)
    with torch.no_grad():
        return variant(q, k, v, softmax_scale=scale, layout="bhnd", return_lse=return_lse, **params)
