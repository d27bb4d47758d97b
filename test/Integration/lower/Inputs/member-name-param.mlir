// A variant parameter named like a member of the params struct.
cuir.variant @bias(%softmax_scale: f32 {cuir.param = "softmax_scale", cuir.default = 2.0 : f32}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = arith.addf %score, %softmax_scale : f32
    cuir.yield %0 : f32
  }
}
