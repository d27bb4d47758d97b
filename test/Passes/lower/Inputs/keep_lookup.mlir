// A mask that reads a captured [Nq, Nkv] tensor per (q_idx, kv_idx): the
// transfer keeps both indices within the kernel's sequence lengths.
cuir.variant @keep_lookup(%keep: memref<256x256xi1, #cuir.mem<global>> {cuir.param = "keep"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = memref.load %keep[%q_idx, %kv_idx] : memref<256x256xi1, #cuir.mem<global>>
    cuir.yield %0 : i1
  }
}
