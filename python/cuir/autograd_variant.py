"""Differentiable variant attention: a variant's forward kernel (which saves O and the log-sum-exp) and its
backward kernel (lowered from the sm_80 backward pass, docs/Backward.md) as one torch.autograd.Function.

Gradients flow to q, k and v. Captured tensors and parameters (ALiBi slopes, bias tables, document ids) are
constants of the backward: their gradients are not computed, and an input to them that requires grad is refused.
"""
import torch


class _VariantAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, fwd, bwd, scale, block_mask, params):
        extra = {"block_mask": block_mask} if block_mask is not None else {}
        q, k, v = (t.detach().contiguous() for t in (q, k, v))
        o, lse = fwd(q, k, v, softmax_scale=scale, layout="bhnd", return_lse=True, **params, **extra)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.bwd, ctx.scale, ctx.params = bwd, scale, params
        return o

    @staticmethod
    def backward(ctx, d_o):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = ctx.bwd(q, k, v, o, d_o.contiguous(), lse, softmax_scale=ctx.scale, layout="bhnd",
                             **ctx.params)
        return dq, dk, dv, None, None, None, None, None


def variant_attention(fwd, bwd, q, k, v, softmax_scale=None, block_mask=None, **params):
    """Variant attention of q [B, Hq, Nq, d], k, v [B, Hkv, Nkv, d] through the forward kernel `fwd` and the
    backward kernel `bwd` of one variant, differentiable in q, k and v."""
    for name, value in params.items():
        if torch.is_tensor(value) and value.requires_grad:
            raise NotImplementedError(f"{name} requires grad: gradients of a variant's captured tensors are "
                                      f"not computed yet (pass it detached)")
    return _VariantAttention.apply(q, k, v, fwd, bwd, softmax_scale, block_mask, params)


class TrainableVariant:
    """What cuir.compile(..., backward=True) returns: call it as the variant kernel (layout [B, H, N, d]);
    the result is differentiable in q, k and v."""

    def __init__(self, fwd, bwd, values=None):
        self.fwd, self.bwd, self.values = fwd, bwd, dict(values or {})
        self.manifest = fwd.manifest
        self.block_mask_info = fwd.block_mask_info

    def __call__(self, q, k, v, softmax_scale=None, block_mask=None, **params):
        from .compile import tensor_for
        for pname, tensor in self.values.items():
            params.setdefault(pname, tensor_for(self.fwd, pname, tensor, q.device))
        return variant_attention(self.fwd, self.bwd, q, k, v, softmax_scale, block_mask, **params)

    def block_mask(self, *args, **kwargs):
        return self.fwd.block_mask(*args, **kwargs)
