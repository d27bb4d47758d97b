// A causal window whose width depends on the query head: 16 * (h + 1) keys.
cuir.variant @head_window() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %h1 = arith.addi %h, %c1 : index
    %width = arith.muli %h1, %c16 : index
    %past = arith.cmpi sle, %kv_idx, %q_idx : index
    %dist = arith.subi %q_idx, %kv_idx : index
    %near = arith.cmpi slt, %dist, %width : index
    %visible = arith.andi %past, %near : i1
    cuir.yield %visible : i1
  }
}
