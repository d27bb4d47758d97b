// FlexAttention's causal mask in index arithmetic: keys [0, q].
cuir.variant @causal() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %ok = arith.cmpi sle, %k, %q : index
    cuir.yield %ok : i1
  }
}
