"""Random masks through the whole split, checked by the interpreter.

Each mask is drawn as a tree of comparisons of the coordinates, the diagonal,
the sizes, an i32 parameter and constants (sums, scalings, min, max, select,
and / or / not), written twice: as a cuir.variant (MLIR) and as a PyTorch
reference. `cuir-opt attention.mlir --transfer=<variant>
--cuir-split-full-partial --cuir-interpret=...` runs each at a square and two
ragged shapes; the interpreter compares the split kernel's output with the
reference. A mask the analysis reads as one interval a row is split
statically, any other takes the runtime block mask: both must match.

  random_masks.py KERNEL OUT_DIR --count N --seed S [--opt CUIR_OPT]
prints one line per run, then a summary that the test checks.
"""
import argparse
import importlib.util
import pathlib
import random
import subprocess
import sys

SHAPES = ((160, 160), (96, 200), (200, 96))
CMP = {"slt": "<", "sle": "<=", "sgt": ">", "sge": ">=", "eq": "==", "ne": "!="}


class Mask:
    """One random mask, its MLIR ops and its torch expression side by side."""

    def __init__(self, rng):
        self.rng = rng
        self.ops = []
        self.count = 0

    def value(self, op, py):
        name = f"%v{self.count}"
        self.count += 1
        self.ops.append(f"    {name} = {op}")
        return name, py

    def constant(self, c):
        return self.value(f"arith.constant {c} : index", f"T({c})")

    def leaf(self, keys):
        r = self.rng.randrange(6 if keys else 5)
        if r == 0:
            return "%q", "Q"
        if r == 5:
            return "%k", "K"
        if r == 1:
            return self.constant(self.rng.randrange(-8, 168))
        if r == 2:
            off, _ = self.value("arith.subi %Nkv, %Nq : index", "(NKV - NQ)")
            return self.value(f"arith.addi %q, {off} : index", "(Q + NKV - NQ)")
        if r == 3:
            return self.value("arith.index_cast %p : i32 to index", "(P)")
        return ("%Nq", "NQ") if self.rng.randrange(2) else ("%Nkv", "NKV")

    def integer(self, depth, keys=True):
        """An index value; with `keys`, possibly of the key coordinate."""
        if depth <= 0 or self.rng.randrange(3) == 0:
            return self.leaf(keys)
        r = self.rng.randrange(6)
        a, pa = self.integer(depth - 1, keys)
        if r == 2:
            c = self.rng.choice((-1, 2, 3))
            k, _ = self.constant(c)
            return self.value(f"arith.muli {a}, {k} : index", f"({pa} * {c})")
        if r == 5:
            cond, pc = self.boolean(depth - 1)
            b, pb = self.integer(depth - 1, keys)
            return self.value(f"arith.select {cond}, {a}, {b} : index",
                              f"torch.where({pc}, {pa}, {pb})")
        b, pb = self.integer(depth - 1, keys)
        op, py = (("addi", f"({pa} + {pb})"), ("subi", f"({pa} - {pb})"), None,
                  ("minsi", f"torch.minimum({pa}, {pb})"),
                  ("maxsi", f"torch.maximum({pa}, {pb})"))[r]
        return self.value(f"arith.{op} {a}, {b} : index", py)

    def bound(self, depth):
        """A bound of a row's keys: the row, the diagonal or the parameter,
        shifted by a constant, or an expression of them (no key)."""
        if self.rng.randrange(3) == 0:
            return self.integer(depth, keys=False)
        base, py = self.leaf(keys=False)
        c = self.rng.randrange(-48, 49)
        k, _ = self.constant(c)
        return self.value(f"arith.addi {base}, {k} : index", f"({py} + {c})")

    def compare(self, depth):
        pred = self.rng.choice(sorted(CMP))
        # Most compares put the key against a bound of the row: the masks
        # people write; the others any two values.
        keyed = self.rng.randrange(4) != 0
        a, pa = ("%k", "K") if keyed else self.integer(depth)
        b, pb = self.bound(depth) if keyed else self.integer(depth)
        return self.value(f"arith.cmpi {pred}, {a}, {b} : index",
                          f"({pa} {CMP[pred]} {pb})")

    def boolean(self, depth):
        if depth <= 0:
            return self.compare(0)
        r = self.rng.randrange(6)
        if r <= 1:
            return self.compare(depth - 1)
        a, pa = self.boolean(depth - 1)
        if r == 2:
            t, _ = self.value("arith.constant true", "T(True)")
            return self.value(f"arith.xori {a}, {t} : i1", f"(~{pa})")
        b, pb = self.boolean(depth - 1)
        op, sym = ("ori", "|") if r == 5 else ("andi", "&")
        return self.value(f"arith.{op} {a}, {b} : i1", f"({pa} {sym} {pb})")

    def variant(self, name, root):
        body = "\n".join(self.ops)
        return (f"cuir.variant @{name}(%p: i32 {{cuir.param = \"p\"}}, "
                f"%Nq: index {{cuir.param = \"Nq\"}}, %Nkv: index {{cuir.param = \"Nkv\"}}) "
                f"normalizer softmax {{\n  cuir.mask_mod {{\n"
                f"  ^bb0(%b: index, %h: index, %q: index, %k: index):\n{body}\n"
                f"    cuir.yield {root} : i1\n  }}\n}}\n")


REFERENCE = '''"""The mask {name}, in PyTorch (float64 attention)."""
import torch


def visible(Nq, Nkv, p):
    Q = torch.arange(Nq).view(Nq, 1)
    K = torch.arange(Nkv).view(1, Nkv)
    T = torch.tensor  # every value a tensor, so that ~ and & are logical
    P, NQ, NKV = T(int(p)), T(Nq), T(Nkv)
    return ({expr}) & torch.ones(Nq, Nkv, dtype=torch.bool)


def reference(q, k, v, scale, causal=False, p=0):
    B, Hq, Nq, _ = q.shape
    Hkv, Nkv = k.shape[1], k.shape[2]
    visible_pairs = visible(Nq, Nkv, p)
    k = k.double().repeat_interleave(Hq // Hkv, dim=1)
    v = v.double().repeat_interleave(Hq // Hkv, dim=1)
    s = (q.double() @ k.transpose(-1, -2)) * scale
    s = s.masked_fill(~visible_pairs, float("-inf"))
    return torch.softmax(s, dim=-1).nan_to_num(0.0) @ v, torch.logsumexp(s, dim=-1)
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernel")
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--opt", default="cuir-opt", help="the cuir-opt to run")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    runs = matched = split = runtime = some = 0
    for i in range(args.count):
        mask = Mask(rng)
        root, expr = mask.boolean(rng.randrange(1, 4))
        name = f"mask{i}"
        variant = args.out / f"{name}.mlir"
        variant.write_text(mask.variant(name, root))
        ref = args.out / f"{name}_reference.py"
        ref.write_text(REFERENCE.format(name=name, expr=expr))
        p = rng.randrange(-20, 180)
        spec = importlib.util.spec_from_file_location(name, ref)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for nq, nkv in SHAPES:
            shown = module.visible(nq, nkv, p).double().mean().item()
            some += 0.02 < shown < 0.98
            cmd = [args.opt, args.kernel, f"--transfer={variant}", "--cuir-split-full-partial",
                   f"--cuir-interpret=Nq={nq} Nkv={nkv} d=16 reference={ref} params=p={p}",
                   "-o", "/dev/null"]
            out = subprocess.run(cmd, capture_output=True, text=True).stderr
            runs += 1
            ok = "remark: matches the reference" in out
            matched += ok
            static = "its tiles come from a runtime block mask" not in out
            split += static
            runtime += not static
            print(f"{name} p={p} Nq={nq} Nkv={nkv}: {shown:.0%} visible, "
                  f"{'matches' if ok else 'DIFFERS'}, "
                  f"{'split statically' if static else 'runtime block mask'}")
            if not ok:
                print(f"  {' '.join(cmd)}\n{out}", file=sys.stderr)
    print(f"{runs} runs, {matched} match the reference; "
          f"{'both' if split and runtime else 'not both'} of the static split and the runtime block mask; "
          f"{'a third or more' if 3 * some >= runs else 'under a third'} of the runs partly visible")
    return 0 if matched == runs else 1


if __name__ == "__main__":
    sys.exit(main())
