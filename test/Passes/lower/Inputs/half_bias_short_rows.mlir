// A captured f16 bias whose rows (260 keys) are not whole 16-byte chunks.
cuir.variant @half_bias(%bias: memref<4x256x260xf16, #cuir.mem<global>> {cuir.param = "bias"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = memref.load %bias[%h, %q_idx, %kv_idx] : memref<4x256x260xf16, #cuir.mem<global>>
    %1 = arith.extf %0 : f16 to f32
    %2 = arith.addf %score, %1 : f32
    cuir.yield %2 : f32
  }
}
