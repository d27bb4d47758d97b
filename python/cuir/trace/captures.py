"""The tensors score_mod / mask_mod capture, named after their variables."""
import functools
import inspect
import types

import torch

from .errors import located
from .literals import ELEMENT_TYPE, memref_type


class Param:
    """A captured tensor as a variant parameter: static shape, row-major."""

    def __init__(self, name, tensor):
        self.name = name
        self.value = tensor.detach().cpu().contiguous().clone()
        self.shape, self.dtype = tuple(self.value.shape), self.value.dtype
        self.memref_type = memref_type(self.shape, self.dtype)

    def __repr__(self):
        return f"Param({self.name!r}, shape={list(self.shape)}, dtype={self.dtype})"


def _code_names(code):
    """Global names a code object and the functions defined in it use."""
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.extend(_code_names(const))
    return names


def _referenced(fn):
    """(name, value) pairs a callable refers to: closure cells, then globals."""
    if isinstance(fn, functools.partial):
        yield from ((f"arg{i}", a) for i, a in enumerate(fn.args))
        yield from fn.keywords.items()
        yield "func", fn.func
        return
    if inspect.ismethod(fn):
        yield "self", fn.__self__
        fn = fn.__func__
    if not inspect.isfunction(fn):
        if callable(fn) and hasattr(fn, "__dict__"):  # an object with __call__
            yield from vars(fn).items()
            yield "__call__", type(fn).__call__
        return
    code = fn.__code__
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            yield name, cell.cell_contents
        except ValueError:  # an unassigned cell
            continue
    for name in _code_names(code):
        if name in fn.__globals__:
            yield name, fn.__globals__[name]


def _scan(name, value, names, queue):
    if isinstance(value, torch.Tensor):
        names.setdefault(id(value), (name, value))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _scan(f"{name}_{i}", item, names, queue)
    elif isinstance(value, dict):
        for key, item in value.items():
            _scan(f"{name}_{key}", item, names, queue)
    elif callable(value) and not isinstance(value, (type, types.BuiltinFunctionType,
                                                      types.ModuleType)):
        queue.append(value)


def _walk(functions, visit):
    """visit(name, tensor) for every tensor `functions` reach, breadth first."""
    queue, seen = list(functions), set()
    while queue:
        fn = queue.pop(0)
        if id(fn) in seen or getattr(fn, "__module__", "") == "torch":
            continue
        seen.add(id(fn))
        found = {}
        for name, value in _referenced(fn):
            _scan(name, value, found, queue)
        for name, tensor in found.values():
            visit(name, tensor)


def tensor_names(functions):
    """id(tensor) -> (variable name, tensor), breadth first from `functions`."""
    names = {}
    _walk(functions, lambda name, tensor: names.setdefault(id(tensor), (name, tensor)))
    return names


AMBIGUOUS = object()


def current_sources(functions):
    """variable name -> the tensor `functions` reach under that name now (Captures.sources' names), or AMBIGUOUS
    where two tensors have it."""
    by_name = {}

    def visit(name, tensor):
        if by_name.setdefault(name, tensor) is not tensor:
            by_name[name] = AMBIGUOUS
    _walk(functions, visit)
    return by_name


class Captures:
    """The parameters of one variant: the captured tensors it loads from."""

    def __init__(self, functions, name_table):
        self.names = tensor_names(functions)
        self.table = name_table
        self.params, self._by_id, self._keep = [], {}, []
        # The variable each parameter was read from, and the elements the trace wrote as constants (a 0-d
        # tensor, a constant index): (variable name or None, index, value). cuir.flex_attention checks both
        # before it reuses a trace.
        self.sources, self.baked = {}, []

    def source_of(self, tensor):
        """The variable name `tensor` was reached by, if the functions reach it."""
        return self.names[id(tensor)][0] if id(tensor) in self.names else None

    def bake(self, tensor, index, value):
        """Notes that the trace wrote tensor[index] (a Python value) as a constant: at the index of a tensor
        the functions reach, or at ("storage", offset, shape, strides) of the one a view of theirs (one[0],
        made when the code runs) looks into; the source is None for a tensor they do not reach."""
        index = tuple(index)
        source = self.source_of(tensor)
        base = getattr(tensor, "_base", None)
        if source is None and base is not None and self.source_of(base) is not None:
            offset = tensor.storage_offset() + sum(i * s for i, s in zip(index, tensor.stride()))
            source = self.source_of(base)
            index = ("storage", offset - base.storage_offset(), tuple(base.shape), tuple(base.stride()))
        self.baked.append((source, index, value))

    def name_of(self, tensor):
        if id(tensor) in self._by_id:
            return self._by_id[id(tensor)].name
        if id(tensor) in self.names:
            return self.names[id(tensor)][0]
        base = getattr(tensor, "_base", None)
        if base is not None and id(base) in self.names:
            return self.names[id(base)][0] + "_view"
        return "tensor"

    def param(self, tensor):
        """The parameter of `tensor`, declared on its first load."""
        if id(tensor) not in self._by_id:
            if tensor.numel() == 0:
                raise located(f"captured tensor '{self.name_of(tensor)}' is empty")
            if tensor.dtype not in ELEMENT_TYPE:
                raise located(f"captured tensor '{self.name_of(tensor)}' has dtype "
                              f"{tensor.dtype}; supported: bool, int32, int64, float16, "
                              "bfloat16, float32")
            param = Param(self.table.unique(self.name_of(tensor)), tensor)
            self.sources[param.name] = self.source_of(tensor)
            self._by_id[id(tensor)] = param
            self._keep.append(tensor)  # its id stays unique while tracing
            self.params.append(param)
        return self._by_id[id(tensor)]
