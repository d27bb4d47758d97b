// A score rounded down to an integer: the forward is fine, the backward has
// no derivative to use (math.floor is piecewise constant).
cuir.variant @floor_bias() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %f = math.floor %s : f32
    cuir.yield %f : f32
  }
}
