#!/usr/bin/env python3
"""GPU check of CuIR's attention backward kernels (sm90: kernels/sm90/flash_bwd.cu, sm80: kernels/sm80/flash_bwd.cu).

For every combination of dtype (bf16, fp16), head dim (64, 128), heads (MHA, GQA Hq=8 / Hkv=2), causal/full and a
set of sequence shapes (ragged tails at both ends, Nq != Nkv both ways, rows that see no key, keys no row sees,
Nq = 0, Nkv = 0), fresh random q, k, v, dO; O and LSE from a float64 forward (O rounded to the dtype, LSE in
fp32, as the forward kernels write them); the kernel's dQ, dK, dV against torch.autograd on float64 q, k, v with
the same mask:
  rel = ||grad - ref|| / max(||ref||, ||terms||) per gradient (criterion: < REL_TOL), where terms is the gradient
  without the D = rowsum(dO * O) part of dS = P * (dP - D) (scale (P * dP) K, scale (P * dP)^T Q, P^T dO): the
  error of a 16-bit O in D is relative to those summands, which cancel to ~0 when a row sees one key; max
  |grad - ref| is reported too. Gradients are poisoned with NaN before the run, so an unwritten element fails.
The deterministic mode is also run three times on some cases: its dQ, dK, dV must be bit-identical.

usage: python3 tools/gpu/check_bwd.py --lib build/kernels/sm90/libcuir_flash_bwd_sm90.so --kernel sm90 [--quick]
Exit code 0 iff every case passes; the last line reads 'N passed, M failed'.
"""
import argparse
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import torch  # noqa: E402

from bwd_lib import Backward, load  # noqa: E402

REL_TOL = {torch.bfloat16: 2e-2, torch.float16: 1e-2}


def visible(Nq, Nkv, causal, device):
    """[Nq, Nkv] bool: row i sees key j (bottom-right aligned causal mask, as the forward)."""
    i = torch.arange(Nq, device=device)[:, None]
    j = torch.arange(Nkv, device=device)[None, :]
    return (j <= i + (Nkv - Nq)) if causal else torch.ones(Nq, Nkv, dtype=torch.bool, device=device)


def reference_forward(q, k, v, causal, scale):
    """float64 attention on [B, N, H, d]; returns O and LSE (rows that see no key: O = 0, LSE = -inf)."""
    B, Nq, Hq, d = q.shape
    Nkv, Hkv = k.shape[1], k.shape[2]
    rep = Hq // Hkv
    qd = q.transpose(1, 2)
    kd = k.transpose(1, 2).repeat_interleave(rep, 1)
    vd = v.transpose(1, 2).repeat_interleave(rep, 1)
    mask = visible(Nq, Nkv, causal, q.device)
    empty = ~mask.any(-1)  # [Nq]
    s = (qd @ kd.transpose(-1, -2)) * scale
    s = s.masked_fill(~mask, float("-inf")).masked_fill(empty[:, None], 0.0)
    lse = torch.logsumexp(s, dim=-1).masked_fill(empty, float("-inf"))
    p = torch.softmax(s, dim=-1) * (~empty)[:, None].to(s.dtype)
    return (p @ vd).transpose(1, 2), lse


def gradient_terms(q, k, v, do, causal, scale):
    """float64 norms of the gradients' summands before the D cancellation (see the module comment)."""
    B, Nq, Hq, d = q.shape
    rep = Hq // k.shape[2]
    qd, dod = q.transpose(1, 2), do.transpose(1, 2)
    kd, vd = (t.transpose(1, 2).repeat_interleave(rep, 1) for t in (k, v))
    mask = visible(Nq, k.shape[1], causal, q.device)
    empty = ~mask.any(-1)
    s = ((qd @ kd.transpose(-1, -2)) * scale).masked_fill(~mask, float("-inf")).masked_fill(empty[:, None], 0.0)
    p = torch.softmax(s, dim=-1) * (~empty)[:, None].to(s.dtype)
    pdp = p * (dod @ vd.transpose(-1, -2))
    sum_heads = lambda t: t.reshape(B, Hq // rep, rep, *t.shape[2:]).sum(2)
    return ((scale * pdp @ kd).norm().item(), sum_heads(scale * pdp.transpose(-1, -2) @ qd).norm().item(),
            sum_heads(p.transpose(-1, -2) @ dod).norm().item())


def rel_err(out, ref, terms):
    diff = torch.nan_to_num((out.double() - ref).abs(), nan=float("inf"))
    if diff.numel() == 0:
        return 0.0, 0.0
    n = max(ref.norm().item(), terms)
    m = diff.max().item()
    return (diff.norm().item() / n if n > 0 else (0.0 if m == 0 else math.inf)), m


def run_case(lib, kernel, dtype, d, B, Hq, Hkv, Nq, Nkv, causal, deterministic=False, repeat=0):
    dev = "cuda"
    scale = 1.0 / math.sqrt(d)
    q, k, v = (torch.randn(B, n, h, d, device=dev, dtype=dtype) for n, h in ((Nq, Hq), (Nkv, Hkv), (Nkv, Hkv)))
    do = torch.randn(B, Nq, Hq, d, device=dev, dtype=dtype)
    qd, kd, vd = (t.double().requires_grad_() for t in (q, k, v))
    ref_o, ref_lse = reference_forward(qd, kd, vd, causal, scale)
    ref_dq, ref_dk, ref_dv = torch.autograd.grad(ref_o, (qd, kd, vd), do.double(), allow_unused=True)
    ref_dq, ref_dk, ref_dv = (torch.zeros_like(t) if g is None else g for g, t in ((ref_dq, qd), (ref_dk, kd),
                                                                                   (ref_dv, vd)))
    terms = gradient_terms(qd.detach(), kd.detach(), vd.detach(), do.double(), causal, scale)
    o = ref_o.detach().to(dtype)
    lse = ref_lse.detach().float().contiguous()
    grads = [torch.full_like(t, float("nan")) for t in (q, k, v)]
    call = Backward(lib, kernel, q, k, v, o, do, lse, *grads, scale, causal, deterministic)
    rc = call()
    torch.cuda.synchronize()
    res = {"rc": rc}
    for name, g, r, t in zip(("dq", "dk", "dv"), grads, (ref_dq, ref_dk, ref_dv), terms):
        res[name], res[name + "_max"] = rel_err(g, r, t)
    res["ok"] = rc == 0 and all(res[n] < REL_TOL[dtype] for n in ("dq", "dk", "dv"))
    if repeat:
        first = [g.clone() for g in grads]
        same = True
        for _ in range(repeat):
            for g in grads:
                g.fill_(float("nan"))
            call()
            torch.cuda.synchronize()
            same = same and all(torch.equal(a.view(torch.int16), b.view(torch.int16)) for a, b in zip(first, grads))
        res["identical"] = same
        res["ok"] = res["ok"] and same
    return res


SHAPES = [  # (B, Nq, Nkv)
    (2, 128, 128), (2, 333, 333), (1, 300, 517), (1, 517, 300), (2, 1, 200), (1, 200, 1), (1, 64, 1000),
    (1, 1000, 64), (2, 1024, 1024), (1, 0, 100), (1, 100, 0)]
QUICK_SHAPES = [(2, 333, 333), (1, 300, 517), (1, 517, 300), (1, 64, 1000)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--kernel", choices=("sm80", "sm90"), required=True)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    lib = load(pathlib.Path(args.lib).resolve(), args.kernel)
    torch.manual_seed(0)
    cases = []
    for dtype in (torch.bfloat16, torch.float16):
        for d in (64, 128):
            for Hq, Hkv in ((4, 4), (8, 2)):
                for causal in (False, True):
                    for B, Nq, Nkv in QUICK_SHAPES if args.quick else SHAPES:
                        cases.append(dict(dtype=dtype, d=d, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nkv=Nkv, causal=causal))
    for dtype in (torch.bfloat16, torch.float16):
        for d in (64, 128):
            for causal in (False, True):
                cases.append(dict(dtype=dtype, d=d, B=2, Hq=8, Hkv=2, Nq=700, Nkv=900, causal=causal,
                                  deterministic=True, repeat=3))
    passed = failed = 0
    print(f"{'dtype':5} {'d':>3} {'B':>2} {'Hq':>2} {'Hkv':>3} {'Nq':>5} {'Nkv':>5} {'mask':6} {'det':3} "
          f"{'dq rel':>9} {'dk rel':>9} {'dv rel':>9}  result")
    for c in cases:
        kw = {k: v for k, v in c.items()}
        res = run_case(lib, args.kernel, **kw)
        ok = res["ok"]
        passed += ok
        failed += not ok
        extra = "" if "identical" not in res else (" identical" if res["identical"] else " NOT IDENTICAL")
        print(f"{str(c['dtype']).split('.')[-1][:5]:5} {c['d']:>3} {c['B']:>2} {c['Hq']:>2} {c['Hkv']:>3} "
              f"{c['Nq']:>5} {c['Nkv']:>5} {'causal' if c['causal'] else 'full':6} "
              f"{'yes' if c.get('deterministic') else 'no':3} {res['dq']:9.2e} {res['dk']:9.2e} {res['dv']:9.2e}  "
              f"{'ok' if ok else 'FAIL rc=%d' % res['rc']}{extra}", flush=True)
    print(f"{passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 else 1)


if __name__ == "__main__":
    main()
