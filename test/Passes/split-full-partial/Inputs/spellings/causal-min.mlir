// Causal as min(kv, q + off) == kv.
cuir.variant @causal(%Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %m = arith.minsi %k, %diag : index
    %ok = arith.cmpi eq, %m, %k : index
    cuir.yield %ok : i1
  }
}
