// A score function with an op lowering has no C++ form for.
cuir.variant @atan_scores() normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %t = math.atan %score : f32
    cuir.yield %t : f32
  }
}
