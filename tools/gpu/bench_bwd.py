#!/usr/bin/env python3
"""Backward-pass benchmark of a CuIR backward kernel against SDPA's cuDNN and flash (FA2) backends in the same run,
as ../shared/bench/peer_bwd.py measures the peers: bf16, d = 128, the three model configurations (llama2-7b
Hq = Hkv = 32; qwen2.5-72b 64/8; llama3.1-405b 128/8, GQA through SDPA's enable_gqa), 16k tokens a batch
(B = 16384 / N), N = 2048 and 8192, full and causal. TF/s = 2.5 x 4 B H pairs d / time, pairs = the visible
(query, key) pairs. The CuIR kernel gets the peers' [B, H, N, d] tensors as strided [B, N, H, d] views, with O and
LSE from SDPA's forward; its time is the whole backward (preprocessing, main kernel, dQ conversion).

Timing: per row, --rounds rounds (default 3), each timing every side once in an order that rotates between rounds
(tools/gpu/timing.py's interleaved_medians); a side's figure is the median over the rounds, and the JSON keeps each
round's. In a round a side is timed as ../shared/bench/peer_bwd.py times the peers (triton's do_bench, warmup 10 ms,
rep 60 ms: L2 flushed before each call, the median call) with at least 10 calls (do_bench repeated where one
gives fewer). --back-to-back times instead the calls queued back to back (timing.loop_ms, 5 loops of 5 calls).
(Before session 18 each side was one do_bench, CuIR always last: at 8k one or two calls a side, and the same
library moved by up to 13% between runs.)

With --step, also a training step (forward + backward of causal attention, timed together) of cuir.attention against
SDPA cuDNN and torch.compile(flex_attention), per configuration.

usage: python3 tools/gpu/bench_bwd.py --kernel sm80|sm90 [--lib path.so] [--N 2048 8192] [--configs a,b] [--step]
       [--rounds R] [--back-to-back] [--json f] [--md f]
"""
import argparse
import contextlib
import json
import math
import pathlib
import sys

import torch
import torch.nn.functional as F
import triton.testing as tt
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
from check_bwd import Backward, load  # noqa: E402
from timing import interleaved_medians, loop_ms  # noqa: E402


CONFIGS = {"llama2-7b": (32, 32), "qwen2.5-72b": (64, 8), "llama3.1-405b": (128, 8)}


def per_call_ms(fn, min_calls=10):
    """The median of at least `min_calls` calls of `fn`, each timed by do_bench (warmup 10 ms, rep 60 ms, the L2
    flushed before each call), as ../shared/bench/peer_bwd.py times the peers."""
    times = []
    while len(times) < min_calls:
        times += tt.do_bench(fn, warmup=10, rep=60, return_mode="all")
    return sorted(times)[len(times) // 2]


def peer_call(backend, q, k, v, do, causal):
    """A callable of a peer's backward through SDPA (GQA by enable_gqa), or None where the backend refuses the
    shape."""
    gqa = q.shape[1] != k.shape[1]
    try:
        with sdpa_kernel(backend):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
        fn = lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True)  # noqa: E731
        fn()
        return fn
    except RuntimeError as e:
        print(f"  {backend}: {str(e).splitlines()[0][:120]}", flush=True)
        return None


def cuir_call(bwd, q, k, v, do, causal, scale, deterministic=False):
    """A callable launching CuIR's backward ([B, H, N, d] tensors) on O and LSE from SDPA's flash forward, run on
    the KV heads repeated over each group."""
    rep = q.shape[1] // k.shape[1]
    with torch.no_grad(), sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        o, lse = torch.ops.aten._scaled_dot_product_flash_attention(
            q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1), is_causal=causal)[:2]
        lse = lse[..., :q.shape[2]]
    view = lambda t: t.transpose(1, 2)  # noqa: E731 - [B, H, N, d] storage as [B, N, H, d]
    grads = [torch.empty_like(t) for t in (q, k, v)]
    p = bwd.params(*(view(t) for t in (q.detach(), k.detach(), v.detach(), o, do)), lse.contiguous(),
                   *(view(g) for g in grads), causal, scale, deterministic)
    return lambda: bwd.launch(p)


def bench_config(bwd, cname, N, args):
    Hq, Hkv = CONFIGS[cname]
    d, B = 128, 16384 // N
    scale = 1.0 / math.sqrt(d)
    q = torch.randn(B, Hq, N, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k, v = (torch.randn(B, Hkv, N, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(2))
    do = torch.randn_like(q)
    rows = []
    for causal in (False, True):
        pairs = N * (N + 1) / 2 if causal else N * N
        tflops = lambda ms: 2.5 * 4 * B * Hq * pairs * d / ms / 1e9  # noqa: E731
        row = {"config": cname, "N": N, "B": B, "causal": causal}
        fns = {"cudnn": peer_call(SDPBackend.CUDNN_ATTENTION, q, k, v, do, causal),
               "fa2": peer_call(SDPBackend.FLASH_ATTENTION, q, k, v, do, causal),
               "cuir": cuir_call(bwd, q, k, v, do, causal, scale)}
        if args.deterministic:
            fns["cuir det"] = cuir_call(bwd, q, k, v, do, causal, scale, True)
        timer = (lambda fn: loop_ms(fn, calls=5, warmup=2, reps=5)) if args.back_to_back else per_call_ms
        medians, rounds = interleaved_medians({n: f for n, f in fns.items() if f}, args.rounds, {"t": timer})
        for name in fns:
            row[name] = tflops(medians[name]["t"]) if name in medians else None
        row["rounds TF/s"] = {n: [round(tflops(t), 1) for t in ts["t"]] for n, ts in rounds.items()}
        for peer in ("fa2", "cudnn"):
            row[f"cuir / {peer}"] = row["cuir"] / row[peer] if row[peer] else None
        if args.step and causal:
            row.update(training_step(q, k, v, do, tflops))
        rows.append(row)
        print(json.dumps({a: (round(b, 3) if isinstance(b, float) else b) for a, b in row.items()
                          if a != "rounds TF/s"}), flush=True)
    return rows


def training_step(q, k, v, do, tflops):
    """Forward + backward of causal attention, TF/s over 3.5 x the forward's FLOPs."""
    import cuir
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    N, gqa = q.shape[2], q.shape[1] != k.shape[1]
    step_tflops = lambda ms: tflops(ms) * 3.5 / 2.5  # noqa: E731
    flex = torch.compile(flex_attention)
    bm = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, N, N, device="cuda")
    fns = {"step cuir": lambda: cuir.attention(q, k, v, causal=True),
           "step cudnn": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa),
           "step flex": lambda: flex(q, k, v, block_mask=bm, enable_gqa=gqa)}
    out = {}
    for name, fn in fns.items():
        ctx = sdpa_kernel(SDPBackend.CUDNN_ATTENTION) if "cudnn" in name else contextlib.nullcontext()
        try:
            with ctx:
                out[name] = step_tflops(per_call_ms(lambda: torch.autograd.grad(fn(), (q, k, v), do)))
        except RuntimeError as e:
            print(f"  {name}: {str(e).splitlines()[0][:120]}", flush=True)
            out[name] = None
    for peer in ("cudnn", "flex"):
        c, p = out["step cuir"], out[f"step {peer}"]
        out[f"step cuir / {peer}"] = c / p if c and p else None
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", default="sm80")
    ap.add_argument("--lib", default=None)
    ap.add_argument("--N", type=int, nargs="+", default=[2048, 8192])
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--step", action="store_true", help="also time a forward + backward training step")
    ap.add_argument("--deterministic", action="store_true", help="also time the deterministic mode")
    ap.add_argument("--rounds", type=int, default=3, help="timing rounds, the sides' order rotating (see above)")
    ap.add_argument("--back-to-back", action="store_true", help="time calls queued back to back (see above)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--md", default=None)
    args = ap.parse_args()
    root = pathlib.Path(__file__).resolve().parents[2]
    lib_path = args.lib or root / "build" / "kernels" / args.kernel / f"libcuir_flash_bwd_{args.kernel}.so"
    bwd = Backward(load(lib_path, args.kernel), args.kernel)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, kernel {args.kernel}", flush=True)
    rows = []
    for cname in args.configs.split(","):
        for N in args.N:
            rows += bench_config(bwd, cname, N, args)
            torch.cuda.empty_cache()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.md:
        cols = [c for c in rows[0] if c not in ("config", "N", "B", "causal", "rounds TF/s")]
        cols += [c for r in rows for c in r if c not in cols and c.startswith("step")]
        cols = list(dict.fromkeys(cols))
        fmt = lambda r, c: "–" if r.get(c) is None else (f"{r[c]:.2f}" if "/" in c else f"{r[c]:.0f}")  # noqa: E731
        lines = ["| config | N | mask | " + " | ".join(cols) + " |", "|---|---|---|" + "---|" * len(cols)]
        for r in rows:
            lines.append(f"| {r['config']} | {r['N']} | {'causal' if r['causal'] else 'full'} | " +
                         " | ".join(fmt(r, c) for c in cols) + " |")
        pathlib.Path(args.md).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
