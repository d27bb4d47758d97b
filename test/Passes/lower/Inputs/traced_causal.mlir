// A causal mask as the tracer writes `~(kv_idx > q_idx)`: canonicalization
// turns the select of the negated compare into select(kv > q, -inf, s).
cuir.variant @traced_causal() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = arith.index_cast %kv_idx : index to i32
    %1 = arith.index_cast %q_idx : index to i32
    %2 = arith.cmpi sgt, %0, %1 : i32
    %3 = arith.constant true
    %4 = arith.xori %2, %3 : i1
    cuir.yield %4 : i1
  }
}
