cuir.variant @half_arith(%t: memref<4xf16, #cuir.mem<global>> {cuir.param = "t"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %k: index):
    %x = memref.load %t[%h] : memref<4xf16, #cuir.mem<global>>
    %y = arith.addf %x, %x : f16
    %z = arith.extf %y : f16 to f32
    %r = arith.addf %s, %z : f32
    cuir.yield %r : f32
  }
}
