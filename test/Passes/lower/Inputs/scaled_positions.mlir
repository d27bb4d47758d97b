// Three factors of the relative position kv_idx - q_idx: a head's slope read
// from a tensor, a scalar parameter, and a literal.
cuir.variant @scaled_positions(%slopes: memref<16xf32, #cuir.mem<global>> {cuir.param = "slopes"}, %decay: f32 {cuir.param = "decay", cuir.default = 0.5 : f32}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %slope = memref.load %slopes[%h] : memref<16xf32, #cuir.mem<global>>
    %kv = arith.index_cast %kv_idx : index to i32
    %q = arith.index_cast %q_idx : index to i32
    %d = arith.subi %kv, %q : i32
    %pos = arith.sitofp %d : i32 to f32
    %a = arith.mulf %slope, %pos : f32
    %bpart = arith.mulf %decay, %pos : f32
    %c = arith.constant 0.25 : f32
    %cpart = arith.mulf %c, %pos : f32
    %s1 = arith.addf %score, %a : f32
    %s2 = arith.addf %s1, %bpart : f32
    %s3 = arith.addf %s2, %cpart : f32
    cuir.yield %s3 : f32
  }
}
