"""Tracing score_mod / mask_mod into the text of a cuir.variant."""
import inspect
import itertools

import torch

from . import ops
from .builder import Builder
from .captures import Captures
from .errors import VariantError, definition_location, traceback_location
from .literals import NameTable, dense_attr, identifier
from .symbolic import Sym
from .verify import verify as verify_text

ARGUMENTS = {"score_mod": ("score", "b", "h", "q_idx", "kv_idx"),
             "mask_mod": ("b", "h", "q_idx", "kv_idx")}
NORMALIZERS = ("softmax", "sigmoid")


class Traced:
    """A traced variant: its text, and its parameters with their values."""

    def __init__(self, text, params, verified, captures=None):
        self.text, self.verified = text, verified
        self.params = [(p.name, p.shape, p.dtype) for p in params]
        self.values = {p.name: p.value for p in params}
        # Captures.sources and Captures.baked: what a reuse of the text must find unchanged.
        self.sources = dict(captures.sources) if captures else {}
        self.baked = list(captures.baked) if captures else []


def _expected(kind):
    return f"({', '.join(ARGUMENTS[kind])})"


def check_signature(fn, kind):
    """FlexAttention calls fn with the positional arguments of `kind`: can it take them?"""
    if not callable(fn):
        raise VariantError(f"{kind} must be a function, got {type(fn).__name__}")
    if isinstance(fn, torch.nn.Module):  # called through forward
        fn = fn.forward
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin: nothing to check
        return
    where, want = definition_location(fn), len(ARGUMENTS[kind])
    fn_name = getattr(fn, "__name__", type(fn).__name__)
    label = kind if fn_name == kind else f"{kind} {fn_name}"
    for p in params:
        if p.kind == p.VAR_POSITIONAL:
            raise VariantError(f"{where}: {label} takes *{p.name}: name its {want} "
                               f"arguments {_expected(kind)}")
        if p.kind == p.KEYWORD_ONLY and p.default is p.empty:
            raise VariantError(f"{where}: {label} has the keyword-only argument '{p.name}' without a "
                               f"default: FlexAttention passes {_expected(kind)} by position only")
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    if len(required) > want or len(positional) < want:
        got = ", ".join(p.name for p in positional)
        raise VariantError(f"{where}: {label} takes ({got}): it must take the {want} "
                           f"arguments {_expected(kind)}")


def _arguments(builder, kind):
    """The traced arguments: score (f32) and b, h, q_idx, kv_idx (int32, as FlexAttention)."""
    def coordinate(name):
        cast = f"arith.index_cast %{name} : index to i32"
        return Sym(builder, torch.int32, make=lambda: builder.emit(cast), index=f"%{name}")
    args = [coordinate(n) for n in ("b", "h", "q_idx", "kv_idx")]
    if kind == "score_mod":
        args.insert(0, Sym(builder, torch.float32, name="%score"))
    return args


def _result(fn, kind, out):
    """The SSA name and type the region yields."""
    where = definition_location(fn)
    what = "the new score" if kind == "score_mod" else "whether the pair is visible (bool)"
    if out is None:
        raise VariantError(f"{where}: {kind} returned None: it must return {what}")
    if isinstance(out, (str, bytes, tuple, list, dict, set)):  # not one value: named at the function
        raise VariantError(f"{where}: {kind} returned a {type(out).__name__}: it must return {what}")
    out = ops.operand(out)
    if kind == "mask_mod":
        dtype = out.dtype if isinstance(out, Sym) else type(out)
        if dtype not in (torch.bool, bool):
            raise VariantError(f"{where}: mask_mod must return a bool, got {dtype}")
        return ops.value_as(out, torch.bool), "i1"
    return ops.value_as(out, torch.float32), "f32"


def trace_mod(fn, kind, builder, captures):
    """Run fn on traced arguments; the builder receives its body."""
    check_signature(fn, kind)
    ops.active.builder, ops.active.captures = builder, captures
    try:
        return _result(fn, kind, fn(*_arguments(builder, kind)))
    except VariantError:
        raise
    except Exception as e:  # the user's code failed on traced values
        where = traceback_location(e.__traceback__) or definition_location(fn)
        raise VariantError(f"{where}: {type(e).__name__}: {e}") from None
    finally:
        ops.active.builder = ops.active.captures = None


def _signature(params, defaults):
    parts = []
    for p in params:
        attrs = [f'cuir.param = "{p.name}"']
        if defaults:
            attrs.append(f"cuir.default = {dense_attr(p.value)}")
        parts.append(f"%{p.name}: {p.memref_type} {{{', '.join(attrs)}}}")
    return ", ".join(parts)


def assemble(name, normalizer, params, regions, defaults):
    lines = [f"cuir.variant @{identifier(name)}({_signature(params, defaults)}) "
             f"normalizer {normalizer} {{"]
    for kind, builder, (result, ty) in regions:
        score = "%score: f32, " if kind == "score_mod" else ""
        lines.append(f"  cuir.{kind} {{")
        lines.append(f"  ^bb0({score}%b: index, %h: index, %q_idx: index, %kv_idx: index):")
        lines.extend(builder.lines)
        lines.append(f"    cuir.yield {result} : {ty}")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def trace(score_mod=None, mask_mod=None, normalizer="softmax", name="traced",
          defaults=True, verify=True):
    """Trace score_mod / mask_mod into a Traced (text, params, values)."""
    if normalizer not in NORMALIZERS:
        raise VariantError(f"unknown normalizer {normalizer!r}; expected softmax or sigmoid")
    if score_mod is None and mask_mod is None and normalizer == "softmax":
        raise VariantError("a variant needs a score_mod, a mask_mod or the sigmoid normaliser")
    counter = itertools.count()
    captures = Captures([f for f in (score_mod, mask_mod) if f is not None], NameTable())
    regions = []
    for kind, fn in (("score_mod", score_mod), ("mask_mod", mask_mod)):
        if fn is not None:
            builder = Builder(counter)
            regions.append((kind, builder, trace_mod(fn, kind, builder, captures)))
    text = assemble(name, normalizer, captures.params, regions, defaults)
    verified = verify_text(text) if verify else False
    return Traced(text, captures.params, verified, captures)
