// Prefix-LM as ~(kv >= prefix & kv > q + off).
cuir.variant @prefixlm(%prefix_len: memref<?xi32, #cuir.mem<global>> {cuir.param = "prefix_len", cuir.extent = "batch"}, %Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %p = memref.load %prefix_len[%b] : memref<?xi32, #cuir.mem<global>>
    %prefix = arith.index_cast %p : i32 to index
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %past_prefix = arith.cmpi sge, %k, %prefix : index
    %above = arith.cmpi sgt, %k, %diag : index
    %hidden = arith.andi %past_prefix, %above : i1
    %true = arith.constant true
    %ok = arith.xori %hidden, %true : i1
    cuir.yield %ok : i1
  }
}
