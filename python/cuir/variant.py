"""FlexAttention-style attention variants as CuIR.

    from cuir.variant import trace_variant
    slopes = torch.tensor([...])
    def score_mod(score, b, h, q_idx, kv_idx):
        return 30.0 * torch.tanh(score / 30.0) + slopes[h] * (kv_idx - q_idx)
    text = trace_variant(score_mod=score_mod, name="softcap_alibi")

`score_mod(score, b, h, q_idx, kv_idx)` receives the scaled score and returns
the score the normaliser sees; `mask_mod(b, h, q_idx, kv_idx)` returns whether
the pair is visible; `normalizer` is "softmax" or "sigmoid". Both are traced
with torch.fx into a `cuir.variant` op that `cuir-opt --transfer=<file>`
accepts. Tensors the functions capture become kernel parameters named after
their variables: indexed by `h` they are per head, by `b` per batch element,
by `[b, kv_idx]` (or `[b, q_idx]`) per token. Python numbers become constants.
Anything else (data-dependent `if`, unsupported functions) is an error that
names the line of the function.

Command line: python3 -m cuir.variant spec.py -o variant.mlir
(spec.py defines score_mod and/or mask_mod, optionally NORMALIZER and NAME).
"""
import inspect
import math
import operator
import sys

import torch
import torch.fx


class VariantError(Exception):
    """An unsupported construct, with the place in the user's code."""


def _where(fn, node):
    """'file:line' of the user's code that produced `node`."""
    trace = getattr(node, "stack_trace", None) or ""
    src = inspect.getsourcefile(fn)
    for line in reversed(trace.strip().splitlines()):
        line = line.strip()
        if line.startswith("File ") and src and src in line:
            return line.split(",")[0][6:-1] + ":" + line.split("line ")[1].split(",")[0]
    try:
        return f"{inspect.getsourcefile(fn)}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return getattr(fn, "__name__", "<function>")


def _captured_tensors(fn):
    """Names of the tensors a function captures (closure or globals)."""
    names = {}
    code = fn.__code__
    if fn.__closure__:
        for name, cell in zip(code.co_freevars, fn.__closure__):
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, torch.Tensor):
                names[id(value)] = name
    for name in code.co_names:
        value = fn.__globals__.get(name)
        if isinstance(value, torch.Tensor):
            names[id(value)] = name
    return names


class _Emitter:
    """Writes the MLIR of one traced function, value by value."""

    def __init__(self, params, indent="    "):
        self.lines, self.count, self.indent, self.params = [], 0, indent, params

    def fresh(self):
        self.count += 1
        return f"%v{self.count}"

    def emit(self, text, ty):
        name = self.fresh()
        self.lines.append(f"{self.indent}{name} = {text}")
        return (name, ty)

    def const(self, value, ty):
        if ty == "f32":
            return self.emit(f"arith.constant {float(value)!r} : f32".replace("inf", "0x7F800000"), "f32")
        if ty == "i1":
            return self.emit(f"arith.constant {'true' if value else 'false'}", "i1")
        return self.emit(f"arith.constant {int(value)} : {ty}", ty)

    def to_f32(self, v):
        name, ty = v
        if ty == "f32":
            return v
        if ty == "index":
            v = self.emit(f"arith.index_cast {name} : index to i32", "i32")
            name, ty = v
        if ty == "i1":
            v = self.emit(f"arith.extui {name} : i1 to i32", "i32")
            name, ty = v
        return self.emit(f"arith.sitofp {name} : {ty} to f32", "f32")

    def to_index(self, v):
        name, ty = v
        if ty == "index":
            return v
        if ty in ("i32", "i64"):
            return self.emit(f"arith.index_cast {name} : {ty} to index", "index")
        raise VariantError(f"an index is needed, got a {ty} value")


_FLOAT_OPS = {operator.add: "arith.addf", operator.sub: "arith.subf", operator.mul: "arith.mulf",
              operator.truediv: "arith.divf", torch.add: "arith.addf", torch.sub: "arith.subf",
              torch.mul: "arith.mulf", torch.div: "arith.divf", torch.maximum: "arith.maximumf",
              torch.minimum: "arith.minimumf"}
_INT_OPS = {operator.add: "arith.addi", operator.sub: "arith.subi", operator.mul: "arith.muli",
            operator.floordiv: "arith.floordivsi", operator.mod: "arith.remsi",
            torch.maximum: "arith.maxsi", torch.minimum: "arith.minsi"}
_BOOL_OPS = {operator.and_: "arith.andi", operator.or_: "arith.ori", operator.xor: "arith.xori",
             torch.logical_and: "arith.andi", torch.logical_or: "arith.ori"}
_CMP = {operator.lt: ("slt", "olt"), operator.le: ("sle", "ole"), operator.gt: ("sgt", "ogt"),
        operator.ge: ("sge", "oge"), operator.eq: ("eq", "oeq"), operator.ne: ("ne", "une"),
        torch.lt: ("slt", "olt"), torch.le: ("sle", "ole"), torch.gt: ("sgt", "ogt"),
        torch.ge: ("sge", "oge"), torch.eq: ("eq", "oeq"), torch.ne: ("ne", "une")}
_UNARY = {torch.tanh: "math.tanh", torch.exp: "math.exp", torch.log: "math.log", torch.sqrt: "math.sqrt",
          torch.abs: "math.absf", torch.exp2: "math.exp2", torch.erf: "math.erf"}


_METHODS = {"__getitem__": operator.getitem,
            "__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
            "__truediv__": operator.truediv, "tanh": torch.tanh, "exp": torch.exp,
            "abs": torch.abs, "sigmoid": torch.sigmoid}


def _trace_graph(fn):
    """The torch.fx graph of `fn` and its tracer; errors name fn's line."""
    tracer = torch.fx.Tracer()
    tracer.record_stack_traces = True
    try:
        return tracer.trace(fn), tracer
    except Exception as e:  # torch.fx raises on data-dependent control flow
        tb = e.__traceback__
        line = None
        while tb is not None:
            if tb.tb_frame.f_code is fn.__code__:
                line = tb.tb_lineno
            tb = tb.tb_next
        where = f"{inspect.getsourcefile(fn)}:{line}" if line else _where(fn, None)
        raise VariantError(f"{where}: cannot trace {fn.__name__}: {e}") from None


class _Translator:
    """Translates the graph of one traced function into MLIR, node by node.

    A value is (name, type) for an SSA value, ("tensor", name, tensor) for a
    captured tensor, or a Python number."""

    def __init__(self, fn, root, params, param_order):
        self.fn, self.root = fn, root
        self.params, self.param_order = params, param_order
        self.tensors = _captured_tensors(fn)
        self.em = _Emitter(params)
        self.env = {}

    def error(self, node, message):
        return VariantError(f"{_where(self.fn, node)}: {message}")

    def value(self, a):
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        return a

    def compare(self, a, b, target, kinds, ref):
        em = self.em
        floaty = "f32" in kinds or any(isinstance(x, float) for x in (a, b))
        a = em.to_f32(a) if floaty and isinstance(a, tuple) else a
        b = em.to_f32(b) if floaty and isinstance(b, tuple) else b
        ty = "f32" if floaty else (ref[1] if ref[1] != "i1" else "index")
        a = a if isinstance(a, tuple) else em.const(a, ty)
        b = b if isinstance(b, tuple) else em.const(b, ty)
        if not floaty and a[1] != b[1]:
            a, b = em.to_index(a), em.to_index(b)
            ty = "index"
        pred = _CMP[target][1 if floaty else 0]
        op = "arith.cmpf" if floaty else "arith.cmpi"
        return em.emit(f"{op} {pred}, {a[0]}, {b[0]} : {ty}", "i1")

    def boolean(self, a, b, target):
        a = a if isinstance(a, tuple) else self.em.const(a, "i1")
        b = b if isinstance(b, tuple) else self.em.const(b, "i1")
        return self.em.emit(f"{_BOOL_OPS[target]} {a[0]}, {b[0]} : i1", "i1")

    def arithmetic(self, node, a, b, target, kinds, ref):
        em = self.em
        floaty = "f32" in kinds or any(isinstance(x, float) for x in (a, b)) or target is operator.truediv
        if floaty:
            if target not in _FLOAT_OPS:
                raise self.error(node, f"unsupported float operation {target}")
            a = em.to_f32(a) if isinstance(a, tuple) else em.const(a, "f32")
            b = em.to_f32(b) if isinstance(b, tuple) else em.const(b, "f32")
            return em.emit(f"{_FLOAT_OPS[target]} {a[0]}, {b[0]} : f32", "f32")
        if target not in _INT_OPS:
            raise self.error(node, f"unsupported integer operation {target}")
        ty = "index" if "index" in kinds else ref[1]
        a = (em.to_index(a) if ty == "index" else a) if isinstance(a, tuple) else em.const(a, ty)
        b = (em.to_index(b) if ty == "index" else b) if isinstance(b, tuple) else em.const(b, ty)
        return em.emit(f"{_INT_OPS[target]} {a[0]}, {b[0]} : {ty}", ty)

    def binary(self, node, a, b, target):
        if not isinstance(a, tuple) and not isinstance(b, tuple):
            raise self.error(node, "constant expression")
        ref = a if isinstance(a, tuple) else b
        kinds = {x[1] for x in (a, b) if isinstance(x, tuple)}
        if target in _CMP:
            return self.compare(a, b, target, kinds, ref)
        if target in _BOOL_OPS:
            return self.boolean(a, b, target)
        return self.arithmetic(node, a, b, target, kinds, ref)

    def captured(self, node):
        """A get_attr node: a captured tensor, or a constant if 0-d."""
        tensor = getattr(self.root, node.target)
        name = self.tensors.get(id(tensor)) or node.target.lstrip("_")
        if tensor.dim() == 0:
            return self.em.const(tensor.item(), "f32" if tensor.is_floating_point() else "i32")
        return ("tensor", name, tensor)

    def load(self, node, tensor_value):
        """tensor[index]: a load of the parameter the tensor becomes."""
        em = self.em
        _, name, tensor = tensor_value
        idx_nodes = node.args[1] if isinstance(node.args[1], tuple) else (node.args[1],)
        index = [self.value(n) for n in idx_nodes]
        roles = [n.name if isinstance(n, torch.fx.Node) and n.op == "placeholder" else None
                 for n in idx_nodes]
        elt = "f32" if tensor.is_floating_point() else "i32"
        if roles == ["h"]:
            extent, flat = "heads", em.to_index(index[0])
        elif roles == ["b"]:
            extent, flat = "batch", em.to_index(index[0])
        elif len(roles) == 2 and roles[0] == "b" and roles[1] in ("kv_idx", "q_idx"):
            extent = "batch*kv"
            self.params.setdefault("Nkv", ("index", None, None))
            row = em.emit(f"arith.muli {index[0][0]}, %Nkv : index", "index")
            flat = em.emit(f"arith.addi {row[0]}, {em.to_index(index[1])[0]} : index", "index")
        elif roles == ["kv_idx"] or roles == ["q_idx"]:
            raise self.error(node, f"index per-token tensors by [b, {roles[0]}]")
        else:
            raise self.error(node, f"captured tensor '{name}' must be indexed by h, b or [b, kv_idx]")
        self.params.setdefault(name, (f"memref<?x{elt}, #cuir.mem<global>>", extent, tensor))
        if name not in self.param_order:
            self.param_order.append(name)
        return em.emit(f"memref.load %{name}[{flat[0]}] : memref<?x{elt}, #cuir.mem<global>>", elt)

    def unary(self, target, a):
        em = self.em
        a = em.to_f32(a)
        if target is torch.sigmoid:
            neg = em.emit(f"arith.negf {a[0]} : f32", "f32")
            e = em.emit(f"math.exp {neg[0]} : f32", "f32")
            one = em.const(1.0, "f32")
            den = em.emit(f"arith.addf {one[0]}, {e[0]} : f32", "f32")
            return em.emit(f"arith.divf {one[0]}, {den[0]} : f32", "f32")
        return em.emit(f"{_UNARY[target]} {a[0]} : f32", "f32")

    def negate(self, a):
        if a[1] == "f32":
            return self.em.emit(f"arith.negf {a[0]} : f32", "f32")
        zero = self.em.const(0, a[1])
        return self.em.emit(f"arith.subi {zero[0]}, {a[0]} : {a[1]}", a[1])

    def select(self, c, a, b):
        em = self.em
        floaty = any(isinstance(x, float) or (isinstance(x, tuple) and x[1] == "f32") for x in (a, b))
        ty = "f32" if floaty else "index"
        conv = (lambda x: em.to_f32(x)) if floaty else (lambda x: em.to_index(x))
        a = conv(a) if isinstance(a, tuple) else em.const(a, ty)
        b = conv(b) if isinstance(b, tuple) else em.const(b, ty)
        return em.emit(f"arith.select {c[0]}, {a[0]}, {b[0]} : {ty}", ty)

    def call(self, node):
        """A call_function or call_method node."""
        target = node.target
        args = [self.value(a) for a in node.args]
        if node.op == "call_method":
            method = _METHODS.get(target)
            if method is None:
                raise self.error(node, f"unsupported method .{target}()")
            target = method
        if target is operator.getitem and isinstance(args[0], tuple) and args[0][0] == "tensor":
            return self.load(node, args[0])
        if target in _UNARY or target is torch.sigmoid:
            return self.unary(target, args[0])
        if target in (operator.neg, torch.neg):
            return self.negate(args[0])
        if target in (operator.invert, torch.logical_not):
            true = self.em.const(True, "i1")
            return self.em.emit(f"arith.xori {args[0][0]}, {true[0]} : i1", "i1")
        if target is torch.where:
            return self.select(*args)
        if len(args) == 2 and (target in _FLOAT_OPS or target in _INT_OPS or target in _CMP or target in _BOOL_OPS
                               or target is operator.floordiv or target is operator.mod):
            return self.binary(node, args[0], args[1], target)
        raise self.error(node, f"unsupported operation {getattr(target, '__name__', target)}")


def _trace(fn, arg_names, arg_types, params, param_order):
    """The emitter holding fn's body as MLIR, and the value it returns."""
    graph, tracer = _trace_graph(fn)
    tr = _Translator(fn, tracer.root, params, param_order)
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(arg_names):
        raise VariantError(f"{_where(fn, None)}: {fn.__name__} must take ({', '.join(arg_names)})")
    for node, name, ty in zip(placeholders, arg_names, arg_types):
        tr.env[node] = (f"%{name}", ty)
    for node in graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            out = tr.value(node.args[0])
            if not isinstance(out, tuple):
                out = tr.em.const(out, "f32" if arg_types[0] == "f32" else "i1")
            return tr.em, out
        if node.op == "get_attr":
            tr.env[node] = tr.captured(node)
        elif node.op in ("call_function", "call_method"):
            tr.env[node] = tr.call(node)
        else:
            raise tr.error(node, f"unsupported construct {node.op} {node.target}")
    raise VariantError(f"{_where(fn, None)}: {fn.__name__} returns nothing")


def trace_variant(score_mod=None, mask_mod=None, normalizer="softmax", name="traced"):
    """The text of a `cuir.variant` computing score_mod / mask_mod."""
    if normalizer not in ("softmax", "sigmoid"):
        raise VariantError(f"unknown normalizer {normalizer!r}; expected softmax or sigmoid")
    if score_mod is None and mask_mod is None and normalizer == "softmax":
        raise VariantError("a variant needs a score_mod, a mask_mod or the sigmoid normaliser")
    params, order, mods = {}, [], []
    if score_mod is not None:
        em, out = _trace(score_mod, ["score", "b", "h", "q_idx", "kv_idx"],
                         ["f32", "index", "index", "index", "index"], params, order)
        if out[1] != "f32":
            out = em.to_f32(out)
        mods.append(("score_mod", "%score: f32, ", em, out, "f32"))
    if mask_mod is not None:
        em, out = _trace(mask_mod, ["b", "h", "q_idx", "kv_idx"], ["index"] * 4, params, order)
        if out[1] != "i1":
            raise VariantError(f"{_where(mask_mod, None)}: mask_mod must return a comparison (bool), got {out[1]}")
        mods.append(("mask_mod", "", em, out, "i1"))
    sig = []
    for pname in order:
        ty, extent, tensor = params[pname]
        values = ",".join(repr(float(x)) if tensor.is_floating_point() else str(int(x))
                          for x in tensor.flatten().tolist())
        sig.append(f'%{pname}: {ty} {{cuir.param = "{pname}", cuir.extent = "{extent}", '
                   f'cuir.default = "{values}"}}')
    if "Nkv" in params:
        sig.append('%Nkv: index {cuir.param = "Nkv"}')
    lines = [f"cuir.variant @{name}({', '.join(sig)}) normalizer {normalizer} {{"]
    for kind, first, em, out, ty in mods:
        lines.append(f"  cuir.{kind} {{")
        lines.append(f"  ^bb0({first}%b: index, %h: index, %q_idx: index, %kv_idx: index):")
        lines.extend(em.lines)
        lines.append(f"    cuir.yield {out[0]} : {ty}")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    import argparse
    import runpy
    ap = argparse.ArgumentParser(description="Trace score_mod/mask_mod of a Python file into a cuir.variant")
    ap.add_argument("spec", help="file defining score_mod and/or mask_mod (optional NORMALIZER, NAME)")
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args(argv)
    ns = runpy.run_path(args.spec)
    try:
        text = trace_variant(ns.get("score_mod"), ns.get("mask_mod"), ns.get("NORMALIZER", "softmax"),
                             ns.get("NAME", "traced"))
    except VariantError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
