// FlexAttention's causal mask and a bound every in-range pair meets,
// (kv >= q - 2^40) & (kv <= q) in int64, as traced from Python.
cuir.variant @causal_redundant_int64() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = arith.index_cast %kv_idx : index to i32
    %1 = arith.extsi %0 : i32 to i64
    %2 = arith.index_cast %q_idx : index to i32
    %3 = arith.extsi %2 : i32 to i64
    %4 = arith.constant 1099511627776 : i64
    %5 = arith.subi %3, %4 : i64
    %6 = arith.cmpi sge, %1, %5 : i64
    %7 = arith.cmpi sle, %0, %2 : i32
    %8 = arith.andi %6, %7 : i1
    cuir.yield %8 : i1
  }
}
