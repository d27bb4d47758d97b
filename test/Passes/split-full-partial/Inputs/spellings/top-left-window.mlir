// The traced window's meaning in index arithmetic: keys [q - 47, q].
cuir.variant @window() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %c47 = arith.constant 47 : index
    %lo = arith.subi %q, %c47 : index
    %above = arith.cmpi sge, %k, %lo : index
    %below = arith.cmpi sle, %k, %q : index
    %ok = arith.andi %above, %below : i1
    cuir.yield %ok : i1
  }
}
