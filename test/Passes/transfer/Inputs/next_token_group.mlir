// Reads group[kv_idx + 1]: out of range at the last key, a visible position.
cuir.variant @next_group(%group: memref<16xi32, #cuir.mem<global>> {cuir.param = "group", cuir.default = dense<0> : tensor<16xi32>}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %c1 = arith.constant 1 : index
    %next = arith.addi %kv_idx, %c1 : index
    %g = memref.load %group[%next] : memref<16xi32, #cuir.mem<global>>
    %c0 = arith.constant 0 : i32
    %visible = arith.cmpi eq, %g, %c0 : i32
    cuir.yield %visible : i1
  }
}
