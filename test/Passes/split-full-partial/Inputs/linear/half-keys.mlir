// 2 kv <= q: kv has coefficient 2 (the bound floor(q / 2) is not q + c).
cuir.variant @half_keys() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %c2 = arith.constant 2 : index
    %k2 = arith.muli %c2, %k : index
    %ok = arith.cmpi sle, %k2, %q : index
    cuir.yield %ok : i1
  }
}
