// The same window as max(q, kv) - min(q, kv) <= 12.
cuir.variant @window_max_minus_min() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %hi = arith.maxsi %q, %k : index
    %lo = arith.minsi %q, %k : index
    %d = arith.subi %hi, %lo : index
    %c12 = arith.constant 12 : index
    %ok = arith.cmpi sle, %d, %c12 : index
    cuir.yield %ok : i1
  }
}
