// RUN: cuir-opt %s -split-input-file -verify-diagnostics
//
// A score_mod's finite float constants stay below 2^126 in magnitude: the
// kernels scale scores by log2(e) for exp2, where a larger one (finfo.min)
// overflows; -inf and other values are kept.

cuir.variant @finfo_min() normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    // expected-error @below {{'arith.constant' op is -3.402823e+38 in a score_mod: a finite score of magnitude 2^126 or more overflows float32}}
    %min = arith.constant -3.40282347e+38 : f32
    %q = arith.index_cast %q_idx : index to i32
    %k = arith.index_cast %kv_idx : index to i32
    %c = arith.cmpi sge, %q, %k : i32
    %s = arith.select %c, %score, %min : f32
    cuir.yield %s : f32
  }
}

// -----

cuir.variant @neg_inf_and_large() normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %ninf = arith.constant 0xFF800000 : f32
    %big = arith.constant -1.0e30 : f32
    %q = arith.index_cast %q_idx : index to i32
    %k = arith.index_cast %kv_idx : index to i32
    %c = arith.cmpi sge, %q, %k : i32
    %s = arith.select %c, %score, %ninf : f32
    %t = arith.maximumf %s, %big : f32
    cuir.yield %t : f32
  }
}
