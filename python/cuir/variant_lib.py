"""Load and run variant kernels that `cuir-opt ... --lower` built.

    from cuir.variant_lib import load_variant
    attn = load_variant("out/libprefixlm.so")            # reads out/prefixlm.json
    out = attn(q, k, v, prefix_len=torch.tensor([512, 512], dtype=torch.int32, device="cuda"))

q is [B, Hq, Nq, d], k and v [B, Hkv, Nkv, d] (PyTorch's layout; layout="bnhd"
takes [B, N, H, d]). Variant parameters are keyword arguments: CUDA tensors
for arrays (int32 or float32, contiguous, of as many elements as the manifest's
"extent" asks: one per batch, per query head, or per batch x key; else a
ValueError), numbers for scalars; captured tensors
("type": "tensor") take a tensor of the manifest's "shape" and "dtype" on q's
device (made contiguous), else a ValueError names the field. The lowering's
manifest (<stem>.json) lists them; the params struct gets them appended after
the base fields, as the patched cuir/attention_params.h declares.

A variant lowered with a runtime block mask (its manifest's "block_mask") also exports the classification of
its tiles: attn.block_mask(B, H, Nq, Nkv, **params) returns a cuir.BlockMask (cuir/block_mask.py) that
attn(q, k, v, ..., block_mask=bm) reuses; without one, each call computes it first (on the same stream). A
variant's backward library with one (lowered with the split) computes its own lists, at the backward's tiles,
on each call unless given block_mask= (its own .block_mask(...)). The manifest's block_mask "fields" maps each
list the kernels read to its params field; forward kernels whose tiles have block_n % 32 == 0 also read the
partial tiles' mask bits ("partial_bits", computed with the lists where they fit MASK_BITS_BUDGET_BYTES; see
block_mask(mask_bits=...)). CUIR_MASK_BITS=0 in the environment turns the bits off everywhere: none computed,
none passed to a kernel, which then evaluates the mask of its partial tiles itself (A/B checks of both paths).
"""
import contextlib
import ctypes
import json
import math
import os
import pathlib

from . import block_mask as _bm
from .kernel_lib import (BWD_ENTRY_POINTS, AttentionBwdParams, AttentionParams, KernelError, alloc_outputs,
                         make_bwd_params, make_params)

_CTYPES = {"float": ctypes.c_float, "int32": ctypes.c_int32, "int64": ctypes.c_int64,
           "float_ptr": ctypes.c_void_p, "int32_ptr": ctypes.c_void_p, "tensor": ctypes.c_void_p,
           "block_mask": ctypes.c_void_p, "grad": ctypes.c_void_p}
_ENTRY_POINTS = ("cuir_flash_fwd_sm80", "cuir_flash_fwd_sm90")
# The most memory a block mask's partial_bits may take by default (block_mask(mask_bits=None)): the bits of
# every tile, an eighth of a byte a pair, are allocated though only the partial tiles' are written.
MASK_BITS_BUDGET_BYTES = 256 << 20


class BlockMaskStruct(ctypes.Structure):
    """Mirror of struct cuir_block_mask (kernels/include/cuir/block_mask.h); partial_bits may be NULL."""
    _fields_ = [(name, ctypes.c_void_p) for name in _bm.LISTS] + [
        (name, ctypes.c_int32) for name in ("batch", "heads", "q_blocks", "kv_blocks", "block_m", "block_n")] + [
        (_bm.BITS, ctypes.c_void_p)]


def _bits_enabled():
    """False where CUIR_MASK_BITS=0 turns the partial tiles' bits off (read at each call, for A/B checks)."""
    return os.environ.get("CUIR_MASK_BITS") != "0"


def _launch_context(device):
    """(context, stream) to call a library entry for tensors on `device`: that device current (a context that
    switches to it only where another one is) and its current stream (no context and the NULL stream
    elsewhere: test doubles of a library on the CPU)."""
    import torch
    if device.type != "cuda":
        return contextlib.nullcontext(), None
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # what Triton's launcher reads: no Stream object
    stream = raw(device.index) if raw is not None else torch.cuda.current_stream(device).cuda_stream
    if device.index == torch.cuda.current_device():
        return contextlib.nullcontext(), stream
    return torch.cuda.device(device), stream


class VariantKernel:
    def __init__(self, library, manifest=None, lib=None):
        library = self._open(library, manifest, lib, AttentionParams, "cuir_attention_params")
        self.entry = next((getattr(self.lib, s) for s in _ENTRY_POINTS if hasattr(self.lib, s)), None)
        if self.entry is None:
            raise RuntimeError(f"{library} exports none of {_ENTRY_POINTS}")
        self.entry.restype = ctypes.c_int
        self.entry.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.sigmoid = self.manifest.get("normalizer") == "sigmoid"
        self._defaults = {}
        self._open_block_mask(library)

    def _open_block_mask(self, library):
        """The classification entries of a library whose manifest has a runtime block mask."""
        self.block_mask_info = self.manifest.get("block_mask")
        if self.block_mask_info:
            names = (self.block_mask_info["dims_entry"], self.block_mask_info["entry"])
            if not all(hasattr(self.lib, n) for n in names):
                raise RuntimeError(f"{library}: its manifest has a block mask, but it exports none of {names}")
            self._bm_dims, self._bm_entry = (getattr(self.lib, n) for n in names)
            self._bm_dims.restype = self._bm_entry.restype = ctypes.c_int
            self._bm_dims.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
            self._bm_entry.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]

    def _bind_block_mask(self, p, block_mask, device, keep):
        """Points p's list fields at `block_mask` (checked against p's problem), or at the lists computed for
        this call on the stream the kernel runs on. partial_bits' field is NULL where the mask has none (or
        CUIR_MASK_BITS=0): the kernel then evaluates the mask itself."""
        if block_mask is None:
            block_mask = self._compute_block_mask(p, device)
        else:
            self._check_given(block_mask, p.base, device)
        keep.append(block_mask)
        for name, field in self.block_mask_info["fields"].items():
            t = getattr(block_mask, name)
            if name == _bm.BITS and (t is None or not _bits_enabled()):
                setattr(p, field, 0)
            else:
                setattr(p, field, t.data_ptr())

    def _check_given(self, block_mask, b, device):
        """block_mask.check_block_mask for the problem of params `b`, skipped where the same mask passed it
        for the same tiles and problem and its lists are unchanged since (the same tensors, at the same
        addresses, of the same shapes, contiguous): a reused mask costs a few compares a call."""
        info = _bm.tiles_for(self.block_mask_info, b.head_dim)
        key = (info["block_m"], info["block_n"], tuple(info["depends"]), b.batch, b.num_heads_q,
               b.num_heads_kv, b.seqlen_q, b.seqlen_kv, device)
        lists = [getattr(block_mask, n) for n in _bm.WALKED_LISTS + (_bm.BITS,)] \
            if isinstance(block_mask, _bm.BlockMask) else []
        checked = getattr(block_mask, "_checked", None)
        if checked is not None and checked[0] == key and all(
                t is u and (t is None or (t.data_ptr() == ptr and t.shape == shape and t.is_contiguous()))
                for t, (u, ptr, shape) in zip(lists, checked[1])):
            return
        _bm.check_block_mask(block_mask, info, b.batch, b.num_heads_q, b.seqlen_q, b.seqlen_kv, device,
                             Hkv=b.num_heads_kv)
        block_mask._checked = (key, [(t, t.data_ptr(), t.shape) if t is not None else (None, 0, None)
                                     for t in lists])

    def _open(self, library, manifest, lib, base, struct):
        """Reads the manifest (default: beside the library), builds the params struct (`base` and the
        variant's fields) and loads the library (or takes `lib`, a test double with the same functions),
        checking that the library's sizeof(`struct`) is the binding's. Returns the library's path."""
        library = pathlib.Path(library)
        stem = library.name[3:-3] if library.name.startswith("lib") else library.stem
        manifest = pathlib.Path(manifest) if manifest else library.with_name(stem + ".json")
        self.manifest = json.loads(manifest.read_text())
        self.stem = stem  # the library's name (cuir/autograd_variant.py names its ops after it)
        self.variant = self.manifest["variant"]
        self.fields = self.manifest["fields"]
        self.params_type = type(f"{struct}_{stem}", (ctypes.Structure,), {
            "_fields_": [("base", base)] + [(f["name"], _CTYPES[f["type"]]) for f in self.fields]})
        self.lib = lib if lib is not None else ctypes.CDLL(str(library))
        sizeof = getattr(self.lib, f"{struct}_sizeof")
        sizeof.restype = ctypes.c_int
        size = sizeof()
        if size != ctypes.sizeof(self.params_type):
            raise RuntimeError(f"{library}: sizeof({struct}) is {size}, the manifest's binding "
                               f"has {ctypes.sizeof(self.params_type)}")
        return library

    def __call__(self, q, k, v, softmax_scale=None, layout="bhnd", out=None, return_lse=False, block_mask=None,
                 **params):
        out, lse = alloc_outputs(q, out, None, return_lse and not self.sigmoid, layout)
        p = self.params_type()
        p.base = make_params(q, k, v, out, lse, causal=False, softmax_scale=softmax_scale, layout=layout)
        keep = self._bind_fields(p, params, q.device)
        if self.block_mask_info:
            self._bind_block_mask(p, block_mask, q.device, keep)
        elif block_mask is not None:
            raise ValueError(f"variant '{self.variant}' has no runtime block mask (its tiles are decided when it "
                             f"is compiled): call it without block_mask")
        context, stream = _launch_context(q.device)
        with context:
            rc = self.entry(ctypes.byref(p), ctypes.c_void_p(stream))
        if rc != 0:
            raise KernelError(rc, f"variant '{self.variant}'")
        return (out, lse) if return_lse else out

    def block_mask(self, B, H, Nq, Nkv, head_dim=None, device=None, num_heads_kv=None, mask_bits=None, **params):
        """The cuir.BlockMask of a problem of B batches, H query heads, Nq queries and Nkv keys, with the
        variant's parameters that the mask reads (as for a call; captured values by default), computed on
        `device` (default: the current CUDA device) on its current stream. Reusable for every call of that
        problem. head_dim: needed only where the library's tiles depend on it (the sm_80 kernel's).
        num_heads_kv: needed only where the lists have a row per KV head (a backward pass whose mask reads
        the head: each row merges the query heads of a GQA group). mask_bits: whether to also compute the
        partial tiles' bits (BlockMask.partial_bits) for kernels that read them: None where they fit
        MASK_BITS_BUDGET_BYTES, True always (a ValueError where the library's kernels read none), False never
        (the kernels then evaluate the mask); CUIR_MASK_BITS=0 turns them off whatever this says."""
        import torch
        if not self.block_mask_info:
            raise ValueError(f"variant '{self.variant}' has no runtime block mask (its tiles are decided when it "
                             f"is compiled)")
        if mask_bits not in (None, True, False):
            raise ValueError(f"block_mask: mask_bits must be None, True or False, got {mask_bits!r}")
        if mask_bits and _bm.BITS not in self.block_mask_info["fields"]:
            raise ValueError(f"block_mask: the kernels of variant '{self.variant}' read no partial tiles' bits "
                             f"(mask_bits=True)")
        tiles = _bm.tiles_for(self.block_mask_info, head_dim)
        if num_heads_kv is None:
            if "kv_heads" in tiles["depends"]:
                raise ValueError(f"the lists of variant '{self.variant}' have a row per KV head: give "
                                 f"block_mask(..., num_heads_kv=Hkv)")
            num_heads_kv = max(H, 1)
        for name, x, top in (("B", B, 2 ** 31 - 1), ("H", H, 2 ** 31 - 1), ("Nq", Nq, 2 ** 30 - 1), ("Nkv", Nkv, 2 ** 30 - 1),
                             ("num_heads_kv", num_heads_kv, 2 ** 31 - 1)):
            if not isinstance(x, int) or isinstance(x, bool) or not 0 <= x <= top:
                raise ValueError(f"block_mask: {name} must be an int in [0, {top}], got {x!r}")
        device = torch.device(device if device is not None else "cuda")
        if device.type == "cuda" and device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        p = self.params_type()
        b = p.base
        b.batch, b.num_heads_q, b.num_heads_kv, b.seqlen_q, b.seqlen_kv = B, H, num_heads_kv, Nq, Nkv
        b.head_dim = tiles["head_dim"]
        # the parameters the mask reads (others, of the scores, may be given and are ignored)
        read = set(self.block_mask_info.get("params", ()))
        keep = self._bind_fields(p, params, device, only=read)
        mask = self._compute_block_mask(p, device, mask_bits)
        del keep  # the parameter tensors, alive until the entry has queued its work
        return mask

    def _compute_block_mask(self, p, device, mask_bits=None):
        """The nine lists of p's problem, by the library's classification (queued on device's stream), and the
        partial tiles' bits where the library's kernels read them and mask_bits (block_mask's) asks for them."""
        import torch
        info = self.block_mask_info
        tiles = _bm.tiles_for(info, p.base.head_dim)
        dims = (ctypes.c_int32 * 4)()
        rc = self._bm_dims(ctypes.byref(p), dims)
        if rc != 0:
            raise KernelError(rc, info["dims_entry"])
        B_, H_, QB, KB = dims
        shapes = {"kv_num_blocks": (B_, H_, QB), "kv_indices": (B_, H_, QB, KB),
                  "q_num_blocks": (B_, H_, KB), "q_indices": (B_, H_, KB, QB), "q_order": (B_, H_, QB)}
        lists = {name: torch.empty(shapes[name.replace("full_", "")], dtype=torch.int32, device=device)
                 for name in _bm.LISTS}
        words = (B_, H_, QB, KB, tiles["block_m"] * tiles["block_n"] // 32)
        if _bm.BITS in info["fields"] and _bits_enabled() and (
                mask_bits or (mask_bits is None and 4 * math.prod(words) <= MASK_BITS_BUDGET_BYTES)):
            # empty, not zeroed: the library writes the partial tiles' words, the only ones the kernels read
            lists[_bm.BITS] = torch.empty(words, dtype=torch.int32, device=device)
        bits = lists[_bm.BITS].data_ptr() if _bm.BITS in lists else 0
        mask = BlockMaskStruct(*(lists[n].data_ptr() for n in _bm.LISTS), B_, H_, QB, KB, tiles["block_m"],
                               tiles["block_n"], bits)
        context, stream = _launch_context(device)
        with context:
            rc = self._bm_entry(ctypes.byref(p), ctypes.byref(mask), ctypes.c_void_p(stream))
        if rc != 0:
            raise KernelError(rc, info["entry"])
        return _bm.BlockMask(lists, (tiles["block_m"], tiles["block_n"]), (p.base.seqlen_q, p.base.seqlen_kv))

    def _bind_fields(self, p, params, device, only=None):
        """Sets p's variant fields (those named in `only`, if given) from `params` or their defaults; returns
        the tensors they point into."""
        import torch
        keep = []
        for f in self.fields:
            if f["type"] == "block_mask" or (only is not None and f["name"] not in only):
                continue  # lists are bound from a BlockMask
            if f["type"] == "grad":  # a parameter's fp32 gradient buffer: null (not trained) unless given
                continue
            if f["name"] in params:
                value = params[f["name"]]
            elif "default" in f:  # a value captured from the traced score_mod/mask_mod
                value = self._default(f, device)
            else:
                raise TypeError(f"variant '{self.variant}' needs the parameter {f['name']!r}")
            if f["type"] == "tensor":  # a captured tensor: shape, dtype and strides from the manifest
                value = _bind_tensor(f, value, device)
                keep.append(value)
                setattr(p, f["name"], value.data_ptr())
            elif f["type"].endswith("_ptr"):
                dtype = torch.float32 if f["type"] == "float_ptr" else torch.int32
                if not (torch.is_tensor(value) and value.device == device and value.dtype == dtype and
                        value.is_contiguous()):
                    raise TypeError(f"{f['name']}: a contiguous {dtype} tensor on {device}")
                _check_extent(f, value, p.base)
                keep.append(value)
                setattr(p, f["name"], value.data_ptr())
            else:
                setattr(p, f["name"], float(value) if f["type"] == "float" else int(value))
        return keep

    def _default(self, f, device):
        import torch
        if f["type"] == "tensor":
            key = (f["name"], str(device))
            if key not in self._defaults:
                data = [float(x) if isinstance(x, str) else x for x in f["default"]]
                self._defaults[key] = torch.tensor(data, dtype=_torch_dtype(f["dtype"]),
                                                   device=device).reshape(f["shape"])
            return self._defaults[key]
        values = [float(x) for x in f["default"].split(",")]
        if not f["type"].endswith("_ptr"):
            return values[0]
        key = (f["name"], str(device))
        if key not in self._defaults:
            dtype = torch.float32 if f["type"] == "float_ptr" else torch.int32
            self._defaults[key] = torch.tensor(values, dtype=dtype, device=device)
        return self._defaults[key]


# An array parameter's elements, by its manifest's extent (the interpreter's cuir.extent), for params `b`.
_EXTENTS = {"batch": lambda b: b.batch, "heads": lambda b: b.num_heads_q,
            "batch*kv": lambda b: b.batch * b.seqlen_kv}


def _check_extent(f, value, b):
    """A ValueError unless the array parameter `value` has the elements its extent asks of this problem:
    the kernel reads that many, so a shorter tensor would be read past its end."""
    extent = _EXTENTS.get(f.get("extent", ""))
    if extent is not None and value.numel() != extent(b):
        raise ValueError(f"{f['name']}: {value.numel()} elements, this problem needs {extent(b)} (one per "
                         f"{f['extent'].replace('*', ' x ')}: B={b.batch}, Hq={b.num_heads_q}, Nkv={b.seqlen_kv})")


def _torch_dtype(name):
    import torch
    return getattr(torch, name)  # the manifest's dtypes are torch's names: float32, int64, bool, ...


def _bind_tensor(f, value, device):
    """A captured tensor's argument: of the manifest's shape and dtype, on the
    kernel's device, contiguous (the kernel indexes it with the manifest's
    row-major strides)."""
    import torch
    want_dtype, want_shape = _torch_dtype(f["dtype"]), tuple(f["shape"])
    name = f["name"]
    if not torch.is_tensor(value):
        raise ValueError(f"{name}: expected a torch tensor of shape {list(want_shape)} and dtype {f['dtype']}, "
                         f"got {type(value).__name__}")
    if tuple(value.shape) != want_shape:
        raise ValueError(f"{name}: expected shape {list(want_shape)}, got {list(value.shape)}")
    if value.dtype != want_dtype:
        raise ValueError(f"{name}: expected dtype {want_dtype}, got {value.dtype}")
    if value.device != device:
        raise ValueError(f"{name}: expected a tensor on {device}, got one on {value.device}")
    return value.contiguous()


class VariantBackwardKernel(VariantKernel):
    """The backward pass of a variant: a library lowered from kernels/sm80/flash_bwd.cu (or sm90) with the
    variant's manifest. Called with the forward's o and lse (of the same variant and parameters) and the
    upstream gradient d_o; returns (dq, dk, dv)."""

    def __init__(self, library, manifest=None, lib=None):
        library = self._open(library, manifest, lib, AttentionBwdParams, "cuir_attention_bwd_params")
        names = [n for n in BWD_ENTRY_POINTS.values() if hasattr(self.lib, n)]
        if not names:
            raise RuntimeError(f"{library} exports none of {tuple(BWD_ENTRY_POINTS.values())}")
        self.entry = getattr(self.lib, names[0])
        self.entry.restype = ctypes.c_int
        self.entry.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.workspace_size = getattr(self.lib, names[0] + "_workspace_size")
        self.workspace_size.restype = ctypes.c_size_t
        self.workspace_size.argtypes = [ctypes.c_void_p]
        self.sigmoid = self.manifest.get("normalizer") == "sigmoid"
        self._defaults = {}
        self._open_block_mask(library)

    def __call__(self, q, k, v, o, d_o, lse, softmax_scale=None, layout="bhnd", deterministic=False,
                 block_mask=None, param_grads=None, **params):
        """param_grads: {parameter name: float32 tensor} for the parameters to train (manifest fields of type
        "grad"): the kernel adds the parameter's gradient into it (zero it first); the others are not
        computed (a null buffer)."""
        import torch
        view = (lambda t: t.transpose(1, 2)) if layout == "bhnd" else (lambda t: t)
        grads = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        if lse is None and self.sigmoid:  # no log-sum-exp: the sigmoid's backward does not read it
            rows = q.shape[:-1] if layout == "bhnd" else (q.shape[0], q.shape[2], q.shape[1])
            lse = torch.zeros(rows, dtype=torch.float32, device=q.device)
        p = self.params_type()
        # is_causal: a variant whose mask implies the causal one keeps the kernel's causal instantiation
        p.base = make_bwd_params(*(view(t) for t in (q, k, v, o, d_o)), lse, *(view(g) for g in grads),
                                 causal=bool(self.manifest.get("is_causal")), softmax_scale=softmax_scale,
                                 deterministic=deterministic)
        keep = self._bind_fields(p, params, q.device)
        keep += self._bind_grads(p, param_grads or {}, q.device)
        if self.block_mask_info:  # the transposed lists at the backward's tiles (its own, not the forward's)
            self._bind_block_mask(p, block_mask, q.device, keep)
        elif block_mask is not None:
            raise ValueError(f"the backward of variant '{self.variant}' has no runtime block mask: call it "
                             f"without block_mask")
        workspace = torch.empty(self.workspace_size(ctypes.byref(p)), dtype=torch.uint8, device=q.device)
        p.base.workspace = workspace.data_ptr()
        context, stream = _launch_context(q.device)
        with context:
            rc = self.entry(ctypes.byref(p), ctypes.c_void_p(stream))
        del keep
        if rc != 0:
            raise KernelError(rc, f"the backward of variant '{self.variant}'")
        return grads


    def trainable(self):
        """The parameters whose gradients the kernel can accumulate (its "grad" fields' "param")."""
        return [f["param"] for f in self.fields if f["type"] == "grad"]

    def centred(self):
        """The trainable parameters whose gradient the kernel centres on each row's reference key (their
        "grad" field's "centred"): equal to the plain sum in exact arithmetic, for checks that model the
        kernel's rounding."""
        return [f["param"] for f in self.fields if f["type"] == "grad" and f.get("centred") == "row-diagonal"]

    def _bind_grads(self, p, param_grads, device):
        """Points the "grad" fields of the parameters in `param_grads` at their float32 buffers."""
        import torch
        fields = {f["param"]: f for f in self.fields if f["type"] == "grad"}
        for name, buf in param_grads.items():
            f = fields.get(name)
            if f is None:
                raise ValueError(f"the backward of variant '{self.variant}' computes no gradient of {name!r} "
                                 f"(it does: {sorted(fields)})")
            if not (torch.is_tensor(buf) and buf.dtype == torch.float32 and buf.device == device and
                    buf.is_contiguous()):
                raise TypeError(f"{name}: its gradient buffer must be a contiguous float32 tensor on {device}")
            b = p.base
            want = f["shape"] if "shape" in f else [{"batch": b.batch, "heads": b.num_heads_q,
                                                      "batch*kv": b.batch * b.seqlen_kv}[f["extent"]]]
            if list(buf.shape) != list(want):
                raise ValueError(f"{name}: its gradient buffer must have shape {want}, got {list(buf.shape)}")
            setattr(p, f["name"], buf.data_ptr())
        return list(param_grads.values())


def load_variant(library, manifest=None):
    return VariantKernel(library, manifest)


def load_variant_backward(library, manifest=None):
    return VariantBackwardKernel(library, manifest)
