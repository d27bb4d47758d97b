// A variant file whose default is not a number the interpreter can take.
cuir.variant @softcap(%softcap: f32 {cuir.param = "softcap", cuir.default = "nan"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %k: index):
    %x = arith.divf %s, %softcap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %softcap : f32
    cuir.yield %r : f32
  }
}
