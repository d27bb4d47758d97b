cuir.variant @too_big() normalizer softmax {
  cuir.score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %q: index, %k: index):
    %c = arith.constant 4294967296 : index
    %d = arith.addi %q, %c : index
    %di = arith.index_cast %d : index to i64
    %f = arith.sitofp %di : i64 to f32
    %r = arith.mulf %s, %f : f32
    cuir.yield %r : f32
  }
}
