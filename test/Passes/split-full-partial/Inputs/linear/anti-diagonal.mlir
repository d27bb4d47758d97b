// q + kv >= 100: keys from 100 - q, a bound falling with q.
cuir.variant @anti_diagonal() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %c100 = arith.constant 100 : index
    %s = arith.addi %q, %k : index
    %ok = arith.cmpi sge, %s, %c100 : index
    cuir.yield %ok : i1
  }
}
