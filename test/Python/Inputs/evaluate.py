"""Evaluates a traced variant's IR on a grid and compares it with PyTorch.

    evaluate.py spec.py        (spec.py: score_mod and/or mask_mod, optional GRID)

Each op of the emitted text is computed as its MLIR definition says (remsi is
the remainder with the dividend's sign, floordivsi rounds down, ...), by a
small interpreter of the arith/math/memref ops the tracer emits; the Python
functions run on int32 coordinate tensors broadcast over the grid, as
FlexAttention runs them. Prints one line a mod, exits 1 on a mismatch."""
import re
import runpy
import struct
import sys

import torch

from cuir.variant import trace

DTYPES = {"i1": torch.bool, "i32": torch.int32, "i64": torch.int64, "index": torch.int64,
          "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
BINARY = {"arith.addi": torch.add, "arith.subi": torch.sub, "arith.muli": torch.mul,
          "arith.addf": torch.add, "arith.subf": torch.sub, "arith.mulf": torch.mul,
          "arith.divf": torch.div, "arith.remsi": torch.fmod, "arith.remf": torch.fmod,
          "arith.floordivsi": lambda a, b: torch.div(a, b, rounding_mode="floor"),
          "arith.divsi": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
          "arith.andi": torch.bitwise_and, "arith.ori": torch.bitwise_or,
          "arith.xori": torch.bitwise_xor, "arith.shli": lambda a, b: a << b,
          "arith.shrsi": lambda a, b: a >> b, "arith.maxsi": torch.maximum,
          "arith.minsi": torch.minimum, "arith.maximumf": torch.maximum,
          "arith.minimumf": torch.minimum, "math.powf": torch.pow}
UNARY = {"arith.negf": torch.neg, "math.exp": torch.exp, "math.exp2": torch.exp2,
         "math.log": torch.log, "math.log2": torch.log2, "math.log1p": torch.log1p, "math.expm1": torch.expm1,
         "math.sqrt": torch.sqrt, "math.rsqrt": torch.rsqrt, "math.tanh": torch.tanh,
         "math.sin": torch.sin, "math.cos": torch.cos, "math.erf": torch.erf,
         "math.absf": torch.abs, "math.absi": torch.abs, "math.floor": torch.floor,
         "math.ceil": torch.ceil, "math.trunc": torch.trunc, "math.roundeven": torch.round}
CASTS = {"arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.sitofp",
         "arith.uitofp", "arith.fptosi", "arith.extf", "arith.truncf"}
CMP = {"eq": torch.eq, "ne": torch.ne, "slt": torch.lt, "sle": torch.le, "sgt": torch.gt,
       "sge": torch.ge, "ult": torch.lt, "ule": torch.le, "ugt": torch.gt, "uge": torch.ge,
       "oeq": torch.eq, "une": torch.ne, "olt": torch.lt, "ole": torch.le, "ogt": torch.gt,
       "oge": torch.ge, "uno": lambda a, b: a.isnan() | b.isnan(),
       "ord": lambda a, b: ~(a.isnan() | b.isnan())}
SPECIAL = {"0x7F800000": float("inf"), "0xFF800000": float("-inf"), "0x7FC00000": float("nan")}


def constant(rest):
    if rest.strip() in ("true", "false"):
        return torch.tensor(rest.strip() == "true")
    text, ty = [s.strip() for s in rest.rsplit(":", 1)]
    if text.startswith("0x"):
        value = struct.unpack("<f", struct.pack("<I", int(text, 16)))[0]
    else:
        value = float(text) if ty == "f32" else int(text)
    return torch.tensor(value, dtype=DTYPES[ty])


def evaluate_op(op, rest, env, params):
    if op == "arith.constant":
        return constant(rest)
    names = re.findall(r"%[\w$.-]+", rest.split(" : ")[0])
    ty = rest.rsplit(":", 1)[1].strip()
    if op == "memref.load":
        tensor = params[names[0][1:]]
        index = [env[n].long() for n in names[1:]]
        for i, d in zip(index, tensor.shape):
            assert int(i.min()) >= 0 and int(i.max()) < d, f"load out of bounds: {rest}"
        return tensor[tuple(index)]
    args = [env[n] for n in names]
    if op in CASTS:
        return args[0].to(DTYPES[ty.split(" to ")[1].strip()])
    if op in ("arith.cmpi", "arith.cmpf"):
        return CMP[rest.split(",")[0].strip()](args[0], args[1])
    if op == "arith.select":
        return torch.where(args[0], args[1], args[2])
    if op in BINARY:
        if op in ("arith.remsi", "arith.floordivsi", "arith.divsi"):
            assert not bool((args[1] == 0).any()), f"division by zero: {rest}"
        return BINARY[op](args[0], args[1])
    return UNARY[op](args[0])


def regions(text):
    """kind -> (body lines, yielded name)."""
    out, kind, body = {}, None, []
    for line in text.splitlines():
        line = line.strip()
        match = re.match(r"cuir\.(score_mod|mask_mod) \{", line)
        if match:
            kind, body = match.group(1), []
        elif kind and line.startswith("cuir.yield"):
            out[kind] = (body, line.split()[1])
            kind = None
        elif kind and line.startswith("%"):
            body.append(re.sub(r'\s+loc\(.*\)$', "", line))  # the user's line: not evaluated
    return out


def run_region(lines, result, env, params):
    env = dict(env)
    for line in lines:
        name, op, rest = re.match(r"(%[\w$.-]+) = (\S+)\s*(.*)", line).groups()
        env[name] = evaluate_op(op, rest, env, params)
    return env[result]


def grid(spec):
    g = dict(B=2, H=4, Q=19, KV=23)
    g.update(spec.get("GRID", {}))
    coords = [torch.arange(g[k], dtype=torch.int32).view(
        *[g[k] if j == i else 1 for j in range(4)]) for i, k in enumerate("B H Q KV".split())]
    torch.manual_seed(0)
    shape = (g["B"], g["H"], g["Q"], g["KV"])
    score = spec["SCORES"](shape) if "SCORES" in spec else torch.randn(shape) * 4
    return score.float(), coords, shape


def compare(kind, got, want):
    want = want.expand_as(got) if want.dim() else want.expand(got.shape)
    if got.dtype == torch.bool or not got.is_floating_point():
        bad = got != want
    else:
        same_nan = got.isnan() == want.isnan()
        close = torch.isclose(got, want.to(got.dtype), rtol=1e-5, atol=1e-6, equal_nan=True)
        bad = ~(same_nan & close)
    if bool(bad.any()):
        where = [int(i) for i in bad.nonzero()[0]]
        print(f"{kind}: MISMATCH at (b, h, q, kv) = {where}: ir {got[tuple(where)]} "
              f"torch {want[tuple(where)]} ({int(bad.sum())} of {got.numel()})")
        return False
    print(f"{kind}: {got.numel()} values match (torch dtype {want.dtype})")
    return True


class Coordinate(torch.Tensor):
    """int32 tensors that may index, as FlexAttention allows (this torch wants int64)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") == "__getitem__":
            index = args[1] if isinstance(args[1], tuple) else (args[1],)
            index = tuple(i.as_subclass(torch.Tensor).long()
                          if isinstance(i, torch.Tensor) and i.dtype == torch.int32
                          else i for i in index)
            args = (args[0], index)
        return super().__torch_function__(func, types, args, kwargs)


def main():
    spec = runpy.run_path(sys.argv[1])
    traced = trace(spec.get("score_mod"), spec.get("mask_mod"),
                   spec.get("NORMALIZER", "softmax"), verify=False)
    score, (b, h, q, kv), shape = grid(spec)
    env = {"%score": score, "%b": b.long(), "%h": h.long(), "%q_idx": q.long(),
           "%kv_idx": kv.long()}
    ok = True
    for kind, (lines, result) in regions(traced.text).items():
        got = run_region(lines, result, env, traced.values).expand(shape)
        fn = spec[kind]
        c = [x.as_subclass(Coordinate) for x in (b, h, q, kv)]
        want = fn(score, *c) if kind == "score_mod" else fn(*c)
        want = torch.as_tensor(want).as_subclass(torch.Tensor)
        ok &= compare(kind, got, want.float() if kind == "score_mod" else want)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
