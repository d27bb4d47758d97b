// A trainable bias table indexed by (h, q - kv): bias[h, q - kv + 129] for
// Nq = 100, Nkv = 130 (q - kv in [-129, 99]).
cuir.variant @relbias(%bias: memref<4x229xf32, #cuir.mem<global>> {cuir.param = "bias"}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %k: index):
    %d = arith.subi %q, %k : index
    %off = arith.constant 129 : index
    %j = arith.addi %d, %off : index
    %bias_v = memref.load %bias[%h, %j] : memref<4x229xf32, #cuir.mem<global>>
    %r = arith.addf %s, %bias_v : f32
    cuir.yield %r : f32
  }
}
