"""Differentiable variant attention: a variant's forward kernel (which saves O and the log-sum-exp) and its
backward kernel (lowered from the sm_80 backward pass, docs/Backward.md) as one differentiable op.

Gradients flow to q, k and v. Captured tensors and parameters (ALiBi slopes, bias tables, document ids) are
constants of the backward: their gradients are not computed, and an input to them that requires grad is refused.

Where torch has `torch.library.custom_op` (2.4 and later), each (forward, backward) kernel pair is registered as
two custom ops, `cuir::variant_fwd_<stem>_<n>` and `cuir::variant_bwd_<stem>_<n>` (stem: the forward library's
name; n: the pair's number in the process), with fake implementations and autograd, so that `torch.compile`
keeps the variant in the graph. Variant libraries are loaded at run time, so the ops are registered then, once
per pair of kernel objects (cuir.compile and cuir.flex_attention load a library once per process). Older torch
gets a torch.autograd.Function.
"""
import itertools
import re

import torch

from . import block_mask as _bm

# A manifest field's type -> how the ops pass it (its schema type: _SCHEMA).
_KINDS = {"float": "float", "int32": "int", "int64": "int", "float_ptr": "tensor", "int32_ptr": "tensor",
          "tensor": "tensor"}
# Optional: a parameter the call does not give is None, and the kernel takes the manifest's default.
_SCHEMA = {"tensor": "Tensor?", "float": "float?", "int": "int?"}
_REGISTRY = {}  # (id(fwd), id(bwd)) -> (fwd, bwd, VariantOps or None); it holds the kernels, so the ids stay theirs
# A BlockMask's tensors as the forward op passes them (bm_<name>): the walked lists and the optional bits.
_PACKED = _bm.WALKED_LISTS + (_bm.BITS,)
_NUMBERS = itertools.count()


class _VariantAttention(torch.autograd.Function):
    """The autograd.Function of torch without torch.library.custom_op."""

    @staticmethod
    def forward(ctx, q, k, v, fwd, bwd, scale, block_mask, params, names, *trained):
        """names: the captured tensors to train, given as `trained` (autograd sees only positional tensors)."""
        extra = {"block_mask": block_mask} if block_mask is not None else {}
        params = dict(params, **{n: t.detach() for n, t in zip(names, trained)})
        q, k, v = (t.detach().contiguous() for t in (q, k, v))
        o, lse = fwd(q, k, v, softmax_scale=scale, layout="bhnd", return_lse=True, **params, **extra)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.bwd, ctx.scale, ctx.params, ctx.names = bwd, scale, params, names
        return o

    @staticmethod
    def backward(ctx, d_o):
        q, k, v, o, lse = ctx.saved_tensors
        bufs = {n: gradient_buffer(ctx.params[n]) for n, need in zip(ctx.names, ctx.needs_input_grad[9:]) if need}
        dq, dk, dv = ctx.bwd(q, k, v, o, d_o.contiguous(), lse, softmax_scale=ctx.scale, layout="bhnd",
                             **({"param_grads": bufs} if bufs else {}), **ctx.params)
        trained = tuple(bufs[n].to(ctx.params[n].dtype) if n in bufs else None for n in ctx.names)
        return (dq, dk, dv, None, None, None, None, None, None) + trained


def gradient_buffer(param):
    """The zeroed fp32 buffer a backward kernel adds the gradient of captured tensor `param` into."""
    return torch.zeros(param.shape, dtype=torch.float32, device=param.device)


def trained_params(bwd, params):
    """The captured tensors of `params` that require grad, in order; each must be one whose gradient the
    backward kernel accumulates (its manifest's "grad" fields)."""
    can = list(bwd.trainable()) if hasattr(bwd, "trainable") else []
    names = []
    for name, value in params.items():
        if torch.is_tensor(value) and value.requires_grad:
            if name not in can:
                raise NotImplementedError(
                    f"{name} requires grad, but the variant's backward computes no gradient of it (it does of: "
                    f"{', '.join(can) or 'none'}): pass it detached")
            names.append(name)
    return names


def op_params(fwd, bwd):
    """The variant parameters the ops pass, [(name, kind)] sorted by name, kind "tensor", "float" or "int": the
    fields of both kernels' manifests but the block mask's lists (those come from a BlockMask)."""
    kinds = {}
    for kernel in (fwd, bwd):
        for f in kernel.fields:
            if f["type"] in ("block_mask", "grad"):  # lists come from a BlockMask; gradient buffers are outputs
                continue
            if f["type"] not in _KINDS:
                raise ValueError(f"{f['name']}: a field of type {f['type']!r}, which the variant ops cannot pass")
            kind = _KINDS[f["type"]]
            if kinds.setdefault(f["name"], kind) != kind:
                raise ValueError(f"{f['name']}: of kind {kinds[f['name']]} in one kernel's manifest, {kind} in "
                                 f"the other's")
    return sorted(kinds.items())


def op_schemas(params, trainable=0):
    """The forward op's and the backward op's schemas (without the name) for `params` (op_params): parameter x is
    the argument p_x (prefixed: a variant may name one q or scale).

    The block mask goes in as its tensors (bm_<list>: the lists the kernels walk, and bm_partial_bits, None
    where it has no bits; bm_sizes: [block_m, block_n, Nq, Nkv], empty without a mask), not recomputed inside
    the op: a BlockMask is computed once and reused across calls and layers (its point), may be made by hand or
    converted from FlexAttention's, and the kernel then checks it against the call as it does in eager mode.
    `trainable` captured tensors whose gradients the backward kernel accumulates: the backward op then takes
    which to compute (bool[] train) and returns them (Tensor[]: each fp32, or empty where not computed)."""
    ps = "".join(f", {_SCHEMA[kind]} p_{name}" for name, kind in params)
    bm = "".join(f", Tensor? bm_{name}" for name in _PACKED)
    train, grads = (", bool[] train", ", Tensor[]") if trainable else ("", "")
    return (f"(Tensor q, Tensor k, Tensor v, float? scale{ps}{bm}, int[] bm_sizes) -> (Tensor, Tensor)",
            f"(Tensor q, Tensor k, Tensor v, Tensor o, Tensor d_o, Tensor lse, float? scale{ps}{train}) -> "
            f"(Tensor, Tensor, Tensor{grads})")


def pack_params(params, values):
    """The ops' arguments for `params` (op_params) from the call's keyword arguments `values`: tensors as they
    are, numbers as float or int (a 0-d tensor too: under torch.compile that reads it, pass a number), None
    where not given. Arguments that are not fields are ignored, as the kernels ignore them."""
    args = []
    for name, kind in params:
        value = values.get(name)
        if value is None:
            args.append(None)
        elif kind == "tensor":
            if not torch.is_tensor(value):
                raise TypeError(f"{name}: expected a tensor, got {type(value).__name__}")
            args.append(value)
        else:
            args.append(float(value) if kind == "float" else int(value))
    return args


def unpack_params(params, args):
    """The kernels' keyword arguments from the ops' (pack_params' inverse, without the ones not given)."""
    return {name: value for (name, _), value in zip(params, args) if value is not None}


def pack_block_mask(block_mask):
    """A cuir.BlockMask as the forward op's arguments (op_schemas): its walked lists, its bits and bm_sizes."""
    if block_mask is None:
        return [None] * len(_PACKED), []
    if not isinstance(block_mask, _bm.BlockMask):
        raise TypeError(f"block_mask must be a cuir.BlockMask (attn.block_mask(...)), not "
                        f"{type(block_mask).__name__}")
    return [getattr(block_mask, name) for name in _PACKED], [*block_mask.block_size, *block_mask.seq_lengths]


def unpack_block_mask(lists, sizes):
    """The BlockMask of pack_block_mask's arguments (None for none): the lists and bits the kernels read."""
    if not sizes:
        return None
    return _bm.BlockMask(dict(zip(_PACKED, lists)), sizes[:2], sizes[2:])


def fake_forward(q, k, v, *args):
    """The forward op's outputs on fake (meta) tensors: o like q with v's head dim, lse float32 [B, Hq, Nq]."""
    return q.new_empty((*q.shape[:-1], v.shape[-1])), q.new_empty(q.shape[:-1], dtype=torch.float32)


def fake_backward(q, k, v, *args, trainable=()):
    """The backward op's outputs on fake tensors: dq, dk, dv like q, k, v; with `trainable` (positions of
    the trainable tensors among the parameters, after scale), their fp32 gradients where train says so."""
    out = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    if not trainable:
        return out
    pargs, train = args[4:-1], args[-1]
    return out + ([pargs[i].new_empty(pargs[i].shape, dtype=torch.float32) if t else q.new_empty(0)
                   for i, t in zip(trainable, train)],)


def op_stem(fwd):
    """The part of the ops' names that says which variant: the forward library's name (for a stand-in, its
    manifest's variant), as an identifier."""
    stem = getattr(fwd, "stem", None) or fwd.manifest.get("variant") or "variant"
    return re.sub(r"[^0-9A-Za-z_]+", "_", str(stem)).strip("_")[:40] or "variant"


class VariantOps:
    """The custom ops of one (forward, backward) kernel pair, number n in the process, registered through
    `library` (torch.library; the tests pass a stand-in with its custom_op). Called as (q, k, v, scale,
    block_mask, params), it returns o, differentiable in q, k and v."""

    def __init__(self, fwd, bwd, n, library):
        self.params = op_params(fwd, bwd)
        stem = op_stem(fwd)
        self.names = (f"cuir::variant_fwd_{stem}_{n}", f"cuir::variant_bwd_{stem}_{n}")
        count, lists = len(self.params), len(_PACKED)
        tensor_at = [i for i, (_, kind) in enumerate(self.params) if kind == "tensor"]
        can = set(bwd.trainable()) if hasattr(bwd, "trainable") else set()
        trainable = [i for i in tensor_at if self.params[i][0] in can]
        self.schemas = op_schemas(self.params, len(trainable))

        def forward(q, k, v, scale, *rest):
            block_mask = unpack_block_mask(rest[count:count + lists], rest[-1])
            extra = {"block_mask": block_mask} if block_mask is not None else {}
            o, lse = fwd(q, k, v, softmax_scale=scale, layout="bhnd", return_lse=True,
                         **unpack_params(self.params, rest[:count]), **extra)
            if lse is None:  # the sigmoid normaliser has none; its backward does not read it (the schema's: zeros)
                lse = torch.zeros(q.shape[:-1], dtype=torch.float32, device=q.device)
            return o, lse

        def backward(q, k, v, o, d_o, lse, scale, *rest):
            pargs, train = rest[:count], (rest[count] if trainable else [])
            bufs = {self.params[i][0]: gradient_buffer(pargs[i]) for i, t in zip(trainable, train) if t}
            dq, dk, dv = bwd(q, k, v, o, d_o, lse, softmax_scale=scale, layout="bhnd",
                             **({"param_grads": bufs} if bufs else {}), **unpack_params(self.params, pargs))
            if not trainable:
                return dq, dk, dv
            return dq, dk, dv, [bufs.get(self.params[i][0], q.new_empty(0)) for i in trainable]

        self.fwd_op = library.custom_op(self.names[0], forward, mutates_args=(), schema=self.schemas[0])
        self.fwd_op.register_fake(fake_forward)
        self.bwd_op = library.custom_op(self.names[1], backward, mutates_args=(), schema=self.schemas[1])
        self.bwd_op.register_fake(lambda *a: fake_backward(*a, trainable=trainable))

        def setup_context(ctx, inputs, output):
            q, k, v, scale, *rest = inputs
            pargs = rest[:count]
            # the parameters' tensors saved as tensors (so that torch.compile's tracing sees them), numbers on ctx
            ctx.save_for_backward(q, k, v, *output, *(pargs[i] for i in tensor_at))
            ctx.scale = scale
            ctx.pargs = [None if i in tensor_at else a for i, a in enumerate(pargs)]

        def grad(ctx, d_o, d_lse):
            q, k, v, o, lse, *tensors = ctx.saved_tensors
            pargs = list(ctx.pargs)
            for i, t in zip(tensor_at, tensors):
                pargs[i] = t
            if not trainable:
                dq, dk, dv = self.bwd_op(q, k, v, o, d_o.contiguous(), lse, ctx.scale, *pargs)
                return (dq, dk, dv) + (None,) * (1 + count + lists + 1)  # none for scale, parameters, block mask
            train = [bool(ctx.needs_input_grad[4 + i]) for i in trainable]  # inputs: q, k, v, scale, parameters
            dq, dk, dv, grads = self.bwd_op(q, k, v, o, d_o.contiguous(), lse, ctx.scale, *pargs, train)
            pgrads = [None] * count
            for i, t, g in zip(trainable, train, grads):
                pgrads[i] = g.to(pargs[i].dtype) if t else None
            return (dq, dk, dv, None) + tuple(pgrads) + (None,) * (lists + 1)

        self.fwd_op.register_autograd(grad, setup_context=setup_context)

    def __call__(self, q, k, v, scale, block_mask, params):
        bm_lists, bm_sizes = pack_block_mask(block_mask)
        o, _ = self.fwd_op(q.contiguous(), k.contiguous(), v.contiguous(), scale,
                           *pack_params(self.params, params), *bm_lists, bm_sizes)
        return o


def _custom_op_library():
    """torch.library where it has custom_op (torch >= 2.4), else None (the autograd.Function then)."""
    return torch.library if hasattr(torch.library, "custom_op") else None


def variant_ops(fwd, bwd):
    """The VariantOps of a kernel pair, registered at the pair's first call (None on torch without custom_op).
    Call it outside torch.compile's tracing (TrainableVariant does, when made): registering is not traceable."""
    key = (id(fwd), id(bwd))
    if key not in _REGISTRY:
        library = _custom_op_library()
        ops = VariantOps(fwd, bwd, next(_NUMBERS), library) if library is not None else None
        _REGISTRY[key] = (fwd, bwd, ops)
    return _REGISTRY[key][2]


def _attend(ops, fwd, bwd, q, k, v, softmax_scale, block_mask, params):
    names = trained_params(bwd, params)
    if ops is None:
        rest = {n: x for n, x in params.items() if n not in names}
        return _VariantAttention.apply(q, k, v, fwd, bwd, softmax_scale, block_mask, rest, tuple(names),
                                       *(params[n] for n in names))
    return ops(q, k, v, None if softmax_scale is None else float(softmax_scale), block_mask, params)


def variant_attention(fwd, bwd, q, k, v, softmax_scale=None, block_mask=None, **params):
    """Variant attention of q [B, Hq, Nq, d], k, v [B, Hkv, Nkv, d] through the forward kernel `fwd` and the
    backward kernel `bwd` of one variant, differentiable in q, k and v."""
    return _attend(variant_ops(fwd, bwd), fwd, bwd, q, k, v, softmax_scale, block_mask, params)


class TrainableVariant:
    """What cuir.compile(..., backward=True) returns: call it as the variant kernel (layout [B, H, N, d]);
    the result is differentiable in q, k and v. Its custom ops (where torch has them) are registered when it
    is made, so that a torch.compile'd model that calls it traces it in one graph."""

    def __init__(self, fwd, bwd, values=None):
        self.fwd, self.bwd, self.values = fwd, bwd, dict(values or {})
        self.manifest = fwd.manifest
        self.block_mask_info = fwd.block_mask_info
        self.ops = variant_ops(fwd, bwd)

    def __call__(self, q, k, v, softmax_scale=None, block_mask=None, **params):
        from .compile import tensor_for
        for pname, tensor in self.values.items():
            params.setdefault(pname, tensor_for(self.fwd, pname, tensor, q.device))
        return _attend(self.ops, self.fwd, self.bwd, q, k, v, softmax_scale, block_mask, params)

    def block_mask(self, *args, **kwargs):
        return self.fwd.block_mask(*args, **kwargs)
