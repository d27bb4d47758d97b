// kv <= q + shift, the i32 shift zero-extended to index (2^32 - 13 for -13).
cuir.variant @castui_shift(%shift: i32 {cuir.param = "shift"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %s = arith.index_castui %shift : i32 to index
    %hi = arith.addi %q, %s : index
    %ok = arith.cmpi sle, %k, %hi : index
    cuir.yield %ok : i1
  }
}
