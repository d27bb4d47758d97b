// FlexAttention's causal mask as min(q, kv) == kv: a piece kv < q and a
// piece kv == q, whose bounds include ones that never decide.
cuir.variant @causal_min_eq() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %m = arith.minsi %q, %k : index
    %ok = arith.cmpi eq, %m, %k : index
    cuir.yield %ok : i1
  }
}
