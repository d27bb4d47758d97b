"""Gives the kernels of a Target CuIR file (a transfer's `<stem>.target.cuir.mlir`) a runtime block mask, as
the transform will: the four list arguments `block_mask:<list>` (recorded as new parameters), the attribute
`cuir.block_mask = @<mask>` and the cuir.block_mask ops, one per head dim with that head dim's tiles.

usage: add_block_mask.py IN OUT MASK TILES [TILES...]
  MASK: document (doc_ids[b * Nkv + q] == doc_ids[b * Nkv + kv], depends [batch]),
        heads (kv <= q or alibi_slopes[h] > 0.5, depends [heads]),
        plain (kv % 3 != q % 5, depends nothing; reads the kernels' Nq and Nkv),
        mixed (document at head dim 128, plain at 64: two masks, which lowering refuses),
        clamped (document with the padding clamps min(q, Nq - 1), min(Nkv - 1, kv), and min(q, Nkv - 1)),
        window32 (q - kv <= 48 in i32: a device helper, cuir_subi_i32),
        scale (softmax_scale > 0: an argument the classification does not have, which lowering refuses)
  TILES: <head dim>:<block_m>x<block_n>, e.g. 128:128x64
The kernel arguments the mask reads must exist (the document and alibi transfers add doc_ids, alibi_slopes)."""
import re
import sys

LISTS = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices")
MEM = "memref<?xi32, #cuir.mem<global>>"
MASKS = {
    "document": ('%ids: {m} {{cuir.arg = "param:doc_ids", cuir.extent = "batch*kv"}}, %Nkv: index {{cuir.arg = '
                 '"Nkv"}}', "depends [batch]", """
    %row = arith.muli %b, %Nkv : index
    %iq = arith.addi %row, %q : index
    %ik = arith.addi %row, %kv : index
    %dq = memref.load %ids[%iq] : {m}
    %dk = memref.load %ids[%ik] : {m}
    %v = arith.cmpi eq, %dq, %dk : i32
    cuir.yield %v : i1"""),
    "heads": ('%s: memref<?xf32, #cuir.mem<global>> {{cuir.arg = "param:alibi_slopes", cuir.extent = "heads"}}',
              "depends [heads]", """
    %causal = arith.cmpi ule, %kv, %q : index
    %sh = memref.load %s[%h] : memref<?xf32, #cuir.mem<global>>
    %half = arith.constant 5.000000e-01 : f32
    %steep = arith.cmpf ogt, %sh, %half : f32
    %v = arith.ori %causal, %steep : i1
    cuir.yield %v : i1"""),
    "plain": ('%Nq: index {{cuir.arg = "Nq"}}, %Nkv: index {{cuir.arg = "Nkv"}}', "", """
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %a = arith.remsi %kv, %c3 : index
    %c = arith.remsi %q, %c5 : index
    %v = arith.cmpi ne, %a, %c : index
    cuir.yield %v : i1"""),
    "clamped": ('%ids: {m} {{cuir.arg = "param:doc_ids", cuir.extent = "batch*kv"}}, %Nq: index {{cuir.arg = "Nq"}}, '
                '%Nkv: index {{cuir.arg = "Nkv"}}', "depends [batch]", """
    %c1 = arith.constant 1 : index
    %lq = arith.subi %Nq, %c1 : index
    %qc = arith.minsi %q, %lq : index
    %lk = arith.subi %Nkv, %c1 : index
    %kc = arith.minsi %lk, %kv : index
    %qk = arith.minsi %q, %lk : index
    %row = arith.muli %b, %Nkv : index
    %iq = arith.addi %row, %qc : index
    %ik = arith.addi %row, %kc : index
    %iqk = arith.addi %row, %qk : index
    %dq = memref.load %ids[%iq] : {m}
    %dk = memref.load %ids[%ik] : {m}
    %dqk = memref.load %ids[%iqk] : {m}
    %same = arith.cmpi eq, %dq, %dk : i32
    %also = arith.cmpi eq, %dqk, %dk : i32
    %v = arith.andi %same, %also : i1
    cuir.yield %v : i1"""),
    "window32": ('%Nq: index {{cuir.arg = "Nq"}}', "", """
    %q32 = arith.index_cast %q : index to i32
    %k32 = arith.index_cast %kv : index to i32
    %d = arith.subi %q32, %k32 : i32
    %w = arith.constant 48 : i32
    %v = arith.cmpi sle, %d, %w : i32
    cuir.yield %v : i1"""),
    "scale": ('%s: f32 {{cuir.arg = "softmax_scale"}}', "", """
    %zero = arith.constant 0.000000e+00 : f32
    %v = arith.cmpf ogt, %s, %zero : f32
    cuir.yield %v : i1"""),
}


def main(src, dst, mask, *tiles):
    tiles = dict(t.split(":") for t in tiles)
    text = open(src).read()
    args, depends, body = MASKS.get(mask, MASKS["document"])
    new_args = "".join(f', %bm_{n}: {MEM} {{cuir.arg = "block_mask:{n}", cuir.change = #cuir.change<parameter>}}'
                       for n in LISTS)
    used = set()

    def kernel(m):
        head_dim = re.search(r"memref<\?x\?x\?x(\d+)x", m.group(0)).group(1)
        used.add(head_dim)
        line = m.group(0).replace(") grid (", new_args + ") grid (", 1)
        return line.replace("attributes {", f"attributes {{cuir.block_mask = @blocks_d{head_dim}, ", 1)

    text = re.sub(r"^  cuir\.kernel @.*$", kernel, text, flags=re.M)
    ops = ""
    for head_dim in sorted(used):
        if mask == "mixed":
            args, depends, body = MASKS["document" if head_dim == "128" else "plain"]
        bm, bn = tiles[head_dim].split("x")
        ops += (f"  cuir.block_mask @blocks_d{head_dim}({args.format(m=MEM)}) tiles {bm} x {bn} {depends} "
                f"coords(%b, %h, %q, %kv) {{{body.format(m=MEM)}\n  }}\n")
    end = text.rindex("\n}")  # the module's closing brace
    open(dst, "w").write(text[:end + 1] + ops + text[end + 1:])


if __name__ == "__main__":
    main(*sys.argv[1:])
