"""Load and run variant kernels that `cuir-opt ... --lower` built.

    from cuir.variant_lib import load_variant
    attn = load_variant("out/libprefixlm.so")            # reads out/prefixlm.json
    out = attn(q, k, v, prefix_len=torch.tensor([512, 512], dtype=torch.int32, device="cuda"))

q is [B, Hq, Nq, d], k and v [B, Hkv, Nkv, d] (PyTorch's layout; layout="bnhd"
takes [B, N, H, d]). Variant parameters are keyword arguments: CUDA tensors
for arrays (int32 or float32, contiguous), numbers for scalars; captured tensors
("type": "tensor") take a tensor of the manifest's "shape" and "dtype" on q's
device (made contiguous), else a ValueError names the field. The lowering's
manifest (<stem>.json) lists them; the params struct gets them appended after
the base fields, as the patched cuir/attention_params.h declares.
"""
import ctypes
import json
import math
import pathlib

from .kernel_lib import AttentionParams, KernelError, bind_views, make_params

_CTYPES = {"float": ctypes.c_float, "int32": ctypes.c_int32, "int64": ctypes.c_int64,
           "float_ptr": ctypes.c_void_p, "int32_ptr": ctypes.c_void_p, "tensor": ctypes.c_void_p}
_ENTRY_POINTS = ("cuir_flash_fwd_sm80", "cuir_flash_fwd_sm90")


class VariantKernel:
    def __init__(self, library, manifest=None):
        library = pathlib.Path(library)
        stem = library.name[3:-3] if library.name.startswith("lib") else library.stem
        manifest = pathlib.Path(manifest) if manifest else library.with_name(stem + ".json")
        self.manifest = json.loads(manifest.read_text())
        self.variant = self.manifest["variant"]
        self.fields = self.manifest["fields"]
        self.params_type = type(f"Params_{stem}", (ctypes.Structure,), {
            "_fields_": [("base", AttentionParams)] + [(f["name"], _CTYPES[f["type"]]) for f in self.fields]})
        self.lib = ctypes.CDLL(str(library))
        self.lib.cuir_attention_params_sizeof.restype = ctypes.c_int
        size = self.lib.cuir_attention_params_sizeof()
        if size != ctypes.sizeof(self.params_type):
            raise RuntimeError(f"{library}: sizeof(cuir_attention_params) is {size}, the manifest's binding "
                               f"has {ctypes.sizeof(self.params_type)}")
        self.entry = next((getattr(self.lib, s) for s in _ENTRY_POINTS if hasattr(self.lib, s)), None)
        if self.entry is None:
            raise RuntimeError(f"{library} exports none of {_ENTRY_POINTS}")
        self.entry.restype = ctypes.c_int
        self.entry.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.sigmoid = self.manifest.get("normalizer") == "sigmoid"
        self._defaults = {}

    def __call__(self, q, k, v, softmax_scale=None, layout="bhnd", out=None, return_lse=False, **params):
        import torch
        out, lse, (qv, kv, vv, ov) = bind_views(q, k, v, out, None, return_lse and not self.sigmoid, layout)
        p = self.params_type()
        p.base = make_params(qv, kv, vv, ov, lse, causal=False, softmax_scale=softmax_scale)
        keep = []
        for f in self.fields:
            if f["name"] in params:
                value = params[f["name"]]
            elif "default" in f:  # a value captured from the traced score_mod/mask_mod
                value = self._default(f, q.device)
            else:
                raise TypeError(f"variant '{self.variant}' needs the parameter {f['name']!r}")
            if f["type"] == "tensor":  # a captured tensor: shape, dtype and strides from the manifest
                value = _bind_tensor(f, value, q.device)
                keep.append(value)
                setattr(p, f["name"], value.data_ptr())
            elif f["type"].endswith("_ptr"):
                dtype = torch.float32 if f["type"] == "float_ptr" else torch.int32
                if not (torch.is_tensor(value) and value.is_cuda and value.dtype == dtype and value.is_contiguous()):
                    raise TypeError(f"{f['name']}: a contiguous CUDA {dtype} tensor")
                keep.append(value)
                setattr(p, f["name"], value.data_ptr())
            else:
                setattr(p, f["name"], float(value) if f["type"] == "float" else int(value))
        with torch.cuda.device(q.device):
            rc = self.entry(ctypes.byref(p), ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if rc != 0:
            raise KernelError(rc, f"variant '{self.variant}'")
        return (out, lse) if return_lse else out


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


def load_variant(library, manifest=None):
    return VariantKernel(library, manifest)
