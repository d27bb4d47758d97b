// kv <= 2 q: a key bound with slope 2 in q.
cuir.variant @slope_two() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %c2 = arith.constant 2 : index
    %q2 = arith.muli %q, %c2 : index
    %ok = arith.cmpi sle, %k, %q2 : index
    cuir.yield %ok : i1
  }
}
