// Causal as q + off - kv >= 0.
cuir.variant @causal(%Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %c0 = arith.constant 0 : index
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %d = arith.subi %diag, %k : index
    %ok = arith.cmpi sge, %d, %c0 : index
    cuir.yield %ok : i1
  }
}
