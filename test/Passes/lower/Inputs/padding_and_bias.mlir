// A captured per-key padding mask (read once per key) and a captured f16
// bias (once per score): only the bias is gathered, and staged.
cuir.variant @padding_and_bias(%valid: memref<256xi1, #cuir.mem<global>> {cuir.param = "valid"}, %bias: memref<256x256xf16, #cuir.mem<global>> {cuir.param = "bias"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = memref.load %bias[%q_idx, %kv_idx] : memref<256x256xf16, #cuir.mem<global>>
    %1 = arith.extf %0 : f16 to f32
    %2 = arith.addf %score, %1 : f32
    cuir.yield %2 : f32
  }
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = memref.load %valid[%kv_idx] : memref<256xi1, #cuir.mem<global>>
    cuir.yield %0 : i1
  }
}
