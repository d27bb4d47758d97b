#!/usr/bin/env python3
"""GPU check of CuIR's flash-attention backward kernels (kernels/include/cuir/attention_bwd_params.h), parametrised
by kernel (sm80: kernels/sm80/flash_bwd.cu, sm90: kernels/sm90/flash_bwd.cu).

Every combination of dtype (bf16, fp16), head dim (64, 128), heads (MHA, GQA Hq=8/Hkv=2, MQA), causal/full and a
set of sequence shapes (ragged tails at both ends, Nq != Nkv both ways, Nq = 1, Nq = 0, Nkv = 0, several blocks)
runs on fresh random inputs: O and LSE come from a float64 reference forward (O rounded to the dtype), dO is random,
and dQ, dK, dV are compared with torch.autograd on float64 copies of q, k, v under the same mask:
  rel = ||grad - ref|| / ||ref|| per gradient (acceptance: below REL_TOL), max |grad - ref|.
Outputs are poisoned with NaN first, so an unwritten element fails. Also: deterministic mode (correct, and
bit-identical over repeats), and the argument checks (error codes).

usage: python3 tools/gpu/check_bwd.py --kernel sm80|sm90 [--lib path.so] [--quick] [--sanitize] [--json f]
--sanitize: a few small shapes only (for compute-sanitizer). Exit code 0 iff every case passes; the last line reads
'N passed, M failed'.
"""
import argparse
import ctypes
import json
import math
import pathlib
import sys
import time

import torch

CUIR_DTYPE = {torch.bfloat16: 0, torch.float16: 1}
REL_TOL = {torch.bfloat16: 2e-2, torch.float16: 1e-2}
ENTRY = {"sm80": "cuir_flash_bwd_sm80", "sm90": "cuir_flash_bwd_sm90"}


class AttentionBwdParams(ctypes.Structure):
    """Mirror of struct cuir_attention_bwd_params (same order, same C types)."""

    _fields_ = ([(n, ctypes.c_void_p) for n in ("q", "k", "v", "o", "d_o", "lse", "dq", "dk", "dv", "workspace")] +
                [(f"{t}_{s}_stride", ctypes.c_int64) for t in ("q", "k", "v", "o", "do", "dq", "dk", "dv")
                 for s in ("batch", "row", "head")] +
                [(n, ctypes.c_int32) for n in ("batch", "num_heads_q", "num_heads_kv", "seqlen_q", "seqlen_kv",
                                               "head_dim", "dtype")] +
                [("softmax_scale", ctypes.c_float), ("is_causal", ctypes.c_int32), ("deterministic", ctypes.c_int32)])


def load(path, kernel):
    lib = ctypes.CDLL(str(path))
    lib.cuir_attention_bwd_params_sizeof.restype = ctypes.c_int
    size = lib.cuir_attention_bwd_params_sizeof()
    if size != ctypes.sizeof(AttentionBwdParams):
        raise RuntimeError(f"{path}: params struct is {size} bytes, this binding {ctypes.sizeof(AttentionBwdParams)}")
    getattr(lib, f"{ENTRY[kernel]}_workspace_size").restype = ctypes.c_size_t
    getattr(lib, f"{ENTRY[kernel]}_workspace_size").argtypes = [ctypes.c_void_p]
    getattr(lib, ENTRY[kernel]).argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    return lib


def make_params(q, k, v, o, do, lse, dq, dk, dv, causal, scale, deterministic=False):
    """Parameters over [B, N, H, d] views (any strides with a contiguous head dim)."""
    p = AttentionBwdParams()
    for name, t in (("q", q), ("k", k), ("v", v), ("o", o), ("d_o", do), ("dq", dq), ("dk", dk), ("dv", dv)):
        setattr(p, name, t.data_ptr())
        sname = "do" if name == "d_o" else name
        setattr(p, f"{sname}_batch_stride", t.stride(0))
        setattr(p, f"{sname}_row_stride", t.stride(1))
        setattr(p, f"{sname}_head_stride", t.stride(2))
    p.lse = lse.data_ptr()
    p.batch, p.seqlen_q, p.num_heads_q, p.head_dim = q.shape
    p.seqlen_kv, p.num_heads_kv = k.shape[1], k.shape[2]
    p.dtype = CUIR_DTYPE[q.dtype]
    p.softmax_scale = scale
    p.is_causal = int(causal)
    p.deterministic = int(deterministic)
    return p


class Backward:
    """The kernel's backward as a callable on [B, N, H, d] views; owns its workspace."""

    def __init__(self, lib, kernel):
        self.lib, self.entry = lib, getattr(lib, ENTRY[kernel])
        self.ws_size = getattr(lib, f"{ENTRY[kernel]}_workspace_size")
        self.ws = torch.empty(0, dtype=torch.uint8, device="cuda")

    def params(self, q, k, v, o, do, lse, dq, dk, dv, causal, scale, deterministic=False):
        p = make_params(q, k, v, o, do, lse, dq, dk, dv, causal, scale, deterministic)
        need = self.ws_size(ctypes.byref(p))
        if self.ws.numel() < need:
            self.ws = torch.empty(need, dtype=torch.uint8, device="cuda")
        p.workspace = self.ws.data_ptr()
        return p

    def launch(self, p):
        rc = self.entry(ctypes.byref(p), ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if rc != 0:
            raise RuntimeError(f"{ENTRY} returned {rc}")


def mask_of(Nq, Nkv, causal, device):
    i = torch.arange(Nq, device=device)[:, None]
    j = torch.arange(Nkv, device=device)[None, :]
    return (j > i + (Nkv - Nq)) if causal else torch.zeros(Nq, Nkv, dtype=torch.bool, device=device)


def reference_forward(q, k, v, causal, scale):
    """float64 attention on [B, N, H, d]; rows that see no key give O = 0, LSE = -inf (and no gradient)."""
    B, Nq, Hq, d = q.shape
    Nkv, Hkv = k.shape[1], k.shape[2]
    rep = Hq // Hkv
    qd, kd, vd = q.transpose(1, 2), k.transpose(1, 2).repeat_interleave(rep, 1), v.transpose(1, 2).repeat_interleave(rep, 1)
    s = (qd @ kd.transpose(-1, -2)) * scale
    masked = mask_of(Nq, Nkv, causal, q.device)
    sees = (~masked).any(-1)[:, None]  # [Nq, 1]
    s = s.masked_fill(masked, float("-inf")).masked_fill(~sees, 0.0)
    lse = torch.logsumexp(s, dim=-1).masked_fill(~sees[:, 0], float("-inf")) if Nkv > 0 else \
        torch.full(s.shape[:-1], float("-inf"), device=q.device, dtype=q.dtype)
    p = torch.softmax(s, dim=-1) * sees if Nkv > 0 else s
    return (p @ vd).transpose(1, 2), lse


def run_case(bwd, dtype, d, B, Hq, Hkv, Nq, Nkv, causal, deterministic=False, repeat=False):
    dev = "cuda"
    q = torch.randn(B, Nq, Hq, d, device=dev, dtype=dtype)
    k = torch.randn(B, Nkv, Hkv, d, device=dev, dtype=dtype)
    v = torch.randn(B, Nkv, Hkv, d, device=dev, dtype=dtype)
    do = torch.randn(B, Nq, Hq, d, device=dev, dtype=dtype)
    scale = 1.0 / math.sqrt(d)
    qd, kd, vd = (t.double().requires_grad_() for t in (q, k, v))
    o_ref, lse_ref = reference_forward(qd, kd, vd, causal, scale)
    if o_ref.numel():
        o_ref.backward(do.double())
    refs = [t.grad if t.grad is not None else torch.zeros_like(t) for t in (qd, kd, vd)]
    o = o_ref.detach().to(dtype)
    lse = lse_ref.detach().float().contiguous()
    grads = [torch.full_like(t, float("nan")) for t in (q, k, v)]
    p = bwd.params(q, k, v, o, do, lse, *grads, causal, scale, deterministic)
    bwd.launch(p)
    torch.cuda.synchronize()
    res = {"ok": True}
    for name, g, r in zip(("dq", "dk", "dv"), grads, refs):
        gd = g.double()
        unwritten = int(torch.isnan(gd).sum())
        diff = torch.nan_to_num((gd - r).abs(), nan=math.inf)
        norm = r.norm().item()
        max_abs = diff.max().item() if diff.numel() else 0.0
        rel = diff.norm().item() / norm if norm > 0 else (0.0 if max_abs == 0 else math.inf)
        res[name] = rel
        res[f"{name}_max_abs"] = max_abs
        res["ok"] = res["ok"] and unwritten == 0 and rel < REL_TOL[dtype]
    if repeat:  # the same inputs again: deterministic mode must give bit-identical gradients
        same = True
        for _ in range(3):
            again = [torch.full_like(t, float("nan")) for t in (q, k, v)]
            bwd.launch(bwd.params(q, k, v, o, do, lse, *again, causal, scale, deterministic))
            torch.cuda.synchronize()
            same = same and all(torch.equal(a.view(torch.int16), b.view(torch.int16)) for a, b in zip(grads, again))
        res["repeat_identical"] = same
        res["ok"] = res["ok"] and same
    return res


def check_errors(bwd):
    q = torch.randn(1, 64, 4, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, 64, 2, 128, device="cuda", dtype=torch.bfloat16)
    lse = torch.zeros(1, 4, 64, device="cuda")
    args = (q, k, k, q, q, lse, q.clone(), k.clone(), k.clone(), False, 0.1)
    results = []

    def expect(name, mutate, code):
        p = bwd.params(*args)
        mutate(p)
        rc = bwd.entry(ctypes.byref(p), None)
        results.append((name, rc, code, rc == code))

    expect("head_dim 96", lambda p: setattr(p, "head_dim", 96), 801)
    expect("dtype 7", lambda p: setattr(p, "dtype", 7), 801)
    expect("Hq % Hkv != 0", lambda p: setattr(p, "num_heads_kv", 3), 1)
    expect("null dk", lambda p: setattr(p, "dk", None), 1)
    expect("null workspace", lambda p: setattr(p, "workspace", None), 1)
    expect("misaligned workspace", lambda p: setattr(p, "workspace", p.workspace + 16), 1)
    expect("stride not a multiple of 8", lambda p: setattr(p, "do_row_stride", p.do_row_stride + 4), 1)
    expect("softmax_scale NaN", lambda p: setattr(p, "softmax_scale", float("nan")), 1)
    expect("deterministic 2", lambda p: setattr(p, "deterministic", 2), 1)
    expect("batch 0 (nothing to do)", lambda p: setattr(p, "batch", 0), 0)
    rc = bwd.entry(None, None)
    results.append(("null params", rc, 1, rc == 1))
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", choices=sorted(ENTRY), default="sm80")
    ap.add_argument("--lib", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sanitize", action="store_true", help="a few small shapes (for compute-sanitizer)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    root = pathlib.Path(__file__).resolve().parents[2]
    lib_path = args.lib or root / "build" / "kernels" / args.kernel / f"libcuir_flash_bwd_{args.kernel}.so"
    bwd = Backward(load(lib_path, args.kernel), args.kernel)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, kernel {args.kernel}, library {lib_path}",
          flush=True)

    shapes = [(2, 512, 512), (1, 1000, 1000), (2, 300, 1000), (2, 1000, 300), (3, 1, 1000), (1, 2100, 2100),
              (1, 130, 0), (1, 0, 130), (1, 77, 77)]
    heads = [(4, 4), (8, 2), (8, 1)]
    if args.quick:
        shapes, heads = shapes[:5] + shapes[6:8], heads[:2]
    if args.sanitize:
        shapes, heads = [(1, 200, 300), (1, 300, 200), (1, 0, 70), (1, 70, 0)], [(4, 2)]
    cases = []
    for dtype in (torch.bfloat16, torch.float16):
        for d in (64, 128):
            for Hq, Hkv in heads:
                for causal in (False, True):
                    for B, Nq, Nkv in shapes:
                        cases.append(dict(dtype=dtype, d=d, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nkv=Nkv, causal=causal))
    det_shapes = [(1, 300, 200)] if args.sanitize else [(2, 1000, 1000), (1, 700, 1500)]
    for causal in (False, True):
        for B, Nq, Nkv in det_shapes:
            cases.append(dict(dtype=torch.bfloat16, d=128, B=B, Hq=8, Hkv=2, Nq=Nq, Nkv=Nkv, causal=causal,
                              deterministic=True, repeat=True))

    passed = failed = 0
    rows = []
    t0 = time.time()
    print(f"{'case':58s} {'dq':>9s} {'dk':>9s} {'dv':>9s}")
    for c in cases:
        try:
            res = run_case(bwd, **c)
        except Exception as e:  # noqa: BLE001 - report and go on
            res = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        tag = (f"{str(c['dtype']).replace('torch.', '')} d={c['d']} B={c['B']} H={c['Hq']}/{c['Hkv']} "
               f"N={c['Nq']}/{c['Nkv']} {'causal' if c['causal'] else 'full'}"
               f"{' det' if c.get('deterministic') else ''}")
        rows.append({"case": tag, **res})
        passed += res["ok"]
        failed += not res["ok"]
        if "error" in res:
            print(f"{tag:58s} {res['error']}  FAIL", flush=True)
        else:
            print(f"{tag:58s} {res['dq']:9.2e} {res['dk']:9.2e} {res['dv']:9.2e}"
                  f"{'  repeat-identical' if res.get('repeat_identical') else ''}{'' if res['ok'] else '  FAIL'}",
                  flush=True)
    print(f"{len(rows)} numerical cases in {time.time() - t0:.1f} s")
    for dtype in ("bfloat16", "float16"):
        worst = {g: max((r.get(g, 0.0) for r in rows if r["case"].startswith(dtype)), default=0.0)
                 for g in ("dq", "dk", "dv")}
        print(f"  worst rel error {dtype}: " + ", ".join(f"{g} {w:.2e}" for g, w in worst.items()))
    for name, rc, code, ok in check_errors(bwd):
        print(f"  argument check {name}: got {rc}, expected {code}: {'ok' if ok else 'FAIL'}")
        passed += ok
        failed += not ok
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
