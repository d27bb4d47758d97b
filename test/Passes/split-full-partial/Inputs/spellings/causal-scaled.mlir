// Causal as 2 kv < 2 (q + off) + 1.
cuir.variant @causal(%Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %k2 = arith.muli %k, %c2 : index
    %d2 = arith.muli %c2, %diag : index
    %d21 = arith.addi %d2, %c1 : index
    %ok = arith.cmpi slt, %k2, %d21 : index
    cuir.yield %ok : i1
  }
}
