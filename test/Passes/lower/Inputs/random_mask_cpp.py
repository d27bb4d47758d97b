"""Random FlexAttention masks through the tracer and the lowering, the C++ run
on the host against PyTorch.

Each mask_mod is drawn as Python over q_idx and kv_idx (int32, as
FlexAttention gives them): sums, differences, products by constants large
enough to wrap, floor division and Python's remainder by constants of either
sign, min, max, abs, where, comparisons, and / or / not. It is traced
(cuir.compile.trace), lowered with a runtime block mask (`cuir-opt
flash_fwd.cu --lift --transfer=... --cuir-split-full-partial=block-mask=runtime
--lower=compile=false`), and both lowered forms of the mask are compiled for
the host with the lowering's own helpers: the block mask's
`cuir_block_mask_visible` and the masking steps' scores helper
(`cuir_variant_scores` on one mma.sync fragment: the thread's rows q, q + 8
and keys kv, kv + 1). Their values at a grid of pairs and at pairs near 2^30
must be PyTorch's for the same mask_mod.

  random_mask_cpp.py KERNEL_CU INCLUDE_DIR OUT_DIR --opt CUIR_OPT --cxx CXX
                     --count N --seed S
"""
import argparse
import importlib
import pathlib
import random
import re
import subprocess
import sys

import torch

# The lowered mask and scores helper ({block}, {scores}) on the host: CUDA's
# qualifiers and integer min / max, and the kernels' NoMaskBits. Shared with
# index_at_64_bits.py.
HOST_MASK = r"""// The lowered mask of {name}, on the host.
#include <cmath>
#include <cstdint>
#include <cstdio>
#define __device__
#define __forceinline__ inline
#include "cuir/attention_params.h"
// CUDA's integer min and max, which the lowering writes.
#define CUIR_MIN_MAX(T)                                                         \
  inline T min(T a, T b) {{ return a < b ? a : b; }}                              \
  inline T max(T a, T b) {{ return a > b ? a : b; }}
CUIR_MIN_MAX(int)
CUIR_MIN_MAX(unsigned)
CUIR_MIN_MAX(long)
CUIR_MIN_MAX(long long)
CUIR_MIN_MAX(unsigned long)
CUIR_MIN_MAX(unsigned long long)
{block}
namespace cuir_kernels {{
struct NoMaskBits {{
  static constexpr int kRows = 0, kWords = 0;
  bool valid = false;
  bool visible(int, int) const {{ return true; }}
}};
}}  // namespace cuir_kernels
namespace cuir_sm80 {{
{scores}
}}  // namespace cuir_sm80
"""

HARNESS = HOST_MASK + r"""// Per pair (q, kv), kv even: the block mask's value at (q, kv), then the
// scores helper's at (q, kv), (q, kv + 1), (q + 8, kv), (q + 8, kv + 1).
int main() {{
  cuir_attention_params params{{}};
  int q, kv;
  while (std::scanf("%d %d", &q, &kv) == 2) {{
    std::putchar(cuir_block_mask_visible(params, 0, 0, q, kv) ? '1' : '0');
    float scores[1][1][4] = {{{{{{0.f, 0.f, 0.f, 0.f}}}}}};
    cuir_sm80::cuir_variant_scores<true>(scores, params, 0, 0, q, kv);
    for (float s : scores[0][0])
      std::putchar(std::isinf(s) ? '0' : '1');
  }}
  return 0;
}}
"""


class Draw:
    """Python source of a random integer or boolean expression, and whether
    it is a tensor (an expression of constants alone is a Python int)."""

    def __init__(self, rng):
        self.rng = rng

    def constant(self):
        r = self.rng.randrange(8)
        if r == 0:  # large enough that products wrap in int32
            return str(self.rng.choice((65537, 1000003, 2147483647, -2147483647))), False
        return str(self.rng.randrange(-40, 200)), False

    def leaf(self):
        if self.rng.randrange(5) == 0:
            return self.constant()
        return self.rng.choice(("q_idx", "kv_idx")), True

    def tensor(self, depth):
        """An integer expression that is a tensor."""
        while True:
            e, is_tensor = self.integer(depth)
            if is_tensor:
                return e

    def integer(self, depth):
        if depth <= 0 or self.rng.randrange(4) == 0:
            return self.leaf()
        r = self.rng.randrange(9)
        if r <= 1:
            (a, ta), (b, tb) = self.integer(depth - 1), self.integer(depth - 1)
            return f"({a} {'+' if r == 0 else '-'} {b})", ta or tb
        if r == 2:
            return f"({self.tensor(depth - 1)} * {self.constant()[0]})", True
        if r == 3:
            return f"({self.tensor(depth - 1)} // {self.rng.choice((2, 3, 7, -3, 128))})", True
        if r == 4:
            return f"({self.tensor(depth - 1)} % {self.rng.choice((2, 3, 7, -3, 128))})", True
        if r in (5, 6):  # min or max: of two tensors, or a clamp by a constant
            a = self.tensor(depth - 1)
            b, tb = self.integer(depth - 1)
            if tb:
                return f"torch.{'minimum' if r == 5 else 'maximum'}({a}, {b})", True
            return (f"torch.clamp({a}, None, {b})" if r == 5 else f"torch.clamp({a}, {b})"), True
        if r == 7:
            return f"torch.abs({self.tensor(depth - 1)})", True
        b, _ = self.integer(depth - 1)
        return f"torch.where({self.boolean(depth - 1)}, {self.tensor(depth - 1)}, {b})", True

    def boolean(self, depth):
        r = self.rng.randrange(6)
        if depth <= 0 or r <= 2:
            op = self.rng.choice(("<", "<=", ">", ">=", "==", "!="))
            return f"({self.tensor(depth)} {op} {self.integer(depth)[0]})"
        if r == 3:
            return f"(~{self.boolean(depth - 1)})"
        op = "&" if r == 4 else "|"
        return f"({self.boolean(depth - 1)} {op} {self.boolean(depth - 1)})"


def lowered_block(cu_text):
    """The lowered mask and its helpers: the anonymous namespace after the
    block-mask includes."""
    m = re.search(r'#include "cuir/block_mask_classify.cuh"\n\n(namespace \{\n.*?\n\}  // namespace\n)',
                  cu_text, re.S)
    return m.group(1) if m else None


def scores_helper(cu_text):
    """The scores helper and the integer helpers written before it."""
    m = re.search(r"\n(// ---- cuir: the scores of the variant .*?\n\}\n)", cu_text, re.S)
    if not m:
        return None
    helpers = re.search(r"\n(// ---- cuir: integer and float ops as MLIR defines them ----\n.*?)\n// ---- cuir: the scores",
                        cu_text[:m.end()], re.S)
    return (helpers.group(1) + "\n" if helpers else "") + m.group(1)


def points(rng):
    """Pairs (q, kv) with kv even (a fragment's first key): a grid, then
    pairs anywhere below 2^30 - 8, near that end most often."""
    pairs = [(q, kv) for q in range(48) for kv in range(0, 48, 2)]
    top = (1 << 30) - 8
    for _ in range(256):
        q = top - 1 - rng.randrange(64) if rng.randrange(2) else rng.randrange(top)
        kv = top - 2 - rng.randrange(64) if rng.randrange(2) else rng.randrange(top - 1)
        pairs.append((q, kv - kv % 2))
    return pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernel")
    ap.add_argument("include")
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--opt", default="cuir-opt")
    ap.add_argument("--cxx", default="clang++")
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    comp = importlib.import_module("cuir.compile")
    rng = random.Random(args.seed)
    checked = agree = 0
    for i in range(args.count):
        name = f"mask{i}"
        source = Draw(rng).boolean(rng.randrange(1, 4))
        scope = {"torch": torch}
        exec(f"def {name}(b, h, q_idx, kv_idx):\n    return {source}\n", scope)
        mask_mod = scope[name]
        text, _ = comp.trace(None, mask_mod, "softmax", name, defaults=False)
        variant = args.out / f"{name}.mlir"
        variant.write_text(text)
        cu = args.out / name / f"{name}.cu"
        lower = subprocess.run(
            [args.opt, args.kernel, "--lift", f"--transfer={variant}",
             "--cuir-split-full-partial=block-mask=runtime", "--lower=compile=false", "-o", str(cu)],
            capture_output=True, text=True)
        text = cu.read_text() if lower.returncode == 0 else ""
        block, scores = lowered_block(text), scores_helper(text)
        if block is None or scores is None:
            print(f"{name}: NOT LOWERED: {source}\n{lower.stderr[-2000:]}")
            continue
        harness = args.out / name / "harness.cpp"
        harness.write_text(HARNESS.format(name=name, block=block, scores=scores))
        exe = args.out / name / "harness"
        # The output's cuir/attention_params.h (the variant's fields) first.
        subprocess.run([args.cxx, "-std=c++17", "-O1", "-w", f"-I{cu.parent}", f"-I{args.include}",
                        str(harness), "-o", str(exe)], check=True)
        pairs = points(rng)
        run = subprocess.run([str(exe)], input="".join(f"{q} {kv}\n" for q, kv in pairs),
                             capture_output=True, text=True, check=True)
        q = torch.tensor([p[0] for p in pairs], dtype=torch.int32)
        kv = torch.tensor([p[1] for p in pairs], dtype=torch.int32)
        zero = torch.zeros((), dtype=torch.int32)
        # Per pair: the block mask at (q, kv), the scores at the fragment's four.
        want = torch.stack([mask_mod(zero, zero, q + dq, kv + dk).expand(len(pairs))
                            for dq, dk in ((0, 0), (0, 0), (0, 1), (8, 0), (8, 1))], dim=1).flatten()
        got = torch.tensor([c == "1" for c in run.stdout])
        differ = (got != want).nonzero().flatten().tolist()
        where = ("block mask", "scores", "scores at kv + 1", "scores at q + 8", "scores at q + 8, kv + 1")
        checked += 1
        agree += not differ
        shown = want.double().mean().item()
        if differ:
            at = [(pairs[j // 5], where[j % 5]) for j in differ[:4]]
            print(f"{name}: DIFFERS at {len(differ)} pairs, first {at}: {source}")
        else:
            print(f"{name}: agrees ({shown:.0%} visible): {source}")
    print(f"{checked} of {args.count} masks lowered, {agree} agree with PyTorch")
    return 0 if checked == agree == args.count else 1


if __name__ == "__main__":
    sys.exit(main())
