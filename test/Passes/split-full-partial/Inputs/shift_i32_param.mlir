// kv_idx <= q_idx + shift[h] in int32: shift[h] may be any int32, so the sum
// may wrap as torch's would; the analysis cannot bound it.
cuir.variant @shift_i32(%shift: memref<4xi32, #cuir.mem<global>> {cuir.param = "shift"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %q = arith.index_cast %q_idx : index to i32
    %k = arith.index_cast %kv_idx : index to i32
    %s = memref.load %shift[%h] : memref<4xi32, #cuir.mem<global>>
    %last = arith.addi %q, %s : i32
    %visible = arith.cmpi sle, %k, %last : i32
    cuir.yield %visible : i1
  }
}
