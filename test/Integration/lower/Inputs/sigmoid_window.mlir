// Traced: normalizer="sigmoid", mask_mod (kv_idx <= q_idx) & (kv_idx >= q_idx - 20).
cuir.variant @sigwin() normalizer sigmoid {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = arith.index_cast %kv_idx : index to i32 loc("sigmoid_window.py":2:1)
    %1 = arith.index_cast %q_idx : index to i32 loc("sigmoid_window.py":2:1)
    %2 = arith.cmpi sle, %0, %1 : i32 loc("sigmoid_window.py":2:1)
    %3 = arith.constant 20 : i32 loc("sigmoid_window.py":2:1)
    %4 = arith.subi %1, %3 : i32 loc("sigmoid_window.py":2:1)
    %5 = arith.cmpi sge, %0, %4 : i32 loc("sigmoid_window.py":2:1)
    %6 = arith.andi %2, %5 : i1 loc("sigmoid_window.py":2:1)
    cuir.yield %6 : i1
  }
}
