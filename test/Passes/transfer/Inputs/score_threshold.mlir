// Traced: score_mod torch.where(score > 0.0, score, -inf), no mask_mod.
cuir.variant @traced() normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = arith.constant 0.000000e+00 : f32 loc("score_threshold.py":3:1)
    %1 = arith.cmpf ogt, %score, %0 : f32 loc("score_threshold.py":3:1)
    %2 = arith.constant 0xFF800000 : f32 loc("score_threshold.py":3:1)
    %3 = arith.select %1, %score, %2 : f32 loc("score_threshold.py":3:1)
    cuir.yield %3 : f32
  }
}
