"""Each catalogue entry's float64 reference against its own functions evaluated eagerly by PyTorch."""
import sys

import torch

from cuir import catalogue
from cuir.catalogue.eager import eager

B, Hq, Hkv, Nq, Nkv, D = 2, 4, 2, 97, 161, 64
failed = 0
for entry in catalogue.entries():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(B, H, N, D, generator=g) for H, N in ((Hq, Nq), (Hkv, Nkv), (Hkv, Nkv)))
    tensors = entry.make(B, Hq, Nq, Nkv, "cpu")
    ref = entry.reference(q, k, v, D ** -0.5, tensors)
    got = eager(entry, q, k, v, D ** -0.5, tensors)
    ref, got = (ref if isinstance(ref, tuple) else (ref,)), (got if isinstance(got, tuple) else (got,))
    err = max((r - g_).nan_to_num(0.0, 0.0, 0.0).abs().max().item() for r, g_ in zip(ref, got))
    same_inf = all(torch.equal(torch.isinf(r), torch.isinf(g_)) for r, g_ in zip(ref, got))
    ok = err < 1e-4 and same_inf
    failed += not ok
    print(f"{'PASS' if ok else 'FAIL'} {entry.name}: max error {err:.1e}{'' if same_inf else ', -inf rows differ'}")
print(f"{len(catalogue.entries())} entries, {failed} failed")
sys.exit(1 if failed else 0)
