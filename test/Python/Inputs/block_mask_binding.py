"""The Python side of a runtime block mask, on the CPU: a variant library's manifest with a "block_mask" is
bound as variant_lib binds it, to a test double of the library whose entries read and write CPU memory
through the pointers they are given (the classification is a Python reference of cuir/block_mask.h's
contract). Checks: the params struct's layout (the list fields in the manifest's order), the sizes and
pointers the entries see, attn.block_mask's tensors and to_dense, a given mask reused and its checks, one
computed per call when none is given, FlexAttention BlockMasks converted or refused with the reason, and
cuir.flex_attention's choice between them."""
import ctypes
import json
import pathlib
import sys
import tempfile

import torch

import cuir
from cuir import block_mask as bml
from cuir import flex
from cuir.kernel_lib import AttentionParams
from cuir.variant_lib import VariantKernel

from outcome import show

BM, BN = 4, 2  # tiles of the test double's kernels at head dim 64 (4 x 4 at 128)
TILES = {64: (BM, BN), 128: (BM, 2 * BN)}
LISTS = {name: "cuir_" + name for name in bml.WALKED_LISTS}
MANIFEST = {
    "variant": "document_test", "normalizer": "softmax", "is_causal": 0,
    "fields": [{"name": "doc_ids", "type": "int32_ptr", "extent": "batch*kv"}] +
              [{"name": f, "type": "block_mask", "extent": "", "list": n} for n, f in LISTS.items()] +
              [{"name": "scale2", "type": "float", "extent": ""}],
    "block_mask": {"entry": "cuir_flash_fwd_sm80_block_mask", "dims_entry": "cuir_flash_fwd_sm80_block_mask_dims",
                   "attention_entry": "cuir_flash_fwd_sm80", "mask": "blocks",
                   "tiles": [{"head_dim": d, "block_m": m, "block_n": n, "depends": ["batch"]}
                             for d, (m, n) in TILES.items()],
                   "params": ["doc_ids"], "fields": LISTS}}


class Header(ctypes.Structure):  # the struct as the patched cuir/attention_params.h declares it
    _fields_ = [("base", AttentionParams), ("doc_ids", ctypes.c_void_p)] + \
               [(f, ctypes.c_void_p) for f in LISTS.values()] + [("scale2", ctypes.c_float)]


def ints(ptr, n):
    return (ctypes.c_int32 * n).from_address(ptr) if n else []


def reference_lists(doc, B, Nq, Nkv):
    """The nine lists of the mask doc[b, min(q, Nkv - 1)] == doc[b, kv] (B' = B, H' = 1), descending."""
    QB, KB = -(-Nq // BM), -(-Nkv // BN)
    cls = [[[0] * KB for _ in range(QB)] for _ in range(B)]
    for b in range(B):
        for m in range(QB):
            for n in range(KB):
                pairs = [(q, kv) for q in range(m * BM, min(Nq, m * BM + BM))
                         for kv in range(n * BN, min(Nkv, n * BN + BN))]
                vis = [doc[b * Nkv + min(q, Nkv - 1)] == doc[b * Nkv + kv] for q, kv in pairs]
                cls[b][m][n] = 0 if not any(vis) else 2 if all(vis) and len(pairs) == BM * BN else 1
    out = {name: [] for name in bml.LISTS}
    for b in range(B):
        for m in range(QB):
            for c, num, idx in ((1, "kv_num_blocks", "kv_indices"), (2, "full_kv_num_blocks", "full_kv_indices")):
                row = [n for n in reversed(range(KB)) if cls[b][m][n] == c]
                out[num].append(len(row))
                out[idx] += row + [0] * (KB - len(row))
        for n in range(KB):
            for c, num, idx in ((1, "q_num_blocks", "q_indices"), (2, "full_q_num_blocks", "full_q_indices")):
                col = [m for m in reversed(range(QB)) if cls[b][m][n] == c]
                out[num].append(len(col))
                out[idx] += col + [0] * (QB - len(col))
        tiles = out["kv_num_blocks"][-QB:], out["full_kv_num_blocks"][-QB:]
        out["q_order"] += sorted(range(QB), key=lambda m: (tiles[0][m] + tiles[1][m], m), reverse=True)
    return out


class FakeLibrary:
    """cuir_flash_fwd_sm80 and its block-mask entries, on CPU memory."""

    def __init__(self):
        self.calls = []

        def sizeof():
            return ctypes.sizeof(Header)

        def dims(params_ref, dims_out):
            b = params_ref._obj.base
            self.calls.append(("dims", b.batch, b.num_heads_q, b.seqlen_q, b.seqlen_kv, b.head_dim))
            if TILES.get(b.head_dim) != (BM, BN):  # the reference below has the tiles of head dim 64
                return 801
            dims_out[0], dims_out[1] = b.batch, 1
            dims_out[2], dims_out[3] = -(-b.seqlen_q // BM), -(-b.seqlen_kv // BN)
            return 0

        def classify(params_ref, mask_ref, stream):
            p, mask = params_ref._obj, mask_ref._obj
            b = p.base
            if (mask.block_m, mask.block_n) != TILES.get(b.head_dim):
                return 1
            doc = list(ints(p.doc_ids, b.batch * b.seqlen_kv))
            self.calls.append(("classify", mask.batch, mask.heads, mask.q_blocks, mask.kv_blocks))
            for name, values in reference_lists(doc, b.batch, b.seqlen_q, b.seqlen_kv).items():
                target = ints(getattr(mask, name), len(values))
                for i, x in enumerate(values):
                    target[i] = x
            return 0

        def attention(params_ref, stream):
            p = params_ref._obj
            self.calls.append(("attention", tuple(getattr(p, f) for f in LISTS.values()), p.scale2))
            return 0

        self.cuir_attention_params_sizeof = sizeof
        self.cuir_flash_fwd_sm80_block_mask_dims = dims
        self.cuir_flash_fwd_sm80_block_mask = classify
        self.cuir_flash_fwd_sm80 = attention


tmp = pathlib.Path(tempfile.mkdtemp())
(tmp / "document_test.json").write_text(json.dumps(MANIFEST))
lib = FakeLibrary()
attn = VariantKernel(tmp / "libdocument_test.so", lib=lib)
print("struct size", ctypes.sizeof(attn.params_type) == ctypes.sizeof(Header),
      [name for name, _ in attn.params_type._fields_][1:])

B, H, Nq, Nkv, d = 2, 3, 10, 7, 64
doc = torch.tensor([[0, 0, 0, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1, 2]], dtype=torch.int32).reshape(-1)
doc_q = torch.tensor([[0, 0, 0, 1, 1, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1, 2, 2, 2, 2]], dtype=torch.int32)
show("no head_dim", lambda: attn.block_mask(B, H, Nq, Nkv, device="cpu", doc_ids=doc))
show("head_dim 96", lambda: attn.block_mask(B, H, Nq, Nkv, head_dim=96, device="cpu", doc_ids=doc))
bm = attn.block_mask(B, H, Nq, Nkv, head_dim=64, device="cpu", doc_ids=doc)
print(repr(bm))
print("calls", lib.calls)
print("shapes", {n: list(getattr(bm, n).shape) for n in bml.LISTS})
ref = reference_lists(doc.tolist(), B, Nq, Nkv)
print("lists equal the reference", all(getattr(bm, n).reshape(-1).tolist() == ref[n] for n in bml.LISTS))
print("kv lists of (b=1, m=1):", bm.kv_num_blocks[1, 0, 1].item(), bm.kv_indices[1, 0, 1].tolist(),
      bm.full_kv_num_blocks[1, 0, 1].item(), bm.full_kv_indices[1, 0, 1].tolist())
print("to_dense b=0", bm.to_dense()[0, 0].tolist())

q = torch.zeros(B, H, Nq, d, dtype=torch.bfloat16)
k = torch.zeros(B, H, Nkv, d, dtype=torch.bfloat16)
lib.calls.clear()
attn(q, k, k, doc_ids=doc, scale2=0.5, block_mask=bm)
ptrs = tuple(getattr(bm, n).data_ptr() for n in LISTS)
print("given mask: calls", [c[0] for c in lib.calls], "pointers are its lists", lib.calls[-1][1] == ptrs,
      "scale2", lib.calls[-1][2])
lib.calls.clear()
attn(q, k, k, doc_ids=doc, scale2=0.5)
print("no mask: calls", [c[0] for c in lib.calls])
show("wrong tiles", lambda: attn(q, k, k, doc_ids=doc, scale2=0, block_mask=bml.BlockMask(
    {n: getattr(bm, n) for n in bml.LISTS}, (BM, 2 * BN), (Nq, Nkv))))
show("wrong lengths", lambda: attn(q[:, :, :8], k, k, doc_ids=doc, scale2=0, block_mask=bm))
bm1 = bml.BlockMask({n: getattr(bm, n)[:1] for n in bml.LISTS}, (BM, BN), (Nq, Nkv))
show("wrong batch rows", lambda: attn(q, k, k, doc_ids=doc, scale2=0, block_mask=bm1))
bm64 = bml.BlockMask({**{n: getattr(bm, n) for n in bml.LISTS}, "kv_indices": bm.kv_indices.long()}, (BM, BN),
                     (Nq, Nkv))
show("int64 list", lambda: attn(q, k, k, doc_ids=doc, scale2=0, block_mask=bm64))
show("not a BlockMask", lambda: attn(q, k, k, doc_ids=doc, scale2=0, block_mask=object()))
show("doc_ids int64", lambda: attn.block_mask(B, H, Nq, Nkv, head_dim=64, device="cpu", doc_ids=doc.long()))
# An array parameter has the elements its extent asks (batch x kv here): the kernel would read past a short one.
show("doc_ids short", lambda: attn.block_mask(B, H, Nq, Nkv, head_dim=64, device="cpu", doc_ids=doc[:10]))
show("doc_ids short in a call", lambda: attn(q, k, k, doc_ids=doc[:10], scale2=0, block_mask=bm))
show("negative size", lambda: attn.block_mask(B, H, -1, Nkv, head_dim=64, device="cpu", doc_ids=doc))
show("too many keys", lambda: attn.block_mask(B, H, Nq, 2 ** 30 + 1, head_dim=64, device="cpu", doc_ids=doc))
q128 = torch.zeros(B, H, Nq, 128, dtype=torch.bfloat16)
show("mask of head dim 64 at 128", lambda: attn(q128, k.new_zeros(B, H, Nkv, 128), k.new_zeros(B, H, Nkv, 128),
                                               doc_ids=doc, scale2=0, block_mask=bm))
show("missing list", lambda: bml.BlockMask({"kv_num_blocks": bm.kv_num_blocks}, (BM, BN), (Nq, Nkv)))

# FlexAttention's BlockMask (torch 1.13 has none: a duck-typed one with its attributes).


class FlexBlockMask:
    def __init__(self, block_size, lists, seq_lengths, full=True):
        self.BLOCK_SIZE = block_size
        self.seq_lengths = seq_lengths
        self.kv_num_blocks, self.kv_indices = lists["kv_num_blocks"], lists["kv_indices"]
        self.full_kv_num_blocks = lists["full_kv_num_blocks"] if full else None
        self.full_kv_indices = lists["full_kv_indices"] if full else None

    @staticmethod
    def mask_mod(b, h, q_idx, kv_idx):
        return doc_q[b, q_idx] == doc_q[b, kv_idx]


info = bml.tiles_for(attn.block_mask_info, 64)
Nkv8 = 8
doc8 = torch.tensor([[0, 0, 0, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1, 2, 2]], dtype=torch.int32).reshape(-1)
own8 = attn.block_mask(B, H, Nq, Nkv8, head_dim=64, device="cpu", doc_ids=doc8)
lists8 = {n: getattr(own8, n) for n in bml.KV_LISTS}
fbm = FlexBlockMask((BM, BN), lists8, (Nq, Nkv8))
conv, why = bml.from_flex(fbm, info, B, H, Nq, Nkv8, torch.device("cpu"))
print("flex converted", why, conv.dims, all(torch.equal(getattr(conv, n), lists8[n]) for n in bml.KV_LISTS),
      conv.mask_mod is fbm.mask_mod, "q_order as the library's", torch.equal(conv.q_order, own8.q_order))
one = FlexBlockMask((BM, BN), {n: t[:1] for n, t in lists8.items()}, (Nq, Nkv8))
conv, why = bml.from_flex(one, info, B, H, Nq, Nkv8, torch.device("cpu"))
print("flex B=1 broadcast to", conv.dims, torch.equal(conv.kv_indices[1], lists8["kv_indices"][0]))
perhead = FlexBlockMask((BM, BN), {n: t.expand(B, H, *t.shape[2:]) for n, t in lists8.items()}, (Nq, Nkv8))
conv, why = bml.from_flex(perhead, info, B, H, Nq, Nkv8, torch.device("cpu"))
print("flex H=3 taken as", conv.dims, conv.kv_indices.is_contiguous())
nofull = FlexBlockMask((BM, BN), lists8, (Nq, Nkv8), full=False)
conv, why = bml.from_flex(nofull, info, B, H, Nq, Nkv8, torch.device("cpu"))
print("flex without full lists: full counts", conv.full_kv_num_blocks.sum().item())
for label, f, nkv in (("flex other tiles", FlexBlockMask((128, 128), lists8, (Nq, Nkv8)), Nkv8),
                      ("flex ragged Nkv", FlexBlockMask((BM, BN), {n: getattr(bm, n) for n in bml.KV_LISTS},
                                                        (Nq, Nkv)), Nkv),
                      ("flex wrong shape", FlexBlockMask((BM, BN), {n: t[:, :, :1] for n, t in lists8.items()},
                                                         (Nq, Nkv8)), Nkv8)):
    print(label, bml.from_flex(f, info, B, H, Nq, nkv, torch.device("cpu")))

# cuir.flex_attention's choice: FlexAttention's lists where the kernel can walk them, else CuIR's own, computed
# once per BlockMask object and problem.
lib.calls.clear()
keys = torch.zeros(B, H, Nkv, d)
print("flex: compatible mask walked as given",
      flex._runtime_block_mask(attn, fbm, {"doc_ids": doc8}, q, torch.zeros(B, H, Nkv8, d)).kv_indices.data_ptr()
      == lists8["kv_indices"].data_ptr(), [c[0] for c in lib.calls])
ragged = FlexBlockMask((128, 128), {n: getattr(bm, n) for n in bml.KV_LISTS}, (Nq, Nkv))
first = flex._runtime_block_mask(attn, ragged, {"doc_ids": doc}, q, keys)
second = flex._runtime_block_mask(attn, ragged, {"doc_ids": doc}, q, keys)
print("flex: own lists once per BlockMask", first is second, [c[0] for c in lib.calls])
other = flex._runtime_block_mask(attn, ragged, {"doc_ids": doc[:Nkv]}, q[:1], keys[:1])
print("flex: another problem, new lists", other is not first, other.dims)
print("flex: a mask_mod gets none (computed per call)",
      flex._runtime_block_mask(attn, FlexBlockMask.mask_mod, {}, q, keys))
show("flex: cuir.BlockMask without mask_mod", lambda: flex._mask_mod_of(bm, Nq, Nkv))
print("cuir.BlockMask exported", cuir.BlockMask is bml.BlockMask)

# A mask reused across calls is checked at every call: a list replaced, or changed in place, is refused.
reused = bml.BlockMask({n: getattr(bm, n) for n in bml.LISTS}, (BM, BN), (Nq, Nkv))
attn(q, k, k, doc_ids=doc, scale2=0, block_mask=reused)
reused.kv_indices = bm.kv_indices.long()
show("list replaced after a call", lambda: attn(q, k, k, doc_ids=doc, scale2=0, block_mask=reused))
resized = bml.BlockMask({n: getattr(bm, n).clone() for n in bml.LISTS}, (BM, BN), (Nq, Nkv))
attn(q, k, k, doc_ids=doc, scale2=0, block_mask=resized)
resized.kv_num_blocks.resize_(2, 1, 2)  # in place: the same tensor, another shape
show("list resized in place after a call", lambda: attn(q, k, k, doc_ids=doc, scale2=0, block_mask=resized))

# The params of [B, H, N, d] tensors are those of their [B, N, H, d] views (strides permuted, no views made).
from cuir.kernel_lib import make_params  # noqa: E402
qs = torch.zeros(2, 7, 3, 64, dtype=torch.bfloat16)[:, :5].transpose(1, 2)  # [B, H, N, d] with padded rows
ks = torch.zeros(2, 9, 3, 64, dtype=torch.bfloat16).transpose(1, 2)
fields = [name for name, _ in AttentionParams._fields_]
as_bhnd = make_params(qs, ks, ks, qs, None, layout="bhnd", softmax_scale=0.5)
as_views = make_params(*(t.transpose(1, 2) for t in (qs, ks, ks, qs)), None, softmax_scale=0.5)
print("bhnd params as the views'", all(getattr(as_bhnd, f) == getattr(as_views, f) for f in fields),
      as_bhnd.q_row_stride, as_bhnd.q_head_stride, as_bhnd.seqlen_q, as_bhnd.num_heads_q)
show("3-D q", lambda: make_params(qs[0], ks, ks, qs, None, layout="bhnd"))
show("bad layout", lambda: make_params(qs, ks, ks, qs, None, layout="nhd"))
sys.stdout.flush()
