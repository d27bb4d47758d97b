// Traced: score_mod torch.where(q_idx >= kv_idx + 30, score, -1e9), no mask_mod
// (rows q < 30 see no key: every score of theirs is -1e9).
cuir.variant @large_mask_value() normalizer softmax {
  cuir.score_mod {
  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):
    %c30 = arith.constant 30 : index loc("large_mask_value.py":4:1)
    %0 = arith.addi %kv_idx, %c30 : index loc("large_mask_value.py":4:1)
    %1 = arith.cmpi sge, %q_idx, %0 : index loc("large_mask_value.py":4:1)
    %2 = arith.constant -1.000000e+09 : f32 loc("large_mask_value.py":4:1)
    %3 = arith.select %1, %score, %2 : f32 loc("large_mask_value.py":4:1)
    cuir.yield %3 : f32
  }
}
