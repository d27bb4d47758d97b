// A mask reading a captured per-token tensor at q_idx and kv_idx, and a
// comparison of the coordinates themselves.
cuir.variant @same_group(%group: memref<16xi32, #cuir.mem<global>> {cuir.param = "group", cuir.default = dense<[0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3]> : tensor<16xi32>}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %gq = memref.load %group[%q_idx] : memref<16xi32, #cuir.mem<global>>
    %gk = memref.load %group[%kv_idx] : memref<16xi32, #cuir.mem<global>>
    %same = arith.cmpi eq, %gq, %gk : i32
    %past = arith.cmpi sle, %kv_idx, %q_idx : index
    %visible = arith.andi %same, %past : i1
    cuir.yield %visible : i1
  }
}
