// A variant whose name tries to end the comments it is written into.
cuir.variant @"cap2 */ int injected; /*\0A#error injected\0A//"(%cap: f32 {cuir.param = "cap", cuir.default = 2.0 : f32}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %0 = arith.divf %score, %cap : f32
    %1 = math.tanh %0 : f32
    %2 = arith.mulf %cap, %1 : f32
    cuir.yield %2 : f32
  }
}
