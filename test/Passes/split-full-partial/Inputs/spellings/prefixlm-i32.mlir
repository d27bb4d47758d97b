// Prefix-LM in int32: kv < prefix_len[b] | kv - q <= Nkv - Nq.
cuir.variant @prefixlm(%prefix_len: memref<?xi32, #cuir.mem<global>> {cuir.param = "prefix_len", cuir.extent = "batch"}, %Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %p = memref.load %prefix_len[%b] : memref<?xi32, #cuir.mem<global>>
    %q32 = arith.index_cast %q : index to i32
    %k32 = arith.index_cast %k : index to i32
    %nq = arith.index_cast %Nq : index to i32
    %nkv = arith.index_cast %Nkv : index to i32
    %in_prefix = arith.cmpi slt, %k32, %p : i32
    %d = arith.subi %k32, %q32 : i32
    %off = arith.subi %nkv, %nq : i32
    %causal = arith.cmpi sle, %d, %off : i32
    %ok = arith.ori %causal, %in_prefix : i1
    cuir.yield %ok : i1
  }
}
