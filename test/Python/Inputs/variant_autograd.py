"""cuir.TrainableVariant's autograd wiring on the CPU, with float64 stand-ins for a variant's forward and
backward libraries (the kernels are checked on the GPU by tools/gpu/check_variant_bwd.py): the gradients
reach q, k and v, the backward gets the forward's own O and log-sum-exp and the call's parameters, and a
captured tensor that requires grad is refused."""
import math

import torch

import cuir

calls = []


def reference(q, k, v, scale, softcap):
    s = (q @ k.transpose(-1, -2)) * scale
    s = softcap * torch.tanh(s / softcap)
    return torch.softmax(s, -1) @ v, torch.logsumexp(s, -1)


class FakeFwd:
    manifest, block_mask_info, fields = {"variant": "softcap"}, None, []

    def __call__(self, q, k, v, softmax_scale=None, layout="bnhd", return_lse=False, softcap=None):
        assert layout == "bhnd" and return_lse
        calls.append(("fwd", softcap))
        out, lse = reference(q, k, v, softmax_scale or 1 / math.sqrt(q.shape[-1]), softcap)
        return out, lse


def fake_bwd(q, k, v, o, d_o, lse, softmax_scale=None, layout="bnhd", softcap=None):
    calls.append(("bwd", softcap))
    scale = softmax_scale or 1 / math.sqrt(q.shape[-1])
    with torch.no_grad():
        out, ref_lse = reference(q, k, v, scale, softcap)
        assert torch.equal(o, out) and torch.equal(lse, ref_lse), "the forward's O and LSE"
    with torch.enable_grad():
        qq, kk, vv = (t.detach().requires_grad_() for t in (q, k, v))
        return torch.autograd.grad(reference(qq, kk, vv, scale, softcap)[0], (qq, kk, vv), d_o)


torch.manual_seed(0)
attn = cuir.TrainableVariant(FakeFwd(), fake_bwd)
q, k, v = (torch.randn(2, 3, n, 16, dtype=torch.float64, requires_grad=True) for n in (17, 29, 29))
out = attn(q, k, v, softcap=5.0)
grad = torch.randn_like(out)
got = torch.autograd.grad(out, (q, k, v), grad)
want = torch.autograd.grad(reference(q, k, v, 0.25, 5.0)[0], (q, k, v), grad)
print(f"out has grad_fn {out.grad_fn is not None}, gradients match "
      f"{all(torch.allclose(a, b) for a, b in zip(got, want))}")
print("calls", calls)
try:
    attn(q, k, v, softcap=torch.tensor(5.0, requires_grad=True))
except NotImplementedError as e:
    print("NotImplementedError:", e)
