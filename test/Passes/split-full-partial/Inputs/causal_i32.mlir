// Causal as the tracer writes it: FlexAttention's int32 coordinates.
cuir.variant @causal_i32() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %q = arith.index_cast %q_idx : index to i32
    %k = arith.index_cast %kv_idx : index to i32
    %c7 = arith.constant 7 : i32
    %last = arith.addi %q, %c7 : i32
    %visible = arith.cmpi sle, %k, %last : i32
    cuir.yield %visible : i1
  }
}
