// Causal as kv - q <= Nkv - Nq.
cuir.variant @causal(%Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %off = arith.subi %Nkv, %Nq : index
    %d = arith.subi %k, %q : index
    %ok = arith.cmpi sle, %d, %off : index
    cuir.yield %ok : i1
  }
}
