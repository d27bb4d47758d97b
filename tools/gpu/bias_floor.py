#!/usr/bin/env python3
"""What an additive score bias costs at the least: a causal variant whose score_mod adds one per-head value
(score + bias[h]: one FMA per score, the floor of any additive bias such as ALiBi's, which also needs the bias
itself), timed beside the causal and ALiBi+causal variants of the same kernel.

    here:   /usr/bin/python3 tools/gpu/bias_floor.py build build/variants-sm90/head_bias sm90
            (then KERNEL=sm90 tools/gpu/stage_variants.sh copies it with the others)
    device: python3 tools/gpu/bias_floor.py bench build/variant-libs-sm90 [NAME=DIR ...]
            (NAME=DIR: another build of the head_bias variant, DIR/libNAME.so with DIR/NAME.json, timed beside)
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

NAME = "head_bias"


def build(out, kernel):
    import torch
    import cuir

    bias = torch.zeros(128)

    def score_mod(score, b, h, q_idx, kv_idx):
        return score + bias[h]

    def mask_mod(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    cuir.compile(score_mod=score_mod, mask_mod=mask_mod, out_dir=pathlib.Path(out), name=NAME, kernel=kernel,
                 archs=("sm_80",) if kernel == "sm80" else None, load=False)


def bench(libs, extra):
    import torch
    import triton.testing as tt
    from cuir.variant_lib import load_variant
    import variant_defs as vd

    libs = pathlib.Path(libs)
    kernels = {n: load_variant(libs / n / f"lib{n}.so") for n in ("causal", NAME, "alibi_causal")}
    for name, d in (x.split("=", 1) for x in extra):
        kernels[name] = load_variant(pathlib.Path(d) / f"lib{name}.so")
    print("config N: TF/s of " + ", ".join(kernels) + "; each / causal")
    for cname, (Hq, Hkv) in {"llama2-7b": (32, 32), "qwen2.5-72b": (64, 8), "llama3.1-405b": (128, 8)}.items():
        for N in (2048, 8192):
            B, d = 16384 // N, 128
            q = torch.randn(B, Hq, N, d, device="cuda", dtype=torch.bfloat16)
            k = torch.randn(B, Hkv, N, d, device="cuda", dtype=torch.bfloat16)
            v = torch.randn(B, Hkv, N, d, device="cuda", dtype=torch.bfloat16)
            ref = vd.eager(q[:1, :1], k[:1, :1], v[:1, :1], "causal")[0]
            params = {n: {"bias": torch.zeros(Hq, device="cuda")} for n in kernels}
            params["causal"] = {}
            params["alibi_causal"] = vd.make("alibi_causal", B, Hq, N, N)[3]
            errs = []
            for n in [n for n in kernels if n not in ("causal", "alibi_causal")]:
                out = kernels[n](q[:1, :1], k[:1, :1], v[:1, :1], bias=torch.zeros(1, device="cuda"))
                errs.append(((out.double() - ref.double()).norm() / ref.double().norm()).item())
            tf = {}
            for n, attn in kernels.items():
                ms = tt.do_bench(lambda: attn(q, k, v, **params[n]), warmup=25, rep=100, return_mode="median")
                tf[n] = 4 * B * Hq * N * (N + 1) / 2 * d / ms / 1e9
            print(f"{cname:14} {N:5}: " + " ".join(f"{x:6.1f}" for x in tf.values()) + "; " +
                  " ".join(f"{x / tf['causal']:.3f}" for x in tf.values()) + f"  (bias variants' rel err {max(errs):.1e})",
                  flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "build":
        build(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "sm90")
    else:
        bench(sys.argv[2], sys.argv[3:])
