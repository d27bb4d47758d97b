"""MLIR text for literals, types and names: the one place that writes them."""
import keyword
import os
import math
import re
import struct

import torch

# The IR type a value of each supported torch dtype is computed in: the score
# is f32, and f16/bf16 values are extended to f32 when loaded.
IR_TYPE = {torch.bool: "i1", torch.int32: "i32", torch.int64: "i64",
           torch.float16: "f32", torch.bfloat16: "f32", torch.float32: "f32"}
# The element type a captured tensor of each dtype is stored as.
ELEMENT_TYPE = {torch.bool: "i1", torch.int32: "i32", torch.int64: "i64",
                torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32"}
_FLOAT_DTYPE = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
_INT_RANGE = {"i1": (0, 1), "i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1),
              "index": (-2**63, 2**63 - 1)}
# +inf, -inf and NaN of each float type, as MLIR's hexadecimal bit patterns.
_SPECIAL_BITS = {"f32": (0x7F800000, 0xFF800000, 0x7FC00000, 8),
                 "f16": (0x7C00, 0xFC00, 0x7E00, 4),
                 "bf16": (0x7F80, 0xFF80, 0x7FC0, 4)}


def int_fits(value, ty):
    low, high = _INT_RANGE[ty]
    return low <= int(value) <= high


def round_float(value, ty="f32"):
    """`value` rounded to float type `ty` as torch rounds it (overflow: inf)."""
    try:
        value = float(value)
    except OverflowError:  # a Python int beyond double
        value = math.inf if value > 0 else -math.inf
    return torch.tensor(value, dtype=torch.float64).to(_FLOAT_DTYPE[ty]).item()


def float_literal(value, ty="f32"):
    """An MLIR float literal of type `ty` that parses back to round_float(value)."""
    v = round_float(value, ty)
    pos_inf, neg_inf, nan, width = _SPECIAL_BITS[ty]
    if math.isnan(v) or math.isinf(v):
        bits = nan if math.isnan(v) else (pos_inf if v > 0 else neg_inf)
        return f"0x{bits:0{width}X}"
    for digits in (6, 8):  # 9 significant digits always round-trip an f32
        text = f"{v:.{digits}e}"
        if round_float(float(text), ty) == v:
            return text
    raise AssertionError(f"no round-tripping literal for {v!r}")


def int_literal(value, ty):
    """An MLIR integer literal of type `ty`, range-checked."""
    if ty == "i1":
        return "true" if value else "false"
    if not int_fits(value, ty):
        raise ValueError(f"{value} does not fit {ty}")
    return str(int(value))


def literal(value, ty):
    if ty in _FLOAT_DTYPE:
        return float_literal(value, ty)
    return int_literal(value, ty)


def constant_op(value, ty):
    """The text of an arith.constant of `value` as type `ty`."""
    if ty == "i1":
        return f"arith.constant {int_literal(value, ty)}"
    return f"arith.constant {literal(value, ty)} : {ty}"


def shape_text(shape):
    return "x".join(str(int(d)) for d in shape)


def memref_type(shape, dtype):
    return f"memref<{shape_text(shape)}x{ELEMENT_TYPE[dtype]}, #cuir.mem<global>>"


def tensor_type(shape, dtype):
    return f"tensor<{shape_text(shape)}x{ELEMENT_TYPE[dtype]}>"


_HEX_THRESHOLD = 1024  # elements; beyond it dense values are written as hex bytes


def _hex_bytes(tensor):
    t = tensor.contiguous()
    if t.dtype in (torch.float16, torch.bfloat16):
        t = t.view(torch.int16)
    data = t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()
    return '"0x' + data.hex().upper() + '"'


def _nested(values, ty):
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v, ty) for v in values) + "]"
    return literal(values, ty)


def dense_attr(tensor):
    """A DenseElementsAttr holding the values of a captured tensor."""
    t = tensor.detach().cpu().contiguous()
    ty = ELEMENT_TYPE[t.dtype]
    flat = t.flatten()
    if t.numel() > 0 and bool((flat == flat[0]).all()) and not _has_nan(flat):
        body = literal(flat[0].item(), ty)
    elif t.numel() > _HEX_THRESHOLD and t.dtype != torch.bool:
        body = _hex_bytes(t)
    else:
        body = _nested(t.tolist(), ty)
    return f"dense<{body}> : {tensor_type(t.shape, t.dtype)}"


def _has_nan(flat):
    return flat.is_floating_point() and bool(torch.isnan(flat).any())


def f32_bits(value):
    """The bit pattern of round_float(value) (for tests)."""
    return struct.unpack("<I", struct.pack("<f", round_float(value)))[0]


# Names a parameter may not take: the block arguments of the mods, C++ keywords (parameters become
# fields of the kernel's params struct), and the kernel's own names.
_BLOCK_ARGS = {"score", "b", "h", "q_idx", "kv_idx"}
_CPP_KEYWORDS = set("""alignas alignof and asm auto bool break case catch char class
const constexpr const_cast continue decltype default delete do double dynamic_cast
else enum explicit export extern false float for friend goto if inline int long
mutable namespace new noexcept not nullptr operator or private protected public
register reinterpret_cast return short signed sizeof static static_assert
static_cast struct switch template this thread_local throw true try typedef typeid
typename union unsigned using virtual void volatile wchar_t while xor params""".split())
# The kernel's sizes, which a variant parameter of that name reads, and the members the params structs
# (kernels/include/cuir/attention_params.h, attention_bwd_params.h) already have.
_KERNEL_NAMES = set("""B Hq Hkv Nq Nkv q k v o lse d_o dq dk dv workspace batch num_heads_q num_heads_kv
seqlen_q seqlen_kv head_dim dtype softmax_scale is_causal deterministic reserved0""".split()) | {
    f"{t}_{kind}_stride" for t in ("q", "k", "v", "o", "do", "dq", "dk", "dv") for kind in ("batch", "row", "head")}
RESERVED_NAMES = _BLOCK_ARGS | _CPP_KEYWORDS | set(keyword.kwlist) | _KERNEL_NAMES


def identifier(text):
    """`text` made a C and MLIR identifier: [A-Za-z0-9_], no '__', no leading digit."""
    name = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", str(text)))
    if not name or name == "_" or name[0].isdigit():
        name = "p_" + name.lstrip("_")
    return name


class NameTable:
    """Valid, unique names, none of them reserved."""

    def __init__(self, reserved=RESERVED_NAMES):
        self.used = set(reserved)

    def unique(self, text):
        base = identifier(text)
        name, n = base, 2
        while name in self.used:
            name, n = f"{base}_{n}", n + 1
        self.used.add(name)
        return name


def string_literal(text):
    """`text` as an MLIR string literal (quotes, backslashes and control
    characters escaped as two hex digits)."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\' or byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def location(where):
    """The MLIR location of 'file:line' (the user's line, column 1)."""
    path, _, line = where.rpartition(":")
    return f"loc({string_literal(os.path.abspath(path))}:{int(line)}:1)"

