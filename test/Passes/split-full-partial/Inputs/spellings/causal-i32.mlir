// Causal in int32: q - kv >= Nq - Nkv (no i32 result can wrap: sizes are below 2^30).
cuir.variant @causal(%Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %q32 = arith.index_cast %q : index to i32
    %k32 = arith.index_cast %k : index to i32
    %nq = arith.index_cast %Nq : index to i32
    %nkv = arith.index_cast %Nkv : index to i32
    %d = arith.subi %q32, %k32 : i32
    %e = arith.subi %nq, %nkv : i32
    %ok = arith.cmpi sge, %d, %e : i32
    cuir.yield %ok : i1
  }
}
