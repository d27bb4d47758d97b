// log1p of an integer-valued float (the distance |q - kv| converted, then
// its negation and a sum of two such), and of the score, which is not one.
cuir.variant @log1p_of_distance() normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %q = arith.index_cast %q_idx : index to i32
    %kv = arith.index_cast %kv_idx : index to i32
    %d = arith.subi %q, %kv : i32
    %ad = math.absi %d : i32
    %f = arith.sitofp %ad : i32 to f32
    %l0 = math.log1p %f : f32
    %two = arith.constant 2.0 : f32
    %g = arith.mulf %f, %two : f32
    %n = arith.negf %g : f32
    %l1 = math.log1p %n : f32
    %l2 = math.log1p %score : f32
    %s0 = arith.subf %score, %l0 : f32
    %s1 = arith.addf %s0, %l1 : f32
    %s2 = arith.addf %s1, %l2 : f32
    cuir.yield %s2 : f32
  }
}
