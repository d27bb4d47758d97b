"""Binds captured-tensor fields of a manifest as variant_lib does, on the CPU
(no kernel is loaded): the right tensor passes, made contiguous; a wrong
shape, dtype or device, or no tensor, is a ValueError naming the field; a
manifest default becomes a tensor of its shape and dtype (nan/inf kept)."""
import math
import torch
from cuir.variant_lib import VariantKernel, _bind_tensor

f = {"name": "bias", "type": "tensor", "dtype": "float32", "shape": [2, 3], "strides": [3, 1]}
cpu = torch.device("cpu")
t = torch.arange(6, dtype=torch.float32).reshape(3, 2).t()  # not contiguous
bound = _bind_tensor(f, t, cpu)
print("contiguous", bound.is_contiguous(), bound.tolist())
for bad in (torch.zeros(3, 2), torch.zeros(2, 3, dtype=torch.float64), [1, 2, 3]):
    try:
        _bind_tensor(f, bad, cpu)
    except ValueError as e:
        print("ValueError:", e)
try:
    _bind_tensor(f, torch.zeros(2, 3), torch.device("meta"))
except ValueError as e:
    print("ValueError:", e)
k = VariantKernel.__new__(VariantKernel)
k._defaults = {}
d = k._default(dict(f, default=[0.5, "nan", "-inf", 1, 2, 3]), cpu)
print("default", d.dtype, list(d.shape), d[0, 0].item(), math.isnan(d[0, 1].item()), d[0, 2].item())
b = k._default({"name": "keep", "type": "tensor", "dtype": "bool", "shape": [2], "default": [1, 0]}, cpu)
print("default", b.dtype, b.tolist())
