// keep_lookup.mlir with a 4-byte element: a mask that reads a captured
// [Nq, Nkv] tensor of i32 per (q_idx, kv_idx), nonzero where visible.
cuir.variant @keep_lookup(%keep: memref<256x256xi32, #cuir.mem<global>> {cuir.param = "keep"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = memref.load %keep[%q_idx, %kv_idx] : memref<256x256xi32, #cuir.mem<global>>
    %c0 = arith.constant 0 : i32
    %1 = arith.cmpi ne, %0, %c0 : i32
    cuir.yield %1 : i1
  }
}
