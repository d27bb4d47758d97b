"""cuir.attention's autograd wiring on the CPU, with float64 stand-ins for the kernel bindings (the kernels
themselves are checked on the GPU by tools/gpu/check_attention_autograd.py): the gradients reach q, k and v,
the backward gets the forward's own O and log-sum-exp, the kernel choice and the deterministic flag pass
through, and bad arguments are refused."""
import math
import types

import torch

import cuir
from cuir import attention_op as att

calls = []


def reference(q, k, v, causal, scale):
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
    s = (q @ k.transpose(-1, -2)) * scale
    if causal:
        Nq, Nkv = s.shape[-2:]
        i, j = torch.arange(Nq)[:, None], torch.arange(Nkv)[None, :]
        s = s.masked_fill(j > i + Nkv - Nq, float("-inf"))
    lse = torch.logsumexp(s, -1)
    # a row that sees no key: weights 0 (the kernels' O = 0, LSE = -inf)
    return torch.softmax(s, -1).nan_to_num(0.0) @ v, lse


def fake_fwd(kernel):
    def fwd(q, k, v, causal=False, softmax_scale=None, layout="bnhd"):
        assert layout == "bhnd"
        calls.append(("fwd", kernel, causal, round(softmax_scale, 6)))
        with torch.no_grad():
            out, lse = reference(q, k, v, causal, softmax_scale)
        return out.to(q.dtype), lse.float()
    return fwd


def fake_bwd(kernel, q, k, v, o, d_o, lse, causal=False, softmax_scale=None, deterministic=False, layout="bnhd"):
    calls.append(("bwd", kernel, causal, deterministic))
    with torch.no_grad():
        out, ref_lse = reference(q, k, v, causal, softmax_scale)
        assert torch.equal(o, out.to(q.dtype)) and torch.allclose(lse, ref_lse.float()), "forward's O and LSE"
    with torch.enable_grad():
        qq, kk, vv = (t.detach().double().requires_grad_() for t in (q, k, v))
        out, _ = reference(qq, kk, vv, causal, softmax_scale)
        return torch.autograd.grad(out, (qq, kk, vv), d_o.double())


att._kernels = types.SimpleNamespace(flash_fwd_sm80=fake_fwd("sm80"), flash_fwd_sm90=fake_fwd("sm90"),
                                     flash_bwd=fake_bwd)

torch.manual_seed(0)
for causal, (Hq, Hkv, Nq, Nkv) in ((False, (4, 4, 37, 53)), (True, (8, 2, 70, 50))):
    q = torch.randn(2, Hq, Nq, 64, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, Hkv, Nkv, 64, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, Hkv, Nkv, 64, dtype=torch.float64, requires_grad=True)
    out = cuir.attention(q, k, v, causal=causal)
    grad = torch.randn_like(out)
    got = torch.autograd.grad(out, (q, k, v), grad)
    want = torch.autograd.grad(reference(q, k, v, causal, 1 / math.sqrt(64))[0], (q, k, v), grad)
    print(f"causal={causal} H={Hq}/{Hkv} N={Nq}/{Nkv}: out has grad_fn {out.grad_fn is not None}, gradients "
          f"match {all(torch.allclose(a, b) for a, b in zip(got, want))}")
print("calls", calls)
calls.clear()
q, k, v = (torch.randn(1, 2, 16, 64, dtype=torch.float64, requires_grad=True) for _ in range(3))
out = cuir.attention(q, k, v, scale=0.5, deterministic=True, kernel="sm90", backward_kernel="sm80")
out.sum().backward()
print("chosen", calls)
for label, fn in (("3-d q", lambda: cuir.attention(q[0], k, v)),
                  ("kernel", lambda: cuir.attention(q, k, v, kernel="sm70"))):
    try:
        fn()
    except ValueError as e:
        print(f"{label}: ValueError: {e}")
