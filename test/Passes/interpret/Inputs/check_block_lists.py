"""Checks the block lists the interpreter dumped (dump=DIR) against a numpy
classification of the prefix-LM mask, written from DESIGN §9's definition:
usage: check_block_lists.py DIR PREFIX_LEN..."""
import json
import sys

import numpy as np

d = sys.argv[1]
prefix = [int(p) for p in sys.argv[2:]]
meta = json.load(open(d + "/meta.json"))
bm, bn = meta["block_mask"]["block_m"], meta["block_mask"]["block_n"]
B, Nq, Nkv = meta["B"], meta["Nq"], meta["Nkv"]
QB, KB = -(-Nq // bm), -(-Nkv // bn)
assert meta["block_mask"]["batches"] == B and meta["block_mask"]["heads"] == 1

q = np.arange(QB * bm).reshape(-1, 1)
kv = np.arange(KB * bn).reshape(1, -1)
in_range = (q < Nq) & (kv < Nkv)
want = {}
for name, shape in [("kv_num_blocks", (B, 1, QB)), ("kv_indices", (B, 1, QB, KB)),
                    ("full_kv_num_blocks", (B, 1, QB)), ("full_kv_indices", (B, 1, QB, KB)),
                    ("q_num_blocks", (B, 1, KB)), ("q_indices", (B, 1, KB, QB)),
                    ("full_q_num_blocks", (B, 1, KB)), ("full_q_indices", (B, 1, KB, QB))]:
    want[name] = np.zeros(shape, dtype=np.int32)
for b in range(B):
    visible = ((kv < prefix[b]) | (kv <= q + Nkv - Nq)) & in_range
    tiles = visible.reshape(QB, bm, KB, bn).sum(axis=(1, 3))
    whole = in_range.reshape(QB, bm, KB, bn).all(axis=(1, 3))
    full = whole & (tiles == bm * bn)
    partial = (tiles > 0) & ~full
    for kind, cls in (("", partial), ("full_", full)):
        for m in range(QB):
            row = [n for n in reversed(range(KB)) if cls[m, n]]
            want[kind + "kv_num_blocks"][b, 0, m] = len(row)
            want[kind + "kv_indices"][b, 0, m, :len(row)] = row
        for n in range(KB):
            col = [m for m in reversed(range(QB)) if cls[m, n]]
            want[kind + "q_num_blocks"][b, 0, n] = len(col)
            want[kind + "q_indices"][b, 0, n, :len(col)] = col
    # heavy-first: most listed tiles first, ties from the last query tile down
    listed = want["kv_num_blocks"][b, 0] + want["full_kv_num_blocks"][b, 0]
    want.setdefault("q_order", np.zeros((B, 1, QB), dtype=np.int32))
    want["q_order"][b, 0] = sorted(range(QB), key=lambda m: (listed[m], m), reverse=True)

for name, expected in want.items():
    got = np.load(d + "/" + name + ".npy")
    assert got.dtype == np.int32, (name, got.dtype)
    assert got.shape == expected.shape, (name, got.shape, expected.shape)
    assert (got == expected).all(), (name, got.tolist(), expected.tolist())
print("block lists match:", ", ".join(sorted(want)))
