// A small FlashAttention-2 forward kernel in the form of the bundled sm_80
// kernel, for the pass tests: one block of 4 warps computes 64 query rows
// of one (batch, head) with d = 16; key/value blocks of 32 rows are visited
// downwards, first in masking steps (the causal diagonal and the ragged
// tail), then in unmasked steps, chained by their carried values. Copies
// are synchronous; the online softmax runs on exp2 of scaled scores.

#A   = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
#G   = #cuir.mem<global>
#S   = #cuir.mem<shared>
!seq  = memref<?x?x?x16xbf16, #G>
!rows = memref<?x16xbf16, strided<[?, 1], offset: ?>, #G>
!lse  = memref<?x?x?xf32, #G>
!lrow = memref<?xf32, strided<[1], offset: ?>, #G>
!ring = memref<2x32x16xbf16, #S>
!tile = memref<32x16xbf16, strided<[16, 1], offset: ?>, #S>
!qt   = memref<64x16xbf16, #S>
!s    = tensor<64x32xf32, #ACC>
!o    = tensor<64x16xf32, #ACC>
!r    = tensor<64xf32, #ROW>
!rb   = tensor<64xi1, #ROW>

cuir.kernel @attention(%Q: !seq {cuir.arg = "q"}, %K: !seq {cuir.arg = "k"},
                       %V: !seq {cuir.arg = "v"}, %O: !seq {cuir.arg = "o"},
                       %LSE: !lse {cuir.arg = "lse"},
                       %scale: f32 {cuir.arg = "softmax_scale"},
                       %causal: i1 {cuir.arg = "causal"},
                       %B: index {cuir.arg = "B"}, %Hq: index {cuir.arg = "Hq"},
                       %Hkv: index {cuir.arg = "Hkv"},
                       %Nq: index {cuir.arg = "Nq"},
                       %Nkv: index {cuir.arg = "Nkv"})
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 64, hq, b)
    threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %ninf = arith.constant 0xFF800000 : f32
  %m_block = cuir.block_id x
  %h = cuir.block_id y
  %b = cuir.block_id z
  %group = arith.divui %Hq, %Hkv : index
  %h_kv = arith.divui %h, %group : index
  %q0 = arith.muli %m_block, %c64 : index
  %q_rows = memref.subview %Q[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1]
      : !seq to !rows
  %k_rows = memref.subview %K[%b, 0, %h_kv, 0] [1, %Nkv, 1, 16] [1, 1, 1, 1]
      : !seq to !rows
  %v_rows = memref.subview %V[%b, 0, %h_kv, 0] [1, %Nkv, 1, 16] [1, 1, 1, 1]
      : !seq to !rows
  %o_rows = memref.subview %O[%b, 0, %h, 0] [1, %Nq, 1, 16] [1, 1, 1, 1]
      : !seq to !rows
  %lse_row = memref.subview %LSE[%b, %h, 0] [1, 1, %Nq] [1, 1, 1]
      : !lse to !lrow

  // Causal (bottom-right aligned): row q sees keys k <= q + Nkv - Nq.
  %offset = arith.subi %Nkv, %Nq : index
  %last_key_offset = arith.select %causal, %offset, %Nkv : index
  // Key blocks [0, n_max), of which [0, n_full) need no mask.
  %n_all = arith.ceildivui %Nkv, %c32 : index
  %n_full_all = arith.divui %Nkv, %c32 : index
  %q_end = arith.addi %q0, %c64 : index
  %q_end_c = arith.minui %q_end, %Nq : index
  %q_last = arith.subi %q_end_c, %c1 : index
  %last_end = arith.addi %q_last, %offset : index
  %last_end1 = arith.addi %last_end, %c1 : index
  %last_end_p = arith.maxsi %last_end1, %c0 : index
  %n_causal = arith.ceildivsi %last_end_p, %c32 : index
  %n_max_c = arith.minsi %n_all, %n_causal : index
  %first_end = arith.addi %q0, %offset : index
  %first_end1 = arith.addi %first_end, %c1 : index
  %first_end_p = arith.maxsi %first_end1, %c0 : index
  %n_full_causal = arith.divsi %first_end_p, %c32 : index
  %n_full_c = arith.minsi %n_full_all, %n_full_causal : index
  %n_max = arith.select %causal, %n_max_c, %n_all : index
  %n_full = arith.select %causal, %n_full_c, %n_full_all : index

  %sQ = cuir.alloc : !qt
  %sK = cuir.alloc : !ring
  %sV = cuir.alloc : !ring
  cuir.copy %q_rows[%q0, %c0] -> %sQ : !rows -> !qt
  %log2e = arith.constant 1.44269502 : f32
  %scale_log2 = arith.mulf %scale, %log2e : f32
  %sc = tensor.splat %scale_log2 : !s
  %sc_row = tensor.splat %scale_log2 : !r
  %s_zero = arith.constant dense<0.0> : !s
  %o_init = arith.constant dense<0.0> : !o
  %m_init = arith.constant dense<0xFF800000> : !r
  %zero_row = arith.constant dense<0.0> : !r

  // Masking steps: blocks n_max - 1 down to n_full.
  %n_masked = arith.subi %n_max, %n_full : index
  %m1, %l1, %o1 = scf.for %i = %c0 to %n_masked step %c1
      iter_args(%m_i = %m_init, %l_i = %zero_row, %o_i = %o_init)
      -> (!r, !r, !o) {
    %top = arith.subi %n_max, %c1 : index
    %n = arith.subi %top, %i : index
    %stage = arith.remui %n, %c2 : index
    %kv0 = arith.muli %n, %c32 : index
    %sKn = memref.subview %sK[%stage, 0, 0] [1, 32, 16] [1, 1, 1]
        : !ring to !tile
    %sVn = memref.subview %sV[%stage, 0, 0] [1, 32, 16] [1, 1, 1]
        : !ring to !tile
    cuir.barrier.sync
    cuir.copy %k_rows[%kv0, %c0] -> %sKn : !rows -> !tile
    cuir.copy %v_rows[%kv0, %c0] -> %sVn : !rows -> !tile
    cuir.barrier.sync
    %s = cuir.gemm %sQ, %sKn transpose_b, %s_zero : !qt, !tile, !s
    %s_masked = cuir.elementwise (%s) at [%b, %h, %q0, %kv0] : (!s) -> !s {
    ^bb0(%x: f32, %bi: index, %hi: index, %qi: index, %ki: index):
      %past_end = arith.cmpi sge, %ki, %Nkv : index
      %row_last = arith.addi %qi, %last_key_offset : index
      %past_diag = arith.cmpi sgt, %ki, %row_last : index
      %hidden = arith.ori %past_end, %past_diag : i1
      %y = arith.select %hidden, %ninf, %x : f32
      cuir.yield %y : f32
    }
    %mx = cuir.reduce_rows max %s_masked : !s -> !r
    %m_new = arith.maximumf %m_i, %mx : !r
    %none = arith.cmpf oeq, %m_new, %m_init : !r
    %m_new_s = arith.mulf %m_new, %sc_row : !r
    %m_s = arith.select %none, %zero_row, %m_new_s : !rb, !r
    %m_old_s = arith.mulf %m_i, %sc_row : !r
    %dm = arith.subf %m_old_s, %m_s : !r
    %alpha = math.exp2 %dm : !r
    %m_b = cuir.broadcast_rows %m_s : !r -> !s
    %s_s = arith.mulf %s_masked, %sc : !s
    %cent = arith.subf %s_s, %m_b : !s
    %p = math.exp2 %cent : !s
    %ps = cuir.reduce_rows sum %p : !s -> !r
    %l_a = arith.mulf %l_i, %alpha : !r
    %l_new = arith.addf %l_a, %ps : !r
    %alpha_b = cuir.broadcast_rows %alpha : !r -> !o
    %o_a = arith.mulf %o_i, %alpha_b : !o
    %p16 = arith.truncf %p : !s to tensor<64x32xbf16, #ACC>
    %pa = cuir.convert_layout %p16
        : tensor<64x32xbf16, #ACC> -> tensor<64x32xbf16, #A>
    %o_new = cuir.gemm %pa, %sVn, %o_a : tensor<64x32xbf16, #A>, !tile, !o
    scf.yield %m_new, %l_new, %o_new : !r, !r, !o
  }

  // Unmasked steps: blocks n_full - 1 down to 0.
  %m2, %l2, %o2 = scf.for %i = %c0 to %n_full step %c1
      iter_args(%m_i = %m1, %l_i = %l1, %o_i = %o1) -> (!r, !r, !o) {
    %top = arith.subi %n_full, %c1 : index
    %n = arith.subi %top, %i : index
    %stage = arith.remui %n, %c2 : index
    %kv0 = arith.muli %n, %c32 : index
    %sKn = memref.subview %sK[%stage, 0, 0] [1, 32, 16] [1, 1, 1]
        : !ring to !tile
    %sVn = memref.subview %sV[%stage, 0, 0] [1, 32, 16] [1, 1, 1]
        : !ring to !tile
    cuir.barrier.sync
    cuir.copy %k_rows[%kv0, %c0] -> %sKn : !rows -> !tile
    cuir.copy %v_rows[%kv0, %c0] -> %sVn : !rows -> !tile
    cuir.barrier.sync
    %s = cuir.gemm %sQ, %sKn transpose_b, %s_zero : !qt, !tile, !s
    %mx = cuir.reduce_rows max %s : !s -> !r
    %m_new = arith.maximumf %m_i, %mx : !r
    %none = arith.cmpf oeq, %m_new, %m_init : !r
    %m_new_s = arith.mulf %m_new, %sc_row : !r
    %m_s = arith.select %none, %zero_row, %m_new_s : !rb, !r
    %m_old_s = arith.mulf %m_i, %sc_row : !r
    %dm = arith.subf %m_old_s, %m_s : !r
    %alpha = math.exp2 %dm : !r
    %m_b = cuir.broadcast_rows %m_s : !r -> !s
    %s_s = arith.mulf %s, %sc : !s
    %cent = arith.subf %s_s, %m_b : !s
    %p = math.exp2 %cent : !s
    %ps = cuir.reduce_rows sum %p : !s -> !r
    %l_a = arith.mulf %l_i, %alpha : !r
    %l_new = arith.addf %l_a, %ps : !r
    %alpha_b = cuir.broadcast_rows %alpha : !r -> !o
    %o_a = arith.mulf %o_i, %alpha_b : !o
    %p16 = arith.truncf %p : !s to tensor<64x32xbf16, #ACC>
    %pa = cuir.convert_layout %p16
        : tensor<64x32xbf16, #ACC> -> tensor<64x32xbf16, #A>
    %o_new = cuir.gemm %pa, %sVn, %o_a : tensor<64x32xbf16, #A>, !tile, !o
    scf.yield %m_new, %l_new, %o_new : !r, !r, !o
  }

  // O = acc / l and LSE = (m scale_log2 + log2 l) ln 2; rows that see no
  // key get O = 0 and LSE = -inf.
  %sees_nothing = arith.cmpf oeq, %l2, %zero_row : !r
  %one = arith.constant dense<1.0> : !r
  %inv = arith.divf %one, %l2 : !r
  %inv_l = arith.select %sees_nothing, %zero_row, %inv : !rb, !r
  %inv_b = cuir.broadcast_rows %inv_l : !r -> !o
  %o = arith.mulf %o2, %inv_b : !o
  %o16 = arith.truncf %o : !o to tensor<64x16xbf16, #ACC>
  cuir.store %o16 -> %o_rows[%q0, %c0] : tensor<64x16xbf16, #ACC> -> !rows
  %m_l2 = arith.mulf %m2, %sc_row : !r
  %log_l = math.log2 %l2 : !r
  %lse2 = arith.addf %m_l2, %log_l : !r
  %ln2 = arith.constant dense<0.693147182> : !r
  %lse_nat = arith.mulf %lse2, %ln2 : !r
  %lse = arith.select %sees_nothing, %m_init, %lse_nat : !rb, !r
  cuir.store %lse -> %lse_row[%q0] : !r -> !lrow
  cuir.return
}
