#!/usr/bin/env python3
"""ctypes binding of the backward kernels' C interface (kernels/include/cuir/attention_bwd_params.h), shared by
tools/gpu/check_bwd.py and tools/gpu/bench_bwd.py: the parameter struct, the library and one call
`backward(lib, kernel, q, k, v, o, do, lse, dq, dk, dv, ...)` on [B, N, H, d] tensors (any strides with a
contiguous head dim)."""
import ctypes

import torch

DTYPES = {torch.bfloat16: 0, torch.float16: 1}  # enum cuir_dtype


class BwdParams(ctypes.Structure):
    _fields_ = ([(n, ctypes.c_void_p) for n in ("q", "k", "v", "o", "d_o", "lse", "dq", "dk", "dv", "workspace")] +
                [(f"{t}_{s}_stride", ctypes.c_int64) for t in ("q", "k", "v", "o", "do", "dq", "dk", "dv")
                 for s in ("batch", "row", "head")] +
                [(n, ctypes.c_int32) for n in ("batch", "num_heads_q", "num_heads_kv", "seqlen_q", "seqlen_kv",
                                               "head_dim", "dtype")] +
                [("softmax_scale", ctypes.c_float), ("is_causal", ctypes.c_int32), ("deterministic", ctypes.c_int32)])


def load(path, kernel):
    lib = ctypes.CDLL(str(path))
    lib.cuir_attention_bwd_params_sizeof.restype = ctypes.c_int
    if lib.cuir_attention_bwd_params_sizeof() != ctypes.sizeof(BwdParams):
        raise RuntimeError("cuir_attention_bwd_params: the binding's size differs from the library's")
    getattr(lib, f"cuir_flash_bwd_{kernel}_workspace_size").restype = ctypes.c_size_t
    getattr(lib, f"cuir_flash_bwd_{kernel}_workspace_size").argtypes = [ctypes.POINTER(BwdParams)]
    getattr(lib, f"cuir_flash_bwd_{kernel}").restype = ctypes.c_int
    getattr(lib, f"cuir_flash_bwd_{kernel}").argtypes = [ctypes.POINTER(BwdParams), ctypes.c_void_p]
    return lib


def make_params(q, k, v, o, do, lse, dq, dk, dv, scale, causal, deterministic):
    p = BwdParams()
    for name, t in (("q", q), ("k", k), ("v", v), ("o", o), ("d_o", do), ("lse", lse), ("dq", dq), ("dk", dk),
                    ("dv", dv)):
        setattr(p, name, t.data_ptr() if t.numel() else None)
    for name, t in (("q", q), ("k", k), ("v", v), ("o", o), ("do", do), ("dq", dq), ("dk", dk), ("dv", dv)):
        setattr(p, f"{name}_batch_stride", t.stride(0))
        setattr(p, f"{name}_row_stride", t.stride(1))
        setattr(p, f"{name}_head_stride", t.stride(2))
    p.batch, p.seqlen_q, p.num_heads_q, p.head_dim = q.shape
    p.seqlen_kv, p.num_heads_kv = k.shape[1], k.shape[2]
    p.dtype = DTYPES[q.dtype]
    p.softmax_scale = scale
    p.is_causal = int(causal)
    p.deterministic = int(deterministic)
    return p


class Backward:
    """A prepared call: parameters and workspace allocated once (for timing loops)."""

    def __init__(self, lib, kernel, q, k, v, o, do, lse, dq, dk, dv, scale, causal, deterministic=False):
        self.params = make_params(q, k, v, o, do, lse, dq, dk, dv, scale, causal, deterministic)
        size = getattr(lib, f"cuir_flash_bwd_{kernel}_workspace_size")(ctypes.byref(self.params))
        self.workspace = torch.empty(max(size, 256), dtype=torch.uint8, device=q.device)
        self.params.workspace = self.workspace.data_ptr()
        self.entry = getattr(lib, f"cuir_flash_bwd_{kernel}")

    def __call__(self):
        return self.entry(ctypes.byref(self.params), ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
