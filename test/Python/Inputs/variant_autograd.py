"""cuir.TrainableVariant's autograd wiring on the CPU, with float64 stand-ins for a variant's forward and
backward libraries (the kernels are checked on the GPU by tools/gpu/check_variant_bwd.py): the gradients
reach q, k and v, the backward gets the forward's own O and log-sum-exp and the call's parameters, and a
captured tensor that requires grad is refused. That first part runs whichever path this torch takes (the
autograd.Function before torch 2.4, the custom ops after).

Then the custom ops (cuir::variant_fwd_* / cuir::variant_bwd_*, registered where torch has
torch.library.custom_op) through a stand-in for custom_op, which this torch may lack: the schema parsed by
torch's parser and every call's arguments checked against it, the fake implementation run on meta tensors and
compared with the real outputs (shapes, dtypes, strides), outputs that alias no input, and autograd wired from
setup_context and backward as custom_op wires it (one gradient per input). Checked: the ops' names and
schemas, one registration per kernel pair, the gradients, numbers, ints, captured tensors and a block mask
passed through the ops, and what is refused. (The real custom_op and torch.compile: tools/gpu/check_variant_bwd.py
--compile.)"""
import math
import types

import torch

import cuir
from cuir import autograd_variant as av
from cuir.block_mask import BlockMask

calls = []


def reference(q, k, v, scale, softcap, slopes=None, window=None):
    s = (q @ k.transpose(-1, -2)) * scale
    s = softcap * torch.tanh(s / softcap)
    if slopes is not None:  # ALiBi and a causal window of `window` keys back
        i = torch.arange(q.shape[2])[:, None]
        j = torch.arange(k.shape[2])[None, :]
        s = s + slopes.view(1, -1, 1, 1) * (j - i)
        s = s.masked_fill((j > i) | (j < i - window), float("-inf"))
    return torch.softmax(s, -1) @ v, torch.logsumexp(s, -1)


def reference_grads(q, k, v, d_o, scale, softcap, slopes=None, window=None):
    """dq, dk, dv of reference() by the formulas (no autograd: a custom op's implementation runs below it)."""
    t = torch.tanh((q @ k.transpose(-1, -2)) * scale / softcap)
    out, lse = reference(q, k, v, scale, softcap, slopes, window)
    s = softcap * t
    if slopes is not None:
        i = torch.arange(q.shape[2])[:, None]
        j = torch.arange(k.shape[2])[None, :]
        s = (s + slopes.view(1, -1, 1, 1) * (j - i)).masked_fill((j > i) | (j < i - window), float("-inf"))
    p = torch.exp(s - lse.unsqueeze(-1))
    ds = p * (d_o @ v.transpose(-1, -2) - (d_o * out).sum(-1, keepdim=True)) * (1 - t * t) * scale
    return ds @ k, ds.transpose(-1, -2) @ q, p.transpose(-1, -2) @ d_o


class FakeFwd:
    manifest, block_mask_info = {"variant": "softcap"}, None
    fields = [{"name": "softcap", "type": "float"}]

    def __call__(self, q, k, v, softmax_scale=None, layout="bnhd", return_lse=False, softcap=None):
        assert layout == "bhnd" and return_lse
        calls.append(("fwd", softcap))
        out, lse = reference(q, k, v, softmax_scale or 1 / math.sqrt(q.shape[-1]), softcap)
        return out, lse.float()  # the kernels' log-sum-exp is float32


class FakeBwd:
    fields = FakeFwd.fields

    def __call__(self, q, k, v, o, d_o, lse, softmax_scale=None, layout="bnhd", softcap=None):
        calls.append(("bwd", softcap))
        scale = softmax_scale or 1 / math.sqrt(q.shape[-1])
        with torch.no_grad():
            out, ref_lse = reference(q, k, v, scale, softcap)
            assert torch.equal(o, out) and torch.equal(lse, ref_lse.float()), "the forward's O and LSE"
        return reference_grads(q, k, v, d_o, scale, softcap)


torch.manual_seed(0)
attn = cuir.TrainableVariant(FakeFwd(), FakeBwd())
q, k, v = (torch.randn(2, 3, n, 16, dtype=torch.float64, requires_grad=True) for n in (17, 29, 29))
out = attn(q, k, v, softcap=5.0)
grad = torch.randn_like(out)
got = torch.autograd.grad(out, (q, k, v), grad)
want = torch.autograd.grad(reference(q, k, v, 0.25, 5.0)[0], (q, k, v), grad)
print(f"out has grad_fn {out.grad_fn is not None}, gradients match "
      f"{all(torch.allclose(a, b) for a, b in zip(got, want))}")
print("calls", calls)
try:
    attn(q, k, v, softcap=torch.tensor(5.0, requires_grad=True))
except NotImplementedError as e:
    print("NotImplementedError:", e)


# ---- the custom ops, through a stand-in for torch.library.custom_op


class StandInOp:
    def __init__(self, library, name, fn, schema):
        self.library, self.name, self.fn = library, name, fn
        self.schema = torch._C.parse_schema(name + schema)
        self.fake = self.backward = self.setup_context = None

    def register_fake(self, fn):
        self.fake = fn
        return fn

    def register_autograd(self, backward, setup_context):
        self.backward, self.setup_context = backward, setup_context

    def check_args(self, args):
        assert len(args) == len(self.schema.arguments), f"{self.name}: {len(args)} arguments for {self.schema}"
        for a, x in zip(self.schema.arguments, args):
            t = str(a.type)
            ok = {"Tensor": torch.is_tensor(x), "Optional[Tensor]": x is None or torch.is_tensor(x),
                  "Optional[float]": x is None or type(x) is float, "Optional[int]": x is None or type(x) is int,
                  "List[int]": type(x) is list and all(type(i) is int for i in x),
                  "List[bool]": type(x) is list and all(type(i) is bool for i in x)}[t]
            assert ok, f"{self.name}: argument {a.name} ({t}) is {x!r}"

    def run(self, args):
        out = self.fn(*args)
        meta = [torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta") if torch.is_tensor(x) else x
                for x in args]
        fake = self.fake(*meta)
        assert type(out) is tuple and len(out) == len(self.schema.returns) == len(fake), f"{self.name}: outputs"
        flat = lambda ts: [t for x in ts for t in (x if isinstance(x, list) else [x])]  # noqa: E731
        assert len(flat(out)) == len(flat(fake)), f"{self.name}: outputs"
        for i, (o, f) in enumerate(zip(flat(out), flat(fake))):
            assert (o.shape, o.dtype, o.stride()) == (f.shape, f.dtype, f.stride()), \
                f"{self.name}: output {i} is {o.dtype} {list(o.shape)} {o.stride()}, its fake {f.dtype} " \
                f"{list(f.shape)} {f.stride()}"
            assert all(o.data_ptr() != x.data_ptr() for x in args if torch.is_tensor(x)), f"{self.name}: aliases"
        return out

    def __call__(self, *args):
        self.library.log.append(self.name)
        self.check_args(args)
        if not (torch.is_grad_enabled() and any(torch.is_tensor(x) and x.requires_grad for x in args)):
            with torch.no_grad():
                return self.run(args)
        op = self

        class Generated(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *inputs):
                out = op.run(inputs)
                op.setup_context(ctx, inputs, out)
                return out

            @staticmethod
            def backward(ctx, *grads):
                result = op.backward(ctx, *grads)
                assert len(result) == len(args), f"{op.name}: {len(result)} gradients for {len(args)} inputs"
                return result

        return Generated.apply(*args)


class StandInLibrary:
    def __init__(self):
        self.ops, self.log = {}, []

    def custom_op(self, name, fn, mutates_args, schema):
        assert mutates_args == () and name not in self.ops
        self.ops[name] = StandInOp(self, name, fn, schema)
        return self.ops[name]


library = StandInLibrary()
av._custom_op_library = lambda: library
calls.clear()
attn = cuir.TrainableVariant(FakeFwd(), FakeBwd())
for name, schema in zip(attn.ops.names, attn.ops.schemas):
    print("op", name, schema)
out = attn(q, k, v, softcap=5.0)
got = torch.autograd.grad(out, (q, k, v), grad)
print(f"ops: out has grad_fn {out.grad_fn is not None}, gradients match "
      f"{all(torch.allclose(a, b) for a, b in zip(got, want))}")
print("calls", calls, "ops called", [n.split("_")[1] for n in library.log])
again = cuir.TrainableVariant(attn.fwd, attn.bwd)
av.variant_attention(attn.fwd, attn.bwd, q, k, v, softcap=5.0)
print(f"one registration per pair: {again.ops is attn.ops and av.variant_ops(attn.fwd, attn.bwd) is attn.ops}, "
      f"{len(library.ops)} ops")
try:
    attn(q, k, v, softcap=torch.tensor(5.0, requires_grad=True))
except NotImplementedError as e:
    print("ops: NotImplementedError:", e)

# A variant with a number, an int and a captured tensor, and a runtime block mask.
N, H = 29, 3
lists = {"kv_num_blocks": torch.tensor([[[1, 1]]], dtype=torch.int32),
         "kv_indices": torch.tensor([[[[0, 0], [1, 0]]]], dtype=torch.int32),
         "full_kv_num_blocks": torch.tensor([[[0, 1]]], dtype=torch.int32),
         "full_kv_indices": torch.tensor([[[[0, 0], [0, 0]]]], dtype=torch.int32)}
block_mask = BlockMask(lists, (16, 16), (N, N))
FIELDS = [{"name": "window", "type": "int32"}, {"name": "alibi_slopes", "type": "float_ptr", "extent": H},
          {"name": "softcap", "type": "float", "default": "5.0"}]


def kinds(params):
    return sorted((n, type(x).__name__) for n, x in params.items())


class FakeAlibiFwd:
    manifest = {"variant": "alibi,window{window=7}"}
    block_mask_info = {"fields": {n: "cuir_bm_" + n for n in ("kv_num_blocks", "kv_indices")}}
    fields = FIELDS + [{"name": "cuir_bm_" + n, "type": "block_mask"} for n in ("kv_num_blocks", "kv_indices")]

    def __call__(self, q, k, v, softmax_scale=None, layout="bnhd", return_lse=False, block_mask=None, **params):
        calls.append(("fwd", kinds(params), block_mask is not None))
        assert all(getattr(block_mask, n).data_ptr() == getattr(globals()["block_mask"], n).data_ptr()
                   for n in ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices", "q_order"))
        calls.append(("block mask", block_mask.block_size, block_mask.seq_lengths))
        out, lse = reference(q, k, v, softmax_scale, params.get("softcap", 5.0), params["alibi_slopes"],
                             params["window"])
        return out, lse.float()


class FakeAlibiBwd:
    fields = FIELDS

    def __call__(self, q, k, v, o, d_o, lse, softmax_scale=None, layout="bnhd", **params):
        calls.append(("bwd", kinds(params)))
        return reference_grads(q, k, v, d_o, softmax_scale, params.get("softcap", 5.0), params["alibi_slopes"],
                               params["window"])


slopes = torch.tensor([0.5, 0.25, 0.125])
q, k, v = (torch.randn(2, H, N, 16, dtype=torch.float64, requires_grad=True) for _ in range(3))
grad = torch.randn(2, H, N, 16, dtype=torch.float64)
want = torch.autograd.grad(reference(q, k, v, 0.5, 5.0, slopes, 7)[0], (q, k, v), grad)
for path, lib in (("function", None), ("ops", library)):
    av._custom_op_library = lambda: lib
    calls.clear()
    alibi = cuir.TrainableVariant(FakeAlibiFwd(), FakeAlibiBwd(), values={"alibi_slopes": slopes})
    if alibi.ops is not None:
        print("op", alibi.ops.names[0], alibi.ops.schemas[0])
    out = alibi(q, k, v, softmax_scale=0.5, block_mask=block_mask, window=7)
    got = torch.autograd.grad(out, (q, k, v), grad)
    print(f"{path}: parameters and block mask: gradients match "
          f"{all(torch.allclose(a, b) for a, b in zip(got, want))}")
    print("calls", calls)
calls.clear()
alibi(q, k, v, softmax_scale=0.5, block_mask=block_mask, window=7.0, softcap=3)
print("numbers as the schema's types:", calls[0][1])
for label, fn in (("a tensor field given a number", lambda: alibi(q, k, v, window=7, alibi_slopes=0.5)),
                  ("not a cuir.BlockMask", lambda: alibi(q, k, v, window=7, block_mask=lists)),
                  ("field kinds differ", lambda: av.op_params(
                      FakeFwd(), types.SimpleNamespace(fields=[{"name": "softcap", "type": "int32"}])))):
    try:
        fn()
    except (TypeError, ValueError) as e:
        print(f"{label}: {type(e).__name__}: {e}")

# The fake implementations on meta tensors: GQA, a value head dim other than the query's.
qm, km, vm = (torch.empty(2, h, n, d, dtype=torch.bfloat16, device="meta") for h, n, d in
              ((8, 100, 64), (2, 300, 64), (2, 300, 32)))
o, lse = av.fake_forward(qm, km, vm, None)
print("fake forward", o.dtype, list(o.shape), lse.dtype, list(lse.shape),
      "backward", [list(t.shape) for t in av.fake_backward(qm, km, vm, o, o, lse, None)])
print("stems", av.op_stem(FakeAlibiFwd()), av.op_stem(types.SimpleNamespace(stem="document_causal")))

# torch.compile(fullgraph=True) through the real custom ops, where this torch has them (aot_eager: dynamo,
# the fake implementations and AOTAutograd's backward, without a code generator).
av._custom_op_library = lambda: torch.library if hasattr(torch.library, "custom_op") else None
if av._custom_op_library() is None:
    print(f"compile: skipped, torch {torch.__version__.split('+')[0]} has no torch.library.custom_op")
else:
    import torch._dynamo
    torch._dynamo.reset()
    calls.clear()
    softcap = cuir.TrainableVariant(FakeFwd(), FakeBwd())
    alibi = cuir.TrainableVariant(FakeAlibiFwd(), FakeAlibiBwd(), values={"alibi_slopes": slopes})

    def loss(q, k, v, bm):
        a = softcap(q, k, v, softcap=5.0)
        return (alibi(a, k, v, softmax_scale=0.5, block_mask=bm, window=7) * 2).sum()

    eager = torch.autograd.grad(loss(q, k, v, block_mask), (q, k, v))
    compiled = torch.autograd.grad(torch.compile(loss, fullgraph=True, backend="aot_eager")(q, k, v, block_mask),
                                   (q, k, v))
    print(f"compile: fullgraph forward and backward, gradients match eager's "
          f"{all(torch.allclose(a, b) for a, b in zip(eager, compiled))}")

# A captured tensor that requires grad, where the backward kernel accumulates its gradient (manifest "grad"
# fields: trainable()): the autograd.Function and the ops return it; one it cannot train is refused.


class FakeTrainBwd(FakeAlibiBwd):
    def trainable(self):
        return ["alibi_slopes"]

    def __call__(self, q, k, v, o, d_o, lse, softmax_scale=None, layout="bnhd", param_grads=None, **params):
        calls.append(("bwd", sorted(param_grads or {})))
        if param_grads:  # float64 autograd of the reference, added into the fp32 buffer as the kernel adds
            with torch.enable_grad():
                s = params["alibi_slopes"].detach().double().requires_grad_()
                out, _ = reference(q, k, v, softmax_scale, params.get("softcap", 5.0), s, params["window"])
                (g,) = torch.autograd.grad(out, (s,), d_o)
            param_grads["alibi_slopes"] += g.float()
        return reference_grads(q, k, v, d_o, softmax_scale, params.get("softcap", 5.0), params["alibi_slopes"],
                               params["window"])


trained = slopes.double().clone().requires_grad_()
want = torch.autograd.grad(reference(q, k, v, 0.5, 5.0, trained, 7)[0], (q, k, v, trained), grad)
for path, lib in (("function", None), ("ops", library)):
    av._custom_op_library = lambda: lib
    calls.clear()
    train = cuir.TrainableVariant(FakeAlibiFwd(), FakeTrainBwd())
    if train.ops is not None:
        print("op", train.ops.names[1], train.ops.schemas[1])
    out = train(q, k, v, softmax_scale=0.5, block_mask=block_mask, window=7, alibi_slopes=trained)
    got = torch.autograd.grad(out, (q, k, v, trained), grad)
    print(f"{path}: trained slopes: gradients match {all(torch.allclose(a, b) for a, b in zip(got, want))}, "
          f"slopes' {got[3].dtype}", "calls", [c for c in calls if c[0] == "bwd"])
    calls.clear()
    got = torch.autograd.grad(train(q, k, v, softmax_scale=0.5, block_mask=block_mask, window=7,
                                    alibi_slopes=trained.detach()), (q,), grad)
    print(f"{path}: detached slopes: not computed", [c for c in calls if c[0] == "bwd"])
    try:
        cuir.TrainableVariant(FakeAlibiFwd(), FakeAlibiBwd())(q, k, v, softmax_scale=0.5, block_mask=block_mask,
                                                              window=7, alibi_slopes=trained)
    except NotImplementedError as e:
        print(f"{path}: NotImplementedError:", e)
