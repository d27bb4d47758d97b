"""cuir.attention (this module: cuir.attention_op): CuIR's expert kernels as a differentiable attention op, for training.

    out = cuir.attention(q, k, v, causal=True)       # q [B, Hq, Nq, d], k/v [B, Hkv, Nkv, d], CUDA bf16/fp16
    out.backward(grad)                               # dQ, dK, dV from CuIR's backward kernel

The forward runs the sm_90a kernel on Hopper (sm_80 elsewhere) and saves O and the log-sum-exp; the backward
runs CuIR's backward kernel (the sm_90a one where it is built, else the sm_80 one, which runs on Hopper too) on
them. Where torch has `torch.library.custom_op` (2.4 and later) the op is registered as `cuir::attention_fwd`
and `cuir::attention_bwd` with fake (meta) implementations, so `torch.compile` keeps it in the graph; older
torch gets a `torch.autograd.Function`.

Semantics are the kernels' (cuir/attention_params.h): softmax(scale * q k^T) v over all keys, or causal's
bottom-right aligned mask; GQA when Hq is a multiple of Hkv; rows that see no key give 0. Variants have
their own differentiable ops (cuir/autograd_variant.py).
"""
import math

# The kernels' Python bindings, looked up at call time so that tests can stand in for them.
from . import kernel_lib as _kernels  # noqa: F401

_OPS = {}
_PICKED = {}  # (device type, index) -> the kernels _pick_kernels chose


def _pick_kernels(device):
    """(forward kernel, backward kernel) for `device`: sm90 on compute capability 9.x, and the sm90 backward
    only where its library is built. Decided once per device, so that a torch.compile'd call after the first
    traces a dictionary lookup, not the library search (file system calls break the graph)."""
    key = (device.type, device.index)
    if key not in _PICKED:
        _PICKED[key] = _choose_kernels(device)
    return _PICKED[key]


def _choose_kernels(device):
    import torch
    hopper = device.type == "cuda" and torch.cuda.get_device_capability(device)[0] == 9
    fwd = "sm90" if hopper else "sm80"
    bwd = "sm80"
    if hopper:
        try:
            _kernels.load_bwd_library(kernel="sm90")
            bwd = "sm90"
        except (FileNotFoundError, OSError, AttributeError):
            pass
    return fwd, bwd


def _forward(q, k, v, causal, scale, kernel):
    fwd = getattr(_kernels, f"flash_fwd_{kernel}")
    return fwd(q, k, v, causal=causal, softmax_scale=scale, layout="bhnd")


def _backward(d_o, q, k, v, o, lse, causal, scale, kernel, deterministic):
    # The kernels read dO with the head dim contiguous and 8-element-aligned strides.
    if d_o.stride(-1) != 1 or any(s % 8 for s in d_o.stride()[:-1]):
        d_o = d_o.contiguous()
    return _kernels.flash_bwd(kernel, q, k, v, o, d_o, lse, causal=causal, softmax_scale=scale,
                              deterministic=deterministic, layout="bhnd")


def _custom_ops(torch):
    """cuir::attention_fwd / cuir::attention_bwd with fake implementations and autograd (torch >= 2.4)."""
    from torch import Tensor

    @torch.library.custom_op("cuir::attention_fwd", mutates_args=())
    def attention_fwd(q: Tensor, k: Tensor, v: Tensor, causal: bool, scale: float, kernel: str,
                      bwd_kernel: str, deterministic: bool) -> tuple[Tensor, Tensor]:
        out, lse = _forward(q, k, v, causal, scale, kernel)
        return out, lse

    @attention_fwd.register_fake
    def _(q, k, v, causal, scale, kernel, bwd_kernel, deterministic):
        B, Hq, Nq, _ = q.shape
        return torch.empty_like(q), q.new_empty((B, Hq, Nq), dtype=torch.float32)

    @torch.library.custom_op("cuir::attention_bwd", mutates_args=())
    def attention_bwd(d_o: Tensor, q: Tensor, k: Tensor, v: Tensor, o: Tensor, lse: Tensor, causal: bool,
                      scale: float, kernel: str, deterministic: bool) -> tuple[Tensor, Tensor, Tensor]:
        dq, dk, dv = _backward(d_o, q, k, v, o, lse, causal, scale, kernel, deterministic)
        return dq, dk, dv

    @attention_bwd.register_fake
    def _(d_o, q, k, v, o, lse, causal, scale, kernel, deterministic):
        return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)

    def setup_context(ctx, inputs, output):
        q, k, v, causal, scale, _, bwd_kernel, deterministic = inputs
        ctx.save_for_backward(q, k, v, *output)
        ctx.causal, ctx.scale, ctx.bwd_kernel, ctx.deterministic = causal, scale, bwd_kernel, deterministic

    def backward(ctx, d_o, d_lse):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = attention_bwd(d_o, q, k, v, o, lse, ctx.causal, ctx.scale, ctx.bwd_kernel,
                                   ctx.deterministic)
        return dq, dk, dv, None, None, None, None, None

    attention_fwd.register_autograd(backward, setup_context=setup_context)
    return attention_fwd


def _function(torch):
    """The same as a torch.autograd.Function, for torch without torch.library.custom_op."""

    class Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal, scale, kernel, bwd_kernel, deterministic):
            out, lse = _forward(q, k, v, causal, scale, kernel)
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.causal, ctx.scale, ctx.bwd_kernel, ctx.deterministic = causal, scale, bwd_kernel, deterministic
            ctx.mark_non_differentiable(lse)
            return out, lse

        @staticmethod
        def backward(ctx, d_o, d_lse):
            q, k, v, o, lse = ctx.saved_tensors
            dq, dk, dv = _backward(d_o, q, k, v, o, lse, ctx.causal, ctx.scale, ctx.bwd_kernel, ctx.deterministic)
            return dq, dk, dv, None, None, None, None, None

    return Attention


def attention(q, k, v, causal=False, scale=None, deterministic=False, kernel="auto", backward_kernel="auto"):
    """Differentiable attention on CuIR's kernels (see the module's docstring). q [B, Hq, Nq, d], k and v
    [B, Hkv, Nkv, d] (PyTorch SDPA's layout; head dim contiguous), bf16 or fp16, d 64 or 128. scale: the
    softmax scale (default 1/sqrt(d)). deterministic: bitwise reproducible gradients. kernel /
    backward_kernel: "sm80", "sm90" or "auto". Returns out [B, Hq, Nq, d]."""
    import torch
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError(f"cuir.attention: q, k, v must be [B, H, N, d], got {tuple(q.shape)}, "
                         f"{tuple(k.shape)}, {tuple(v.shape)}")
    scale = float(scale) if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    auto_fwd, auto_bwd = _pick_kernels(q.device)
    fwd = auto_fwd if kernel == "auto" else kernel
    bwd = auto_bwd if backward_kernel == "auto" else backward_kernel
    for name, value in (("kernel", fwd), ("backward_kernel", bwd)):
        if value not in ("sm80", "sm90"):
            raise ValueError(f"cuir.attention: {name} must be 'sm80', 'sm90' or 'auto', got {value!r}")
    args = (q, k, v, bool(causal), scale, fwd, bwd, bool(deterministic))
    if hasattr(torch.library, "custom_op"):
        if "op" not in _OPS:
            _OPS["op"] = _custom_ops(torch)
        return _OPS["op"](*args)[0]
    if "fn" not in _OPS:
        _OPS["fn"] = _function(torch)
    return _OPS["fn"].apply(*args)[0]
