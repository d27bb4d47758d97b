#!/usr/bin/env python3
"""GPU check of CuIR's sm_80 flash-attention forward kernel (kernels/sm80/flash_fwd.cu).

Runs the built library (build/kernels/sm80/libcuir_flash_fwd_sm80.so, or $CUIR_FLASH_FWD_SM80_LIB) on fresh
random inputs for every combination of dtype (bf16, fp16), head dim (64, 128), head configuration
(MHA, GQA, MQA), causal/full and a set of sequence shapes (ragged tails, Nq != Nkv both ways, Nq = 1, Nkv = 0),
and compares output and log-sum-exp with a float64 PyTorch reference:
  rel = ||out - ref|| / ||ref||, max |out - ref|, the first element outside atol + rtol*|ref| with its
  (b, i, h, c) coordinates, and max |lse - ref_lse| over rows that see a key (rows that see none must give
  O = 0 and LSE = -inf). Outputs are poisoned with NaN before every run, so an unwritten element fails.
Also checks the argument validation (error codes) and, with --time, times a few shapes.

usage: python3 tools/gpu/check_flash_fwd_sm80.py [--quick] [--time] [--json out.json]
Exit code 0 iff every case passes; the last line reads 'N passed, M failed'.
"""
import argparse
import json
import math
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

import torch  # noqa: E402

from cuir.kernel_lib import (AttentionParams, KernelError, flash_fwd_sm80, launch_flash_fwd_sm80,  # noqa: E402
                             load_library, make_params)

REL_TOL = {torch.bfloat16: 1e-2, torch.float16: 1e-2}       # acceptance: ||out-ref|| / ||ref||
ELEM_TOL = {torch.bfloat16: (2e-2, 2e-2), torch.float16: (4e-3, 4e-3)}  # (atol, rtol) per element, reported
LSE_TOL = 2e-3


def reference(q, k, v, causal, scale):
    """float64 attention on [B, N, H, d] tensors; rows that see no key give O = 0, LSE = -inf."""
    B, Nq, Hq, d = q.shape
    Nkv, Hkv = k.shape[1], k.shape[2]
    rep = Hq // Hkv
    qd = q.double().transpose(1, 2)
    kd = k.double().transpose(1, 2).repeat_interleave(rep, 1)
    vd = v.double().transpose(1, 2).repeat_interleave(rep, 1)
    s = (qd @ kd.transpose(-1, -2)) * scale
    if causal:
        i = torch.arange(Nq, device=q.device)[:, None]
        j = torch.arange(Nkv, device=q.device)[None, :]
        s = s.masked_fill(j > i + (Nkv - Nq), float("-inf"))
    lse = torch.logsumexp(s, dim=-1) if Nkv > 0 else torch.full(s.shape[:-1], float("-inf"), device=q.device,
                                                                 dtype=torch.float64)
    p = torch.exp(s - lse[..., None])
    p = torch.nan_to_num(p, nan=0.0)
    o = (p @ vd).transpose(1, 2)
    return o, lse


def compare(out, lse, ref_o, ref_lse, dtype):
    o = out.double()
    res = {}
    res["unwritten"] = int(torch.isnan(o).sum().item()) + int(torch.isnan(lse).sum().item())
    diff = (o - ref_o).abs()
    diff = torch.nan_to_num(diff, nan=float("inf"))
    ref_norm = ref_o.norm().item()
    if diff.numel() == 0:
        res["rel"], res["max_abs"] = 0.0, 0.0
    else:
        res["max_abs"] = diff.max().item()
        res["rel"] = diff.norm().item() / ref_norm if ref_norm > 0 else (0.0 if res["max_abs"] == 0 else math.inf)
    atol, rtol = ELEM_TOL[dtype]
    bad = diff > atol + rtol * ref_o.abs()
    res["n_bad_elems"] = int(bad.sum().item())
    if res["n_bad_elems"]:
        b, i, h, c = [int(x) for x in bad.nonzero()[0].tolist()]
        res["first_bad"] = {"b": b, "i": i, "h": h, "c": c, "out": float(o[b, i, h, c]),
                            "ref": float(ref_o[b, i, h, c])}
    finite = torch.isfinite(ref_lse)
    lse_d = lse.double()
    res["lse_empty_rows_ok"] = bool(torch.all(lse_d[~finite] == float("-inf")).item()) if (~finite).any() else True
    res["lse_max_abs"] = (lse_d[finite] - ref_lse[finite]).abs().max().item() if finite.any() else 0.0
    if math.isnan(res["lse_max_abs"]):
        res["lse_max_abs"] = math.inf
    res["ok"] = (res["unwritten"] == 0 and res["rel"] < REL_TOL[dtype] and res["lse_max_abs"] < LSE_TOL
                 and res["lse_empty_rows_ok"])
    return res


def run_case(dtype, d, B, Hq, Hkv, Nq, Nkv, causal, layout="bnhd", amp=1.0):
    dev = "cuda"
    if layout == "bnhd":
        q = torch.randn(B, Nq, Hq, d, device=dev, dtype=dtype) * amp
        k = torch.randn(B, Nkv, Hkv, d, device=dev, dtype=dtype) * amp
        v = torch.randn(B, Nkv, Hkv, d, device=dev, dtype=dtype)
        qn, kn, vn = q, k, v
    else:  # bhnd storage, passed to the kernel as strided [B, N, H, d] views
        q = torch.randn(B, Hq, Nq, d, device=dev, dtype=dtype) * amp
        k = torch.randn(B, Hkv, Nkv, d, device=dev, dtype=dtype) * amp
        v = torch.randn(B, Hkv, Nkv, d, device=dev, dtype=dtype)
        qn, kn, vn = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    scale = 1.0 / math.sqrt(d)
    out = torch.full_like(q, float("nan"))
    lse = torch.full((B, Hq, Nq), float("nan"), device=dev, dtype=torch.float32)
    flash_fwd_sm80(q, k, v, causal=causal, softmax_scale=scale, out=out, lse=lse, layout=layout)
    torch.cuda.synchronize()
    on = out if layout == "bnhd" else out.transpose(1, 2)
    ref_o, ref_lse = reference(qn, kn, vn, causal, scale)
    res = compare(on, lse, ref_o, ref_lse, dtype)
    del q, k, v, out, lse, ref_o, ref_lse
    return res


def check_errors():
    """Argument validation: each bad argument must be refused with its error code."""
    lib = load_library()
    dev = "cuda"
    q = torch.randn(1, 64, 4, 128, device=dev, dtype=torch.bfloat16)
    k = torch.randn(1, 64, 2, 128, device=dev, dtype=torch.bfloat16)
    out = torch.empty_like(q)
    results = []

    def expect(name, params, code):
        rc = lib.cuir_flash_fwd_sm80(params, None)
        results.append((name, rc, code, rc == code))

    import ctypes
    p = make_params(q, k, k, out, None)
    p.head_dim = 96
    expect("head_dim 96", ctypes.byref(p), 801)
    p = make_params(q, k, k, out, None)
    p.num_heads_kv = 3
    expect("Hq % Hkv != 0", ctypes.byref(p), 1)
    p = make_params(q, k, k, out, None)
    p.k = None
    expect("null k", ctypes.byref(p), 1)
    p = make_params(q, k, k, out, None)
    p.q_row_stride += 4
    expect("stride not a multiple of 8", ctypes.byref(p), 1)
    p = make_params(q, k, k, out, None)
    p.softmax_scale = float("nan")
    expect("softmax_scale NaN", ctypes.byref(p), 1)
    expect("null params", None, 1)
    try:
        flash_fwd_sm80(q.float(), k.float(), k.float())
        results.append(("float32 input (python)", "no error", "TypeError", False))
    except TypeError:
        results.append(("float32 input (python)", "TypeError", "TypeError", True))
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a smaller set of shapes")
    ap.add_argument("--time", action="store_true", help="also time a few shapes")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)

    shapes = [(2, 512, 512), (1, 1000, 1000), (1, 4097, 4097), (2, 300, 1000), (2, 1000, 300), (3, 1, 1000),
              (1, 1, 1), (1, 130, 0)]
    if args.quick:
        shapes = [(2, 512, 512), (1, 1000, 1000), (2, 300, 1000), (2, 1000, 300), (3, 1, 1000)]
    heads = [(4, 4), (8, 2), (8, 1)]
    cases = []
    for dtype in (torch.bfloat16, torch.float16):
        for d in (64, 128):
            for Hq, Hkv in heads:
                for causal in (False, True):
                    for B, Nq, Nkv in shapes:
                        cases.append(dict(dtype=dtype, d=d, B=B, Hq=Hq, Hkv=Hkv, Nq=Nq, Nkv=Nkv, causal=causal))
    # The benchmark's head configurations, the SDPA layout (strided views), and peaky scores.
    for Hq, Hkv in [(32, 32), (64, 8), (128, 8)]:
        for causal in (False, True):
            cases.append(dict(dtype=torch.bfloat16, d=128, B=1, Hq=Hq, Hkv=Hkv, Nq=1024, Nkv=1024, causal=causal,
                              layout="bhnd"))
    for causal in (False, True):
        cases.append(dict(dtype=torch.bfloat16, d=128, B=2, Hq=4, Hkv=2, Nq=777, Nkv=1500, causal=causal, amp=3.0))
        cases.append(dict(dtype=torch.float16, d=64, B=2, Hq=4, Hkv=2, Nq=1500, Nkv=777, causal=causal, amp=3.0))

    passed = failed = 0
    rows = []
    worst = {}
    t0 = time.time()
    for c in cases:
        try:
            res = run_case(**c)
        except Exception as e:  # noqa: BLE001 - report and go on
            res = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        tag = (f"{str(c['dtype']).replace('torch.', '')} d={c['d']} B={c['B']} Hq={c['Hq']} Hkv={c['Hkv']} "
               f"Nq={c['Nq']} Nkv={c['Nkv']} {'causal' if c['causal'] else 'full'}"
               f"{' ' + c['layout'] if 'layout' in c else ''}{' amp=' + str(c['amp']) if 'amp' in c else ''}")
        rows.append({"case": tag, **{k: v for k, v in res.items()}})
        key = (str(c["dtype"]), c["d"])
        if "rel" in res:
            worst[key] = max(worst.get(key, 0.0), res["rel"])
        if res["ok"]:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {tag}: {res}", flush=True)
    print(f"{len(cases)} numerical cases in {time.time() - t0:.1f} s", flush=True)
    for (dt, d), w in sorted(worst.items()):
        print(f"  worst rel error {dt} d={d}: {w:.2e}")
    for r in rows[:: max(1, len(rows) // 12)]:
        print(f"  {r['case']}: rel {r.get('rel', float('nan')):.2e} max_abs {r.get('max_abs', float('nan')):.2e} "
              f"lse {r.get('lse_max_abs', float('nan')):.1e} {'ok' if r['ok'] else 'FAIL'}")

    for name, rc, code, ok in check_errors():
        print(f"  argument check {name}: got {rc}, expected {code}: {'ok' if ok else 'FAIL'}")
        passed += ok
        failed += not ok

    timings = []
    if args.time:
        import triton.testing as tt
        for Hq, Hkv in [(32, 32), (64, 8)]:
            for causal in (False, True):
                N, B, D = 8192, 2, 128
                q = torch.randn(B, Hq, N, D, device="cuda", dtype=torch.bfloat16)
                k = torch.randn(B, Hkv, N, D, device="cuda", dtype=torch.bfloat16)
                v = torch.randn(B, Hkv, N, D, device="cuda", dtype=torch.bfloat16)
                out = torch.empty_like(q)
                lse = torch.empty(B, Hq, N, device="cuda", dtype=torch.float32)
                ms = tt.do_bench(lambda: flash_fwd_sm80(q, k, v, causal=causal, out=out, lse=lse, layout="bhnd"),
                                 warmup=25, rep=100, return_mode="median")
                flops = 4 * B * Hq * N * N * D / (2 if causal else 1)
                timings.append({"Hq": Hq, "Hkv": Hkv, "N": N, "causal": causal, "ms": ms, "tflops": flops / ms / 1e9})
                print(f"  time N={N} Hq/Hkv={Hq}/{Hkv} {'causal' if causal else 'full'}: {ms:.3f} ms, "
                      f"{flops / ms / 1e9:.0f} TFLOP/s", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "timings": timings}, f, indent=1, default=str)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
