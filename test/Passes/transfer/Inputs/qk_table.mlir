// A trainable bias table of every (q, kv) pair, times a trainable per-head
// gain read twice (two loads of one element: both partials accumulate).
cuir.variant @qkbias(%table: memref<100x130xf32, #cuir.mem<global>> {cuir.param = "table"},
                     %gain: memref<4xf32, #cuir.mem<global>> {cuir.param = "gain"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %k: index):
    %t = memref.load %table[%q, %k] : memref<100x130xf32, #cuir.mem<global>>
    %g = memref.load %gain[%h] : memref<4xf32, #cuir.mem<global>>
    %g2 = memref.load %gain[%h] : memref<4xf32, #cuir.mem<global>>
    %gt = arith.mulf %g, %t : f32
    %x = arith.addf %s, %gt : f32
    %r = arith.mulf %x, %g2 : f32
    cuir.yield %r : f32
  }
}
