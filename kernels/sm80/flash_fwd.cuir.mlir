// Source CuIR of kernels/sm80/flash_fwd.cu: the template from which
// flash_fwd.cuir.mlir is rendered (tools/lift/render_source_cuir.py), one
// kernel per instantiation of (element type, head dim). Every op names the
// source text it comes from; the renderer turns those names into
// file:line:col ranges, and a test keeps the rendered file current.
//
// Modelling notes:
// - IS_CAUSAL, a template parameter of the source, is the kernel parameter
//   `causal` here, selecting the same bounds and mask. The causal grid's
//   launch order (heads fastest, heavy query blocks first) changes the order
//   of blocks, not what a block computes, so one grid map serves both.
// - The source keeps per-thread partial row sums and reduces them across the
//   quad in the epilogue; at tile level the row sums are whole rows.
// - Constants named like the source's (BLOCK_M, BLOCK_N) carry that name as
//   their location, so that lowering can write patches in those terms.
// - Three cp.async groups are in flight between steps (K of this step, V of
//   this step, K of the next); they are the loops' last three iter_args.
// - Both loops run the source's one step function, fwd_step<T, IS_MASKED>:
//   their ops are located in it, reached from the loop's call. The score
//   tile is complete at the step's score hook (the lambdas masking_scores /
//   unmasked_scores in the source), which is where the score GEMM's result
//   is located, as in the sm_90 Source CuIR.
// - The source maps every virtual block that becomes a KV coordinate (the
//   cp.async rows and bounds, the mask column, the score hook's block)
//   through its block-iteration point kv_tiles (cuir/kv_tiles.cuh), the
//   identity here: no op stands for it, the ops read the virtual block.

#A   = #cuir.frag<a, mma_m16n8k16, warps = [4, 1]>
#ACC = #cuir.frag<acc, mma_m16n8k16, warps = [4, 1]>
#ROW = #cuir.frag<row, mma_m16n8k16, warps = [4, 1]>
#G   = #cuir.mem<global>
#S   = #cuir.mem<shared>

cuir.kernel @flash_fwd_bf16_d128(
    %q: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_fwd.cu":390:27 to 390:61)),
    %k: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_fwd.cu":390:27 to 390:61)),
    %v: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_fwd.cu":390:27 to 390:61)),
    %o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_fwd.cu":390:27 to 390:61)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_fwd.cu":390:27 to 390:61)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_fwd.cu":390:27 to 390:61)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_fwd.cu":388:1 to 388:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_fwd.cu":390:27 to 390:61)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_fwd.cu":390:27 to 390:61)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_fwd.cu":390:27 to 390:61)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_fwd.cu":390:27 to 390:61)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_fwd.cu":390:27 to 390:61)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 128, hq, b)
    threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index loc("BLOCK_M")
  %cBN = arith.constant 64 : index loc("BLOCK_N")
  %ninf = arith.constant 0xFF800000 : f32

  // ---- block coordinates, sequence views, masking offsets ----
  %m_block = cuir.block_id x loc("block.m_block"("flash_fwd.cu":405:3 to 405:48))
  %head_q = cuir.block_id y loc("block.head_q"("flash_fwd.cu":405:3 to 405:48))
  %b = cuir.block_id z loc("block.batch"("flash_fwd.cu":405:3 to 405:48))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("causal_offset"("flash_fwd.cu":408:13 to 408:49))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("last_key_offset"("flash_fwd.cu":410:13 to 410:68))
  %m_start = arith.muli %m_block, %c128 : index loc("m_start"("flash_fwd.cu":411:13 to 411:46))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("head_kv"("flash_fwd.cu":412:13 to 412:80))
  %head_kv = arith.divui %head_q, %group : index loc("head_kv"("flash_fwd.cu":412:13 to 412:80))
  %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("q_head"("flash_fwd.cu":456:5 to 456:69))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("k_head"("flash_fwd.cu":415:3 to 415:22))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("v_head"("flash_fwd.cu":419:3 to 419:22))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":439:5 to 439:23))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":447:7 to 447:35))

  // ---- KV tiles this block visits: [0, n_block_max), of which [0, n_unmasked_blocks) need no mask ----
  %n_block_all = arith.ceildivui %seqlen_kv, %cBN : index loc("n_block_max"("flash_fwd.cu":425:7 to 425:56))
  %n_full_all = arith.divui %seqlen_kv, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":426:7 to 426:46))
  %m_end = arith.addi %m_start, %c128 : index loc("last_row"("flash_fwd.cu":428:15 to 428:62))
  %m_end_clamped = arith.minui %m_end, %seqlen_q : index loc("last_row"("flash_fwd.cu":428:15 to 428:62))
  %last_row = arith.subi %m_end_clamped, %c1 : index loc("last_row"("flash_fwd.cu":428:15 to 428:62))
  %last_key_of_last_row = arith.addi %last_row, %causal_offset : index loc("last_key_of_last_row"("flash_fwd.cu":429:15 to 429:62))
  %last_key_of_first_row = arith.addi %m_start, %causal_offset : index loc("last_key_of_first_row"("flash_fwd.cu":430:15 to 430:62))
  %llr_neg = arith.cmpi slt, %last_key_of_last_row, %c0 : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %llr_blk = arith.divsi %last_key_of_last_row, %cBN : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %llr_end = arith.addi %llr_blk, %c1 : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %llr_bound = arith.select %llr_neg, %c0, %llr_end : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %n_block_causal = arith.minsi %n_block_all, %llr_bound : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %lfr_neg = arith.cmpi slt, %last_key_of_first_row, %c0 : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %lfr_next = arith.addi %last_key_of_first_row, %c1 : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %lfr_blk = arith.divsi %lfr_next, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %lfr_bound = arith.select %lfr_neg, %c0, %lfr_blk : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %n_full_causal = arith.minsi %n_full_all, %lfr_bound : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %n_block_max = arith.select %causal, %n_block_causal, %n_block_all : index loc("n_block_max"("flash_fwd.cu":427:3 to 427:27))
  %n_unmasked_blocks = arith.select %causal, %n_full_causal, %n_full_all : index loc("n_unmasked_blocks"("flash_fwd.cu":427:3 to 427:27))

  %no_keys = arith.cmpi sle, %n_block_max, %c0 : index loc("flash_fwd.cu":437:3 to 437:24)
  scf.if %no_keys {
    // No row of this block sees any key: O = 0, LSE = -inf.
    %zero_o = arith.constant dense<0.0> : tensor<128x128xbf16, #ACC> loc("o_head"("flash_fwd.cu":444:98 to 444:120))
    cuir.store %zero_o -> %o_head[%m_start, %c0] : tensor<128x128xbf16, #ACC> -> memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":444:27 to 444:120))
    %ninf_lse = arith.constant dense<0xFF800000> : tensor<128xf32, #ROW> loc("lse_head"("flash_fwd.cu":448:100 to 448:123))
    cuir.store %ninf_lse -> %lse_head[%m_start] : tensor<128xf32, #ROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":448:100 to 448:123))
    scf.yield loc("flash_fwd.cu":450:5 to 450:12)
  } else {
    // ---- shared memory: Q [128][d] (O in the epilogue), K and V [2 stages][BLOCK_N][d], 128-byte swizzled ----
    %sQ = cuir.alloc {swizzle = 128} : memref<128x128xbf16, #S> loc("sQ"("flash_fwd.cu":76:29 to 76:42))
    %sK = cuir.alloc {swizzle = 128} : memref<2x64x128xbf16, #S> loc("sK"("flash_fwd.cu":77:29 to 77:65))
    %sV = cuir.alloc {swizzle = 128} : memref<2x64x128xbf16, #S> loc("sV"("flash_fwd.cu":78:29 to 78:78))

    // ---- prologue: Q and the first K tile (one group), the first V tile, the second K tile ----
    %tq = cuir.copy_async cp_async %q_head[%m_start, %c0] -> %sQ
        : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xbf16, #S> -> !cuir.token loc("sQ"("flash_fwd.cu":458:5 to 458:63))
    %n_first = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":460:5 to 460:41))
    %first_stage = arith.remui %n_first, %c2 : index loc("stage_offset"("flash_fwd.cu":462:5 to 462:79))
    %first_kv0 = arith.muli %n_first, %cBN : index loc("k_head"("flash_fwd.cu":463:80 to 463:130))
    %sK_first = memref.subview %sK[%first_stage, 0, 0] [1, 64, 128] [1, 1, 1]
        : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc("sK"("flash_fwd.cu":463:39 to 463:78))
    %tk = cuir.copy_async cp_async %k_head[%first_kv0, %c0] -> %sK_first
        : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc("sK"("flash_fwd.cu":463:5 to 463:78))
    %g_qk = cuir.commit %tq, %tk loc("flash_fwd.cu":465:5 to 465:29)
    %sV_first = memref.subview %sV[%first_stage, 0, 0] [1, 64, 128] [1, 1, 1]
        : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc("sV"("flash_fwd.cu":466:39 to 466:78))
    %tv = cuir.copy_async cp_async %v_head[%first_kv0, %c0] -> %sV_first
        : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc("sV"("flash_fwd.cu":466:5 to 466:78))
    %g_v = cuir.commit %tv loc("flash_fwd.cu":468:5 to 468:29)
    %has_second = arith.cmpi sge, %n_block_max, %c2 : index loc("flash_fwd.cu":470:3 to 470:24)
    %g_k2 = scf.if %has_second -> (!cuir.group) {
      %n_second = arith.subi %n_block_max, %c2 : index loc("n_block"("flash_fwd.cu":471:5 to 471:41))
      %second_stage = arith.remui %n_second, %c2 : index loc("sK"("flash_fwd.cu":473:66 to 473:110))
      %second_kv0 = arith.muli %n_second, %cBN : index loc("k_head"("flash_fwd.cu":474:33 to 474:83))
      %sK_second = memref.subview %sK[%second_stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc("sK"("flash_fwd.cu":473:39 to 473:109))
      %tk2 = cuir.copy_async cp_async %k_head[%second_kv0, %c0] -> %sK_second
          : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc("sK"("flash_fwd.cu":473:5 to 473:90))
      %g = cuir.commit %tk2 loc("flash_fwd.cu":477:3 to 477:27)
      scf.yield %g : !cuir.group loc("flash_fwd.cu":470:3 to 470:24)
    } else {
      %g = cuir.commit loc("flash_fwd.cu":477:3 to 477:27)
      scf.yield %g : !cuir.group loc("flash_fwd.cu":470:3 to 470:24)
    } loc("flash_fwd.cu":470:3 to 470:24)

    // ---- accumulators and softmax state, all in registers ----
    %acc_o_init = arith.constant dense<0.0> : tensor<128x128xf32, #ACC> loc("acc_o"("flash_fwd.cu":488:35 to 488:57))
    %row_max_init = arith.constant dense<0xFF800000> : tensor<128xf32, #ROW> loc("row_max"("flash_fwd.cu":489:5 to 489:46))
    %row_sum_init = arith.constant dense<0.0> : tensor<128xf32, #ROW> loc("row_sum"("flash_fwd.cu":490:5 to 490:42))
    %log2e = arith.constant 1.44269502 : f32 loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %scale_tile = tensor.splat %scale_log2 : tensor<128x64xf32, #ACC> loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %scale_row = tensor.splat %scale_log2 : tensor<128xf32, #ROW> loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %zero_row = arith.constant dense<0.0> : tensor<128xf32, #ROW> loc("max_scaled"("flash_fwd.cu":295:32 to 295:89))
    %ninf_row = arith.constant dense<0xFF800000> : tensor<128xf32, #ROW> loc("max_scaled"("flash_fwd.cu":295:32 to 295:89))
    %acc_s_init = arith.constant dense<0.0> : tensor<128x64xf32, #ACC> loc("acc_s"("flash_fwd.cu":353:3 to 353:44))

    // =============================== masking steps ===============================
    %n_masked = arith.subi %n_block_max, %n_unmasked_blocks : index loc("flash_fwd.cu":507:3 to 507:50)
    %m_acc_o, %m_row_max, %m_row_sum, %m_gk, %m_gv, %m_gk_next = scf.for %i = %c0 to %n_masked step %c1
        iter_args(%acc_o = %acc_o_init, %row_max = %row_max_init, %row_sum = %row_sum_init,
                  %gk_cur = %g_qk, %gv_cur = %g_v, %gk_next = %g_k2)
        -> (tensor<128x128xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group) {
      %top = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":506:3 to 506:33))
      %n_block = arith.subi %top, %i : index loc("n_block"("flash_fwd.cu":507:3 to 507:50))
      %stage = arith.remui %n_block, %c2 : index loc(callsite("stage_offset"("flash_fwd.cu":333:3 to 333:77) at "flash_fwd.cu":508:5 to 508:23))
      %other = arith.subi %c1, %stage : index loc(callsite("next_stage_offset"("flash_fwd.cu":334:18 to 334:69) at "flash_fwd.cu":508:5 to 508:23))
      %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":252:24 to 252:44) at "flash_fwd.cu":368:5 to 368:24))
      %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK_stage"("flash_fwd.cu":340:18 to 340:68) at "flash_fwd.cu":508:5 to 508:23))
      %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV_stage"("flash_fwd.cu":341:18 to 341:68) at "flash_fwd.cu":508:5 to 508:23))

      cuir.wait_group %gk_cur pending 2 loc(callsite("flash_fwd.cu":343:3 to 343:28 at "flash_fwd.cu":508:5 to 508:23))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":344:3 to 344:19 at "flash_fwd.cu":508:5 to 508:23))
      %has_v = arith.cmpi sge, %n_block, %c1 : index loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))
      %gv_next = scf.if %has_v -> (!cuir.group) {
        %prev = arith.subi %n_block, %c1 : index loc(callsite("n_block"("flash_fwd.cu":346:24 to 346:45) at "flash_fwd.cu":508:5 to 508:23))
        %prev_kv0 = arith.muli %prev, %cBN : index loc(callsite("n_block"("flash_fwd.cu":348:44 to 348:93) at "flash_fwd.cu":508:5 to 508:23))
        %sV_other = memref.subview %sV[%other, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":347:44 to 347:88) at "flash_fwd.cu":508:5 to 508:23))
        %t = cuir.copy_async cp_async %v_head[%prev_kv0, %c0] -> %sV_other
            : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sV"("flash_fwd.cu":347:5 to 347:88) at "flash_fwd.cu":508:5 to 508:23))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))
      } loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))

      %acc_s = cuir.gemm %sQ, %sK_stage transpose_b, %acc_s_init
          : memref<128x128xbf16, #S>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC> loc(callsite("acc_s"("flash_fwd.cu":497:5 to 497:32) at "flash_fwd.cu":508:5 to 508:23))

      // ------- score tile complete: acc_s = Q K^T (unscaled) -------
      %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %m_start, %kv0]
          : (tensor<128x64xf32, #ACC>) -> tensor<128x64xf32, #ACC> {
      ^bb0(%x: f32 loc("acc_s"("flash_fwd.cu":261:62 to 261:88)), %bi: index loc(callsite("block.batch"("flash_fwd.cu":368:26 to 368:66) at "flash_fwd.cu":508:5 to 508:23)), %hi: index loc(callsite("block.head_q"("flash_fwd.cu":368:26 to 368:66) at "flash_fwd.cu":508:5 to 508:23)), %row: index loc("row"("flash_fwd.cu":259:9 to 259:58)), %col: index loc("col"("flash_fwd.cu":260:9 to 260:53))):
        %past_end = arith.cmpi sge, %col, %seqlen_kv : index loc(callsite("flash_fwd.cu":261:13 to 261:29 at "flash_fwd.cu":368:5 to 368:24))
        %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_fwd.cu":247:27 to 247:48 at "flash_fwd.cu":368:5 to 368:24))
        %past_diag = arith.cmpi sgt, %col, %row_last : index loc(callsite("flash_fwd.cu":261:33 to 261:60 at "flash_fwd.cu":368:5 to 368:24))
        %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_fwd.cu":261:9 to 261:29 at "flash_fwd.cu":368:5 to 368:24))
        %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_fwd.cu":261:62 to 261:88) at "flash_fwd.cu":368:5 to 368:24))
        cuir.yield %r : f32 loc(callsite("flash_fwd.cu":368:5 to 368:24 at "flash_fwd.cu":508:5 to 508:23))
      } loc(callsite("acc_s"("flash_fwd.cu":368:5 to 368:24) at "flash_fwd.cu":508:5 to 508:23))

      // ------- online softmax: update row_max / row_sum, rescale acc_o, acc_s <- probabilities -------
      %blk_max = cuir.reduce_rows max %acc_s_masked : tensor<128x64xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %new_max = arith.maximumf %row_max, %blk_max : tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:32 to 295:50) at "flash_fwd.cu":372:3 to 372:34))
      %new_max_s = arith.mulf %new_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:59 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:19 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %old_max_s = arith.mulf %row_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:79) at "flash_fwd.cu":372:3 to 372:34))
      %max_diff = arith.subf %old_max_s, %max_scaled : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:92) at "flash_fwd.cu":372:3 to 372:34))
      %rescale = math.exp2 %max_diff : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:19 to 296:93) at "flash_fwd.cu":372:3 to 372:34))
      %max_b = cuir.broadcast_rows %max_scaled : tensor<128xf32, #ROW> -> tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %neg_max = arith.negf %max_b : tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %logits = math.fma %acc_s_masked, %scale_tile, %neg_max : tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:37 to 304:84) at "flash_fwd.cu":372:3 to 372:34))
      %p = math.exp2 %logits : tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:11 to 304:85) at "flash_fwd.cu":372:3 to 372:34))
      %tile_sum = cuir.reduce_rows sum %p : tensor<128x64xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("tile_sum"("flash_fwd.cu":306:11 to 306:24) at "flash_fwd.cu":372:3 to 372:34))
      %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:27 to 309:54) at "flash_fwd.cu":372:3 to 372:34))
      %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:7 to 309:65) at "flash_fwd.cu":372:3 to 372:34))
      %rescale_b = cuir.broadcast_rows %rescale : tensor<128xf32, #ROW> -> tensor<128x128xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<128x128xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %p16 = arith.truncf %p : tensor<128x64xf32, #ACC> to tensor<128x64xbf16, #ACC> loc(callsite("p_frag"("flash_fwd.cu":216:7 to 216:54) at "flash_fwd.cu":374:3 to 374:30))
      %p_frag = cuir.convert_layout %p16 : tensor<128x64xbf16, #ACC> -> tensor<128x64xbf16, #A> loc(callsite("p_frag"("flash_fwd.cu":374:3 to 374:30) at "flash_fwd.cu":508:5 to 508:23))

      cuir.wait_group %gv_cur pending 2 loc(callsite("flash_fwd.cu":376:3 to 376:28 at "flash_fwd.cu":508:5 to 508:23))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":377:3 to 377:19 at "flash_fwd.cu":508:5 to 508:23))
      %has_k = arith.cmpi sge, %n_block, %c2 : index loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))
      %gk_new = scf.if %has_k -> (!cuir.group) {
        %next2 = arith.subi %n_block, %c2 : index loc(callsite("n_block"("flash_fwd.cu":379:24 to 379:45) at "flash_fwd.cu":508:5 to 508:23))
        %next2_kv0 = arith.muli %next2, %cBN : index loc(callsite("n_block"("flash_fwd.cu":380:54 to 380:103) at "flash_fwd.cu":508:5 to 508:23))
        %t = cuir.copy_async cp_async %k_head[%next2_kv0, %c0] -> %sK_stage
            : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sK"("flash_fwd.cu":380:5 to 380:52) at "flash_fwd.cu":508:5 to 508:23))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))
      } loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))

      %acc_o_new = cuir.gemm %p_frag, %sV_stage, %acc_o_rescaled
          : tensor<128x64xbf16, #A>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":385:3 to 385:27) at "flash_fwd.cu":508:5 to 508:23))
      scf.yield %acc_o_new, %new_max, %row_sum_new, %gk_next, %gv_next, %gk_new
          : tensor<128x128xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group loc("flash_fwd.cu":507:3 to 507:50)
    } loc("flash_fwd.cu":507:3 to 507:50)

    // =============================== unmasked steps ===============================
    %u_acc_o, %u_row_max, %u_row_sum, %u_gk, %u_gv, %u_gk_next = scf.for %i = %c0 to %n_unmasked_blocks step %c1
        iter_args(%acc_o = %m_acc_o, %row_max = %m_row_max, %row_sum = %m_row_sum,
                  %gk_cur = %m_gk, %gv_cur = %m_gv, %gk_next = %m_gk_next)
        -> (tensor<128x128xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group) {
      %top = arith.subi %n_unmasked_blocks, %c1 : index loc("n_block"("flash_fwd.cu":514:3 to 514:34))
      %n_block = arith.subi %top, %i : index loc("n_block"("flash_fwd.cu":514:3 to 514:34))
      %stage = arith.remui %n_block, %c2 : index loc(callsite("stage_offset"("flash_fwd.cu":333:3 to 333:77) at "flash_fwd.cu":515:5 to 515:24))
      %other = arith.subi %c1, %stage : index loc(callsite("next_stage_offset"("flash_fwd.cu":334:18 to 334:69) at "flash_fwd.cu":515:5 to 515:24))
      %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK_stage"("flash_fwd.cu":340:18 to 340:68) at "flash_fwd.cu":515:5 to 515:24))
      %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV_stage"("flash_fwd.cu":341:18 to 341:68) at "flash_fwd.cu":515:5 to 515:24))

      cuir.wait_group %gk_cur pending 2 loc(callsite("flash_fwd.cu":343:3 to 343:28 at "flash_fwd.cu":515:5 to 515:24))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":344:3 to 344:19 at "flash_fwd.cu":515:5 to 515:24))
      %has_v = arith.cmpi sge, %n_block, %c1 : index loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))
      %gv_next = scf.if %has_v -> (!cuir.group) {
        %prev = arith.subi %n_block, %c1 : index loc(callsite("n_block"("flash_fwd.cu":346:24 to 346:45) at "flash_fwd.cu":515:5 to 515:24))
        %prev_kv0 = arith.muli %prev, %cBN : index loc(callsite("n_block"("flash_fwd.cu":348:44 to 348:93) at "flash_fwd.cu":515:5 to 515:24))
        %sV_other = memref.subview %sV[%other, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":347:44 to 347:88) at "flash_fwd.cu":515:5 to 515:24))
        %t = cuir.copy_async cp_async %v_head[%prev_kv0, %c0] -> %sV_other
            : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sV"("flash_fwd.cu":347:5 to 347:88) at "flash_fwd.cu":515:5 to 515:24))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))
      } loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))

      %acc_s = cuir.gemm %sQ, %sK_stage transpose_b, %acc_s_init
          : memref<128x128xbf16, #S>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC> loc(callsite("acc_s"("flash_fwd.cu":500:5 to 500:32) at "flash_fwd.cu":515:5 to 515:24))

      // ------- score tile complete: every score of this tile is visible -------

      // ------- online softmax: update row_max / row_sum, rescale acc_o, acc_s <- probabilities -------
      %blk_max = cuir.reduce_rows max %acc_s : tensor<128x64xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %new_max = arith.maximumf %row_max, %blk_max : tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:32 to 295:50) at "flash_fwd.cu":372:3 to 372:34))
      %new_max_s = arith.mulf %new_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:59 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:19 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %old_max_s = arith.mulf %row_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:79) at "flash_fwd.cu":372:3 to 372:34))
      %max_diff = arith.subf %old_max_s, %max_scaled : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:92) at "flash_fwd.cu":372:3 to 372:34))
      %rescale = math.exp2 %max_diff : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:19 to 296:93) at "flash_fwd.cu":372:3 to 372:34))
      %max_b = cuir.broadcast_rows %max_scaled : tensor<128xf32, #ROW> -> tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %neg_max = arith.negf %max_b : tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %logits = math.fma %acc_s, %scale_tile, %neg_max : tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:37 to 304:84) at "flash_fwd.cu":372:3 to 372:34))
      %p = math.exp2 %logits : tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:11 to 304:85) at "flash_fwd.cu":372:3 to 372:34))
      %tile_sum = cuir.reduce_rows sum %p : tensor<128x64xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("tile_sum"("flash_fwd.cu":306:11 to 306:24) at "flash_fwd.cu":372:3 to 372:34))
      %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:27 to 309:54) at "flash_fwd.cu":372:3 to 372:34))
      %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:7 to 309:65) at "flash_fwd.cu":372:3 to 372:34))
      %rescale_b = cuir.broadcast_rows %rescale : tensor<128xf32, #ROW> -> tensor<128x128xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<128x128xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %p16 = arith.truncf %p : tensor<128x64xf32, #ACC> to tensor<128x64xbf16, #ACC> loc(callsite("p_frag"("flash_fwd.cu":216:7 to 216:54) at "flash_fwd.cu":374:3 to 374:30))
      %p_frag = cuir.convert_layout %p16 : tensor<128x64xbf16, #ACC> -> tensor<128x64xbf16, #A> loc(callsite("p_frag"("flash_fwd.cu":374:3 to 374:30) at "flash_fwd.cu":515:5 to 515:24))

      cuir.wait_group %gv_cur pending 2 loc(callsite("flash_fwd.cu":376:3 to 376:28 at "flash_fwd.cu":515:5 to 515:24))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":377:3 to 377:19 at "flash_fwd.cu":515:5 to 515:24))
      %has_k = arith.cmpi sge, %n_block, %c2 : index loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))
      %gk_new = scf.if %has_k -> (!cuir.group) {
        %next2 = arith.subi %n_block, %c2 : index loc(callsite("n_block"("flash_fwd.cu":379:24 to 379:45) at "flash_fwd.cu":515:5 to 515:24))
        %next2_kv0 = arith.muli %next2, %cBN : index loc(callsite("n_block"("flash_fwd.cu":380:54 to 380:103) at "flash_fwd.cu":515:5 to 515:24))
        %t = cuir.copy_async cp_async %k_head[%next2_kv0, %c0] -> %sK_stage
            : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sK"("flash_fwd.cu":380:5 to 380:52) at "flash_fwd.cu":515:5 to 515:24))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))
      } loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))

      %acc_o_new = cuir.gemm %p_frag, %sV_stage, %acc_o_rescaled
          : tensor<128x64xbf16, #A>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":385:3 to 385:27) at "flash_fwd.cu":515:5 to 515:24))
      scf.yield %acc_o_new, %new_max, %row_sum_new, %gk_next, %gv_next, %gk_new
          : tensor<128x128xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group loc("flash_fwd.cu":514:3 to 514:34)
    } loc("flash_fwd.cu":514:3 to 514:34)

    cuir.wait_group %u_gk_next pending 0 loc("flash_fwd.cu":517:3 to 517:28)

    // =============================== epilogue ===============================
    %sees_nothing = arith.cmpf oeq, %u_row_sum, %zero_row : tensor<128xf32, #ROW> loc("row_sees_nothing"("flash_fwd.cu":537:7 to 537:47))
    %one_row = arith.constant dense<1.0> : tensor<128xf32, #ROW> loc("row_inv_sum"("flash_fwd.cu":538:56 to 538:65))
    %inv = arith.divf %one_row, %u_row_sum : tensor<128xf32, #ROW> loc("row_inv_sum"("flash_fwd.cu":538:56 to 538:65))
    %row_inv_sum = arith.select %sees_nothing, %zero_row, %inv : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc("row_inv_sum"("flash_fwd.cu":538:7 to 538:65))
    %max_l2 = arith.mulf %u_row_max, %scale_row : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:55 to 539:95))
    %log_sum = math.log2 %u_row_sum : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:98 to 539:112))
    %lse2 = arith.addf %max_l2, %log_sum : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:54 to 539:113))
    %ln2 = arith.constant dense<0.693147182> : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:114 to 539:120))
    %lse_nat = arith.mulf %lse2, %ln2 : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:54 to 539:120))
    %lse_val = arith.select %sees_nothing, %ninf_row, %lse_nat : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:7 to 539:120))
    cuir.store %lse_val -> %lse_head[%m_start] : tensor<128xf32, #ROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":541:74 to 541:93))
    %inv_b = cuir.broadcast_rows %row_inv_sum : tensor<128xf32, #ROW> -> tensor<128x128xf32, #ACC> loc("packed"("flash_fwd.cu":554:54 to 554:101))
    %o_norm = arith.mulf %u_acc_o, %inv_b : tensor<128x128xf32, #ACC> loc("packed"("flash_fwd.cu":554:54 to 554:101))
    %o16 = arith.truncf %o_norm : tensor<128x128xf32, #ACC> to tensor<128x128xbf16, #ACC> loc("packed"("flash_fwd.cu":554:9 to 554:53))
    cuir.store %o16 -> %sQ : tensor<128x128xbf16, #ACC> -> memref<128x128xbf16, #S> loc("sO"("flash_fwd.cu":556:9 to 556:111))
    cuir.barrier.warp loc("flash_fwd.cu":560:3 to 560:16)
    cuir.copy %sQ -> %o_head[%m_start, %c0] : memref<128x128xbf16, #S> -> memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":570:7 to 570:102))
    scf.yield loc("flash_fwd.cu":437:3 to 437:24)
  } loc("flash_fwd.cu":437:3 to 437:24)
  cuir.return loc("flash_fwd.cu":390:5 to 390:62)
} loc("flash_fwd_sm80_kernel"("flash_fwd.cu":390:5 to 390:62))
cuir.kernel @flash_fwd_bf16_d64(
    %q: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_fwd.cu":390:27 to 390:61)),
    %k: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_fwd.cu":390:27 to 390:61)),
    %v: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_fwd.cu":390:27 to 390:61)),
    %o: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_fwd.cu":390:27 to 390:61)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_fwd.cu":390:27 to 390:61)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_fwd.cu":390:27 to 390:61)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_fwd.cu":388:1 to 388:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_fwd.cu":390:27 to 390:61)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_fwd.cu":390:27 to 390:61)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_fwd.cu":390:27 to 390:61)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_fwd.cu":390:27 to 390:61)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_fwd.cu":390:27 to 390:61)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 128, hq, b)
    threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index loc("BLOCK_M")
  %cBN = arith.constant 128 : index loc("BLOCK_N")
  %ninf = arith.constant 0xFF800000 : f32

  // ---- block coordinates, sequence views, masking offsets ----
  %m_block = cuir.block_id x loc("block.m_block"("flash_fwd.cu":405:3 to 405:48))
  %head_q = cuir.block_id y loc("block.head_q"("flash_fwd.cu":405:3 to 405:48))
  %b = cuir.block_id z loc("block.batch"("flash_fwd.cu":405:3 to 405:48))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("causal_offset"("flash_fwd.cu":408:13 to 408:49))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("last_key_offset"("flash_fwd.cu":410:13 to 410:68))
  %m_start = arith.muli %m_block, %c128 : index loc("m_start"("flash_fwd.cu":411:13 to 411:46))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("head_kv"("flash_fwd.cu":412:13 to 412:80))
  %head_kv = arith.divui %head_q, %group : index loc("head_kv"("flash_fwd.cu":412:13 to 412:80))
  %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("q_head"("flash_fwd.cu":456:5 to 456:69))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("k_head"("flash_fwd.cu":415:3 to 415:22))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("v_head"("flash_fwd.cu":419:3 to 419:22))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":439:5 to 439:23))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":447:7 to 447:35))

  // ---- KV tiles this block visits: [0, n_block_max), of which [0, n_unmasked_blocks) need no mask ----
  %n_block_all = arith.ceildivui %seqlen_kv, %cBN : index loc("n_block_max"("flash_fwd.cu":425:7 to 425:56))
  %n_full_all = arith.divui %seqlen_kv, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":426:7 to 426:46))
  %m_end = arith.addi %m_start, %c128 : index loc("last_row"("flash_fwd.cu":428:15 to 428:62))
  %m_end_clamped = arith.minui %m_end, %seqlen_q : index loc("last_row"("flash_fwd.cu":428:15 to 428:62))
  %last_row = arith.subi %m_end_clamped, %c1 : index loc("last_row"("flash_fwd.cu":428:15 to 428:62))
  %last_key_of_last_row = arith.addi %last_row, %causal_offset : index loc("last_key_of_last_row"("flash_fwd.cu":429:15 to 429:62))
  %last_key_of_first_row = arith.addi %m_start, %causal_offset : index loc("last_key_of_first_row"("flash_fwd.cu":430:15 to 430:62))
  %llr_neg = arith.cmpi slt, %last_key_of_last_row, %c0 : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %llr_blk = arith.divsi %last_key_of_last_row, %cBN : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %llr_end = arith.addi %llr_blk, %c1 : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %llr_bound = arith.select %llr_neg, %c0, %llr_end : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %n_block_causal = arith.minsi %n_block_all, %llr_bound : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %lfr_neg = arith.cmpi slt, %last_key_of_first_row, %c0 : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %lfr_next = arith.addi %last_key_of_first_row, %c1 : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %lfr_blk = arith.divsi %lfr_next, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %lfr_bound = arith.select %lfr_neg, %c0, %lfr_blk : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %n_full_causal = arith.minsi %n_full_all, %lfr_bound : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %n_block_max = arith.select %causal, %n_block_causal, %n_block_all : index loc("n_block_max"("flash_fwd.cu":427:3 to 427:27))
  %n_unmasked_blocks = arith.select %causal, %n_full_causal, %n_full_all : index loc("n_unmasked_blocks"("flash_fwd.cu":427:3 to 427:27))

  %no_keys = arith.cmpi sle, %n_block_max, %c0 : index loc("flash_fwd.cu":437:3 to 437:24)
  scf.if %no_keys {
    // No row of this block sees any key: O = 0, LSE = -inf.
    %zero_o = arith.constant dense<0.0> : tensor<128x64xbf16, #ACC> loc("o_head"("flash_fwd.cu":444:98 to 444:120))
    cuir.store %zero_o -> %o_head[%m_start, %c0] : tensor<128x64xbf16, #ACC> -> memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":444:27 to 444:120))
    %ninf_lse = arith.constant dense<0xFF800000> : tensor<128xf32, #ROW> loc("lse_head"("flash_fwd.cu":448:100 to 448:123))
    cuir.store %ninf_lse -> %lse_head[%m_start] : tensor<128xf32, #ROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":448:100 to 448:123))
    scf.yield loc("flash_fwd.cu":450:5 to 450:12)
  } else {
    // ---- shared memory: Q [128][d] (O in the epilogue), K and V [2 stages][BLOCK_N][d], 128-byte swizzled ----
    %sQ = cuir.alloc {swizzle = 128} : memref<128x64xbf16, #S> loc("sQ"("flash_fwd.cu":76:29 to 76:42))
    %sK = cuir.alloc {swizzle = 128} : memref<2x128x64xbf16, #S> loc("sK"("flash_fwd.cu":77:29 to 77:65))
    %sV = cuir.alloc {swizzle = 128} : memref<2x128x64xbf16, #S> loc("sV"("flash_fwd.cu":78:29 to 78:78))

    // ---- prologue: Q and the first K tile (one group), the first V tile, the second K tile ----
    %tq = cuir.copy_async cp_async %q_head[%m_start, %c0] -> %sQ
        : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, #S> -> !cuir.token loc("sQ"("flash_fwd.cu":458:5 to 458:63))
    %n_first = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":460:5 to 460:41))
    %first_stage = arith.remui %n_first, %c2 : index loc("stage_offset"("flash_fwd.cu":462:5 to 462:79))
    %first_kv0 = arith.muli %n_first, %cBN : index loc("k_head"("flash_fwd.cu":463:80 to 463:130))
    %sK_first = memref.subview %sK[%first_stage, 0, 0] [1, 128, 64] [1, 1, 1]
        : memref<2x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc("sK"("flash_fwd.cu":463:39 to 463:78))
    %tk = cuir.copy_async cp_async %k_head[%first_kv0, %c0] -> %sK_first
        : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc("sK"("flash_fwd.cu":463:5 to 463:78))
    %g_qk = cuir.commit %tq, %tk loc("flash_fwd.cu":465:5 to 465:29)
    %sV_first = memref.subview %sV[%first_stage, 0, 0] [1, 128, 64] [1, 1, 1]
        : memref<2x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc("sV"("flash_fwd.cu":466:39 to 466:78))
    %tv = cuir.copy_async cp_async %v_head[%first_kv0, %c0] -> %sV_first
        : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc("sV"("flash_fwd.cu":466:5 to 466:78))
    %g_v = cuir.commit %tv loc("flash_fwd.cu":468:5 to 468:29)
    %has_second = arith.cmpi sge, %n_block_max, %c2 : index loc("flash_fwd.cu":470:3 to 470:24)
    %g_k2 = scf.if %has_second -> (!cuir.group) {
      %n_second = arith.subi %n_block_max, %c2 : index loc("n_block"("flash_fwd.cu":471:5 to 471:41))
      %second_stage = arith.remui %n_second, %c2 : index loc("sK"("flash_fwd.cu":473:66 to 473:110))
      %second_kv0 = arith.muli %n_second, %cBN : index loc("k_head"("flash_fwd.cu":474:33 to 474:83))
      %sK_second = memref.subview %sK[%second_stage, 0, 0] [1, 128, 64] [1, 1, 1]
          : memref<2x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc("sK"("flash_fwd.cu":473:39 to 473:109))
      %tk2 = cuir.copy_async cp_async %k_head[%second_kv0, %c0] -> %sK_second
          : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc("sK"("flash_fwd.cu":473:5 to 473:90))
      %g = cuir.commit %tk2 loc("flash_fwd.cu":477:3 to 477:27)
      scf.yield %g : !cuir.group loc("flash_fwd.cu":470:3 to 470:24)
    } else {
      %g = cuir.commit loc("flash_fwd.cu":477:3 to 477:27)
      scf.yield %g : !cuir.group loc("flash_fwd.cu":470:3 to 470:24)
    } loc("flash_fwd.cu":470:3 to 470:24)

    // ---- accumulators and softmax state, all in registers ----
    %acc_o_init = arith.constant dense<0.0> : tensor<128x64xf32, #ACC> loc("acc_o"("flash_fwd.cu":488:35 to 488:57))
    %row_max_init = arith.constant dense<0xFF800000> : tensor<128xf32, #ROW> loc("row_max"("flash_fwd.cu":489:5 to 489:46))
    %row_sum_init = arith.constant dense<0.0> : tensor<128xf32, #ROW> loc("row_sum"("flash_fwd.cu":490:5 to 490:42))
    %log2e = arith.constant 1.44269502 : f32 loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %scale_tile = tensor.splat %scale_log2 : tensor<128x128xf32, #ACC> loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %scale_row = tensor.splat %scale_log2 : tensor<128xf32, #ROW> loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %zero_row = arith.constant dense<0.0> : tensor<128xf32, #ROW> loc("max_scaled"("flash_fwd.cu":295:32 to 295:89))
    %ninf_row = arith.constant dense<0xFF800000> : tensor<128xf32, #ROW> loc("max_scaled"("flash_fwd.cu":295:32 to 295:89))
    %acc_s_init = arith.constant dense<0.0> : tensor<128x128xf32, #ACC> loc("acc_s"("flash_fwd.cu":353:3 to 353:44))

    // =============================== masking steps ===============================
    %n_masked = arith.subi %n_block_max, %n_unmasked_blocks : index loc("flash_fwd.cu":507:3 to 507:50)
    %m_acc_o, %m_row_max, %m_row_sum, %m_gk, %m_gv, %m_gk_next = scf.for %i = %c0 to %n_masked step %c1
        iter_args(%acc_o = %acc_o_init, %row_max = %row_max_init, %row_sum = %row_sum_init,
                  %gk_cur = %g_qk, %gv_cur = %g_v, %gk_next = %g_k2)
        -> (tensor<128x64xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group) {
      %top = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":506:3 to 506:33))
      %n_block = arith.subi %top, %i : index loc("n_block"("flash_fwd.cu":507:3 to 507:50))
      %stage = arith.remui %n_block, %c2 : index loc(callsite("stage_offset"("flash_fwd.cu":333:3 to 333:77) at "flash_fwd.cu":508:5 to 508:23))
      %other = arith.subi %c1, %stage : index loc(callsite("next_stage_offset"("flash_fwd.cu":334:18 to 334:69) at "flash_fwd.cu":508:5 to 508:23))
      %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":252:24 to 252:44) at "flash_fwd.cu":368:5 to 368:24))
      %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
          : memref<2x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK_stage"("flash_fwd.cu":340:18 to 340:68) at "flash_fwd.cu":508:5 to 508:23))
      %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
          : memref<2x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV_stage"("flash_fwd.cu":341:18 to 341:68) at "flash_fwd.cu":508:5 to 508:23))

      cuir.wait_group %gk_cur pending 2 loc(callsite("flash_fwd.cu":343:3 to 343:28 at "flash_fwd.cu":508:5 to 508:23))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":344:3 to 344:19 at "flash_fwd.cu":508:5 to 508:23))
      %has_v = arith.cmpi sge, %n_block, %c1 : index loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))
      %gv_next = scf.if %has_v -> (!cuir.group) {
        %prev = arith.subi %n_block, %c1 : index loc(callsite("n_block"("flash_fwd.cu":346:24 to 346:45) at "flash_fwd.cu":508:5 to 508:23))
        %prev_kv0 = arith.muli %prev, %cBN : index loc(callsite("n_block"("flash_fwd.cu":348:44 to 348:93) at "flash_fwd.cu":508:5 to 508:23))
        %sV_other = memref.subview %sV[%other, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<2x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":347:44 to 347:88) at "flash_fwd.cu":508:5 to 508:23))
        %t = cuir.copy_async cp_async %v_head[%prev_kv0, %c0] -> %sV_other
            : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sV"("flash_fwd.cu":347:5 to 347:88) at "flash_fwd.cu":508:5 to 508:23))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))
      } loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))

      %acc_s = cuir.gemm %sQ, %sK_stage transpose_b, %acc_s_init
          : memref<128x64xbf16, #S>, memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC> loc(callsite("acc_s"("flash_fwd.cu":497:5 to 497:32) at "flash_fwd.cu":508:5 to 508:23))

      // ------- score tile complete: acc_s = Q K^T (unscaled) -------
      %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %m_start, %kv0]
          : (tensor<128x128xf32, #ACC>) -> tensor<128x128xf32, #ACC> {
      ^bb0(%x: f32 loc("acc_s"("flash_fwd.cu":261:62 to 261:88)), %bi: index loc(callsite("block.batch"("flash_fwd.cu":368:26 to 368:66) at "flash_fwd.cu":508:5 to 508:23)), %hi: index loc(callsite("block.head_q"("flash_fwd.cu":368:26 to 368:66) at "flash_fwd.cu":508:5 to 508:23)), %row: index loc("row"("flash_fwd.cu":259:9 to 259:58)), %col: index loc("col"("flash_fwd.cu":260:9 to 260:53))):
        %past_end = arith.cmpi sge, %col, %seqlen_kv : index loc(callsite("flash_fwd.cu":261:13 to 261:29 at "flash_fwd.cu":368:5 to 368:24))
        %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_fwd.cu":247:27 to 247:48 at "flash_fwd.cu":368:5 to 368:24))
        %past_diag = arith.cmpi sgt, %col, %row_last : index loc(callsite("flash_fwd.cu":261:33 to 261:60 at "flash_fwd.cu":368:5 to 368:24))
        %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_fwd.cu":261:9 to 261:29 at "flash_fwd.cu":368:5 to 368:24))
        %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_fwd.cu":261:62 to 261:88) at "flash_fwd.cu":368:5 to 368:24))
        cuir.yield %r : f32 loc(callsite("flash_fwd.cu":368:5 to 368:24 at "flash_fwd.cu":508:5 to 508:23))
      } loc(callsite("acc_s"("flash_fwd.cu":368:5 to 368:24) at "flash_fwd.cu":508:5 to 508:23))

      // ------- online softmax: update row_max / row_sum, rescale acc_o, acc_s <- probabilities -------
      %blk_max = cuir.reduce_rows max %acc_s_masked : tensor<128x128xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %new_max = arith.maximumf %row_max, %blk_max : tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:32 to 295:50) at "flash_fwd.cu":372:3 to 372:34))
      %new_max_s = arith.mulf %new_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:59 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:19 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %old_max_s = arith.mulf %row_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:79) at "flash_fwd.cu":372:3 to 372:34))
      %max_diff = arith.subf %old_max_s, %max_scaled : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:92) at "flash_fwd.cu":372:3 to 372:34))
      %rescale = math.exp2 %max_diff : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:19 to 296:93) at "flash_fwd.cu":372:3 to 372:34))
      %max_b = cuir.broadcast_rows %max_scaled : tensor<128xf32, #ROW> -> tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %neg_max = arith.negf %max_b : tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %logits = math.fma %acc_s_masked, %scale_tile, %neg_max : tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:37 to 304:84) at "flash_fwd.cu":372:3 to 372:34))
      %p = math.exp2 %logits : tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:11 to 304:85) at "flash_fwd.cu":372:3 to 372:34))
      %tile_sum = cuir.reduce_rows sum %p : tensor<128x128xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("tile_sum"("flash_fwd.cu":306:11 to 306:24) at "flash_fwd.cu":372:3 to 372:34))
      %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:27 to 309:54) at "flash_fwd.cu":372:3 to 372:34))
      %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:7 to 309:65) at "flash_fwd.cu":372:3 to 372:34))
      %rescale_b = cuir.broadcast_rows %rescale : tensor<128xf32, #ROW> -> tensor<128x64xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<128x64xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %p16 = arith.truncf %p : tensor<128x128xf32, #ACC> to tensor<128x128xbf16, #ACC> loc(callsite("p_frag"("flash_fwd.cu":216:7 to 216:54) at "flash_fwd.cu":374:3 to 374:30))
      %p_frag = cuir.convert_layout %p16 : tensor<128x128xbf16, #ACC> -> tensor<128x128xbf16, #A> loc(callsite("p_frag"("flash_fwd.cu":374:3 to 374:30) at "flash_fwd.cu":508:5 to 508:23))

      cuir.wait_group %gv_cur pending 2 loc(callsite("flash_fwd.cu":376:3 to 376:28 at "flash_fwd.cu":508:5 to 508:23))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":377:3 to 377:19 at "flash_fwd.cu":508:5 to 508:23))
      %has_k = arith.cmpi sge, %n_block, %c2 : index loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))
      %gk_new = scf.if %has_k -> (!cuir.group) {
        %next2 = arith.subi %n_block, %c2 : index loc(callsite("n_block"("flash_fwd.cu":379:24 to 379:45) at "flash_fwd.cu":508:5 to 508:23))
        %next2_kv0 = arith.muli %next2, %cBN : index loc(callsite("n_block"("flash_fwd.cu":380:54 to 380:103) at "flash_fwd.cu":508:5 to 508:23))
        %t = cuir.copy_async cp_async %k_head[%next2_kv0, %c0] -> %sK_stage
            : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sK"("flash_fwd.cu":380:5 to 380:52) at "flash_fwd.cu":508:5 to 508:23))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))
      } loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))

      %acc_o_new = cuir.gemm %p_frag, %sV_stage, %acc_o_rescaled
          : tensor<128x128xbf16, #A>, memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":385:3 to 385:27) at "flash_fwd.cu":508:5 to 508:23))
      scf.yield %acc_o_new, %new_max, %row_sum_new, %gk_next, %gv_next, %gk_new
          : tensor<128x64xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group loc("flash_fwd.cu":507:3 to 507:50)
    } loc("flash_fwd.cu":507:3 to 507:50)

    // =============================== unmasked steps ===============================
    %u_acc_o, %u_row_max, %u_row_sum, %u_gk, %u_gv, %u_gk_next = scf.for %i = %c0 to %n_unmasked_blocks step %c1
        iter_args(%acc_o = %m_acc_o, %row_max = %m_row_max, %row_sum = %m_row_sum,
                  %gk_cur = %m_gk, %gv_cur = %m_gv, %gk_next = %m_gk_next)
        -> (tensor<128x64xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group) {
      %top = arith.subi %n_unmasked_blocks, %c1 : index loc("n_block"("flash_fwd.cu":514:3 to 514:34))
      %n_block = arith.subi %top, %i : index loc("n_block"("flash_fwd.cu":514:3 to 514:34))
      %stage = arith.remui %n_block, %c2 : index loc(callsite("stage_offset"("flash_fwd.cu":333:3 to 333:77) at "flash_fwd.cu":515:5 to 515:24))
      %other = arith.subi %c1, %stage : index loc(callsite("next_stage_offset"("flash_fwd.cu":334:18 to 334:69) at "flash_fwd.cu":515:5 to 515:24))
      %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
          : memref<2x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK_stage"("flash_fwd.cu":340:18 to 340:68) at "flash_fwd.cu":515:5 to 515:24))
      %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
          : memref<2x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV_stage"("flash_fwd.cu":341:18 to 341:68) at "flash_fwd.cu":515:5 to 515:24))

      cuir.wait_group %gk_cur pending 2 loc(callsite("flash_fwd.cu":343:3 to 343:28 at "flash_fwd.cu":515:5 to 515:24))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":344:3 to 344:19 at "flash_fwd.cu":515:5 to 515:24))
      %has_v = arith.cmpi sge, %n_block, %c1 : index loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))
      %gv_next = scf.if %has_v -> (!cuir.group) {
        %prev = arith.subi %n_block, %c1 : index loc(callsite("n_block"("flash_fwd.cu":346:24 to 346:45) at "flash_fwd.cu":515:5 to 515:24))
        %prev_kv0 = arith.muli %prev, %cBN : index loc(callsite("n_block"("flash_fwd.cu":348:44 to 348:93) at "flash_fwd.cu":515:5 to 515:24))
        %sV_other = memref.subview %sV[%other, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<2x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":347:44 to 347:88) at "flash_fwd.cu":515:5 to 515:24))
        %t = cuir.copy_async cp_async %v_head[%prev_kv0, %c0] -> %sV_other
            : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sV"("flash_fwd.cu":347:5 to 347:88) at "flash_fwd.cu":515:5 to 515:24))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))
      } loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))

      %acc_s = cuir.gemm %sQ, %sK_stage transpose_b, %acc_s_init
          : memref<128x64xbf16, #S>, memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC> loc(callsite("acc_s"("flash_fwd.cu":500:5 to 500:32) at "flash_fwd.cu":515:5 to 515:24))

      // ------- score tile complete: every score of this tile is visible -------

      // ------- online softmax: update row_max / row_sum, rescale acc_o, acc_s <- probabilities -------
      %blk_max = cuir.reduce_rows max %acc_s : tensor<128x128xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %new_max = arith.maximumf %row_max, %blk_max : tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:32 to 295:50) at "flash_fwd.cu":372:3 to 372:34))
      %new_max_s = arith.mulf %new_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:59 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:19 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %old_max_s = arith.mulf %row_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:79) at "flash_fwd.cu":372:3 to 372:34))
      %max_diff = arith.subf %old_max_s, %max_scaled : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:92) at "flash_fwd.cu":372:3 to 372:34))
      %rescale = math.exp2 %max_diff : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:19 to 296:93) at "flash_fwd.cu":372:3 to 372:34))
      %max_b = cuir.broadcast_rows %max_scaled : tensor<128xf32, #ROW> -> tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %neg_max = arith.negf %max_b : tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %logits = math.fma %acc_s, %scale_tile, %neg_max : tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:37 to 304:84) at "flash_fwd.cu":372:3 to 372:34))
      %p = math.exp2 %logits : tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:11 to 304:85) at "flash_fwd.cu":372:3 to 372:34))
      %tile_sum = cuir.reduce_rows sum %p : tensor<128x128xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("tile_sum"("flash_fwd.cu":306:11 to 306:24) at "flash_fwd.cu":372:3 to 372:34))
      %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:27 to 309:54) at "flash_fwd.cu":372:3 to 372:34))
      %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:7 to 309:65) at "flash_fwd.cu":372:3 to 372:34))
      %rescale_b = cuir.broadcast_rows %rescale : tensor<128xf32, #ROW> -> tensor<128x64xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<128x64xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %p16 = arith.truncf %p : tensor<128x128xf32, #ACC> to tensor<128x128xbf16, #ACC> loc(callsite("p_frag"("flash_fwd.cu":216:7 to 216:54) at "flash_fwd.cu":374:3 to 374:30))
      %p_frag = cuir.convert_layout %p16 : tensor<128x128xbf16, #ACC> -> tensor<128x128xbf16, #A> loc(callsite("p_frag"("flash_fwd.cu":374:3 to 374:30) at "flash_fwd.cu":515:5 to 515:24))

      cuir.wait_group %gv_cur pending 2 loc(callsite("flash_fwd.cu":376:3 to 376:28 at "flash_fwd.cu":515:5 to 515:24))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":377:3 to 377:19 at "flash_fwd.cu":515:5 to 515:24))
      %has_k = arith.cmpi sge, %n_block, %c2 : index loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))
      %gk_new = scf.if %has_k -> (!cuir.group) {
        %next2 = arith.subi %n_block, %c2 : index loc(callsite("n_block"("flash_fwd.cu":379:24 to 379:45) at "flash_fwd.cu":515:5 to 515:24))
        %next2_kv0 = arith.muli %next2, %cBN : index loc(callsite("n_block"("flash_fwd.cu":380:54 to 380:103) at "flash_fwd.cu":515:5 to 515:24))
        %t = cuir.copy_async cp_async %k_head[%next2_kv0, %c0] -> %sK_stage
            : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sK"("flash_fwd.cu":380:5 to 380:52) at "flash_fwd.cu":515:5 to 515:24))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))
      } loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))

      %acc_o_new = cuir.gemm %p_frag, %sV_stage, %acc_o_rescaled
          : tensor<128x128xbf16, #A>, memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":385:3 to 385:27) at "flash_fwd.cu":515:5 to 515:24))
      scf.yield %acc_o_new, %new_max, %row_sum_new, %gk_next, %gv_next, %gk_new
          : tensor<128x64xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group loc("flash_fwd.cu":514:3 to 514:34)
    } loc("flash_fwd.cu":514:3 to 514:34)

    cuir.wait_group %u_gk_next pending 0 loc("flash_fwd.cu":517:3 to 517:28)

    // =============================== epilogue ===============================
    %sees_nothing = arith.cmpf oeq, %u_row_sum, %zero_row : tensor<128xf32, #ROW> loc("row_sees_nothing"("flash_fwd.cu":537:7 to 537:47))
    %one_row = arith.constant dense<1.0> : tensor<128xf32, #ROW> loc("row_inv_sum"("flash_fwd.cu":538:56 to 538:65))
    %inv = arith.divf %one_row, %u_row_sum : tensor<128xf32, #ROW> loc("row_inv_sum"("flash_fwd.cu":538:56 to 538:65))
    %row_inv_sum = arith.select %sees_nothing, %zero_row, %inv : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc("row_inv_sum"("flash_fwd.cu":538:7 to 538:65))
    %max_l2 = arith.mulf %u_row_max, %scale_row : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:55 to 539:95))
    %log_sum = math.log2 %u_row_sum : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:98 to 539:112))
    %lse2 = arith.addf %max_l2, %log_sum : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:54 to 539:113))
    %ln2 = arith.constant dense<0.693147182> : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:114 to 539:120))
    %lse_nat = arith.mulf %lse2, %ln2 : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:54 to 539:120))
    %lse_val = arith.select %sees_nothing, %ninf_row, %lse_nat : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:7 to 539:120))
    cuir.store %lse_val -> %lse_head[%m_start] : tensor<128xf32, #ROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":541:74 to 541:93))
    %inv_b = cuir.broadcast_rows %row_inv_sum : tensor<128xf32, #ROW> -> tensor<128x64xf32, #ACC> loc("packed"("flash_fwd.cu":554:54 to 554:101))
    %o_norm = arith.mulf %u_acc_o, %inv_b : tensor<128x64xf32, #ACC> loc("packed"("flash_fwd.cu":554:54 to 554:101))
    %o16 = arith.truncf %o_norm : tensor<128x64xf32, #ACC> to tensor<128x64xbf16, #ACC> loc("packed"("flash_fwd.cu":554:9 to 554:53))
    cuir.store %o16 -> %sQ : tensor<128x64xbf16, #ACC> -> memref<128x64xbf16, #S> loc("sO"("flash_fwd.cu":556:9 to 556:111))
    cuir.barrier.warp loc("flash_fwd.cu":560:3 to 560:16)
    cuir.copy %sQ -> %o_head[%m_start, %c0] : memref<128x64xbf16, #S> -> memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":570:7 to 570:102))
    scf.yield loc("flash_fwd.cu":437:3 to 437:24)
  } loc("flash_fwd.cu":437:3 to 437:24)
  cuir.return loc("flash_fwd.cu":390:5 to 390:62)
} loc("flash_fwd_sm80_kernel"("flash_fwd.cu":390:5 to 390:62))
cuir.kernel @flash_fwd_f16_d128(
    %q: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_fwd.cu":390:27 to 390:61)),
    %k: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_fwd.cu":390:27 to 390:61)),
    %v: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_fwd.cu":390:27 to 390:61)),
    %o: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_fwd.cu":390:27 to 390:61)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_fwd.cu":390:27 to 390:61)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_fwd.cu":390:27 to 390:61)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_fwd.cu":388:1 to 388:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_fwd.cu":390:27 to 390:61)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_fwd.cu":390:27 to 390:61)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_fwd.cu":390:27 to 390:61)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_fwd.cu":390:27 to 390:61)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_fwd.cu":390:27 to 390:61)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 128, hq, b)
    threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index loc("BLOCK_M")
  %cBN = arith.constant 64 : index loc("BLOCK_N")
  %ninf = arith.constant 0xFF800000 : f32

  // ---- block coordinates, sequence views, masking offsets ----
  %m_block = cuir.block_id x loc("block.m_block"("flash_fwd.cu":405:3 to 405:48))
  %head_q = cuir.block_id y loc("block.head_q"("flash_fwd.cu":405:3 to 405:48))
  %b = cuir.block_id z loc("block.batch"("flash_fwd.cu":405:3 to 405:48))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("causal_offset"("flash_fwd.cu":408:13 to 408:49))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("last_key_offset"("flash_fwd.cu":410:13 to 410:68))
  %m_start = arith.muli %m_block, %c128 : index loc("m_start"("flash_fwd.cu":411:13 to 411:46))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("head_kv"("flash_fwd.cu":412:13 to 412:80))
  %head_kv = arith.divui %head_q, %group : index loc("head_kv"("flash_fwd.cu":412:13 to 412:80))
  %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("q_head"("flash_fwd.cu":456:5 to 456:69))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("k_head"("flash_fwd.cu":415:3 to 415:22))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("v_head"("flash_fwd.cu":419:3 to 419:22))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":439:5 to 439:23))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":447:7 to 447:35))

  // ---- KV tiles this block visits: [0, n_block_max), of which [0, n_unmasked_blocks) need no mask ----
  %n_block_all = arith.ceildivui %seqlen_kv, %cBN : index loc("n_block_max"("flash_fwd.cu":425:7 to 425:56))
  %n_full_all = arith.divui %seqlen_kv, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":426:7 to 426:46))
  %m_end = arith.addi %m_start, %c128 : index loc("last_row"("flash_fwd.cu":428:15 to 428:62))
  %m_end_clamped = arith.minui %m_end, %seqlen_q : index loc("last_row"("flash_fwd.cu":428:15 to 428:62))
  %last_row = arith.subi %m_end_clamped, %c1 : index loc("last_row"("flash_fwd.cu":428:15 to 428:62))
  %last_key_of_last_row = arith.addi %last_row, %causal_offset : index loc("last_key_of_last_row"("flash_fwd.cu":429:15 to 429:62))
  %last_key_of_first_row = arith.addi %m_start, %causal_offset : index loc("last_key_of_first_row"("flash_fwd.cu":430:15 to 430:62))
  %llr_neg = arith.cmpi slt, %last_key_of_last_row, %c0 : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %llr_blk = arith.divsi %last_key_of_last_row, %cBN : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %llr_end = arith.addi %llr_blk, %c1 : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %llr_bound = arith.select %llr_neg, %c0, %llr_end : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %n_block_causal = arith.minsi %n_block_all, %llr_bound : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %lfr_neg = arith.cmpi slt, %last_key_of_first_row, %c0 : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %lfr_next = arith.addi %last_key_of_first_row, %c1 : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %lfr_blk = arith.divsi %lfr_next, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %lfr_bound = arith.select %lfr_neg, %c0, %lfr_blk : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %n_full_causal = arith.minsi %n_full_all, %lfr_bound : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %n_block_max = arith.select %causal, %n_block_causal, %n_block_all : index loc("n_block_max"("flash_fwd.cu":427:3 to 427:27))
  %n_unmasked_blocks = arith.select %causal, %n_full_causal, %n_full_all : index loc("n_unmasked_blocks"("flash_fwd.cu":427:3 to 427:27))

  %no_keys = arith.cmpi sle, %n_block_max, %c0 : index loc("flash_fwd.cu":437:3 to 437:24)
  scf.if %no_keys {
    // No row of this block sees any key: O = 0, LSE = -inf.
    %zero_o = arith.constant dense<0.0> : tensor<128x128xf16, #ACC> loc("o_head"("flash_fwd.cu":444:98 to 444:120))
    cuir.store %zero_o -> %o_head[%m_start, %c0] : tensor<128x128xf16, #ACC> -> memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":444:27 to 444:120))
    %ninf_lse = arith.constant dense<0xFF800000> : tensor<128xf32, #ROW> loc("lse_head"("flash_fwd.cu":448:100 to 448:123))
    cuir.store %ninf_lse -> %lse_head[%m_start] : tensor<128xf32, #ROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":448:100 to 448:123))
    scf.yield loc("flash_fwd.cu":450:5 to 450:12)
  } else {
    // ---- shared memory: Q [128][d] (O in the epilogue), K and V [2 stages][BLOCK_N][d], 128-byte swizzled ----
    %sQ = cuir.alloc {swizzle = 128} : memref<128x128xf16, #S> loc("sQ"("flash_fwd.cu":76:29 to 76:42))
    %sK = cuir.alloc {swizzle = 128} : memref<2x64x128xf16, #S> loc("sK"("flash_fwd.cu":77:29 to 77:65))
    %sV = cuir.alloc {swizzle = 128} : memref<2x64x128xf16, #S> loc("sV"("flash_fwd.cu":78:29 to 78:78))

    // ---- prologue: Q and the first K tile (one group), the first V tile, the second K tile ----
    %tq = cuir.copy_async cp_async %q_head[%m_start, %c0] -> %sQ
        : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xf16, #S> -> !cuir.token loc("sQ"("flash_fwd.cu":458:5 to 458:63))
    %n_first = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":460:5 to 460:41))
    %first_stage = arith.remui %n_first, %c2 : index loc("stage_offset"("flash_fwd.cu":462:5 to 462:79))
    %first_kv0 = arith.muli %n_first, %cBN : index loc("k_head"("flash_fwd.cu":463:80 to 463:130))
    %sK_first = memref.subview %sK[%first_stage, 0, 0] [1, 64, 128] [1, 1, 1]
        : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc("sK"("flash_fwd.cu":463:39 to 463:78))
    %tk = cuir.copy_async cp_async %k_head[%first_kv0, %c0] -> %sK_first
        : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc("sK"("flash_fwd.cu":463:5 to 463:78))
    %g_qk = cuir.commit %tq, %tk loc("flash_fwd.cu":465:5 to 465:29)
    %sV_first = memref.subview %sV[%first_stage, 0, 0] [1, 64, 128] [1, 1, 1]
        : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc("sV"("flash_fwd.cu":466:39 to 466:78))
    %tv = cuir.copy_async cp_async %v_head[%first_kv0, %c0] -> %sV_first
        : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc("sV"("flash_fwd.cu":466:5 to 466:78))
    %g_v = cuir.commit %tv loc("flash_fwd.cu":468:5 to 468:29)
    %has_second = arith.cmpi sge, %n_block_max, %c2 : index loc("flash_fwd.cu":470:3 to 470:24)
    %g_k2 = scf.if %has_second -> (!cuir.group) {
      %n_second = arith.subi %n_block_max, %c2 : index loc("n_block"("flash_fwd.cu":471:5 to 471:41))
      %second_stage = arith.remui %n_second, %c2 : index loc("sK"("flash_fwd.cu":473:66 to 473:110))
      %second_kv0 = arith.muli %n_second, %cBN : index loc("k_head"("flash_fwd.cu":474:33 to 474:83))
      %sK_second = memref.subview %sK[%second_stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc("sK"("flash_fwd.cu":473:39 to 473:109))
      %tk2 = cuir.copy_async cp_async %k_head[%second_kv0, %c0] -> %sK_second
          : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc("sK"("flash_fwd.cu":473:5 to 473:90))
      %g = cuir.commit %tk2 loc("flash_fwd.cu":477:3 to 477:27)
      scf.yield %g : !cuir.group loc("flash_fwd.cu":470:3 to 470:24)
    } else {
      %g = cuir.commit loc("flash_fwd.cu":477:3 to 477:27)
      scf.yield %g : !cuir.group loc("flash_fwd.cu":470:3 to 470:24)
    } loc("flash_fwd.cu":470:3 to 470:24)

    // ---- accumulators and softmax state, all in registers ----
    %acc_o_init = arith.constant dense<0.0> : tensor<128x128xf32, #ACC> loc("acc_o"("flash_fwd.cu":488:35 to 488:57))
    %row_max_init = arith.constant dense<0xFF800000> : tensor<128xf32, #ROW> loc("row_max"("flash_fwd.cu":489:5 to 489:46))
    %row_sum_init = arith.constant dense<0.0> : tensor<128xf32, #ROW> loc("row_sum"("flash_fwd.cu":490:5 to 490:42))
    %log2e = arith.constant 1.44269502 : f32 loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %scale_tile = tensor.splat %scale_log2 : tensor<128x64xf32, #ACC> loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %scale_row = tensor.splat %scale_log2 : tensor<128xf32, #ROW> loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %zero_row = arith.constant dense<0.0> : tensor<128xf32, #ROW> loc("max_scaled"("flash_fwd.cu":295:32 to 295:89))
    %ninf_row = arith.constant dense<0xFF800000> : tensor<128xf32, #ROW> loc("max_scaled"("flash_fwd.cu":295:32 to 295:89))
    %acc_s_init = arith.constant dense<0.0> : tensor<128x64xf32, #ACC> loc("acc_s"("flash_fwd.cu":353:3 to 353:44))

    // =============================== masking steps ===============================
    %n_masked = arith.subi %n_block_max, %n_unmasked_blocks : index loc("flash_fwd.cu":507:3 to 507:50)
    %m_acc_o, %m_row_max, %m_row_sum, %m_gk, %m_gv, %m_gk_next = scf.for %i = %c0 to %n_masked step %c1
        iter_args(%acc_o = %acc_o_init, %row_max = %row_max_init, %row_sum = %row_sum_init,
                  %gk_cur = %g_qk, %gv_cur = %g_v, %gk_next = %g_k2)
        -> (tensor<128x128xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group) {
      %top = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":506:3 to 506:33))
      %n_block = arith.subi %top, %i : index loc("n_block"("flash_fwd.cu":507:3 to 507:50))
      %stage = arith.remui %n_block, %c2 : index loc(callsite("stage_offset"("flash_fwd.cu":333:3 to 333:77) at "flash_fwd.cu":508:5 to 508:23))
      %other = arith.subi %c1, %stage : index loc(callsite("next_stage_offset"("flash_fwd.cu":334:18 to 334:69) at "flash_fwd.cu":508:5 to 508:23))
      %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":252:24 to 252:44) at "flash_fwd.cu":368:5 to 368:24))
      %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK_stage"("flash_fwd.cu":340:18 to 340:68) at "flash_fwd.cu":508:5 to 508:23))
      %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV_stage"("flash_fwd.cu":341:18 to 341:68) at "flash_fwd.cu":508:5 to 508:23))

      cuir.wait_group %gk_cur pending 2 loc(callsite("flash_fwd.cu":343:3 to 343:28 at "flash_fwd.cu":508:5 to 508:23))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":344:3 to 344:19 at "flash_fwd.cu":508:5 to 508:23))
      %has_v = arith.cmpi sge, %n_block, %c1 : index loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))
      %gv_next = scf.if %has_v -> (!cuir.group) {
        %prev = arith.subi %n_block, %c1 : index loc(callsite("n_block"("flash_fwd.cu":346:24 to 346:45) at "flash_fwd.cu":508:5 to 508:23))
        %prev_kv0 = arith.muli %prev, %cBN : index loc(callsite("n_block"("flash_fwd.cu":348:44 to 348:93) at "flash_fwd.cu":508:5 to 508:23))
        %sV_other = memref.subview %sV[%other, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":347:44 to 347:88) at "flash_fwd.cu":508:5 to 508:23))
        %t = cuir.copy_async cp_async %v_head[%prev_kv0, %c0] -> %sV_other
            : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sV"("flash_fwd.cu":347:5 to 347:88) at "flash_fwd.cu":508:5 to 508:23))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))
      } loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))

      %acc_s = cuir.gemm %sQ, %sK_stage transpose_b, %acc_s_init
          : memref<128x128xf16, #S>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC> loc(callsite("acc_s"("flash_fwd.cu":497:5 to 497:32) at "flash_fwd.cu":508:5 to 508:23))

      // ------- score tile complete: acc_s = Q K^T (unscaled) -------
      %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %m_start, %kv0]
          : (tensor<128x64xf32, #ACC>) -> tensor<128x64xf32, #ACC> {
      ^bb0(%x: f32 loc("acc_s"("flash_fwd.cu":261:62 to 261:88)), %bi: index loc(callsite("block.batch"("flash_fwd.cu":368:26 to 368:66) at "flash_fwd.cu":508:5 to 508:23)), %hi: index loc(callsite("block.head_q"("flash_fwd.cu":368:26 to 368:66) at "flash_fwd.cu":508:5 to 508:23)), %row: index loc("row"("flash_fwd.cu":259:9 to 259:58)), %col: index loc("col"("flash_fwd.cu":260:9 to 260:53))):
        %past_end = arith.cmpi sge, %col, %seqlen_kv : index loc(callsite("flash_fwd.cu":261:13 to 261:29 at "flash_fwd.cu":368:5 to 368:24))
        %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_fwd.cu":247:27 to 247:48 at "flash_fwd.cu":368:5 to 368:24))
        %past_diag = arith.cmpi sgt, %col, %row_last : index loc(callsite("flash_fwd.cu":261:33 to 261:60 at "flash_fwd.cu":368:5 to 368:24))
        %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_fwd.cu":261:9 to 261:29 at "flash_fwd.cu":368:5 to 368:24))
        %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_fwd.cu":261:62 to 261:88) at "flash_fwd.cu":368:5 to 368:24))
        cuir.yield %r : f32 loc(callsite("flash_fwd.cu":368:5 to 368:24 at "flash_fwd.cu":508:5 to 508:23))
      } loc(callsite("acc_s"("flash_fwd.cu":368:5 to 368:24) at "flash_fwd.cu":508:5 to 508:23))

      // ------- online softmax: update row_max / row_sum, rescale acc_o, acc_s <- probabilities -------
      %blk_max = cuir.reduce_rows max %acc_s_masked : tensor<128x64xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %new_max = arith.maximumf %row_max, %blk_max : tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:32 to 295:50) at "flash_fwd.cu":372:3 to 372:34))
      %new_max_s = arith.mulf %new_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:59 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:19 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %old_max_s = arith.mulf %row_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:79) at "flash_fwd.cu":372:3 to 372:34))
      %max_diff = arith.subf %old_max_s, %max_scaled : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:92) at "flash_fwd.cu":372:3 to 372:34))
      %rescale = math.exp2 %max_diff : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:19 to 296:93) at "flash_fwd.cu":372:3 to 372:34))
      %max_b = cuir.broadcast_rows %max_scaled : tensor<128xf32, #ROW> -> tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %neg_max = arith.negf %max_b : tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %logits = math.fma %acc_s_masked, %scale_tile, %neg_max : tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:37 to 304:84) at "flash_fwd.cu":372:3 to 372:34))
      %p = math.exp2 %logits : tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:11 to 304:85) at "flash_fwd.cu":372:3 to 372:34))
      %tile_sum = cuir.reduce_rows sum %p : tensor<128x64xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("tile_sum"("flash_fwd.cu":306:11 to 306:24) at "flash_fwd.cu":372:3 to 372:34))
      %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:27 to 309:54) at "flash_fwd.cu":372:3 to 372:34))
      %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:7 to 309:65) at "flash_fwd.cu":372:3 to 372:34))
      %rescale_b = cuir.broadcast_rows %rescale : tensor<128xf32, #ROW> -> tensor<128x128xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<128x128xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %p16 = arith.truncf %p : tensor<128x64xf32, #ACC> to tensor<128x64xf16, #ACC> loc(callsite("p_frag"("flash_fwd.cu":216:7 to 216:54) at "flash_fwd.cu":374:3 to 374:30))
      %p_frag = cuir.convert_layout %p16 : tensor<128x64xf16, #ACC> -> tensor<128x64xf16, #A> loc(callsite("p_frag"("flash_fwd.cu":374:3 to 374:30) at "flash_fwd.cu":508:5 to 508:23))

      cuir.wait_group %gv_cur pending 2 loc(callsite("flash_fwd.cu":376:3 to 376:28 at "flash_fwd.cu":508:5 to 508:23))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":377:3 to 377:19 at "flash_fwd.cu":508:5 to 508:23))
      %has_k = arith.cmpi sge, %n_block, %c2 : index loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))
      %gk_new = scf.if %has_k -> (!cuir.group) {
        %next2 = arith.subi %n_block, %c2 : index loc(callsite("n_block"("flash_fwd.cu":379:24 to 379:45) at "flash_fwd.cu":508:5 to 508:23))
        %next2_kv0 = arith.muli %next2, %cBN : index loc(callsite("n_block"("flash_fwd.cu":380:54 to 380:103) at "flash_fwd.cu":508:5 to 508:23))
        %t = cuir.copy_async cp_async %k_head[%next2_kv0, %c0] -> %sK_stage
            : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sK"("flash_fwd.cu":380:5 to 380:52) at "flash_fwd.cu":508:5 to 508:23))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))
      } loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))

      %acc_o_new = cuir.gemm %p_frag, %sV_stage, %acc_o_rescaled
          : tensor<128x64xf16, #A>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":385:3 to 385:27) at "flash_fwd.cu":508:5 to 508:23))
      scf.yield %acc_o_new, %new_max, %row_sum_new, %gk_next, %gv_next, %gk_new
          : tensor<128x128xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group loc("flash_fwd.cu":507:3 to 507:50)
    } loc("flash_fwd.cu":507:3 to 507:50)

    // =============================== unmasked steps ===============================
    %u_acc_o, %u_row_max, %u_row_sum, %u_gk, %u_gv, %u_gk_next = scf.for %i = %c0 to %n_unmasked_blocks step %c1
        iter_args(%acc_o = %m_acc_o, %row_max = %m_row_max, %row_sum = %m_row_sum,
                  %gk_cur = %m_gk, %gv_cur = %m_gv, %gk_next = %m_gk_next)
        -> (tensor<128x128xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group) {
      %top = arith.subi %n_unmasked_blocks, %c1 : index loc("n_block"("flash_fwd.cu":514:3 to 514:34))
      %n_block = arith.subi %top, %i : index loc("n_block"("flash_fwd.cu":514:3 to 514:34))
      %stage = arith.remui %n_block, %c2 : index loc(callsite("stage_offset"("flash_fwd.cu":333:3 to 333:77) at "flash_fwd.cu":515:5 to 515:24))
      %other = arith.subi %c1, %stage : index loc(callsite("next_stage_offset"("flash_fwd.cu":334:18 to 334:69) at "flash_fwd.cu":515:5 to 515:24))
      %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK_stage"("flash_fwd.cu":340:18 to 340:68) at "flash_fwd.cu":515:5 to 515:24))
      %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV_stage"("flash_fwd.cu":341:18 to 341:68) at "flash_fwd.cu":515:5 to 515:24))

      cuir.wait_group %gk_cur pending 2 loc(callsite("flash_fwd.cu":343:3 to 343:28 at "flash_fwd.cu":515:5 to 515:24))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":344:3 to 344:19 at "flash_fwd.cu":515:5 to 515:24))
      %has_v = arith.cmpi sge, %n_block, %c1 : index loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))
      %gv_next = scf.if %has_v -> (!cuir.group) {
        %prev = arith.subi %n_block, %c1 : index loc(callsite("n_block"("flash_fwd.cu":346:24 to 346:45) at "flash_fwd.cu":515:5 to 515:24))
        %prev_kv0 = arith.muli %prev, %cBN : index loc(callsite("n_block"("flash_fwd.cu":348:44 to 348:93) at "flash_fwd.cu":515:5 to 515:24))
        %sV_other = memref.subview %sV[%other, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":347:44 to 347:88) at "flash_fwd.cu":515:5 to 515:24))
        %t = cuir.copy_async cp_async %v_head[%prev_kv0, %c0] -> %sV_other
            : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sV"("flash_fwd.cu":347:5 to 347:88) at "flash_fwd.cu":515:5 to 515:24))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))
      } loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))

      %acc_s = cuir.gemm %sQ, %sK_stage transpose_b, %acc_s_init
          : memref<128x128xf16, #S>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC> loc(callsite("acc_s"("flash_fwd.cu":500:5 to 500:32) at "flash_fwd.cu":515:5 to 515:24))

      // ------- score tile complete: every score of this tile is visible -------

      // ------- online softmax: update row_max / row_sum, rescale acc_o, acc_s <- probabilities -------
      %blk_max = cuir.reduce_rows max %acc_s : tensor<128x64xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %new_max = arith.maximumf %row_max, %blk_max : tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:32 to 295:50) at "flash_fwd.cu":372:3 to 372:34))
      %new_max_s = arith.mulf %new_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:59 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:19 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %old_max_s = arith.mulf %row_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:79) at "flash_fwd.cu":372:3 to 372:34))
      %max_diff = arith.subf %old_max_s, %max_scaled : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:92) at "flash_fwd.cu":372:3 to 372:34))
      %rescale = math.exp2 %max_diff : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:19 to 296:93) at "flash_fwd.cu":372:3 to 372:34))
      %max_b = cuir.broadcast_rows %max_scaled : tensor<128xf32, #ROW> -> tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %neg_max = arith.negf %max_b : tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %logits = math.fma %acc_s, %scale_tile, %neg_max : tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:37 to 304:84) at "flash_fwd.cu":372:3 to 372:34))
      %p = math.exp2 %logits : tensor<128x64xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:11 to 304:85) at "flash_fwd.cu":372:3 to 372:34))
      %tile_sum = cuir.reduce_rows sum %p : tensor<128x64xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("tile_sum"("flash_fwd.cu":306:11 to 306:24) at "flash_fwd.cu":372:3 to 372:34))
      %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:27 to 309:54) at "flash_fwd.cu":372:3 to 372:34))
      %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:7 to 309:65) at "flash_fwd.cu":372:3 to 372:34))
      %rescale_b = cuir.broadcast_rows %rescale : tensor<128xf32, #ROW> -> tensor<128x128xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<128x128xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %p16 = arith.truncf %p : tensor<128x64xf32, #ACC> to tensor<128x64xf16, #ACC> loc(callsite("p_frag"("flash_fwd.cu":216:7 to 216:54) at "flash_fwd.cu":374:3 to 374:30))
      %p_frag = cuir.convert_layout %p16 : tensor<128x64xf16, #ACC> -> tensor<128x64xf16, #A> loc(callsite("p_frag"("flash_fwd.cu":374:3 to 374:30) at "flash_fwd.cu":515:5 to 515:24))

      cuir.wait_group %gv_cur pending 2 loc(callsite("flash_fwd.cu":376:3 to 376:28 at "flash_fwd.cu":515:5 to 515:24))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":377:3 to 377:19 at "flash_fwd.cu":515:5 to 515:24))
      %has_k = arith.cmpi sge, %n_block, %c2 : index loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))
      %gk_new = scf.if %has_k -> (!cuir.group) {
        %next2 = arith.subi %n_block, %c2 : index loc(callsite("n_block"("flash_fwd.cu":379:24 to 379:45) at "flash_fwd.cu":515:5 to 515:24))
        %next2_kv0 = arith.muli %next2, %cBN : index loc(callsite("n_block"("flash_fwd.cu":380:54 to 380:103) at "flash_fwd.cu":515:5 to 515:24))
        %t = cuir.copy_async cp_async %k_head[%next2_kv0, %c0] -> %sK_stage
            : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sK"("flash_fwd.cu":380:5 to 380:52) at "flash_fwd.cu":515:5 to 515:24))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))
      } loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))

      %acc_o_new = cuir.gemm %p_frag, %sV_stage, %acc_o_rescaled
          : tensor<128x64xf16, #A>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":385:3 to 385:27) at "flash_fwd.cu":515:5 to 515:24))
      scf.yield %acc_o_new, %new_max, %row_sum_new, %gk_next, %gv_next, %gk_new
          : tensor<128x128xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group loc("flash_fwd.cu":514:3 to 514:34)
    } loc("flash_fwd.cu":514:3 to 514:34)

    cuir.wait_group %u_gk_next pending 0 loc("flash_fwd.cu":517:3 to 517:28)

    // =============================== epilogue ===============================
    %sees_nothing = arith.cmpf oeq, %u_row_sum, %zero_row : tensor<128xf32, #ROW> loc("row_sees_nothing"("flash_fwd.cu":537:7 to 537:47))
    %one_row = arith.constant dense<1.0> : tensor<128xf32, #ROW> loc("row_inv_sum"("flash_fwd.cu":538:56 to 538:65))
    %inv = arith.divf %one_row, %u_row_sum : tensor<128xf32, #ROW> loc("row_inv_sum"("flash_fwd.cu":538:56 to 538:65))
    %row_inv_sum = arith.select %sees_nothing, %zero_row, %inv : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc("row_inv_sum"("flash_fwd.cu":538:7 to 538:65))
    %max_l2 = arith.mulf %u_row_max, %scale_row : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:55 to 539:95))
    %log_sum = math.log2 %u_row_sum : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:98 to 539:112))
    %lse2 = arith.addf %max_l2, %log_sum : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:54 to 539:113))
    %ln2 = arith.constant dense<0.693147182> : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:114 to 539:120))
    %lse_nat = arith.mulf %lse2, %ln2 : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:54 to 539:120))
    %lse_val = arith.select %sees_nothing, %ninf_row, %lse_nat : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:7 to 539:120))
    cuir.store %lse_val -> %lse_head[%m_start] : tensor<128xf32, #ROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":541:74 to 541:93))
    %inv_b = cuir.broadcast_rows %row_inv_sum : tensor<128xf32, #ROW> -> tensor<128x128xf32, #ACC> loc("packed"("flash_fwd.cu":554:54 to 554:101))
    %o_norm = arith.mulf %u_acc_o, %inv_b : tensor<128x128xf32, #ACC> loc("packed"("flash_fwd.cu":554:54 to 554:101))
    %o16 = arith.truncf %o_norm : tensor<128x128xf32, #ACC> to tensor<128x128xf16, #ACC> loc("packed"("flash_fwd.cu":554:9 to 554:53))
    cuir.store %o16 -> %sQ : tensor<128x128xf16, #ACC> -> memref<128x128xf16, #S> loc("sO"("flash_fwd.cu":556:9 to 556:111))
    cuir.barrier.warp loc("flash_fwd.cu":560:3 to 560:16)
    cuir.copy %sQ -> %o_head[%m_start, %c0] : memref<128x128xf16, #S> -> memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":570:7 to 570:102))
    scf.yield loc("flash_fwd.cu":437:3 to 437:24)
  } loc("flash_fwd.cu":437:3 to 437:24)
  cuir.return loc("flash_fwd.cu":390:5 to 390:62)
} loc("flash_fwd_sm80_kernel"("flash_fwd.cu":390:5 to 390:62))
cuir.kernel @flash_fwd_f16_d64(
    %q: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_fwd.cu":390:27 to 390:61)),
    %k: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_fwd.cu":390:27 to 390:61)),
    %v: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_fwd.cu":390:27 to 390:61)),
    %o: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_fwd.cu":390:27 to 390:61)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_fwd.cu":390:27 to 390:61)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_fwd.cu":390:27 to 390:61)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_fwd.cu":388:1 to 388:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_fwd.cu":390:27 to 390:61)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_fwd.cu":390:27 to 390:61)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_fwd.cu":390:27 to 390:61)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_fwd.cu":390:27 to 390:61)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_fwd.cu":390:27 to 390:61)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 128, hq, b)
    threads 128 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index loc("BLOCK_M")
  %cBN = arith.constant 128 : index loc("BLOCK_N")
  %ninf = arith.constant 0xFF800000 : f32

  // ---- block coordinates, sequence views, masking offsets ----
  %m_block = cuir.block_id x loc("block.m_block"("flash_fwd.cu":405:3 to 405:48))
  %head_q = cuir.block_id y loc("block.head_q"("flash_fwd.cu":405:3 to 405:48))
  %b = cuir.block_id z loc("block.batch"("flash_fwd.cu":405:3 to 405:48))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("causal_offset"("flash_fwd.cu":408:13 to 408:49))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("last_key_offset"("flash_fwd.cu":410:13 to 410:68))
  %m_start = arith.muli %m_block, %c128 : index loc("m_start"("flash_fwd.cu":411:13 to 411:46))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("head_kv"("flash_fwd.cu":412:13 to 412:80))
  %head_kv = arith.divui %head_q, %group : index loc("head_kv"("flash_fwd.cu":412:13 to 412:80))
  %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("q_head"("flash_fwd.cu":456:5 to 456:69))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("k_head"("flash_fwd.cu":415:3 to 415:22))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("v_head"("flash_fwd.cu":419:3 to 419:22))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":439:5 to 439:23))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":447:7 to 447:35))

  // ---- KV tiles this block visits: [0, n_block_max), of which [0, n_unmasked_blocks) need no mask ----
  %n_block_all = arith.ceildivui %seqlen_kv, %cBN : index loc("n_block_max"("flash_fwd.cu":425:7 to 425:56))
  %n_full_all = arith.divui %seqlen_kv, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":426:7 to 426:46))
  %m_end = arith.addi %m_start, %c128 : index loc("last_row"("flash_fwd.cu":428:15 to 428:62))
  %m_end_clamped = arith.minui %m_end, %seqlen_q : index loc("last_row"("flash_fwd.cu":428:15 to 428:62))
  %last_row = arith.subi %m_end_clamped, %c1 : index loc("last_row"("flash_fwd.cu":428:15 to 428:62))
  %last_key_of_last_row = arith.addi %last_row, %causal_offset : index loc("last_key_of_last_row"("flash_fwd.cu":429:15 to 429:62))
  %last_key_of_first_row = arith.addi %m_start, %causal_offset : index loc("last_key_of_first_row"("flash_fwd.cu":430:15 to 430:62))
  %llr_neg = arith.cmpi slt, %last_key_of_last_row, %c0 : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %llr_blk = arith.divsi %last_key_of_last_row, %cBN : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %llr_end = arith.addi %llr_blk, %c1 : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %llr_bound = arith.select %llr_neg, %c0, %llr_end : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %n_block_causal = arith.minsi %n_block_all, %llr_bound : index loc("n_block_max"("flash_fwd.cu":431:5 to 431:102))
  %lfr_neg = arith.cmpi slt, %last_key_of_first_row, %c0 : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %lfr_next = arith.addi %last_key_of_first_row, %c1 : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %lfr_blk = arith.divsi %lfr_next, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %lfr_bound = arith.select %lfr_neg, %c0, %lfr_blk : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %n_full_causal = arith.minsi %n_full_all, %lfr_bound : index loc("n_unmasked_blocks"("flash_fwd.cu":432:5 to 432:118))
  %n_block_max = arith.select %causal, %n_block_causal, %n_block_all : index loc("n_block_max"("flash_fwd.cu":427:3 to 427:27))
  %n_unmasked_blocks = arith.select %causal, %n_full_causal, %n_full_all : index loc("n_unmasked_blocks"("flash_fwd.cu":427:3 to 427:27))

  %no_keys = arith.cmpi sle, %n_block_max, %c0 : index loc("flash_fwd.cu":437:3 to 437:24)
  scf.if %no_keys {
    // No row of this block sees any key: O = 0, LSE = -inf.
    %zero_o = arith.constant dense<0.0> : tensor<128x64xf16, #ACC> loc("o_head"("flash_fwd.cu":444:98 to 444:120))
    cuir.store %zero_o -> %o_head[%m_start, %c0] : tensor<128x64xf16, #ACC> -> memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":444:27 to 444:120))
    %ninf_lse = arith.constant dense<0xFF800000> : tensor<128xf32, #ROW> loc("lse_head"("flash_fwd.cu":448:100 to 448:123))
    cuir.store %ninf_lse -> %lse_head[%m_start] : tensor<128xf32, #ROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":448:100 to 448:123))
    scf.yield loc("flash_fwd.cu":450:5 to 450:12)
  } else {
    // ---- shared memory: Q [128][d] (O in the epilogue), K and V [2 stages][BLOCK_N][d], 128-byte swizzled ----
    %sQ = cuir.alloc {swizzle = 128} : memref<128x64xf16, #S> loc("sQ"("flash_fwd.cu":76:29 to 76:42))
    %sK = cuir.alloc {swizzle = 128} : memref<2x128x64xf16, #S> loc("sK"("flash_fwd.cu":77:29 to 77:65))
    %sV = cuir.alloc {swizzle = 128} : memref<2x128x64xf16, #S> loc("sV"("flash_fwd.cu":78:29 to 78:78))

    // ---- prologue: Q and the first K tile (one group), the first V tile, the second K tile ----
    %tq = cuir.copy_async cp_async %q_head[%m_start, %c0] -> %sQ
        : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, #S> -> !cuir.token loc("sQ"("flash_fwd.cu":458:5 to 458:63))
    %n_first = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":460:5 to 460:41))
    %first_stage = arith.remui %n_first, %c2 : index loc("stage_offset"("flash_fwd.cu":462:5 to 462:79))
    %first_kv0 = arith.muli %n_first, %cBN : index loc("k_head"("flash_fwd.cu":463:80 to 463:130))
    %sK_first = memref.subview %sK[%first_stage, 0, 0] [1, 128, 64] [1, 1, 1]
        : memref<2x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc("sK"("flash_fwd.cu":463:39 to 463:78))
    %tk = cuir.copy_async cp_async %k_head[%first_kv0, %c0] -> %sK_first
        : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc("sK"("flash_fwd.cu":463:5 to 463:78))
    %g_qk = cuir.commit %tq, %tk loc("flash_fwd.cu":465:5 to 465:29)
    %sV_first = memref.subview %sV[%first_stage, 0, 0] [1, 128, 64] [1, 1, 1]
        : memref<2x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc("sV"("flash_fwd.cu":466:39 to 466:78))
    %tv = cuir.copy_async cp_async %v_head[%first_kv0, %c0] -> %sV_first
        : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc("sV"("flash_fwd.cu":466:5 to 466:78))
    %g_v = cuir.commit %tv loc("flash_fwd.cu":468:5 to 468:29)
    %has_second = arith.cmpi sge, %n_block_max, %c2 : index loc("flash_fwd.cu":470:3 to 470:24)
    %g_k2 = scf.if %has_second -> (!cuir.group) {
      %n_second = arith.subi %n_block_max, %c2 : index loc("n_block"("flash_fwd.cu":471:5 to 471:41))
      %second_stage = arith.remui %n_second, %c2 : index loc("sK"("flash_fwd.cu":473:66 to 473:110))
      %second_kv0 = arith.muli %n_second, %cBN : index loc("k_head"("flash_fwd.cu":474:33 to 474:83))
      %sK_second = memref.subview %sK[%second_stage, 0, 0] [1, 128, 64] [1, 1, 1]
          : memref<2x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc("sK"("flash_fwd.cu":473:39 to 473:109))
      %tk2 = cuir.copy_async cp_async %k_head[%second_kv0, %c0] -> %sK_second
          : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc("sK"("flash_fwd.cu":473:5 to 473:90))
      %g = cuir.commit %tk2 loc("flash_fwd.cu":477:3 to 477:27)
      scf.yield %g : !cuir.group loc("flash_fwd.cu":470:3 to 470:24)
    } else {
      %g = cuir.commit loc("flash_fwd.cu":477:3 to 477:27)
      scf.yield %g : !cuir.group loc("flash_fwd.cu":470:3 to 470:24)
    } loc("flash_fwd.cu":470:3 to 470:24)

    // ---- accumulators and softmax state, all in registers ----
    %acc_o_init = arith.constant dense<0.0> : tensor<128x64xf32, #ACC> loc("acc_o"("flash_fwd.cu":488:35 to 488:57))
    %row_max_init = arith.constant dense<0xFF800000> : tensor<128xf32, #ROW> loc("row_max"("flash_fwd.cu":489:5 to 489:46))
    %row_sum_init = arith.constant dense<0.0> : tensor<128xf32, #ROW> loc("row_sum"("flash_fwd.cu":490:5 to 490:42))
    %log2e = arith.constant 1.44269502 : f32 loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %scale_tile = tensor.splat %scale_log2 : tensor<128x128xf32, #ACC> loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %scale_row = tensor.splat %scale_log2 : tensor<128xf32, #ROW> loc("scale_log2"("flash_fwd.cu":492:15 to 492:57))
    %zero_row = arith.constant dense<0.0> : tensor<128xf32, #ROW> loc("max_scaled"("flash_fwd.cu":295:32 to 295:89))
    %ninf_row = arith.constant dense<0xFF800000> : tensor<128xf32, #ROW> loc("max_scaled"("flash_fwd.cu":295:32 to 295:89))
    %acc_s_init = arith.constant dense<0.0> : tensor<128x128xf32, #ACC> loc("acc_s"("flash_fwd.cu":353:3 to 353:44))

    // =============================== masking steps ===============================
    %n_masked = arith.subi %n_block_max, %n_unmasked_blocks : index loc("flash_fwd.cu":507:3 to 507:50)
    %m_acc_o, %m_row_max, %m_row_sum, %m_gk, %m_gv, %m_gk_next = scf.for %i = %c0 to %n_masked step %c1
        iter_args(%acc_o = %acc_o_init, %row_max = %row_max_init, %row_sum = %row_sum_init,
                  %gk_cur = %g_qk, %gv_cur = %g_v, %gk_next = %g_k2)
        -> (tensor<128x64xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group) {
      %top = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":506:3 to 506:33))
      %n_block = arith.subi %top, %i : index loc("n_block"("flash_fwd.cu":507:3 to 507:50))
      %stage = arith.remui %n_block, %c2 : index loc(callsite("stage_offset"("flash_fwd.cu":333:3 to 333:77) at "flash_fwd.cu":508:5 to 508:23))
      %other = arith.subi %c1, %stage : index loc(callsite("next_stage_offset"("flash_fwd.cu":334:18 to 334:69) at "flash_fwd.cu":508:5 to 508:23))
      %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":252:24 to 252:44) at "flash_fwd.cu":368:5 to 368:24))
      %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
          : memref<2x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK_stage"("flash_fwd.cu":340:18 to 340:68) at "flash_fwd.cu":508:5 to 508:23))
      %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
          : memref<2x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV_stage"("flash_fwd.cu":341:18 to 341:68) at "flash_fwd.cu":508:5 to 508:23))

      cuir.wait_group %gk_cur pending 2 loc(callsite("flash_fwd.cu":343:3 to 343:28 at "flash_fwd.cu":508:5 to 508:23))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":344:3 to 344:19 at "flash_fwd.cu":508:5 to 508:23))
      %has_v = arith.cmpi sge, %n_block, %c1 : index loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))
      %gv_next = scf.if %has_v -> (!cuir.group) {
        %prev = arith.subi %n_block, %c1 : index loc(callsite("n_block"("flash_fwd.cu":346:24 to 346:45) at "flash_fwd.cu":508:5 to 508:23))
        %prev_kv0 = arith.muli %prev, %cBN : index loc(callsite("n_block"("flash_fwd.cu":348:44 to 348:93) at "flash_fwd.cu":508:5 to 508:23))
        %sV_other = memref.subview %sV[%other, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<2x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":347:44 to 347:88) at "flash_fwd.cu":508:5 to 508:23))
        %t = cuir.copy_async cp_async %v_head[%prev_kv0, %c0] -> %sV_other
            : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sV"("flash_fwd.cu":347:5 to 347:88) at "flash_fwd.cu":508:5 to 508:23))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))
      } loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":508:5 to 508:23))

      %acc_s = cuir.gemm %sQ, %sK_stage transpose_b, %acc_s_init
          : memref<128x64xf16, #S>, memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC> loc(callsite("acc_s"("flash_fwd.cu":497:5 to 497:32) at "flash_fwd.cu":508:5 to 508:23))

      // ------- score tile complete: acc_s = Q K^T (unscaled) -------
      %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %m_start, %kv0]
          : (tensor<128x128xf32, #ACC>) -> tensor<128x128xf32, #ACC> {
      ^bb0(%x: f32 loc("acc_s"("flash_fwd.cu":261:62 to 261:88)), %bi: index loc(callsite("block.batch"("flash_fwd.cu":368:26 to 368:66) at "flash_fwd.cu":508:5 to 508:23)), %hi: index loc(callsite("block.head_q"("flash_fwd.cu":368:26 to 368:66) at "flash_fwd.cu":508:5 to 508:23)), %row: index loc("row"("flash_fwd.cu":259:9 to 259:58)), %col: index loc("col"("flash_fwd.cu":260:9 to 260:53))):
        %past_end = arith.cmpi sge, %col, %seqlen_kv : index loc(callsite("flash_fwd.cu":261:13 to 261:29 at "flash_fwd.cu":368:5 to 368:24))
        %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_fwd.cu":247:27 to 247:48 at "flash_fwd.cu":368:5 to 368:24))
        %past_diag = arith.cmpi sgt, %col, %row_last : index loc(callsite("flash_fwd.cu":261:33 to 261:60 at "flash_fwd.cu":368:5 to 368:24))
        %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_fwd.cu":261:9 to 261:29 at "flash_fwd.cu":368:5 to 368:24))
        %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_fwd.cu":261:62 to 261:88) at "flash_fwd.cu":368:5 to 368:24))
        cuir.yield %r : f32 loc(callsite("flash_fwd.cu":368:5 to 368:24 at "flash_fwd.cu":508:5 to 508:23))
      } loc(callsite("acc_s"("flash_fwd.cu":368:5 to 368:24) at "flash_fwd.cu":508:5 to 508:23))

      // ------- online softmax: update row_max / row_sum, rescale acc_o, acc_s <- probabilities -------
      %blk_max = cuir.reduce_rows max %acc_s_masked : tensor<128x128xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %new_max = arith.maximumf %row_max, %blk_max : tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:32 to 295:50) at "flash_fwd.cu":372:3 to 372:34))
      %new_max_s = arith.mulf %new_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:59 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:19 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %old_max_s = arith.mulf %row_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:79) at "flash_fwd.cu":372:3 to 372:34))
      %max_diff = arith.subf %old_max_s, %max_scaled : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:92) at "flash_fwd.cu":372:3 to 372:34))
      %rescale = math.exp2 %max_diff : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:19 to 296:93) at "flash_fwd.cu":372:3 to 372:34))
      %max_b = cuir.broadcast_rows %max_scaled : tensor<128xf32, #ROW> -> tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %neg_max = arith.negf %max_b : tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %logits = math.fma %acc_s_masked, %scale_tile, %neg_max : tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:37 to 304:84) at "flash_fwd.cu":372:3 to 372:34))
      %p = math.exp2 %logits : tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:11 to 304:85) at "flash_fwd.cu":372:3 to 372:34))
      %tile_sum = cuir.reduce_rows sum %p : tensor<128x128xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("tile_sum"("flash_fwd.cu":306:11 to 306:24) at "flash_fwd.cu":372:3 to 372:34))
      %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:27 to 309:54) at "flash_fwd.cu":372:3 to 372:34))
      %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:7 to 309:65) at "flash_fwd.cu":372:3 to 372:34))
      %rescale_b = cuir.broadcast_rows %rescale : tensor<128xf32, #ROW> -> tensor<128x64xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<128x64xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %p16 = arith.truncf %p : tensor<128x128xf32, #ACC> to tensor<128x128xf16, #ACC> loc(callsite("p_frag"("flash_fwd.cu":216:7 to 216:54) at "flash_fwd.cu":374:3 to 374:30))
      %p_frag = cuir.convert_layout %p16 : tensor<128x128xf16, #ACC> -> tensor<128x128xf16, #A> loc(callsite("p_frag"("flash_fwd.cu":374:3 to 374:30) at "flash_fwd.cu":508:5 to 508:23))

      cuir.wait_group %gv_cur pending 2 loc(callsite("flash_fwd.cu":376:3 to 376:28 at "flash_fwd.cu":508:5 to 508:23))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":377:3 to 377:19 at "flash_fwd.cu":508:5 to 508:23))
      %has_k = arith.cmpi sge, %n_block, %c2 : index loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))
      %gk_new = scf.if %has_k -> (!cuir.group) {
        %next2 = arith.subi %n_block, %c2 : index loc(callsite("n_block"("flash_fwd.cu":379:24 to 379:45) at "flash_fwd.cu":508:5 to 508:23))
        %next2_kv0 = arith.muli %next2, %cBN : index loc(callsite("n_block"("flash_fwd.cu":380:54 to 380:103) at "flash_fwd.cu":508:5 to 508:23))
        %t = cuir.copy_async cp_async %k_head[%next2_kv0, %c0] -> %sK_stage
            : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sK"("flash_fwd.cu":380:5 to 380:52) at "flash_fwd.cu":508:5 to 508:23))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":508:5 to 508:23))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))
      } loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":508:5 to 508:23))

      %acc_o_new = cuir.gemm %p_frag, %sV_stage, %acc_o_rescaled
          : tensor<128x128xf16, #A>, memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":385:3 to 385:27) at "flash_fwd.cu":508:5 to 508:23))
      scf.yield %acc_o_new, %new_max, %row_sum_new, %gk_next, %gv_next, %gk_new
          : tensor<128x64xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group loc("flash_fwd.cu":507:3 to 507:50)
    } loc("flash_fwd.cu":507:3 to 507:50)

    // =============================== unmasked steps ===============================
    %u_acc_o, %u_row_max, %u_row_sum, %u_gk, %u_gv, %u_gk_next = scf.for %i = %c0 to %n_unmasked_blocks step %c1
        iter_args(%acc_o = %m_acc_o, %row_max = %m_row_max, %row_sum = %m_row_sum,
                  %gk_cur = %m_gk, %gv_cur = %m_gv, %gk_next = %m_gk_next)
        -> (tensor<128x64xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group) {
      %top = arith.subi %n_unmasked_blocks, %c1 : index loc("n_block"("flash_fwd.cu":514:3 to 514:34))
      %n_block = arith.subi %top, %i : index loc("n_block"("flash_fwd.cu":514:3 to 514:34))
      %stage = arith.remui %n_block, %c2 : index loc(callsite("stage_offset"("flash_fwd.cu":333:3 to 333:77) at "flash_fwd.cu":515:5 to 515:24))
      %other = arith.subi %c1, %stage : index loc(callsite("next_stage_offset"("flash_fwd.cu":334:18 to 334:69) at "flash_fwd.cu":515:5 to 515:24))
      %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
          : memref<2x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK_stage"("flash_fwd.cu":340:18 to 340:68) at "flash_fwd.cu":515:5 to 515:24))
      %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
          : memref<2x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV_stage"("flash_fwd.cu":341:18 to 341:68) at "flash_fwd.cu":515:5 to 515:24))

      cuir.wait_group %gk_cur pending 2 loc(callsite("flash_fwd.cu":343:3 to 343:28 at "flash_fwd.cu":515:5 to 515:24))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":344:3 to 344:19 at "flash_fwd.cu":515:5 to 515:24))
      %has_v = arith.cmpi sge, %n_block, %c1 : index loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))
      %gv_next = scf.if %has_v -> (!cuir.group) {
        %prev = arith.subi %n_block, %c1 : index loc(callsite("n_block"("flash_fwd.cu":346:24 to 346:45) at "flash_fwd.cu":515:5 to 515:24))
        %prev_kv0 = arith.muli %prev, %cBN : index loc(callsite("n_block"("flash_fwd.cu":348:44 to 348:93) at "flash_fwd.cu":515:5 to 515:24))
        %sV_other = memref.subview %sV[%other, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<2x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":347:44 to 347:88) at "flash_fwd.cu":515:5 to 515:24))
        %t = cuir.copy_async cp_async %v_head[%prev_kv0, %c0] -> %sV_other
            : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sV"("flash_fwd.cu":347:5 to 347:88) at "flash_fwd.cu":515:5 to 515:24))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":351:3 to 351:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))
      } loc(callsite("flash_fwd.cu":345:3 to 345:20 at "flash_fwd.cu":515:5 to 515:24))

      %acc_s = cuir.gemm %sQ, %sK_stage transpose_b, %acc_s_init
          : memref<128x64xf16, #S>, memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC> loc(callsite("acc_s"("flash_fwd.cu":500:5 to 500:32) at "flash_fwd.cu":515:5 to 515:24))

      // ------- score tile complete: every score of this tile is visible -------

      // ------- online softmax: update row_max / row_sum, rescale acc_o, acc_s <- probabilities -------
      %blk_max = cuir.reduce_rows max %acc_s : tensor<128x128xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %new_max = arith.maximumf %row_max, %blk_max : tensor<128xf32, #ROW> loc(callsite("new_max"("flash_fwd.cu":291:9 to 291:94) at "flash_fwd.cu":372:3 to 372:34))
      %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:32 to 295:50) at "flash_fwd.cu":372:3 to 372:34))
      %new_max_s = arith.mulf %new_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:59 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc(callsite("max_scaled"("flash_fwd.cu":295:19 to 295:89) at "flash_fwd.cu":372:3 to 372:34))
      %old_max_s = arith.mulf %row_max, %scale_row : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:79) at "flash_fwd.cu":372:3 to 372:34))
      %max_diff = arith.subf %old_max_s, %max_scaled : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:39 to 296:92) at "flash_fwd.cu":372:3 to 372:34))
      %rescale = math.exp2 %max_diff : tensor<128xf32, #ROW> loc(callsite("rescale"("flash_fwd.cu":296:19 to 296:93) at "flash_fwd.cu":372:3 to 372:34))
      %max_b = cuir.broadcast_rows %max_scaled : tensor<128xf32, #ROW> -> tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %neg_max = arith.negf %max_b : tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:72 to 304:83) at "flash_fwd.cu":372:3 to 372:34))
      %logits = math.fma %acc_s, %scale_tile, %neg_max : tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:37 to 304:84) at "flash_fwd.cu":372:3 to 372:34))
      %p = math.exp2 %logits : tensor<128x128xf32, #ACC> loc(callsite("p"("flash_fwd.cu":304:11 to 304:85) at "flash_fwd.cu":372:3 to 372:34))
      %tile_sum = cuir.reduce_rows sum %p : tensor<128x128xf32, #ACC> -> tensor<128xf32, #ROW> loc(callsite("tile_sum"("flash_fwd.cu":306:11 to 306:24) at "flash_fwd.cu":372:3 to 372:34))
      %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:27 to 309:54) at "flash_fwd.cu":372:3 to 372:34))
      %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<128xf32, #ROW> loc(callsite("row_sum"("flash_fwd.cu":309:7 to 309:65) at "flash_fwd.cu":372:3 to 372:34))
      %rescale_b = cuir.broadcast_rows %rescale : tensor<128xf32, #ROW> -> tensor<128x64xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<128x64xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":313:9 to 313:43) at "flash_fwd.cu":372:3 to 372:34))
      %p16 = arith.truncf %p : tensor<128x128xf32, #ACC> to tensor<128x128xf16, #ACC> loc(callsite("p_frag"("flash_fwd.cu":216:7 to 216:54) at "flash_fwd.cu":374:3 to 374:30))
      %p_frag = cuir.convert_layout %p16 : tensor<128x128xf16, #ACC> -> tensor<128x128xf16, #A> loc(callsite("p_frag"("flash_fwd.cu":374:3 to 374:30) at "flash_fwd.cu":515:5 to 515:24))

      cuir.wait_group %gv_cur pending 2 loc(callsite("flash_fwd.cu":376:3 to 376:28 at "flash_fwd.cu":515:5 to 515:24))
      cuir.barrier.sync loc(callsite("flash_fwd.cu":377:3 to 377:19 at "flash_fwd.cu":515:5 to 515:24))
      %has_k = arith.cmpi sge, %n_block, %c2 : index loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))
      %gk_new = scf.if %has_k -> (!cuir.group) {
        %next2 = arith.subi %n_block, %c2 : index loc(callsite("n_block"("flash_fwd.cu":379:24 to 379:45) at "flash_fwd.cu":515:5 to 515:24))
        %next2_kv0 = arith.muli %next2, %cBN : index loc(callsite("n_block"("flash_fwd.cu":380:54 to 380:103) at "flash_fwd.cu":515:5 to 515:24))
        %t = cuir.copy_async cp_async %k_head[%next2_kv0, %c0] -> %sK_stage
            : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sK"("flash_fwd.cu":380:5 to 380:52) at "flash_fwd.cu":515:5 to 515:24))
        %g = cuir.commit %t loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))
      } else {
        %g = cuir.commit loc(callsite("flash_fwd.cu":383:3 to 383:27 at "flash_fwd.cu":515:5 to 515:24))
        scf.yield %g : !cuir.group loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))
      } loc(callsite("flash_fwd.cu":378:3 to 378:20 at "flash_fwd.cu":515:5 to 515:24))

      %acc_o_new = cuir.gemm %p_frag, %sV_stage, %acc_o_rescaled
          : tensor<128x128xf16, #A>, memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC> loc(callsite("acc_o"("flash_fwd.cu":385:3 to 385:27) at "flash_fwd.cu":515:5 to 515:24))
      scf.yield %acc_o_new, %new_max, %row_sum_new, %gk_next, %gv_next, %gk_new
          : tensor<128x64xf32, #ACC>, tensor<128xf32, #ROW>, tensor<128xf32, #ROW>, !cuir.group, !cuir.group, !cuir.group loc("flash_fwd.cu":514:3 to 514:34)
    } loc("flash_fwd.cu":514:3 to 514:34)

    cuir.wait_group %u_gk_next pending 0 loc("flash_fwd.cu":517:3 to 517:28)

    // =============================== epilogue ===============================
    %sees_nothing = arith.cmpf oeq, %u_row_sum, %zero_row : tensor<128xf32, #ROW> loc("row_sees_nothing"("flash_fwd.cu":537:7 to 537:47))
    %one_row = arith.constant dense<1.0> : tensor<128xf32, #ROW> loc("row_inv_sum"("flash_fwd.cu":538:56 to 538:65))
    %inv = arith.divf %one_row, %u_row_sum : tensor<128xf32, #ROW> loc("row_inv_sum"("flash_fwd.cu":538:56 to 538:65))
    %row_inv_sum = arith.select %sees_nothing, %zero_row, %inv : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc("row_inv_sum"("flash_fwd.cu":538:7 to 538:65))
    %max_l2 = arith.mulf %u_row_max, %scale_row : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:55 to 539:95))
    %log_sum = math.log2 %u_row_sum : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:98 to 539:112))
    %lse2 = arith.addf %max_l2, %log_sum : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:54 to 539:113))
    %ln2 = arith.constant dense<0.693147182> : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:114 to 539:120))
    %lse_nat = arith.mulf %lse2, %ln2 : tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:54 to 539:120))
    %lse_val = arith.select %sees_nothing, %ninf_row, %lse_nat : tensor<128xi1, #ROW>, tensor<128xf32, #ROW> loc("lse"("flash_fwd.cu":539:7 to 539:120))
    cuir.store %lse_val -> %lse_head[%m_start] : tensor<128xf32, #ROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":541:74 to 541:93))
    %inv_b = cuir.broadcast_rows %row_inv_sum : tensor<128xf32, #ROW> -> tensor<128x64xf32, #ACC> loc("packed"("flash_fwd.cu":554:54 to 554:101))
    %o_norm = arith.mulf %u_acc_o, %inv_b : tensor<128x64xf32, #ACC> loc("packed"("flash_fwd.cu":554:54 to 554:101))
    %o16 = arith.truncf %o_norm : tensor<128x64xf32, #ACC> to tensor<128x64xf16, #ACC> loc("packed"("flash_fwd.cu":554:9 to 554:53))
    cuir.store %o16 -> %sQ : tensor<128x64xf16, #ACC> -> memref<128x64xf16, #S> loc("sO"("flash_fwd.cu":556:9 to 556:111))
    cuir.barrier.warp loc("flash_fwd.cu":560:3 to 560:16)
    cuir.copy %sQ -> %o_head[%m_start, %c0] : memref<128x64xf16, #S> -> memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":570:7 to 570:102))
    scf.yield loc("flash_fwd.cu":437:3 to 437:24)
  } loc("flash_fwd.cu":437:3 to 437:24)
  cuir.return loc("flash_fwd.cu":390:5 to 390:62)
} loc("flash_fwd_sm80_kernel"("flash_fwd.cu":390:5 to 390:62))
