"""ctypes bindings of CuIR's attention kernel libraries (kernels/include/cuir/attention_params.h).

    from cuir.kernel_lib import flash_fwd_sm80, flash_fwd_sm90
    out, lse = flash_fwd_sm80(q, k, v, causal=True)          # q: [B, Nq, Hq, d], k/v: [B, Nkv, Hkv, d]
    out, lse = flash_fwd_sm90(q, k, v, causal=True)          # the Hopper kernel (sm_90a), same contract

The sm_80 library is looked up in $CUIR_FLASH_FWD_SM80_LIB, then in <repo>/build/kernels/sm80/; the sm_90
one in $CUIR_FLASH_FWD_SM90_LIB, then in <repo>/build/kernels/sm90/. Tensors are torch
CUDA tensors (bf16 or fp16, head dim contiguous, any other strides that are multiples of 8 elements); the kernel
runs on torch's current stream. ctypes and torch are imported lazily so that this module imports anywhere.
"""
import contextlib
import ctypes
import math
import os
import pathlib

CUIR_DTYPE_BF16 = 0
CUIR_DTYPE_FP16 = 1

# cudaError_t values the launch functions return for refused arguments.
ERROR_NAMES = {0: "cudaSuccess", 1: "cudaErrorInvalidValue", 801: "cudaErrorNotSupported"}


class AttentionParams(ctypes.Structure):
    """Mirror of struct cuir_attention_params (same order, same C types)."""

    _fields_ = [
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("o", ctypes.c_void_p),
        ("lse", ctypes.c_void_p),
        ("q_batch_stride", ctypes.c_int64), ("q_row_stride", ctypes.c_int64), ("q_head_stride", ctypes.c_int64),
        ("k_batch_stride", ctypes.c_int64), ("k_row_stride", ctypes.c_int64), ("k_head_stride", ctypes.c_int64),
        ("v_batch_stride", ctypes.c_int64), ("v_row_stride", ctypes.c_int64), ("v_head_stride", ctypes.c_int64),
        ("o_batch_stride", ctypes.c_int64), ("o_row_stride", ctypes.c_int64), ("o_head_stride", ctypes.c_int64),
        ("batch", ctypes.c_int32),
        ("num_heads_q", ctypes.c_int32),
        ("num_heads_kv", ctypes.c_int32),
        ("seqlen_q", ctypes.c_int32),
        ("seqlen_kv", ctypes.c_int32),
        ("head_dim", ctypes.c_int32),
        ("dtype", ctypes.c_int32),
        ("softmax_scale", ctypes.c_float),
        ("is_causal", ctypes.c_int32),
        ("reserved0", ctypes.c_int32),
        # ==== CUIR VARIANT PARAMETERS: a derived kernel's binding appends its fields here ====
    ]


class KernelError(RuntimeError):
    def __init__(self, code, what):
        self.code = code
        super().__init__(f"{what} returned {code} ({ERROR_NAMES.get(code, 'cudaError_t')})")


_REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]  # resolved once: no file system calls per kernel call


def _repo_root():
    return _REPO_ROOT


# The kernels' C entry points (kernel name -> symbol) and the variables that override their library paths.
ENTRY_POINTS = {"sm80": "cuir_flash_fwd_sm80", "sm90": "cuir_flash_fwd_sm90"}
LIBRARY_ENV = {"sm80": "CUIR_FLASH_FWD_SM80_LIB", "sm90": "CUIR_FLASH_FWD_SM90_LIB"}


def default_library_path(name="libcuir_flash_fwd_sm80.so", subdir="sm80"):
    env = os.environ.get(LIBRARY_ENV.get(subdir, "CUIR_FLASH_FWD_SM80_LIB"))
    if env:
        return pathlib.Path(env)
    return _repo_root() / "build" / "kernels" / subdir / name


_LIBS = {}


def load_library(path=None, kernel="sm80"):
    """Load (once) a kernel library and check that its params struct matches this binding.

    kernel ("sm80" or "sm90") picks the default path when path is None."""
    path = pathlib.Path(path) if path else default_library_path(f"libcuir_flash_fwd_{kernel}.so", kernel)
    key = str(path)
    if key not in _LIBS:
        if not path.exists():
            raise FileNotFoundError(f"{path} not found: build it with `cmake --build build --target cuir_flash_fwd_{kernel}`")
        lib = ctypes.CDLL(str(path))
        lib.cuir_attention_params_sizeof.restype = ctypes.c_int
        lib.cuir_attention_params_sizeof.argtypes = []
        size = lib.cuir_attention_params_sizeof()
        if size != ctypes.sizeof(AttentionParams):
            raise RuntimeError(f"{path}: sizeof(cuir_attention_params) is {size}, the binding has "
                               f"{ctypes.sizeof(AttentionParams)}")
        for symbol in ENTRY_POINTS.values():
            if hasattr(lib, symbol):
                getattr(lib, symbol).restype = ctypes.c_int
                getattr(lib, symbol).argtypes = [ctypes.POINTER(AttentionParams), ctypes.c_void_p]
        _LIBS[key] = lib
    return _LIBS[key]


def _dtype_code(t):
    import torch
    if t.dtype == torch.bfloat16:
        return CUIR_DTYPE_BF16
    if t.dtype == torch.float16:
        return CUIR_DTYPE_FP16
    raise TypeError(f"unsupported dtype {t.dtype}: bf16 or fp16")


# Where a layout keeps each of the kernel's [B, N, H, d] dimensions.
_LAYOUT_DIMS = {"bnhd": (0, 1, 2, 3), "bhnd": (0, 2, 1, 3)}


def _layout_dims(layout):
    dims = _LAYOUT_DIMS.get(layout)
    if dims is None:
        raise ValueError("layout: 'bnhd' or 'bhnd'")
    return dims


def make_params(q, k, v, out, lse, causal=False, softmax_scale=None, layout="bnhd"):
    """Fill an AttentionParams from q, k, v and out laid out as `layout` (any strides, head dim contiguous):
    "bnhd" [B, N, H, d], the kernel's own indexing, or "bhnd" [B, H, N, d], read with the strides permuted
    (no views are made: this runs on every call).

    Only the shapes torch sees are checked here; the library validates everything else (and returns an error
    code rather than launching on bad arguments)."""
    dims = _layout_dims(layout)
    if any(t.dim() != 4 for t in (q, k, v, out)):
        raise ValueError(f"q, k, v and out must be 4-D ({layout}): q {tuple(q.shape)} k {tuple(k.shape)} "
                         f"v {tuple(v.shape)} out {tuple(out.shape)}")
    a, b, c, e = dims
    shapes, strides = [], []
    for t in (q, k, v, out):
        shape, stride = t.shape, t.stride()
        shapes.append((shape[a], shape[b], shape[c], shape[e]))
        strides.append((stride[a], stride[b], stride[c], stride[e]))
    (B, Nq, Hq, d), (Bk, Nkv, Hkv, dk) = shapes[0], shapes[1]
    if shapes[2] != shapes[1] or Bk != B or dk != d or shapes[3] != shapes[0]:
        raise ValueError(f"shape mismatch: q {tuple(q.shape)} k {tuple(k.shape)} v {tuple(v.shape)} "
                         f"out {tuple(out.shape)}")
    for name, t, stride in zip(("q", "k", "v", "out"), (q, k, v, out), strides):
        if stride[3] != 1 and t.shape[-1] > 1:
            raise ValueError(f"{name}: the head dimension must be contiguous")
        if t.dtype != q.dtype:
            raise TypeError(f"{name}: dtype {t.dtype} differs from q's {q.dtype}")
    if lse is not None and (tuple(lse.shape) != (B, Hq, Nq) or not lse.is_contiguous()):
        raise ValueError("lse must be a contiguous float32 tensor [B, Hq, Nq]")
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(d)
    # One constructor call, in the struct's field order (this runs on every call of a kernel).
    return AttentionParams(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                           lse.data_ptr() if lse is not None else None,
                           *strides[0][:3], *strides[1][:3], *strides[2][:3], *strides[3][:3],
                           B, Hq, Hkv, Nq, Nkv, d, _dtype_code(q), scale, 1 if causal else 0, 0)


def alloc_outputs(q, out=None, lse=None, return_lse=True, layout="bnhd"):
    """out (like q) and lse (float32 [B, Hq, Nq], only if return_lse), allocated where not given, for q laid
    out as `layout`. Returns (out, lse)."""
    import torch
    B, Nq, Hq, _ = (q.shape[i] for i in _layout_dims(layout))
    if out is None:
        out = torch.empty_like(q)
    if lse is None and return_lse:
        lse = torch.empty(B, Hq, Nq, device=q.device, dtype=torch.float32)
    return out, lse


def _launch(kernel, params, stream, lib):
    import torch
    lib = lib or load_library(kernel=kernel)
    if stream is None:
        stream = torch.cuda.current_stream().cuda_stream
    entry = f"cuir_flash_fwd_{kernel}"
    rc = getattr(lib, entry)(ctypes.byref(params), ctypes.c_void_p(stream))
    if rc != 0:
        raise KernelError(rc, entry)


def _flash_fwd(kernel, q, k, v, causal, softmax_scale, out, lse, return_lse, layout, lib):
    import torch
    out, lse = alloc_outputs(q, out, lse, return_lse, layout)
    params = make_params(q, k, v, out, lse, causal=causal, softmax_scale=softmax_scale, layout=layout)
    if lib is not None and not isinstance(lib, ctypes.CDLL):
        lib = load_library(lib, kernel=kernel)
    with torch.cuda.device(q.device):
        _launch(kernel, params, None, lib)
    return (out, lse) if return_lse else out


def launch_flash_fwd_sm80(params, stream=None, lib=None):
    """Call cuir_flash_fwd_sm80 on a filled AttentionParams; raises KernelError on a non-zero return."""
    _launch("sm80", params, stream, lib)


def flash_fwd_sm80(q, k, v, causal=False, softmax_scale=None, out=None, lse=None, return_lse=True, layout="bnhd",
                   lib=None):
    """Attention forward through the sm_80 kernel.

    layout "bnhd": q [B, Nq, Hq, d], k/v [B, Nkv, Hkv, d] (the kernel's own indexing);
    layout "bhnd": q [B, Hq, Nq, d], k/v [B, Hkv, Nkv, d] (PyTorch SDPA's), passed as strided views.
    lib: a library path or handle (load_library) other than the default build.
    Returns (out, lse) with out laid out like q and lse float32 [B, Hq, Nq] (or out alone)."""
    return _flash_fwd("sm80", q, k, v, causal, softmax_scale, out, lse, return_lse, layout, lib)


def launch_flash_fwd_sm90(params, stream=None, lib=None):
    """Call cuir_flash_fwd_sm90 on a filled AttentionParams; raises KernelError on a non-zero return."""
    _launch("sm90", params, stream, lib)


def flash_fwd_sm90(q, k, v, causal=False, softmax_scale=None, out=None, lse=None, return_lse=True, layout="bnhd",
                   lib=None):
    """Attention forward through the sm_90a kernel (Hopper); arguments and results as flash_fwd_sm80."""
    return _flash_fwd("sm90", q, k, v, causal, softmax_scale, out, lse, return_lse, layout, lib)


# ---- the backward kernels (kernels/include/cuir/attention_bwd_params.h) ----------------------------------

BWD_ENTRY_POINTS = {"sm80": "cuir_flash_bwd_sm80", "sm90": "cuir_flash_bwd_sm90"}
BWD_LIBRARY_ENV = {"sm80": "CUIR_FLASH_BWD_SM80_LIB", "sm90": "CUIR_FLASH_BWD_SM90_LIB"}
_BWD_TENSORS = ("q", "k", "v", "o", "d_o", "dq", "dk", "dv")


class AttentionBwdParams(ctypes.Structure):
    """Mirror of struct cuir_attention_bwd_params (same order, same C types)."""

    _fields_ = ([(n, ctypes.c_void_p) for n in ("q", "k", "v", "o", "d_o", "lse", "dq", "dk", "dv", "workspace")] +
                [(f"{t}_{s}_stride", ctypes.c_int64) for t in ("q", "k", "v", "o", "do", "dq", "dk", "dv")
                 for s in ("batch", "row", "head")] +
                [(n, ctypes.c_int32) for n in ("batch", "num_heads_q", "num_heads_kv", "seqlen_q", "seqlen_kv",
                                               "head_dim", "dtype")] +
                [("softmax_scale", ctypes.c_float), ("is_causal", ctypes.c_int32), ("deterministic", ctypes.c_int32)])


def load_bwd_library(path=None, kernel="sm80"):
    """Load (once) a backward kernel library (default: $CUIR_FLASH_BWD_<KERNEL>_LIB, then
    <repo>/build/kernels/<kernel>/libcuir_flash_bwd_<kernel>.so) and check its params struct."""
    if path is None:
        env = os.environ.get(BWD_LIBRARY_ENV[kernel])
        path = env or _repo_root() / "build" / "kernels" / kernel / f"libcuir_flash_bwd_{kernel}.so"
    path = pathlib.Path(path)
    key = str(path)
    if key not in _LIBS:
        if not path.exists():
            raise FileNotFoundError(f"{path} not found: build it with `cmake --build build --target "
                                    f"cuir_flash_bwd_{kernel}`")
        lib = ctypes.CDLL(key)
        lib.cuir_attention_bwd_params_sizeof.restype = ctypes.c_int
        lib.cuir_attention_bwd_params_sizeof.argtypes = []
        size = lib.cuir_attention_bwd_params_sizeof()
        if size != ctypes.sizeof(AttentionBwdParams):
            raise RuntimeError(f"{path}: sizeof(cuir_attention_bwd_params) is {size}, the binding has "
                               f"{ctypes.sizeof(AttentionBwdParams)}")
        entry = BWD_ENTRY_POINTS[kernel]
        getattr(lib, entry).restype = ctypes.c_int
        getattr(lib, entry).argtypes = [ctypes.POINTER(AttentionBwdParams), ctypes.c_void_p]
        getattr(lib, entry + "_workspace_size").restype = ctypes.c_size_t
        getattr(lib, entry + "_workspace_size").argtypes = [ctypes.POINTER(AttentionBwdParams)]
        _LIBS[key] = lib
    return _LIBS[key]


def make_bwd_params(q, k, v, o, d_o, lse, dq, dk, dv, causal=False, softmax_scale=None, deterministic=False):
    """Fill an AttentionBwdParams from [B, N, H, d]-indexed tensors (head dim contiguous; the library checks
    the rest and returns an error code rather than launching on bad arguments)."""
    B, Nq, Hq, d = q.shape
    Nkv, Hkv = k.shape[1], k.shape[2]
    tensors = dict(zip(_BWD_TENSORS, (q, k, v, o, d_o, dq, dk, dv)))
    for name, t in tensors.items():
        like = q if name in ("q", "o", "d_o", "dq") else k
        if tuple(t.shape) != tuple(like.shape) or t.dtype != q.dtype:
            raise ValueError(f"{name}: {t.dtype} {tuple(t.shape)}, expected {q.dtype} {tuple(like.shape)}")
    if tuple(lse.shape) != (B, Hq, Nq) or not lse.is_contiguous():
        raise ValueError("lse must be the forward's contiguous float32 tensor [B, Hq, Nq]")
    p = AttentionBwdParams()
    for name, t in tensors.items():
        setattr(p, name, t.data_ptr())
        stride = "do" if name == "d_o" else name
        for i, s in enumerate(("batch", "row", "head")):
            setattr(p, f"{stride}_{s}_stride", t.stride(i))
    p.lse = lse.data_ptr()
    p.batch, p.num_heads_q, p.num_heads_kv, p.seqlen_q, p.seqlen_kv, p.head_dim = B, Hq, Hkv, Nq, Nkv, d
    p.dtype = _dtype_code(q)
    p.softmax_scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(d)
    p.is_causal = 1 if causal else 0
    p.deterministic = 1 if deterministic else 0
    return p


def flash_bwd(kernel, q, k, v, o, d_o, lse, causal=False, softmax_scale=None, deterministic=False, layout="bnhd",
              lib=None):
    """dQ, dK, dV of attention through a backward kernel ("sm80" or "sm90"), from the forward's o and lse (as
    flash_fwd_* returns them) and the upstream gradient d_o; layouts as flash_fwd_sm80. The scratch memory the
    kernel asks for (<entry>_workspace_size) comes from torch's caching allocator."""
    import torch
    view = (lambda t: t.transpose(1, 2)) if layout == "bhnd" else (lambda t: t)
    grads = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    p = make_bwd_params(*(view(t) for t in (q, k, v, o, d_o)), lse, *(view(g) for g in grads),
                        causal=causal, softmax_scale=softmax_scale, deterministic=deterministic)
    lib = lib if isinstance(lib, ctypes.CDLL) else load_bwd_library(lib, kernel)
    entry = BWD_ENTRY_POINTS[kernel]
    workspace = torch.empty(getattr(lib, entry + "_workspace_size")(ctypes.byref(p)), dtype=torch.uint8,
                            device=q.device)
    p.workspace = workspace.data_ptr()
    on_gpu = q.device.type == "cuda"  # test doubles of a library run on the CPU, on the NULL stream
    with torch.cuda.device(q.device) if on_gpu else contextlib.nullcontext():
        stream = torch.cuda.current_stream().cuda_stream if on_gpu else None
        rc = getattr(lib, entry)(ctypes.byref(p), ctypes.c_void_p(stream))
    if rc != 0:
        raise KernelError(rc, entry)
    return grads
