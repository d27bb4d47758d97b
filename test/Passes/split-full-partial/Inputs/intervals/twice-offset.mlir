// kv <= q + 2 (Nkv - Nq): a term with coefficient 2, causal when Nq = Nkv.
cuir.variant @twice_offset(%Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %c2 = arith.constant 2 : index
    %off = arith.subi %Nkv, %Nq : index
    %off2 = arith.muli %off, %c2 : index
    %diag = arith.addi %q, %off2 : index
    %ok = arith.cmpi sle, %k, %diag : index
    cuir.yield %ok : i1
  }
}
