// Chunks of 41 tokens written with true division, (q_idx / 41).int() ==
// (kv_idx / 41).int(), and a bias that divides a float by an invariant and
// is continuous in it.
cuir.variant @chunk41(%scale: f32 {cuir.param = "bias_scale", cuir.default = 3.0 : f32}) normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %q = arith.index_cast %q_idx : index to i32
    %k = arith.index_cast %kv_idx : index to i32
    %d = arith.subi %k, %q : i32
    %df = arith.sitofp %d : i32 to f32
    %bias = arith.divf %df, %scale : f32
    %s = arith.addf %score, %bias : f32
    cuir.yield %s : f32
  }
  cuir.mask_mod {
  ^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):
    %c41 = arith.constant 41.0 : f32
    %q = arith.index_cast %q_idx : index to i32
    %k = arith.index_cast %kv_idx : index to i32
    %qf = arith.sitofp %q : i32 to f32
    %kf = arith.sitofp %k : i32 to f32
    %qc = arith.divf %qf, %c41 : f32
    %kc = arith.divf %kf, %c41 : f32
    %qi = arith.fptosi %qc : f32 to i32
    %ki = arith.fptosi %kc : f32 to i32
    %same = arith.cmpi eq, %qi, %ki : i32
    cuir.yield %same : i1
  }
}
