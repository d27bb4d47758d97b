// Causal, or every key when an int32 parameter is nonzero: pieces bounded by
// the parameter alone.
cuir.variant @flag(%everything: i32 {cuir.param = "everything"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %c0 = arith.constant 0 : i32
    %causal = arith.cmpi sle, %k, %q : index
    %set = arith.cmpi ne, %everything, %c0 : i32
    %ok = arith.ori %causal, %set : i1
    cuir.yield %ok : i1
  }
}
