// Two bands a row: keys [q - 9, q] and [q - 99, q - 90].
cuir.variant @two_bands() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %c0 = arith.constant 0 : index
    %c9 = arith.constant 9 : index
    %c90 = arith.constant 90 : index
    %c99 = arith.constant 99 : index
    %d = arith.subi %q, %k : index
    %near_lo = arith.cmpi sge, %d, %c0 : index
    %near_hi = arith.cmpi sle, %d, %c9 : index
    %far_lo = arith.cmpi sge, %d, %c90 : index
    %far_hi = arith.cmpi sle, %d, %c99 : index
    %near = arith.andi %near_lo, %near_hi : i1
    %far = arith.andi %far_lo, %far_hi : i1
    %ok = arith.ori %near, %far : i1
    cuir.yield %ok : i1
  }
}
