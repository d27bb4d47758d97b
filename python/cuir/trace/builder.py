"""The lines of one mod body, and conversions between IR types."""
import torch

from .errors import current_location, located
from .literals import IR_TYPE, constant_op, int_fits, literal, location, round_float


class Builder:
    """Appends SSA lines to one region; temporaries are numbered across the variant."""

    def __init__(self, counter, indent="    "):
        self.lines, self.counter, self.indent = [], counter, indent
        self._constants = {}

    def emit(self, op):
        """Appends `op`, located at the user's line that produced it (so that
        cuir-opt's diagnostics name that line)."""
        name = f"%{next(self.counter)}"
        where = current_location()
        loc = f" {location(where)}" if where else ""
        self.lines.append(f"{self.indent}{name} = {op}{loc}")
        return name

    def constant(self, value, ty):
        key = (ty, literal(value, ty))
        if key not in self._constants:
            self._constants[key] = self.emit(constant_op(value, ty))
        return self._constants[key]


def python_value(value, dtype):
    """A Python number converted to `dtype` as torch converts it."""
    if dtype == torch.bool:
        return bool(value)
    if dtype.is_floating_point:
        return round_float(value, "f32")
    if isinstance(value, float):
        value = int(value)  # torch truncates toward zero
    if not int_fits(value, IR_TYPE[dtype]):
        raise located(f"the constant {value} does not fit {dtype}")
    return int(value)


# arith ops converting between IR types: (from, to) -> op text template.
_CONVERSIONS = {
    ("i1", "i32"): "arith.extui {x} : i1 to i32",
    ("i1", "i64"): "arith.extui {x} : i1 to i64",
    ("i1", "f32"): "arith.uitofp {x} : i1 to f32",
    ("i32", "i64"): "arith.extsi {x} : i32 to i64",
    ("i64", "i32"): "arith.trunci {x} : i64 to i32",
    ("i32", "f32"): "arith.sitofp {x} : i32 to f32",
    ("i64", "f32"): "arith.sitofp {x} : i64 to f32",
    ("f32", "i32"): "arith.fptosi {x} : f32 to i32",
    ("f32", "i64"): "arith.fptosi {x} : f32 to i64",
}


def convert(builder, name, src, dst):
    """SSA value `name` of IR type `src` as IR type `dst`."""
    if src == dst:
        return name
    if dst == "i1":  # torch: nonzero is true (NaN included)
        if src == "f32":
            zero = builder.constant(0.0, "f32")
            return builder.emit(f"arith.cmpf une, {name}, {zero} : f32")
        zero = builder.constant(0, src)
        return builder.emit(f"arith.cmpi ne, {name}, {zero} : {src}")
    return builder.emit(_CONVERSIONS[(src, dst)].format(x=name))


def to_index(builder, name, src):
    """An `index` value from an i32 / i64 one."""
    return builder.emit(f"arith.index_cast {name} : {src} to index")
