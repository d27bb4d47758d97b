// Causal as where(kv <= q + off, True, False).
cuir.variant @causal(%Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %true = arith.constant true
    %false = arith.constant false
    %c = arith.cmpi sle, %k, %diag : index
    %ok = arith.select %c, %true, %false : i1
    cuir.yield %ok : i1
  }
}
