// Causal as ~(kv > q + off).
cuir.variant @causal(%Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %true = arith.constant true
    %above = arith.cmpi sgt, %k, %diag : index
    %ok = arith.xori %above, %true : i1
    cuir.yield %ok : i1
  }
}
