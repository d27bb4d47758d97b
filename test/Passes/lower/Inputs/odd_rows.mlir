// keep_lookup.mlir over rows of odd length: a pair of adjacent keys from an
// even key is not one aligned word in every row.
cuir.variant @odd_rows(%keep: memref<256x255xi1, #cuir.mem<global>> {cuir.param = "keep"}) normalizer softmax {
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = memref.load %keep[%q_idx, %kv_idx] : memref<256x255xi1, #cuir.mem<global>>
    cuir.yield %0 : i1
  }
}
