// A causal window whose width depends on the query head: 100 * h + 1 keys
// (head 0 its own key only, head 3 every key of the tests' shapes).
cuir.variant @group_window() normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %c1 = arith.constant 1 : index
    %c100 = arith.constant 100 : index
    %h100 = arith.muli %h, %c100 : index
    %width = arith.addi %h100, %c1 : index
    %past = arith.cmpi sle, %kv_idx, %q_idx : index
    %dist = arith.subi %q_idx, %kv_idx : index
    %near = arith.cmpi slt, %dist, %width : index
    %visible = arith.andi %past, %near : i1
    cuir.yield %visible : i1
  }
}
