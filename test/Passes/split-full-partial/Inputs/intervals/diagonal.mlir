// The diagonal as an equality, kv == q + off: the window [q + off, q + off].
cuir.variant @diagonal(%Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %ok = arith.cmpi eq, %k, %diag : index
    cuir.yield %ok : i1
  }
}
