"""A block mask's optional partial_bits, on the CPU against a test double of a variant library whose manifest
names them (and one, as a backward or older library, whose does not): BlockMask takes and checks them, the
struct mirror ends with them, the classification gets a buffer where the kernels read them (within the
budget, or as mask_bits says) and NULL otherwise, and the attention's field is NULL for a mask without them
or under CUIR_MASK_BITS=0."""
import ctypes
import json
import os
import pathlib
import tempfile

import torch

from cuir import block_mask as bml
from cuir import variant_lib
from cuir.kernel_lib import AttentionParams
from cuir.variant_lib import BlockMaskStruct, VariantKernel

from outcome import show

BM, BN = 4, 32  # one tile: 4 x 32 pairs, 4 words of bits
WORDS = BM * BN // 32
B, H, Nq, Nkv, d = 2, 3, 10, 64, 64
DIMS = (B, 1, -(-Nq // BM), -(-Nkv // BN))


def manifest(fields):
    return {"variant": "bits_test", "normalizer": "softmax", "is_causal": 0,
            "fields": [{"name": f, "type": "block_mask", "extent": ""} for f in fields.values()],
            "block_mask": {"entry": "cuir_flash_fwd_sm80_block_mask",
                           "dims_entry": "cuir_flash_fwd_sm80_block_mask_dims", "mask": "blocks",
                           "tiles": [{"head_dim": d, "block_m": BM, "block_n": BN, "depends": ["batch"]}],
                           "params": [], "fields": fields}}


class FakeLibrary:
    """The entries of a library with the list fields `fields`: the classification records the bits pointer it
    is given, the attention the params' bits field."""

    def __init__(self, fields):
        self.calls = []
        header = type("Header", (ctypes.Structure,), {"_fields_": [("base", AttentionParams)] + [
            (f, ctypes.c_void_p) for f in fields.values()]})
        self.cuir_attention_params_sizeof = lambda: ctypes.sizeof(header)

        def dims(params_ref, dims_out):
            for i, x in enumerate(DIMS):
                dims_out[i] = x
            return 0

        def classify(params_ref, mask_ref, stream):
            self.calls.append(("classify", mask_ref._obj.partial_bits or 0))
            return 0

        def attention(params_ref, stream):
            self.calls.append(("attention", getattr(params_ref._obj, "cuir_partial_bits", "no field") or 0))
            return 0

        self.cuir_flash_fwd_sm80_block_mask_dims = dims
        self.cuir_flash_fwd_sm80_block_mask = classify
        self.cuir_flash_fwd_sm80 = attention


def load(fields):
    tmp = pathlib.Path(tempfile.mkdtemp())
    (tmp / "bits_test.json").write_text(json.dumps(manifest(fields)))
    lib = FakeLibrary(fields)
    return VariantKernel(tmp / "libbits_test.so", lib=lib), lib


# The struct mirror: the nine pointers, the six int32 sizes, then the bits' pointer.
names = [n for n, _ in BlockMaskStruct._fields_]
print("struct", names[-1], BlockMaskStruct.partial_bits.offset, ctypes.sizeof(BlockMaskStruct))

LISTS = {n: "cuir_" + n for n in bml.WALKED_LISTS}
attn, lib = load({**LISTS, "partial_bits": "cuir_partial_bits"})
bm = attn.block_mask(B, H, Nq, Nkv, device="cpu")
print("bits", bm.partial_bits.dtype, list(bm.partial_bits.shape), "given to the classification",
      lib.calls == [("classify", bm.partial_bits.data_ptr())], "not in LISTS", "partial_bits" not in bml.LISTS)
info, cpu = bml.tiles_for(attn.block_mask_info), torch.device("cpu")
check = lambda m: bml.check_block_mask(m, info, B, H, Nq, Nkv, cpu)  # noqa: E731
lists = {n: getattr(bm, n) for n in bml.LISTS}
show("good bits", lambda: check(bml.BlockMask({**lists, "partial_bits": bm.partial_bits}, (BM, BN), (Nq, Nkv))))
show("no bits", lambda: check(bml.BlockMask(lists, (BM, BN), (Nq, Nkv))))
show("bits of another shape", lambda: check(bml.BlockMask(
    {**lists, "partial_bits": bm.partial_bits.reshape(*DIMS, 2, WORDS // 2)}, (BM, BN), (Nq, Nkv))))
show("int64 bits", lambda: check(bml.BlockMask({**lists, "partial_bits": bm.partial_bits.long()}, (BM, BN),
                                               (Nq, Nkv))))

# The attention's field: the mask's bits, NULL without them or under CUIR_MASK_BITS=0.
q, k = torch.zeros(B, H, Nq, d, dtype=torch.bfloat16), torch.zeros(B, H, Nkv, d, dtype=torch.bfloat16)
lib.calls.clear()
attn(q, k, k, block_mask=bm)
attn(q, k, k, block_mask=bml.BlockMask(lists, (BM, BN), (Nq, Nkv)))
print("attention: with bits", lib.calls[0] == ("attention", bm.partial_bits.data_ptr()), "without", lib.calls[1])
os.environ["CUIR_MASK_BITS"] = "0"
lib.calls.clear()
attn(q, k, k, block_mask=bm)
attn(q, k, k)
print("CUIR_MASK_BITS=0: calls", lib.calls)
print("CUIR_MASK_BITS=0: mask_bits=True", attn.block_mask(B, H, Nq, Nkv, device="cpu", mask_bits=True).partial_bits)
del os.environ["CUIR_MASK_BITS"]

# The budget: automatic within it, mask_bits=True past it, False never.
size = 4 * B * DIMS[2] * DIMS[3] * WORDS
variant_lib.MASK_BITS_BUDGET_BYTES = size - 1
print("past the budget:", attn.block_mask(B, H, Nq, Nkv, device="cpu").partial_bits,
      "mask_bits=True", list(attn.block_mask(B, H, Nq, Nkv, device="cpu", mask_bits=True).partial_bits.shape))
variant_lib.MASK_BITS_BUDGET_BYTES = size
print("at the budget:", attn.block_mask(B, H, Nq, Nkv, device="cpu").partial_bits is not None,
      "mask_bits=False", attn.block_mask(B, H, Nq, Nkv, device="cpu", mask_bits=False).partial_bits)
lib.calls.clear()
attn(q, k, k)
print("per call:", [c[0] for c in lib.calls], lib.calls[0][1] != 0 and lib.calls[0][1] == lib.calls[1][1])
show("mask_bits='yes'", lambda: attn.block_mask(B, H, Nq, Nkv, device="cpu", mask_bits="yes"))

# A library whose kernels read no bits (a backward pass, an older library): none computed, none bound.
old, old_lib = load(LISTS)
print("no bits field:", old.block_mask(B, H, Nq, Nkv, device="cpu").partial_bits, old_lib.calls)
old_lib.calls.clear()
old(q, k, k, block_mask=bm)
print("a mask with bits:", old_lib.calls)
show("no bits field, mask_bits=True", lambda: old.block_mask(B, H, Nq, Nkv, device="cpu", mask_bits=True))
