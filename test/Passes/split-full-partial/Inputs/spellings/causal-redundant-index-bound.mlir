// FlexAttention's causal mask and a bound every in-range pair meets, in index
// arithmetic: kv <= q and kv + 2^32 >= q.
cuir.variant @causal_redundant_index() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q: index, %k: index):
    %c = arith.constant 4294967296 : index
    %far = arith.addi %k, %c : index
    %near = arith.cmpi sle, %k, %q : index
    %within = arith.cmpi sge, %far, %q : index
    %ok = arith.andi %near, %within : i1
    cuir.yield %ok : i1
  }
}
