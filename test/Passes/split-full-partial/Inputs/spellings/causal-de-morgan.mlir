// Causal as ~(~(kv <= q + off) | kv < 0) (no key is negative).
cuir.variant @causal(%Nq: index {cuir.param = "Nq"}, %Nkv: index {cuir.param = "Nkv"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %c0 = arith.constant 0 : index
    %true = arith.constant true
    %off = arith.subi %Nkv, %Nq : index
    %diag = arith.addi %q, %off : index
    %c = arith.cmpi sle, %k, %diag : index
    %nc = arith.xori %true, %c : i1
    %neg = arith.cmpi slt, %k, %c0 : index
    %any = arith.ori %nc, %neg : i1
    %ok = arith.xori %any, %true : i1
    cuir.yield %ok : i1
  }
}
