// A softcap with a trainable cap per head, cap[h] * tanh(s / cap[h]): the
// cap's partial, tanh(s / c) - (s / c)(1 - tanh^2(s / c)), reads the score.
cuir.variant @learned_softcap(%cap: memref<4xf32, #cuir.mem<global>> {cuir.param = "cap"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %k: index):
    %c = memref.load %cap[%h] : memref<4xf32, #cuir.mem<global>>
    %x = arith.divf %s, %c : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %c, %t : f32
    cuir.yield %r : f32
  }
}
