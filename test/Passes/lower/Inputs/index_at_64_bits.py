"""Masks in index arithmetic that passes a C++ int, lowered and run on the
host against their meaning at 64 bits (the interpreter's index).

Each variant is lowered with a runtime block mask (`cuir-opt flash_fwd.cu
--lift --transfer=V --cuir-split-full-partial=block-mask=runtime
--lower=compile=false`); its block mask's `cuir_block_mask_visible` and its
scores helper (one mma.sync fragment: rows q, q + 8, keys kv, kv + 1) are
built for the host with the lowering's helpers (random_mask_cpp.py's harness
pieces) and evaluated with parameters at the ends of i32, against the mask
computed here with Python's integers.

  index_at_64_bits.py KERNEL_CU INCLUDE_DIR OUT_DIR --opt CUIR_OPT --cxx CXX
"""
import argparse
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from random_mask_cpp import HOST_MASK, lowered_block, scores_helper  # noqa: E402

I32_MAX, I32_MIN = 2**31 - 1, -2**31

# name -> (--transfer, the i32 parameters, the mask at 64 bits).
VARIANTS = {
    # The built-in window: q + Nkv - Nq - window_left <= kv <= ... + window_right.
    "window": ("window", ["window_left", "window_right"],
               lambda p, q, kv: (q + p["Nkv"] - p["Nq"] - p["window_left"] <= kv
                                 <= q + p["Nkv"] - p["Nq"] + p["window_right"])),
    # kv <= q + index_castui(shift): the i32 zero-extended, 2^32 - 13 for -13.
    "castui_shift": ("Inputs/castui_shift.mlir", ["shift"],
                     lambda p, q, kv: kv <= q + (p["shift"] % 2**32)),
    # An index constant past int: kv + 2^32 <= q + 2^32 + shift.
    "big_constant": ("Inputs/index_big_constant.mlir", ["shift"],
                     lambda p, q, kv: kv + 2**32 <= q + 2**32 + p["shift"]),
    # minui, remui, ceildivui, ult / ule of d = q - shift read as unsigned 64 bits.
    "unsigned_ops": ("Inputs/index_unsigned_ops.mlir", ["shift"],
                     lambda p, q, kv: _unsigned_ops((q - p["shift"]) % 2**64, p["Nkv"], kv)),
}


def _unsigned_ops(d, nkv, kv):
    """The mask of Inputs/index_unsigned_ops.mlir, d already unsigned."""
    return (kv < min(d, nkv) and d % 7 != 3) or -(-d // 5) <= kv

PARAM_VALUES = [I32_MAX, I32_MIN, I32_MAX - 1, I32_MIN + 1, -13, 0, 5]

HARNESS = HOST_MASK + r"""// Per line "Nq Nkv p0 p1 ... q kv": the block mask at (q, kv), then the
// scores helper at (q, kv), (q, kv + 1), (q + 8, kv), (q + 8, kv + 1).
int main() {{
  cuir_attention_params params{{}};
  long long v[{nvalues}];
  for (;;) {{
    for (long long &x : v)
      if (std::scanf("%lld", &x) != 1) return 0;
    params.seqlen_q = static_cast<int>(v[0]);
    params.seqlen_kv = static_cast<int>(v[1]);
{assign}
    const int q = static_cast<int>(v[{nvalues} - 2]), kv = static_cast<int>(v[{nvalues} - 1]);
    std::putchar(cuir_block_mask_visible(params, 0, 0, q, kv) ? '1' : '0');
    float scores[1][1][4] = {{{{{{0.f, 0.f, 0.f, 0.f}}}}}};
    cuir_sm80::cuir_variant_scores<true>(scores, params, 0, 0, q, kv);
    for (float s : scores[0][0])
      std::putchar(std::isinf(s) ? '0' : '1');
  }}
}}
"""


def cases(names):
    """(Nq, Nkv, params, q, kv) with kv even: sizes near 2^30, pairs at
    both ends of the sequence, every parameter value at each."""
    top = (1 << 30) - 16
    out = []
    for nq, nkv in ((top, top), (64, top), (top, 64)):
        for value in PARAM_VALUES:
            for other in (PARAM_VALUES if len(names) > 1 else [None]):
                p = {names[0]: value}
                if other is not None:
                    p[names[1]] = other
                for q in (0, 5, nq - 9):
                    for kv in (0, 6, nkv - 2):
                        if q >= 0 and kv >= 0:
                            out.append((nq, nkv, p, q, kv))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernel")
    ap.add_argument("include")
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--opt", default="cuir-opt")
    ap.add_argument("--cxx", default="clang++")
    args = ap.parse_args()
    here = pathlib.Path(__file__).parent.parent
    agree = 0
    for name, (transfer, names, mask) in VARIANTS.items():
        spec = transfer if "/" not in transfer else str(here / transfer)
        cu = args.out / name / f"{name}.cu"
        lower = subprocess.run(
            [args.opt, args.kernel, "--lift", f"--transfer={spec}",
             "--cuir-split-full-partial=block-mask=runtime", "--lower=compile=false", "-o", str(cu)],
            capture_output=True, text=True)
        text = cu.read_text() if lower.returncode == 0 else ""
        block, scores = lowered_block(text), scores_helper(text)
        if block is None or scores is None:
            print(f"{name}: NOT LOWERED\n{lower.stderr[-2000:]}")
            continue
        assign = "\n".join(f"    params.{n} = static_cast<int32_t>(v[{2 + i}]);" for i, n in enumerate(names))
        harness = args.out / name / "harness.cpp"
        harness.write_text(HARNESS.format(name=name, block=block, scores=scores, assign=assign,
                                          nvalues=len(names) + 4))
        exe = args.out / name / "harness"
        subprocess.run([args.cxx, "-std=c++17", "-O1", "-w", "-fsanitize=signed-integer-overflow",
                        "-fsanitize-trap=all", f"-I{cu.parent}", f"-I{args.include}",
                        str(harness), "-o", str(exe)], check=True)
        todo = cases(names)
        lines = "".join(" ".join(str(x) for x in [nq, nkv, *[p[n] for n in names], q, kv]) + "\n"
                        for nq, nkv, p, q, kv in todo)
        run = subprocess.run([str(exe)], input=lines, capture_output=True, text=True)
        got = run.stdout
        want = ""
        for nq, nkv, p, q, kv in todo:
            p = dict(p, Nq=nq, Nkv=nkv)
            want += "1" if mask(p, q, kv) else "0"
            want += "".join("1" if mask(p, q + dq, kv + dk) else "0"
                            for dq, dk in ((0, 0), (0, 1), (8, 0), (8, 1)))
        if run.returncode != 0 or got != want:
            first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), len(got))
            print(f"{name}: DIFFERS at case {todo[first // 5]} (exit {run.returncode}) {run.stderr[-500:]}")
            continue
        agree += 1
        print(f"{name}: agrees at {len(todo)} cases ({want.count('1')} of {len(want)} visible)")
    print(f"{agree} of {len(VARIANTS)} variants agree at 64 bits")
    return 0 if agree == len(VARIANTS) else 1


if __name__ == "__main__":
    sys.exit(main())
