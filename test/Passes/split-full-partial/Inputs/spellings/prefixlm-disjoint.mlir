// Prefix-LM as kv < prefix | (kv >= prefix & kv <= q + off): two disjoint pieces.
cuir.variant @prefixlm(%prefix_len: memref<?xi32, #cuir.mem<global>> {cuir.param = "prefix_len", cuir.extent = "batch"}, %Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %p = memref.load %prefix_len[%b] : memref<?xi32, #cuir.mem<global>>
    %prefix = arith.index_cast %p : i32 to index
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %in_prefix = arith.cmpi slt, %k, %prefix : index
    %past_prefix = arith.cmpi sge, %k, %prefix : index
    %causal = arith.cmpi sle, %k, %diag : index
    %rest = arith.andi %past_prefix, %causal : i1
    %ok = arith.ori %rest, %in_prefix : i1
    cuir.yield %ok : i1
  }
}
