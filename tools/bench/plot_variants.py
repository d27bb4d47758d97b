#!/usr/bin/python3
"""Plots the variant benchmark (tools/gpu/check_variants.py bench --json) as
TFLOP/s per variant and sequence length: CuIR's variant kernels beside the
base kernel's causal run and FlexAttention, for one model config.

    /usr/bin/python3 tools/bench/plot_variants.py docs/benchmarks/data/variants-h200-bench.json \
        -o docs/benchmarks/variants.png
    /usr/bin/python3 tools/bench/plot_variants.py docs/benchmarks/data/variants-sm90-h200-bench.json \
        --kernel sm_90 -o docs/benchmarks/variants-sm90.png
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench_json")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--config", default="llama2-7b")
    ap.add_argument("--kernel", default="sm_80", help="the kernel the variants were built on, for the title")
    args = ap.parse_args()
    rows = [r for r in json.load(open(args.bench_json)) if r["config"] == args.config]
    ns = sorted({r["N"] for r in rows})
    variants = [v for v in dict.fromkeys(r["variant"] for r in rows) if not v.startswith("base")]
    fig, axes = plt.subplots(1, len(ns), figsize=(4.2 * len(ns), 4.2), sharey=True)
    axes = axes if len(ns) > 1 else [axes]
    for ax, n in zip(axes, ns):
        at = {r["variant"]: r for r in rows if r["N"] == n}
        xs = range(len(variants))
        ax.bar([x - 0.2 for x in xs], [at[v]["tflops"] for v in variants], 0.4, label="CuIR variant")
        ax.bar([x + 0.2 for x in xs], [at[v].get("flex_tflops", 0) for v in variants], 0.4,
               label="FlexAttention")
        ax.axhline(at["base causal"]["tflops"], color="gray", ls="--", lw=1, label="CuIR base, causal")
        ax.set_title(f"{args.config}, N = {n}")
        ax.set_xticks(list(xs), variants, rotation=60, ha="right", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("TFLOP/s (visible pairs, bf16, d = 128)")
    axes[0].legend(fontsize=8, loc="lower left")
    fig.suptitle(f"Attention variants built by CuIR from the {args.kernel} kernel, on an H200 "
                 "(sigmoid variants: no FlexAttention form)", fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


if __name__ == "__main__":
    main()
