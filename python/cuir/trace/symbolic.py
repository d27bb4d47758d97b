"""Traced values: what score_mod / mask_mod compute with in place of tensors.

A Sym stands for one element of FlexAttention's tensors (score, b, h, q_idx,
kv_idx and everything computed from them): its torch dtype, and the SSA value
holding it. Python operators, torch functions (through __torch_function__)
and tensor methods on it are handed to `ops`, which writes the IR."""
import torch

from . import ops
from .errors import located
from .literals import IR_TYPE

_DATA_DEPENDENT = ("Python control flow on a traced value (if, while, and, or, not, "
                   "bool(), min(), max()) depends on the data: use torch.where, &, |, ~, "
                   "torch.minimum / torch.maximum")


class Sym:
    """One traced scalar: torch dtype, SSA name (made on first use), origin."""
    __array_ufunc__ = None  # NumPy scalars defer to our reflected operators
    __slots__ = ("builder", "dtype", "_name", "_make", "const", "zero_dim", "index")

    def __init__(self, builder, dtype, name=None, make=None, const=None,
                 zero_dim=False, index=None):
        self.builder, self.dtype, self._name, self._make = builder, dtype, name, make
        # const: the value of a constant; zero_dim: promotes as a 0-d tensor
        # (a captured 0-d tensor) rather than as a dimensioned one; index: an
        # `index` SSA value equal to this one (the block arguments).
        self.const, self.zero_dim, self.index = const, zero_dim, index

    @property
    def name(self):
        if self._name is None:
            self._name = self._make()
        return self._name

    @property
    def ir(self):
        return IR_TYPE[self.dtype]

    shape = property(lambda self: torch.Size([]))
    ndim = property(lambda self: 0)
    device = property(lambda self: torch.device("cpu"))
    is_floating_point = lambda self: self.dtype.is_floating_point  # noqa: E731
    dim = lambda self: 0  # noqa: E731
    size = lambda self, *_: torch.Size([])  # noqa: E731

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ops.torch_function(func, args, kwargs or {})

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return ops.method(self, attr)

    def __bool__(self):
        raise located(_DATA_DEPENDENT)

    def __index__(self):
        raise located("a traced value used as a Python index or int (a list, tuple, range "
                      "or Python int of it): put the values in a torch.tensor and index that")

    def __int__(self):
        raise located("int() of a traced value: use .int() / .long() / .to(dtype)")

    def __float__(self):
        raise located("float() or a math.* function of a traced value: use .float() "
                      "or the torch.* function")

    def __iter__(self):
        raise located("iterating over a traced value: it is one element")

    def __len__(self):
        raise located("len() of a traced value: it is one element")

    def __getitem__(self, index):
        raise located("indexing a traced value: it is one element, not a tensor")

    def __repr__(self):
        return f"Sym({self.dtype}, {self._name})"


def _binary(op, reflected=False):
    if reflected:
        return lambda self, other: ops.binary(op, other, self)
    return lambda self, other: ops.binary(op, self, other)


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "and", "or", "xor",
            "lshift", "rshift"):
    setattr(Sym, f"__{_op}__", _binary(_op))
    setattr(Sym, f"__r{_op}__", _binary(_op, reflected=True))
for _op in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(Sym, f"__{_op}__", _binary(_op))
Sym.__pow__ = lambda self, e: ops.power(self, e)
Sym.__rpow__ = lambda self, base: ops.power(base, self)
Sym.__neg__ = lambda self: ops.unary("neg", self)
Sym.__pos__ = lambda self: self
Sym.__abs__ = lambda self: ops.unary("abs", self)
Sym.__invert__ = lambda self: ops.unary("invert", self)
Sym.__hash__ = object.__hash__


class Indexed:
    """A captured tensor indexed in fewer dimensions than it has: t[h] of t[h][k]."""

    def __init__(self, tensor, prefix):
        self.tensor, self.prefix = tensor, prefix

    def __getitem__(self, index):
        return ops.load(self.tensor, self.prefix + ops.index_tuple(index))
