"""Runtime block masks: which tiles of the attention matrix a variant kernel visits, and how.

    attn = cuir.compile(mask_mod=document, kernel="sm90")   # a mask that needs a runtime block mask
    bm = attn.block_mask(B, H, Nq, Nkv, doc_ids=ids)         # computed on the GPU, once
    out = attn(q, k, v, doc_ids=ids, block_mask=bm)          # reused across calls and layers
    out = attn(q, k, v, doc_ids=ids)                         # or computed at each call

A BlockMask holds FlexAttention's lists (int32 CUDA tensors) for tiles of block_m x block_n, the kernel's:
kv_num_blocks [B', H', QB] and kv_indices [B', H', QB, KB] (the partial KV tiles of each query tile),
full_kv_num_blocks / full_kv_indices (the full ones), and the transposed q_* lists [B', H', KB] /
[B', H', KB, QB], and q_order [B', H', QB] (the query tiles from the most listed KV tiles to the fewest, ties
from the last one down: the kernels take them in that order). QB = ceil(Nq / block_m), KB = ceil(Nkv / block_n); B' is B if the mask reads the batch
index, else 1, and H' is Hq if it reads the head, else 1 (the rows broadcast). A tile is empty if no in-range
pair of it is visible, full if all its pairs are in range and visible (a ragged last tile never is), else
partial. CuIR's lists are in descending tile order, the entries after a row's count 0.

A BlockMask may also hold partial_bits, int32 [B', H', QB, KB, block_m * block_n // 32]: the mask's bits of
each partial tile (bit c % 32 of word r * block_n // 32 + c // 32 is pair (r, c), 1 visible), written only for
the tiles the partial lists name and, in a row without partial tiles, for its first full tile (the sm_90
forward's first step always runs the mask), so that a forward kernel loads them instead of evaluating the mask
per score.
The libraries whose kernels read them (their manifest's block_mask "fields" has "partial_bits") compute them
with the lists; without them (None: a mask converted from FlexAttention's, or dropped) the kernels evaluate the
mask themselves, which is always correct.
"""

LISTS = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
         "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices", "q_order")
KV_LISTS = LISTS[:4]
# What the kernels read: the kv lists and the order of the query tiles.
WALKED_LISTS = KV_LISTS + ("q_order",)
# The optional bits of the partial tiles (not one of FlexAttention's lists).
BITS = "partial_bits"

# Tile classes of BlockMask.to_dense().
EMPTY, PARTIAL, FULL = 0, 1, 2


class BlockMask:
    """The block lists of one problem (see the module's docstring). Attributes: the nine lists (the
    transposed q_* lists may be None for a mask converted from FlexAttention without them; q_order is computed
    from the kv lists when not given), partial_bits (optional, lists["partial_bits"]: see the module's
    docstring), block_size = (block_m, block_n), seq_lengths = (Nq, Nkv), batch and heads (B', H'), and
    mask_mod (the function it was made from, if known)."""

    def __init__(self, lists, block_size, seq_lengths, mask_mod=None):
        missing = [name for name in KV_LISTS if lists.get(name) is None]
        if missing:
            raise ValueError(f"BlockMask: the lists {', '.join(missing)} are needed")
        for name in LISTS + (BITS,):
            setattr(self, name, lists.get(name))
        self.block_size = tuple(int(x) for x in block_size)
        self.seq_lengths = tuple(int(x) for x in seq_lengths)
        self.mask_mod = mask_mod
        self.batch, self.heads, self.q_blocks = (int(x) for x in self.kv_num_blocks.shape)
        self.kv_blocks = int(self.kv_indices.shape[-1])
        if self.q_order is None:
            self.q_order = heavy_first(self.kv_num_blocks, self.full_kv_num_blocks)

    @property
    def BLOCK_SIZE(self):  # FlexAttention's name
        return self.block_size

    @property
    def device(self):
        return self.kv_num_blocks.device

    @property
    def dims(self):
        """(B', H', QB, KB)."""
        return self.batch, self.heads, self.q_blocks, self.kv_blocks

    def to_dense(self):
        """The tile classes, int32 [B', H', QB, KB]: 0 empty, 1 partial, 2 full (FlexAttention's to_dense()
        is `to_dense() > 0`). For debugging: it reads the lists only."""
        import torch
        dense = torch.zeros(self.dims, dtype=torch.int32, device=self.device)
        for num, idx, cls in (("kv_num_blocks", "kv_indices", PARTIAL),
                              ("full_kv_num_blocks", "full_kv_indices", FULL)):
            counts, indices = getattr(self, num), getattr(self, idx)
            valid = torch.arange(self.kv_blocks, device=self.device) < counts.unsqueeze(-1)
            # scatter_add: the entries past a row's count (all pointing somewhere) add 0
            dense.scatter_add_(-1, indices.long() * valid, valid.int() * cls)
        return dense

    def __repr__(self):
        B, H, QB, KB = self.dims
        return (f"cuir.BlockMask(B'={B}, H'={H}, QB={QB}, KB={KB}, block_size={self.block_size}, "
                f"seq_lengths={self.seq_lengths}, device={self.device})")


def heavy_first(kv_num_blocks, full_kv_num_blocks):
    """q_order of the kv lists' counts: each row's query tiles by descending listed tiles, ties by descending
    tile (as the library's classification writes it), int32 [B', H', QB]."""
    import torch
    qb = kv_num_blocks.shape[-1]
    tiles = kv_num_blocks.long() + full_kv_num_blocks.long()
    key = tiles * qb + torch.arange(qb, device=tiles.device)
    return torch.argsort(key, dim=-1, descending=True).to(torch.int32).contiguous()


def tiles_for(info, head_dim=None):
    """The tiles entry of a library's block mask (its manifest's "block_mask") for kernels of `head_dim`:
    {"head_dim", "block_m", "block_n", "depends"}. Without a head dim, the one entry, or the first where all
    have the same tiles and depends; else a ValueError asks for it."""
    tiles = info["tiles"]
    if head_dim is None:
        same = {(t["block_m"], t["block_n"], tuple(t["depends"])) for t in tiles}
        if len(same) == 1:
            return tiles[0]
        raise ValueError("this library's tiles depend on the head dim (" +
                         ", ".join(f"{t['head_dim']}: {t['block_m']} x {t['block_n']}" for t in tiles) +
                         "): give head_dim")
    for t in tiles:
        if t["head_dim"] == head_dim:
            return t
    raise ValueError(f"this library has no kernel for head dim {head_dim} (it has "
                     f"{', '.join(str(t['head_dim']) for t in tiles)})")


def expected_dims(info, B, H, Nq, Nkv, Hkv=None):
    """(B', H', QB, KB) of a problem for the tiles entry `info` of a library's block mask (tiles_for). Lists per
    KV head (depends "kv_heads": a backward pass's rows of a GQA group's query heads together) need Hkv."""
    bm, bn = info["block_m"], info["block_n"]
    if "kv_heads" in info["depends"]:
        if Hkv is None:
            raise ValueError("this library's lists have a row per KV head: give the number of KV heads")
        heads = Hkv
    else:
        heads = H if "heads" in info["depends"] else 1
    return (B if "batch" in info["depends"] else 1, heads, -(-Nq // bm), -(-Nkv // bn))


def check_block_mask(bm, info, B, H, Nq, Nkv, device, Hkv=None):
    """A ValueError (what differs) unless `bm` is a BlockMask whose kv lists the kernels of the tiles entry
    `info` (tiles_for) can walk for this problem: its tiles, lengths, dims, device and int32 contiguous
    lists, and those of its partial_bits where it has them."""
    import torch
    if not isinstance(bm, BlockMask):
        raise TypeError(f"block_mask must be a cuir.BlockMask (attn.block_mask(...)), not {type(bm).__name__}")
    tiles = (info["block_m"], info["block_n"])
    if bm.block_size != tiles:
        raise ValueError(f"block_mask has tiles of {bm.block_size[0]} x {bm.block_size[1]}, the kernel's are "
                         f"{tiles[0]} x {tiles[1]}")
    if bm.seq_lengths != (Nq, Nkv):
        raise ValueError(f"block_mask was made for (Nq, Nkv) = {bm.seq_lengths}, the inputs have ({Nq}, {Nkv})")
    want = expected_dims(info, B, H, Nq, Nkv, Hkv)
    if bm.dims != want:
        raise ValueError(f"block_mask has (B', H', QB, KB) = {bm.dims}, this problem needs {want} (B={B}, "
                         f"Hq={H}; the mask depends on {', '.join(info['depends']) or 'neither batch nor heads'})")
    B_, H_, QB, KB = want
    shapes = {name: (B_, H_, QB, KB) if name.endswith("indices") else (B_, H_, QB) for name in WALKED_LISTS}
    if bm.partial_bits is not None:
        shapes[BITS] = (B_, H_, QB, KB, tiles[0] * tiles[1] // 32)
    for name, shape in shapes.items():
        t = getattr(bm, name)
        if tuple(t.shape) != shape or t.dtype != torch.int32 or not t.is_contiguous():
            raise ValueError(f"block_mask.{name}: expected a contiguous int32 tensor of shape {list(shape)}, "
                             f"got {t.dtype} {list(t.shape)}")
        if t.device != device:
            raise ValueError(f"block_mask.{name} is on {t.device}, the inputs on {device}")


def from_flex(fbm, info, B, H, Nq, Nkv, device):
    """FlexAttention's BlockMask as the kernels of the tiles entry `info` (tiles_for) walk it, or None (with
    the reason) where it cannot
    be: its BLOCK_SIZE must be the kernel's tiles, Nkv a multiple of block_n (FlexAttention may call a ragged
    last KV tile full; CuIR's kernels must mask it), and its lists of this problem's QB x KB tiles with a batch
    and head dimension of 1 or B (Hq). Rows are broadcast or taken as the kernel's B', H' need (a mask that
    reads neither b nor h has equal rows). It has no partial_bits: the kernels evaluate the mask of its
    partial tiles."""
    import torch
    tiles = (info["block_m"], info["block_n"])
    if "kv_heads" in info["depends"]:
        return None, "the kernel's lists have a row per KV head (its GQA group's query heads merged)"
    size = getattr(fbm, "BLOCK_SIZE", None)
    size = tuple(size) if isinstance(size, (tuple, list)) else (size, size)
    if size != tiles:
        return None, f"its BLOCK_SIZE {size} is not the kernel's tiles {tiles}"
    if Nkv % tiles[1]:
        return None, f"Nkv = {Nkv} is not a multiple of the kernel's {tiles[1]} keys per tile"
    B_, H_, QB, KB = expected_dims(info, B, H, Nq, Nkv)
    num = fbm.kv_num_blocks
    if num.dim() != 3 or num.shape[0] not in (1, B) or num.shape[1] not in (1, H) or num.shape[2] != QB or \
            tuple(fbm.kv_indices.shape) != (*num.shape, KB):
        return None, (f"its lists have shape {list(num.shape)} / {list(fbm.kv_indices.shape)}, not [1 or {B}, "
                      f"1 or {H}, {QB}(, {KB})]")

    def fit(t):
        t = t.to(device=device, dtype=torch.int32)
        t = t[:1] if B_ == 1 else t.expand(B_, *t.shape[1:])
        t = t[:, :1] if H_ == 1 else t.expand(t.shape[0], H_, *t.shape[2:])
        return t.contiguous()

    full_num, full_idx = fbm.full_kv_num_blocks, fbm.full_kv_indices
    if full_num is None:  # no full tiles: every listed tile is masked
        full_num, full_idx = torch.zeros_like(num), torch.zeros_like(fbm.kv_indices)
    lists = {"kv_num_blocks": fit(num), "kv_indices": fit(fbm.kv_indices),
             "full_kv_num_blocks": fit(full_num), "full_kv_indices": fit(full_idx)}
    return BlockMask(lists, tiles, (Nq, Nkv), getattr(fbm, "mask_mod", None)), None
