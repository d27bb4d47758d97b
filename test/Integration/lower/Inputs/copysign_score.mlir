// score_mod copysign(score, -1): the forward lowers it, the backward has no
// derivative of copysign and refuses it.
cuir.variant @copysign_score() normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %c = arith.constant -1.0 : f32 loc("copysign_score.py":3:1)
    %0 = math.copysign %score, %c : f32 loc("copysign_score.py":3:1)
    cuir.yield %0 : f32
  }
}
