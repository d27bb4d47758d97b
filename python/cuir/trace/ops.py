"""The IR of each supported operation, with PyTorch's dtype semantics.

Every operation asks torch for the dtype of its result, on one-element
samples of its operands' dtypes (so promotion, with Python scalars and 0-d
tensors, and the combinations torch refuses, are exactly torch's), converts
its operands to that dtype and writes the op at its IR type."""
import functools
import operator
import threading

import numpy as np
import torch

from .builder import convert, python_value, to_index
from .errors import located
from .literals import IR_TYPE, int_fits


class _Active(threading.local):
    """The builder and the captured tensors of the mod being traced (per thread: threads may trace at once)."""
    builder = None
    captures = None


active = _Active()


def _sym(dtype, name, zero_dim=False):
    from .symbolic import Sym
    return Sym(active.builder, dtype, name=name, zero_dim=zero_dim)


def constant(value, dtype, zero_dim=True):
    """A constant of `dtype`, written where first used."""
    from .symbolic import Sym
    value = python_value(value, dtype)
    builder = active.builder
    return Sym(builder, dtype, make=lambda: builder.constant(value, IR_TYPE[dtype]),
               const=value, zero_dim=zero_dim)


def _is_sym(x):
    from .symbolic import Sym
    return isinstance(x, Sym)


def _scalar(x):
    """A Python or NumPy scalar as a Python number, else None."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x)
    return None


def _describe(x):
    if isinstance(x, torch.Tensor):
        name = active.captures.name_of(x)
        return f"captured tensor '{name}' of shape {list(x.shape)}"
    return type(x).__name__


def operand(x):
    """A Sym or a Python number, from anything an operation received."""
    if _is_sym(x):
        return x
    value = _scalar(x)
    if value is not None:
        return value
    if isinstance(x, torch.Tensor) and x.dim() == 0:
        check_dtype(x.dtype, "a captured 0-d tensor")
        return constant(_baked(x, ()), x.dtype)
    if isinstance(x, torch.Tensor):
        raise located(f"{_describe(x)} used as a value: index it by expressions of "
                      "b, h, q_idx, kv_idx down to one element")
    from .symbolic import Indexed
    if isinstance(x, Indexed):
        raise located(f"captured tensor '{active.captures.name_of(x.tensor)}' indexed in "
                      f"{len(x.prefix)} of its {x.tensor.dim()} dimensions")
    raise located(f"unsupported operand of type {type(x).__name__}")


def check_dtype(dtype, what):
    if dtype not in IR_TYPE:
        raise located(f"{what} has dtype {dtype}; supported: bool, int32, int64, float16, "
                      "bfloat16, float32 (the kernel computes in float32 and int32/int64)")


_SAMPLE_DTYPE = {torch.float16: torch.bfloat16}  # CPU torch lacks many float16 kernels


def _sample(x):
    if not _is_sym(x):
        return x
    shape = () if x.zero_dim else (1,)
    return torch.ones(shape, dtype=_SAMPLE_DTYPE.get(x.dtype, x.dtype))


def _unsample(dtype, args):
    dtypes = {a.dtype for a in args if _is_sym(a)}
    if dtype == torch.bfloat16 and torch.float16 in dtypes and torch.bfloat16 not in dtypes:
        return torch.float16
    return dtype


def result_dtype(what, fn, args, kwargs=None):
    """The dtype torch gives fn(*args), int32 widened where a constant needs int64."""
    try:
        out = fn(*[_sample(a) for a in args],
                 **{k: _sample(v) for k, v in (kwargs or {}).items()})
    except Exception as e:  # torch refuses this combination of dtypes
        raise located(f"{what}: torch rejects it: {e}") from None
    dtype = out if isinstance(out, torch.dtype) else out.dtype
    dtype = _unsample(dtype, list(args) + list((kwargs or {}).values()))
    check_dtype(dtype, what)
    return widen(dtype, list(args) + list((kwargs or {}).values()))


def widen(dtype, args):
    """int64 where an int32 operation has a constant beyond int32: never narrowed."""
    if dtype not in (torch.int32, torch.int64):
        return dtype
    for a in args:
        value = a.const if _is_sym(a) else a
        if isinstance(value, int) and not isinstance(value, bool):
            if not int_fits(value, "i64"):
                raise located(f"the constant {value} does not fit int64")
            if not int_fits(value, "i32"):
                dtype = torch.int64
    return dtype


def value_as(x, dtype):
    """The SSA name of operand x converted to dtype."""
    ir = IR_TYPE[dtype]
    if _is_sym(x):
        if x.const is not None:
            return active.builder.constant(python_value(x.const, dtype), ir)
        return convert(active.builder, x.name, x.ir, ir)
    return active.builder.constant(python_value(x, dtype), ir)


def emit(op, dtype):
    return _sym(dtype, active.builder.emit(op))


# ---- binary arithmetic --------------------------------------------------------

_PYTHON_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
               "truediv": operator.truediv, "floordiv": operator.floordiv,
               "mod": operator.mod, "and": operator.and_, "or": operator.or_,
               "xor": operator.xor, "lshift": operator.lshift, "rshift": operator.rshift,
               "maximum": torch.maximum, "minimum": torch.minimum,
               "lt": operator.lt, "le": operator.le, "gt": operator.gt,
               "ge": operator.ge, "eq": operator.eq, "ne": operator.ne}
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
           "mod": "%", "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
           "maximum": "maximum", "minimum": "minimum", "lt": "<", "le": "<=", "gt": ">",
           "ge": ">=", "eq": "==", "ne": "!="}
_FLOAT_OPS = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf",
              "truediv": "arith.divf", "maximum": "arith.maximumf",
              "minimum": "arith.minimumf"}
_INT_OPS = {"add": "arith.addi", "sub": "arith.subi", "mul": "arith.muli",
            "floordiv": "arith.floordivsi", "and": "arith.andi", "or": "arith.ori",
            "xor": "arith.xori", "maximum": "arith.maxsi", "minimum": "arith.minsi"}
_BOOL_OPS = {"add": "arith.ori", "mul": "arith.andi", "and": "arith.andi",
             "or": "arith.ori", "xor": "arith.xori", "maximum": "arith.ori",
             "minimum": "arith.andi"}
# cmpi predicate for signed ints, for i1 (unsigned: true > false), cmpf predicate.
_PREDICATES = {"lt": ("slt", "ult", "olt"), "le": ("sle", "ule", "ole"),
               "gt": ("sgt", "ugt", "ogt"), "ge": ("sge", "uge", "oge"),
               "eq": ("eq", "eq", "oeq"), "ne": ("ne", "ne", "une")}


def binary(op, a, b):
    """a <op> b for Syms / numbers, as torch computes it."""
    a, b = operand(a), operand(b)
    what = f"'{_SYMBOL[op]}'"
    if op in _PREDICATES:
        return compare(op, a, b, what)
    dtype = result_dtype(what, _PYTHON_OPS[op], [a, b])
    x, y = value_as(a, dtype), value_as(b, dtype)
    ir = IR_TYPE[dtype]
    if ir == "f32":
        if op == "mod":
            return _floor_mod(x, y, ir, dtype)
        if op not in _FLOAT_OPS:  # floordiv: torch rounds (a - fmod(a, b)) / b, then corrects it
            raise located(f"{what} of floating-point values is not supported (torch computes it from fmod, "
                          "which differs from torch.floor(a / b) where a / b rounds to an integer); write "
                          "torch.floor(a / b) if that is meant")
        return emit(f"{_FLOAT_OPS[op]} {x}, {y} : f32", dtype)
    if ir == "i1":
        if op not in _BOOL_OPS:
            raise located(f"{what} of bool values is not supported")
        return emit(f"{_BOOL_OPS[op]} {x}, {y} : i1", dtype)
    if op == "mod":
        return _floor_mod(x, y, ir, dtype)
    if op in ("lshift", "rshift"):
        return _shift(op, x, y, ir, dtype)
    return emit(f"{_INT_OPS[op]} {x}, {y} : {ir}", dtype)


def compare(op, a, b, what):
    result_dtype(what, _PYTHON_OPS[op], [a, b])  # torch accepts the comparison
    dtype = result_dtype(what, torch.result_type, [a, b])
    x, y = value_as(a, dtype), value_as(b, dtype)
    ir = IR_TYPE[dtype]
    signed, unsigned, ordered = _PREDICATES[op]
    if ir == "f32":
        return emit(f"arith.cmpf {ordered}, {x}, {y} : f32", torch.bool)
    pred = unsigned if ir == "i1" else signed
    return emit(f"arith.cmpi {pred}, {x}, {y} : {ir}", torch.bool)


def _floor_mod(x, y, ir, dtype):
    """Python's and torch's a % b (the sign of b): the remainder with a's sign (remsi; of floats remf, C's
    fmod, exact), plus b where it is not 0 and its sign is not b's, as torch computes it."""
    bld = active.builder
    f = ir == "f32"
    zero = bld.constant(0.0 if f else 0, ir)
    ne, lt = ("arith.cmpf une", "arith.cmpf olt") if f else ("arith.cmpi ne", "arith.cmpi slt")
    rem = bld.emit(f"arith.rem{'f' if f else 'si'} {x}, {y} : {ir}")
    nonzero = bld.emit(f"{ne}, {rem}, {zero} : {ir}")
    rem_neg = bld.emit(f"{lt}, {rem}, {zero} : {ir}")
    div_neg = bld.emit(f"{lt}, {y}, {zero} : {ir}")
    signs_differ = bld.emit(f"arith.xori {rem_neg}, {div_neg} : i1")
    fix = bld.emit(f"arith.andi {nonzero}, {signs_differ} : i1")
    fixed = bld.emit(f"arith.add{'f' if f else 'i'} {rem}, {y} : {ir}")
    return emit(f"arith.select {fix}, {fixed}, {rem} : {ir}", dtype)


def _fmod(a, b):
    """torch.fmod: the remainder with the dividend's sign (C's fmod / %): arith.remf, arith.remsi."""
    a, b = operand(a), operand(b)
    what = "torch.fmod"
    dtype = result_dtype(what, torch.fmod, [a, b])
    x, y, ir = value_as(a, dtype), value_as(b, dtype), IR_TYPE[dtype]
    if ir == "i1":
        raise located(f"{what} of bool values is not supported")
    return emit(f"arith.rem{'f' if ir == 'f32' else 'si'} {x}, {y} : {ir}", dtype)


def _shift(op, x, y, ir, dtype):
    """x << y / x >> y, defined for every y: 0 (<<) or the sign (>>) beyond the width."""
    bld = active.builder
    width = 32 if ir == "i32" else 64
    zero, bits = bld.constant(0, ir), bld.constant(width, ir)
    in_range = bld.emit(f"arith.andi {bld.emit(f'arith.cmpi sge, {y}, {zero} : {ir}')}, "
                        f"{bld.emit(f'arith.cmpi slt, {y}, {bits} : {ir}')} : i1")
    if op == "lshift":
        shifted, beyond = bld.emit(f"arith.shli {x}, {y} : {ir}"), zero
    else:
        shifted = bld.emit(f"arith.shrsi {x}, {y} : {ir}")
        beyond = bld.emit(f"arith.shrsi {x}, {bld.constant(width - 1, ir)} : {ir}")
    return emit(f"arith.select {in_range}, {shifted}, {beyond} : {ir}", dtype)


def logical(op, a, b):
    """torch.logical_and / or / xor: both as bool first."""
    x, y = value_as(operand(a), torch.bool), value_as(operand(b), torch.bool)
    return emit(f"{_BOOL_OPS[op]} {x}, {y} : i1", torch.bool)


# ---- unary --------------------------------------------------------------------

_MATH = {"exp": "math.exp", "exp2": "math.exp2", "log": "math.log", "log2": "math.log2",
         "log1p": "math.log1p", "expm1": "math.expm1", "sqrt": "math.sqrt", "rsqrt": "math.rsqrt",
         "tanh": "math.tanh", "sin": "math.sin", "cos": "math.cos", "erf": "math.erf",
         "floor": "math.floor", "ceil": "math.ceil", "trunc": "math.trunc", "fix": "math.trunc"}
_TORCH_UNARY = {"neg": operator.neg, "abs": torch.abs, "sign": torch.sign,
                "invert": operator.invert, "sigmoid": torch.sigmoid,
                "square": torch.square, "reciprocal": torch.reciprocal,
                "relu": torch.relu, "isnan": torch.isnan, "isinf": torch.isinf,
                "isfinite": torch.isfinite}


def unary(op, a):
    a = operand(a)
    fn = _TORCH_UNARY.get(op) or getattr(torch, op)
    dtype = result_dtype(f"{op}()", fn, [a])
    if op in ("isnan", "isinf", "isfinite"):
        return _classify(op, a)
    x, ir = value_as(a, dtype), IR_TYPE[dtype]
    if op in _MATH:
        if ir != "f32":  # floor / ceil of an integer
            return _sym(dtype, x)
        return emit(f"{_MATH[op]} {x} : f32", dtype)
    return _UNARY_IR[op](x, ir, dtype)


def _neg(x, ir, dtype):
    if ir == "f32":
        return emit(f"arith.negf {x} : f32", dtype)
    return emit(f"arith.subi {active.builder.constant(0, ir)}, {x} : {ir}", dtype)


def _abs(x, ir, dtype):
    return emit(f"math.abs{'f' if ir == 'f32' else 'i'} {x} : {ir}", dtype)


def _sign(x, ir, dtype):
    """(x > 0) - (x < 0) as selects: 0 for NaN and zeros, as torch.sign."""
    if ir == "i1":
        return _sym(dtype, x)
    bld, f = active.builder, ir == "f32"
    zero, one, minus = (bld.constant(v, ir) for v in ((0.0, 1.0, -1.0) if f else (0, 1, -1)))
    cmp = "arith.cmpf ogt" if f else "arith.cmpi sgt"
    positive = bld.emit(f"{cmp}, {x}, {zero} : {ir}")
    negative = bld.emit(f"{cmp}, {zero}, {x} : {ir}")
    low = bld.emit(f"arith.select {negative}, {minus}, {zero} : {ir}")
    return emit(f"arith.select {positive}, {one}, {low} : {ir}", dtype)


def _invert(x, ir, dtype):
    ones = active.builder.constant(True if ir == "i1" else -1, ir)
    return emit(f"arith.xori {x}, {ones} : {ir}", dtype)


def _sigmoid(x, ir, dtype):
    bld = active.builder
    one = bld.constant(1.0, "f32")
    e = bld.emit(f"math.exp {bld.emit(f'arith.negf {x} : f32')} : f32")
    return emit(f"arith.divf {one}, {bld.emit(f'arith.addf {one}, {e} : f32')} : f32", dtype)


def _square(x, ir, dtype):
    return emit(f"{'arith.mulf' if ir == 'f32' else _INT_OPS['mul']} {x}, {x} : {ir}", dtype)


def _reciprocal(x, ir, dtype):
    return emit(f"arith.divf {active.builder.constant(1.0, 'f32')}, {x} : f32", dtype)


def _relu(x, ir, dtype):
    zero = active.builder.constant(0.0 if ir == "f32" else 0, ir)
    op = "arith.maximumf" if ir == "f32" else "arith.maxsi"
    return emit(f"{op} {x}, {zero} : {ir}", dtype)


_UNARY_IR = {"neg": _neg, "abs": _abs, "sign": _sign, "invert": _invert,
             "sigmoid": _sigmoid, "square": _square, "reciprocal": _reciprocal,
             "relu": _relu}


def _classify(op, a):
    if not (_is_sym(a) and a.dtype.is_floating_point):
        return constant(op == "isfinite", torch.bool, zero_dim=False)
    bld, x = active.builder, value_as(a, torch.float32)
    if op == "isnan":
        return emit(f"arith.cmpf uno, {x}, {x} : f32", torch.bool)
    magnitude = bld.emit(f"math.absf {x} : f32")
    inf = bld.constant(float("inf"), "f32")
    pred = "oeq" if op == "isinf" else "olt"
    return emit(f"arith.cmpf {pred}, {magnitude}, {inf} : f32", torch.bool)


def logical_not(a):
    x = value_as(operand(a), torch.bool)
    return emit(f"arith.xori {x}, {active.builder.constant(True, 'i1')} : i1", torch.bool)


# ---- where, clamp, pow, casts ---------------------------------------------------

def where(cond, a, b):
    cond, a, b = operand(cond), operand(a), operand(b)
    dtype = result_dtype("torch.where", torch.where, [cond, a, b])
    c = value_as(cond, torch.bool)
    x, y = value_as(a, dtype), value_as(b, dtype)
    return emit(f"arith.select {c}, {x}, {y} : {IR_TYPE[dtype]}", dtype)


def clamp(x, low=None, high=None):
    x = operand(x)
    low = None if low is None else operand(low)
    high = None if high is None else operand(high)
    dtype = result_dtype("clamp", torch.clamp, [x], {"min": low, "max": high})
    out = _sym(dtype, value_as(x, dtype))
    if low is not None:
        out = binary("maximum", out, _as_dtype(low, dtype))
    if high is not None:
        out = binary("minimum", out, _as_dtype(high, dtype))
    return out


def _as_dtype(x, dtype):
    return _sym(dtype, value_as(x, dtype))


# torch's CPU pow writes these exponents as cheaper exact forms.
_FLOAT_POWERS = {0.5: "sqrt", -0.5: "rsqrt", 2.0: "square", -1.0: "reciprocal"}


def power(base, exponent):
    base, exponent = operand(base), operand(exponent)
    dtype = result_dtype("'**'", torch.pow, [base, exponent])
    e = exponent.const if _is_sym(exponent) else exponent
    if _is_sym(base) and base.const is None and e is not None and not _is_sym(e):
        return _power_by_constant(base, e, dtype)
    b = base.const if _is_sym(base) else base
    if b is not None and IR_TYPE[dtype] == "f32":
        x, y = value_as(base, dtype), value_as(exponent, dtype)
        return emit(f"math.powf {x}, {y} : f32", dtype)
    raise located("'**' needs a constant exponent (or a constant base with a "
                  "floating-point result)")


def _power_by_constant(base, e, dtype):
    x, ir = value_as(base, dtype), IR_TYPE[dtype]
    if ir == "f32":
        if float(e) == 0.0:
            return constant(1.0, dtype, zero_dim=False)
        if float(e) == 1.0:
            return _sym(dtype, x)
        if float(e) in _FLOAT_POWERS:
            return unary(_FLOAT_POWERS[float(e)], _sym(dtype, x))
        return emit(f"math.powf {x}, {active.builder.constant(e, 'f32')} : f32", dtype)
    return _int_power(_sym(dtype, x), int(e), dtype)


def _int_power(x, e, dtype):
    """x ** e for an integer e >= 0, by squaring (wrapping, as torch)."""
    result, square = constant(1, dtype, zero_dim=False), x
    while e:
        if e & 1:
            result = binary("mul", result, square)
        e >>= 1
        if e:
            square = binary("mul", square, square)
    return result


_CAST_METHODS = {"float": torch.float32, "int": torch.int32, "long": torch.int64,
                 "bool": torch.bool, "half": torch.float16, "bfloat16": torch.bfloat16,
                 "double": torch.float64}


def cast(x, dtype):
    """x.to(dtype)."""
    x = operand(x)
    if not isinstance(dtype, torch.dtype):
        raise located(f".to() of {dtype!r}: give a dtype")
    src = x.dtype if _is_sym(x) else None
    if dtype not in IR_TYPE or (dtype in (torch.float16, torch.bfloat16) and dtype != src):
        raise located(f".to({dtype}) is not supported: scores are computed in float32; "
                      "use float32, int32, int64 or bool")
    return _sym(dtype, value_as(x, dtype), zero_dim=_is_sym(x) and x.zero_dim)


def to(x, *args, **kwargs):
    """Tensor.to(dtype) / .to(other) / .to(device, dtype); devices are ignored."""
    dtype = kwargs.get("dtype")
    for a in args:
        if isinstance(a, torch.dtype):
            dtype = a
        elif _is_sym(a) or isinstance(a, torch.Tensor):
            dtype = a.dtype
        elif not isinstance(a, (str, int, torch.device)) or isinstance(a, bool):
            raise located(f".to({a!r}): give a dtype, a tensor or a device")
    if dtype is None:
        return operand(x)
    return cast(x, dtype)


_LEGACY_TYPES = {"FloatTensor": torch.float32, "DoubleTensor": torch.float64, "HalfTensor": torch.float16,
                 "BFloat16Tensor": torch.bfloat16, "LongTensor": torch.int64, "IntTensor": torch.int32,
                 "ShortTensor": torch.int16, "CharTensor": torch.int8, "ByteTensor": torch.uint8,
                 "BoolTensor": torch.bool}


def type_(x, dtype=None, non_blocking=False, **kwargs):
    """Tensor.type(dtype): a dtype, a tensor type (torch.LongTensor) or its name ('torch.IntTensor')."""
    dtype = kwargs.get("dst_type", dtype)
    if dtype is None:
        raise located(".type() without a type gives the type's name, which a kernel does not compute")
    if isinstance(dtype, torch.dtype):
        return cast(x, dtype)
    name = dtype if isinstance(dtype, str) else f"{getattr(dtype, '__module__', '')}.{getattr(dtype, '__name__', '')}"
    module, _, short = name.rpartition(".")
    if module not in ("torch", "torch.cuda") or short not in _LEGACY_TYPES:
        raise located(f".type({dtype!r}): not a tensor type")
    return cast(x, _LEGACY_TYPES[short])


def _scaled(op):
    """torch.add / torch.sub with alpha: a <op> alpha * b."""
    def apply(a, b, *, alpha=1):
        if alpha != 1:
            b = binary("mul", b, alpha) if _is_sym(b) else b * alpha
        return binary(op, a, b)
    return apply


def _where_method(self, condition, other):
    """Tensor.where(condition, other): self where condition holds, else other."""
    return where(condition, self, other)


def _masked_fill(self, mask, value):
    """Tensor.masked_fill(mask, value): value where mask holds, else self."""
    return where(mask, value, self)


def like(x, value, dtype=None, zero_dim=False):
    """full_like / zeros_like / new_full and kin: a constant."""
    x = operand(x)
    dtype = dtype or (x.dtype if _is_sym(x) else torch.get_default_dtype())
    check_dtype(dtype, "a constant tensor")
    if dtype.is_floating_point and _is_finite(value) and not _is_finite(python_value(value, dtype)):
        raise located(f"the constant {value} does not fit {dtype} (torch rejects it)")
    return constant(value, dtype, zero_dim=zero_dim)


def _is_finite(value):
    return abs(float(value)) != float("inf") and value == value


def new_full(x, size, value, dtype=None, **_):
    if tuple(size) != ():
        raise located(f"a constant tensor of shape {list(size)}: only 0-d ones (size ())")
    return like(x, value, dtype, zero_dim=True)


# ---- captured tensors -----------------------------------------------------------

def index_tuple(index):
    return tuple(index) if isinstance(index, tuple) else (index,)


def load(tensor, index):
    """tensor[i0, ..., ik] of a captured tensor: a load, or a constant if constant."""
    from .symbolic import Indexed
    name = active.captures.name_of(tensor)
    if len(index) > tensor.dim():
        raise located(f"captured tensor '{name}' of shape {list(tensor.shape)} indexed "
                      f"with {len(index)} indices")
    check_dtype(tensor.dtype, f"captured tensor '{name}'")
    index = [_checked_index(i, d, name, tensor) for d, i in enumerate(index)]
    if len(index) < tensor.dim():
        return Indexed(tensor, tuple(index))
    if all(isinstance(i, int) for i in index):
        return constant(_baked(tensor, index), tensor.dtype)
    param = active.captures.param(tensor)
    bld = active.builder
    names = [_index_name(i, tensor.shape[d]) for d, i in enumerate(index)]
    elt = bld.emit(f"memref.load %{param.name}[{', '.join(names)}] : {param.memref_type}")
    if tensor.dtype in (torch.float16, torch.bfloat16):
        src = "f16" if tensor.dtype == torch.float16 else "bf16"
        elt = bld.emit(f"arith.extf {elt} : {src} to f32")
    return _sym(tensor.dtype, elt)


def _baked(tensor, index):
    """The value of tensor[index], which the trace writes as a constant of the kernel. Refused for a tensor
    that requires grad while autograd records: as a constant it would not be trained."""
    if tensor.requires_grad and torch.is_grad_enabled():
        name = active.captures.name_of(tensor)
        what = f"captured 0-d tensor '{name}'" if tensor.dim() == 0 else \
            f"element {list(index)} of captured tensor '{name}'"
        raise located(f"{what} requires grad, but a 0-d tensor or an element at a constant index is a constant "
                      "of the kernel and would not be trained: give the tensor a dimension indexed by b, h, "
                      "q_idx or kv_idx (a trained tensor's gradient is computed), or detach it")
    value = tensor[tuple(index)].item()
    active.captures.bake(tensor, index, value)
    return value


def _checked_index(i, dim, name, tensor):
    if _is_sym(i):
        if i.dtype not in (torch.int32, torch.int64):
            raise located(f"captured tensor '{name}' indexed by a {i.dtype} value: "
                          "indices must be integers (boolean masks are not supported)")
        if i.const is None:
            return i
        value = i.const
    else:
        value = _scalar(i)
    if isinstance(value, int) and not isinstance(value, bool):
        size = tensor.shape[dim]
        if not -size <= value < size:
            raise located(f"index {value} of captured tensor '{name}' is outside [-{size}, {size})")
        return value % size  # torch: a negative index counts from the end
    raise located(f"captured tensor '{name}' indexed by {type(i).__name__}: "
                  "only integer expressions of b, h, q_idx, kv_idx (no slices, None, ...)")


def _index_name(i, size):
    """The `index` operand of a load along a dimension of `size`: b, h, q_idx, kv_idx and constants as
    they are, any other value i wrapped as torch indexes, i + size where i < 0."""
    bld = active.builder
    if isinstance(i, int):
        return bld.constant(i, "index")
    if i.index is not None:
        return i.index
    zero, n = bld.constant(0, i.ir), bld.constant(size, i.ir)
    negative = bld.emit(f"arith.cmpi slt, {i.name}, {zero} : {i.ir}")
    shifted = bld.emit(f"arith.addi {i.name}, {n} : {i.ir}")
    wrapped = bld.emit(f"arith.select {negative}, {shifted}, {i.name} : {i.ir}")
    return to_index(bld, wrapped, i.ir)


# ---- dispatch -------------------------------------------------------------------

def _max_min(op):
    def handler(a, b=None, *rest, **kwargs):
        if b is None and not rest and not kwargs:
            return operand(a)
        if rest or kwargs or isinstance(b, int):
            raise located(f"torch.{op}(x, dim): reductions are not supported; "
                          f"torch.{op}imum(a, b) is")
        return binary(f"{op}imum", a, b)
    return handler


def _div(a, b, rounding_mode=None):
    if rounding_mode is None:
        return binary("truediv", a, b)
    if rounding_mode == "floor":
        return binary("floordiv", a, b)
    if rounding_mode == "trunc":
        return _trunc_div(a, b)
    raise located(f"torch.div(rounding_mode={rounding_mode!r}): rounding_mode is None, 'floor' or 'trunc'")


def _trunc_div(a, b):
    """a / b rounded toward zero: arith.divsi on integers, truncf of the quotient on floats, as torch."""
    a, b = operand(a), operand(b)
    what = "torch.div(rounding_mode='trunc')"
    dtype = result_dtype(what, lambda x, y: torch.div(x, y, rounding_mode="trunc"), [a, b])
    x, y, ir = value_as(a, dtype), value_as(b, dtype), IR_TYPE[dtype]
    if ir == "f32":
        quotient = emit(f"arith.divf {x}, {y} : f32", dtype)
        return emit(f"math.trunc {value_as(quotient, dtype)} : f32", dtype)
    if ir == "i1":
        raise located(f"{what} of bool values is not supported")
    return emit(f"arith.divsi {x}, {y} : {ir}", dtype)


def _round(x, decimals=0):
    """torch.round: halves to even (math.roundeven); decimals other than 0 are not supported."""
    if decimals != 0:
        raise located("torch.round(decimals=...) is not supported: only decimals=0 (halves to even)")
    a = operand(x)
    dtype = result_dtype("round()", torch.round, [a])
    value, ir = value_as(a, dtype), IR_TYPE[dtype]
    if ir != "f32":  # an integer is its own rounding
        return _sym(dtype, value)
    return emit(f"math.roundeven {value} : f32", dtype)


def _reflected(op):
    return lambda a, b: binary(op, b, a)


def _clamp(x, min=None, max=None):  # noqa: A002 (torch's names)
    return clamp(x, min, max)


def _getitem(x, index):
    if isinstance(x, torch.Tensor):
        return load(x, index_tuple(index))
    return operand(x)[index]


HANDLERS = {
    "getitem": _getitem, "where": where, "clamp": _clamp, "clip": _clamp,
    "clamp_min": lambda x, m: clamp(x, m, None), "clamp_max": lambda x, m: clamp(x, None, m),
    "add": _scaled("add"), "sub": _scaled("sub"),
    "pow": power, "rpow": lambda a, b: power(b, a), "div": _div, "true_divide": _div, "round": _round,
    "floor_divide": lambda a, b: binary("floordiv", a, b),
    "remainder": lambda a, b: binary("mod", a, b), "fmod": _fmod,
    "maximum": lambda a, b: binary("maximum", a, b),
    "minimum": lambda a, b: binary("minimum", a, b),
    "max": _max_min("max"), "min": _max_min("min"),
    "logical_and": lambda a, b: logical("and", a, b),
    "logical_or": lambda a, b: logical("or", a, b),
    "logical_xor": lambda a, b: logical("xor", a, b),
    "logical_not": logical_not, "bitwise_not": lambda a: unary("invert", a),
    "negative": lambda a: unary("neg", a), "absolute": lambda a: unary("abs", a),
    "to": to, "type": type_,
    "full_like": lambda x, v, dtype=None, **_: like(x, v, dtype),
    "zeros_like": lambda x, dtype=None, **_: like(x, 0, dtype),
    "ones_like": lambda x, dtype=None, **_: like(x, 1, dtype),
    "new_full": new_full,
    "new_zeros": lambda x, size, dtype=None, **_: new_full(x, size, 0, dtype),
    "new_ones": lambda x, size, dtype=None, **_: new_full(x, size, 1, dtype),
    "new_tensor": lambda x, v, dtype=None, **_: like(x, v, dtype, zero_dim=True),
    "clone": lambda x, **_: operand(x), "detach": lambda x: operand(x),
    "contiguous": lambda x, **_: operand(x),
}
_ALIASES = {"multiply": "mul", "subtract": "sub", "divide": "div", "greater": "gt",
            "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
            "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor",
            "bitwise_left_shift": "lshift", "bitwise_right_shift": "rshift"}
for _op in _PYTHON_OPS:
    if _op not in ("maximum", "minimum"):
        HANDLERS.setdefault(_op, functools.partial(binary, _op))
        HANDLERS[f"r{_op}"] = _reflected(_op)
for _op in list(_MATH) + list(_TORCH_UNARY):
    HANDLERS.setdefault(_op, functools.partial(unary, _op))
for _op, _dtype in _CAST_METHODS.items():
    HANDLERS[_op] = functools.partial(lambda d, x: cast(x, d), _dtype)


def _handler_name(raw):
    """'__radd__' -> 'radd', 'add' -> 'add', 'multiply' -> 'mul'."""
    if raw.startswith("__") and raw.endswith("__"):
        raw = raw[2:-2]
        if raw.startswith("r") and raw[1:] in _PYTHON_OPS:
            return "r" + _ALIASES.get(raw[1:], raw[1:])
        raw = {"invert": "invert", "neg": "neg", "abs": "abs"}.get(raw, raw)
    return _ALIASES.get(raw, raw)


# Methods whose arguments differ from the torch function of the same name.
METHOD_HANDLERS = {"where": _where_method, "masked_fill": _masked_fill}


def dispatch(raw_name, args, kwargs, shown, is_method=False):
    name = _handler_name(raw_name)
    handler = (METHOD_HANDLERS.get(name) if is_method else None) or HANDLERS.get(name)
    if handler is None:
        raise located(f"unsupported {shown}")
    try:
        return handler(*args, **kwargs)
    except TypeError as e:
        raise located(f"{shown}: {e}") from None


def torch_function(func, args, kwargs):
    """A torch function or Tensor method called with a traced value."""
    raw = getattr(func, "__name__", str(func))
    module = getattr(func, "__module__", None) or "torch"
    is_method = "Tensor" in repr(func) or "_TensorBase" in repr(func)
    shown = f"method .{raw}()" if is_method \
        else f"function {module.replace('torch._C._VariableFunctions', 'torch')}.{raw}"
    return dispatch(raw, args, kwargs, shown, is_method)


def method(sym, attr):
    """sym.attr(...) for a tensor method, bound to sym."""
    name = _handler_name(attr)
    if name not in HANDLERS and name not in METHOD_HANDLERS:
        raise located(f"unsupported method .{attr}()")
    return lambda *args, **kwargs: dispatch(attr, (sym,) + args, kwargs, f"method .{attr}()", is_method=True)
