#!/usr/bin/python3
"""Prints the variant benchmark (tools/gpu/check_variants.py bench --json) as the
Markdown tables of docs/benchmarks/variants*.md: one table per model config, with
the FlexAttention and eager columns where the run timed them, and the base
kernel's figures of the same run under each table.

    /usr/bin/python3 tools/bench/variants_table.py docs/benchmarks/data/variants-h200-bench.json
"""
import argparse
import json


def fmt(x, digits=0):
    return f"{x:.{digits}f}"


def table(rows):
    variants = [r for r in rows if not r["variant"].startswith("base")]
    flex = any("flex_ms" in r or "flex_error" in r for r in variants)
    eager = any("eager_ms" in r for r in variants)
    head = ["variant", "N", "TF/s", "vs base causal"]
    if flex:
        head += ["FlexAttention TF/s", "CuIR / Flex"]
    if eager:
        head += ["eager ms", "CuIR / eager"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in variants:
        cells = [r["variant"], str(r["N"]), fmt(r["tflops"]), fmt(r["vs_base_causal"], 2)]
        if flex:
            if "flex_ms" in r:
                cells += [fmt(r["flex_tflops"]), fmt(r["vs_flex"], 2)]
            elif "flex_error" in r:
                cells += ["error", "–"]
            elif r["variant"].startswith("sigmoid") or r["variant"] == "composite":
                cells += ["n/a (sigmoid)", "–"]
            else:
                cells += ["–", "–"]
        if eager:
            cells += [fmt(r["eager_ms"], 2), fmt(r["vs_eager"], 1) + "×"] if "eager_ms" in r else ["–", "–"]
        out.append("| " + " | ".join(cells) + " |")
    base = [r for r in rows if r["variant"].startswith("base")]
    by_n = {}
    for r in base:
        by_n.setdefault(r["N"], []).append(f"{r['variant'][5:]} {fmt(r['tflops'])}")
    out.append("")
    out.append("The base kernel in the same run: " +
               "; ".join(f"N = {n}: " + ", ".join(v) for n, v in sorted(by_n.items())) + " TF/s.")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench_json")
    args = ap.parse_args()
    rows = json.load(open(args.bench_json))
    for config in dict.fromkeys(r["config"] for r in rows):
        print(f"### {config}\n")
        print(table([r for r in rows if r["config"] == config]))
        print()


if __name__ == "__main__":
    main()
