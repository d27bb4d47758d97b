"""cuir.compile.tensor_for keeps converted copies of captured tensors, keyed by the tensor: a new tensor
that happens to get a freed tensor's id() must get its own copy, not the freed tensor's."""
import importlib

import torch

comp = importlib.import_module("cuir.compile")


class Kernel:
    fields = [{"name": "t", "type": "int32_ptr"}]  # int64 tensors are converted: a copy is kept


stale = 0
for i in range(200):
    a = torch.full((4,), i, dtype=torch.int64)
    comp.tensor_for(Kernel, "t", a, torch.device("cpu"))
    del a
    b = torch.full((2,), -i, dtype=torch.int64)  # often gets a's id()
    got = comp.tensor_for(Kernel, "t", b, torch.device("cpu"))
    stale += got.shape != (2,) or int(got[0]) != -i
print(f"stale copies: {stale}")
