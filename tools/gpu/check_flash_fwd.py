#!/usr/bin/env python3
"""GPU check of CuIR's flash-attention forward kernels, parametrised by kernel (sm90: kernels/sm90/flash_fwd.cu,
sm80: kernels/sm80/flash_fwd.cu).

The built library runs on fresh random inputs for every combination of dtype (bf16, fp16), head dim (64, 128), head
configuration (MHA, GQA, MQA), causal/full and a set of sequence shapes (ragged tails, Nq != Nkv both ways,
Nq = 1, Nkv = 0, more KV tiles than ring stages), and output and log-sum-exp are compared with a float64
PyTorch reference:
  rel = ||out - ref|| / ||ref||, max |out - ref|, the first element outside atol + rtol*|ref| with its
  (b, i, h, c) coordinates, and max |lse - ref_lse| over rows that see a key (rows that see none must give
  O = 0 and LSE = -inf). Outputs are poisoned with NaN before every run, so an unwritten element fails.
Also: the argument validation (error codes), a repeat of a few cases on the same inputs that must give
bit-identical results (a moving result is a race), and with --time a few timings.

usage: python3 tools/gpu/check_flash_fwd.py [--kernel sm90|sm80] [--lib path.so] [--quick] [--time] [--json f]
The sm_90 kernel is persistent (a thread block runs work items in turn); on small shapes each thread block gets
one item. CUIR_SM90_PERSISTENT=2 in the environment deals every item to two thread blocks, so that every shape
also checks the hand-over from one item to the next (the ring's phases, the Q and O buffers, the ping-pong).
Exit code 0 iff every case passes; the last line reads 'N passed, M failed'.
"""
import argparse
import ctypes
import json
import math
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import torch  # noqa: E402

from attention_check import compare, reference  # noqa: E402
from cuir import kernel_lib  # noqa: E402
from cuir.kernel_lib import load_library, make_params  # noqa: E402

KERNELS = {"sm80": kernel_lib.flash_fwd_sm80, "sm90": kernel_lib.flash_fwd_sm90}


def run_case(attn, dtype, d, B, Hq, Hkv, Nq, Nkv, causal, layout="bnhd", amp=1.0, repeat=False):
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
    attn(q, k, v, causal=causal, softmax_scale=scale, out=out, lse=lse, layout=layout)
    torch.cuda.synchronize()
    on = out if layout == "bnhd" else out.transpose(1, 2)
    ref_o, ref_lse = reference(qn, kn, vn, causal, scale)
    res = compare(on, lse, ref_o, ref_lse, dtype)
    if repeat:  # same inputs again: the result must be bit-identical
        out2 = torch.full_like(q, float("nan"))
        lse2 = torch.full_like(lse, float("nan"))
        for _ in range(3):
            attn(q, k, v, causal=causal, softmax_scale=scale, out=out2, lse=lse2, layout=layout)
            torch.cuda.synchronize()
            same = torch.equal(out.view(torch.int16), out2.view(torch.int16)) and torch.equal(
                lse.view(torch.int32), lse2.view(torch.int32))
            res["repeat_identical"] = res.get("repeat_identical", True) and bool(same)
        res["ok"] = res["ok"] and res["repeat_identical"]
    return res


def check_errors(kernel, lib, attn):
    """Argument validation: each bad argument must be refused with its error code."""
    entry = getattr(lib, kernel_lib.ENTRY_POINTS[kernel])
    dev = "cuda"
    q = torch.randn(1, 64, 4, 128, device=dev, dtype=torch.bfloat16)
    k = torch.randn(1, 64, 2, 128, device=dev, dtype=torch.bfloat16)
    out = torch.empty_like(q)
    results = []

    def expect(name, params, code):
        rc = entry(params, None)
        results.append((name, rc, code, rc == code))

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
    p = make_params(q, k, k, out, None)
    p.dtype = 7
    expect("dtype 7", ctypes.byref(p), 801)
    expect("null params", None, 1)
    try:
        attn(q.float(), k.float(), k.float())
        results.append(("float32 input (python)", "no error", "TypeError", False))
    except TypeError:
        results.append(("float32 input (python)", "TypeError", "TypeError", True))
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", choices=sorted(KERNELS), default="sm90")
    ap.add_argument("--lib", default=None, help="library path (default: the build's, or $CUIR_FLASH_FWD_SM*_LIB)")
    ap.add_argument("--quick", action="store_true", help="a smaller set of shapes")
    ap.add_argument("--time", action="store_true", help="also time a few shapes")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    lib = load_library(args.lib, kernel=args.kernel)
    base = KERNELS[args.kernel]

    def attn(*a, **kw):
        return base(*a, lib=lib, **kw)

    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, kernel {args.kernel}, "
          f"library {args.lib or kernel_lib.default_library_path(f'libcuir_flash_fwd_{args.kernel}.so', args.kernel)}",
          flush=True)

    shapes = [(2, 512, 512), (1, 1000, 1000), (1, 4097, 4097), (2, 300, 1000), (2, 1000, 300), (3, 1, 1000),
              (1, 1, 1), (1, 130, 0), (1, 1024, 1536)]
    if args.quick:
        shapes = [(2, 512, 512), (1, 1000, 1000), (2, 300, 1000), (2, 1000, 300), (3, 1, 1000), (1, 130, 0)]
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
    # Repeats on the same inputs (bit-identical results expected).
    for causal in (False, True):
        cases.append(dict(dtype=torch.bfloat16, d=128, B=2, Hq=8, Hkv=2, Nq=2000, Nkv=2000, causal=causal,
                          repeat=True))
        cases.append(dict(dtype=torch.float16, d=64, B=2, Hq=8, Hkv=2, Nq=2000, Nkv=2000, causal=causal,
                          repeat=True))

    passed = failed = 0
    rows = []
    worst = {}
    t0 = time.time()
    for c in cases:
        try:
            res = run_case(attn, **c)
        except Exception as e:  # noqa: BLE001 - report and go on
            res = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        tag = (f"{str(c['dtype']).replace('torch.', '')} d={c['d']} B={c['B']} Hq={c['Hq']} Hkv={c['Hkv']} "
               f"Nq={c['Nq']} Nkv={c['Nkv']} {'causal' if c['causal'] else 'full'}"
               f"{' ' + c['layout'] if 'layout' in c else ''}{' amp=' + str(c['amp']) if 'amp' in c else ''}"
               f"{' repeat' if c.get('repeat') else ''}")
        rows.append({"case": tag, **{k: v for k, v in res.items()}})
        key = (str(c["dtype"]), c["d"])
        if "rel" in res:
            worst[key] = max(worst.get(key, 0.0), res["rel"])
            worst[("lse",)] = max(worst.get(("lse",), 0.0), res["lse_max_abs"])
        if res["ok"]:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {tag}: {res}", flush=True)
            if failed >= 40 and failed == passed + failed:
                print("every case so far failed: stopping the numerical cases", flush=True)
                break
    print(f"{len(rows)} numerical cases in {time.time() - t0:.1f} s", flush=True)
    for k, w in sorted(worst.items(), key=str):
        print(f"  worst {'max |lse - ref|' if k == ('lse',) else f'rel error {k[0]} d={k[1]}'}: {w:.2e}")
    for r in rows[:: max(1, len(rows) // 12)]:
        print(f"  {r['case']}: rel {r.get('rel', float('nan')):.2e} max_abs {r.get('max_abs', float('nan')):.2e} "
              f"lse {r.get('lse_max_abs', float('nan')):.1e} {'ok' if r['ok'] else 'FAIL'}")

    for name, rc, code, ok in check_errors(args.kernel, lib, attn):
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
                ms = tt.do_bench(lambda: attn(q, k, v, causal=causal, out=out, lse=lse, layout="bhnd"),
                                 warmup=25, rep=100, return_mode="median")
                flops = 4 * B * Hq * N * N * D / (2 if causal else 1)
                timings.append({"Hq": Hq, "Hkv": Hkv, "N": N, "causal": causal, "ms": ms, "tflops": flops / ms / 1e9})
                print(f"  time N={N} Hq/Hkv={Hq}/{Hkv} {'causal' if causal else 'full'}: {ms:.3f} ms, "
                      f"{flops / ms / 1e9:.0f} TFLOP/s", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"kernel": args.kernel, "rows": rows, "timings": timings}, f, indent=1, default=str)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
