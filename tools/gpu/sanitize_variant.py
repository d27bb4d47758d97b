#!/usr/bin/env python3
"""Runs one variant kernel on small ragged shapes with only ctypes, numpy and
the CUDA runtime (no torch), so that compute-sanitizer can watch it quickly:

    compute-sanitizer --tool memcheck --error-exitcode 9 python3 tools/gpu/sanitize_variant.py build/variants/prefixlm
"""
import ctypes
import glob
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from cuir.kernel_lib import AttentionParams  # noqa: E402
from cuir.variant_lib import _CTYPES  # noqa: E402

cands = glob.glob("/usr/local/cuda/lib64/libcudart.so*") + glob.glob("/usr/local/cuda/targets/*/lib/libcudart.so*")
cudart = ctypes.CDLL(sorted(cands)[0])


def check(rc, what):
    if rc != 0:
        raise SystemExit(f"{what} returned {rc}")


def dev(array):
    ptr = ctypes.c_void_p()
    check(cudart.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(max(array.nbytes, 16))), "cudaMalloc")
    check(cudart.cudaMemcpy(ptr, array.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(array.nbytes), 1),
          "cudaMemcpy")
    return ptr


def bf16(x):
    return (np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


d = Path(sys.argv[1])
name = d.name
manifest = json.loads((d / f"{name}.json").read_text())
lib = ctypes.CDLL(str(d / f"lib{name}.so"))
Params = type("P", (ctypes.Structure,), {"_fields_": [("base", AttentionParams)] +
                                         [(f["name"], _CTYPES[f["type"]]) for f in manifest["fields"]]})
entry = next(getattr(lib, s) for s in ("cuir_flash_fwd_sm80", "cuir_flash_fwd_sm90") if hasattr(lib, s))
entry.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
rng = np.random.default_rng(0)
for B, Hq, Hkv, Nq, Nkv, hd in [(2, 2, 1, 200, 333, 128), (1, 2, 2, 130, 70, 64)]:
    q = bf16(rng.standard_normal((B, Nq, Hq, hd)))
    k = bf16(rng.standard_normal((B, Nkv, Hkv, hd)))
    v = bf16(rng.standard_normal((B, Nkv, Hkv, hd)))
    p = Params()
    b = p.base
    b.q, b.k, b.v = dev(q), dev(k), dev(v)
    b.o = dev(np.zeros_like(q))
    b.lse = dev(np.zeros((B, Hq, Nq), np.float32))
    b.q_batch_stride, b.q_row_stride, b.q_head_stride = Nq * Hq * hd, Hq * hd, hd
    b.k_batch_stride, b.k_row_stride, b.k_head_stride = Nkv * Hkv * hd, Hkv * hd, hd
    b.v_batch_stride, b.v_row_stride, b.v_head_stride = Nkv * Hkv * hd, Hkv * hd, hd
    b.o_batch_stride, b.o_row_stride, b.o_head_stride = Nq * Hq * hd, Hq * hd, hd
    b.batch, b.num_heads_q, b.num_heads_kv, b.seqlen_q, b.seqlen_kv, b.head_dim = B, Hq, Hkv, Nq, Nkv, hd
    b.dtype, b.softmax_scale, b.is_causal = 0, hd ** -0.5, 0
    for f in manifest["fields"]:
        ext = {"batch": B, "heads": Hq, "batch*kv": B * Nkv}.get(f["extent"], 1)
        if f["type"] == "int32_ptr":
            vals = (np.arange(B * Nkv) // 37 % 5) if f["extent"] == "batch*kv" else np.full(ext, Nkv // 2)
            setattr(p, f["name"], dev(vals.astype(np.int32)))
        elif f["type"] == "float_ptr":
            setattr(p, f["name"], dev(np.full(ext, 0.125, np.float32)))
        elif f["type"] == "float":
            setattr(p, f["name"], 30.0 if f["name"] == "softcap" else -5.0)
        else:
            setattr(p, f["name"], {"window_left": 40, "window_right": 3, "global_tokens": 16}.get(f["name"], 0))
    check(entry(ctypes.byref(p), None), f"{name} launch")
    check(cudart.cudaDeviceSynchronize(), f"{name} kernel")
print(f"{name}: ran cleanly")
