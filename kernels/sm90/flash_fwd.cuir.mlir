// Source CuIR of kernels/sm90/flash_fwd.cu: the template from which
// flash_fwd.cuir.mlir is rendered (tools/lift/render_source_cuir.py), one
// kernel per instantiation of (element type, head dim). Every op names the
// source text it comes from; a test keeps the rendered file current.
//
// Modelling notes:
// - The warp specialization is explicit: the producer warpgroup (one warp's
//   elected thread) issues the TMA copies into the K and V rings, each
//   completing on its stage's "full" mbarrier; the two consumer warpgroups
//   (cuir.worker_id 0 and 1, query rows [64c, 64c + 64) of the block)
//   release a stage on its "empty" mbarrier. An mbarrier arrival is one
//   worker's: the source's NUM_CONSUMER_THREADS arrivals are the two
//   consumer warpgroups here.
// - Visit i of a block reads KV tile n_block_max - 1 - i from ring stage
//   i % STAGES with parity (i / STAGES) % 2, as the source.
// - Each visit's P V is issued in its own step. The source issues it one
//   step later, right after the next S (intra-warpgroup overlap), and the
//   very last one after the loops; the values, the barrier protocol and
//   the order of each warpgroup's rescale, P V and release are the same.
// - Ping-pong: a warpgroup takes a turn (named barrier 1 + c, 256 threads)
//   before issuing a GEMM and hands it to the other warpgroup after;
//   consumer 1 hands consumer 0 the first turn and skips its very last
//   hand-off, so that every wait is matched by one arrival.
// - The first visit is the first masking step here; the source peels it
//   (it has no P V of a previous visit to issue).
// - The score tile is complete at the step's score hook (the lambdas
//   masking_scores / unmasked_scores in the source), which is where the
//   waited score tile is located.
// - IS_CAUSAL is the kernel parameter `causal`, as in the sm_80 Source CuIR.

#WA   = #cuir.frag<a, wgmma_m64nNk16, warps = [1, 1]>
#WACC = #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>
#WROW = #cuir.frag<row, wgmma_m64nNk16, warps = [1, 1]>
#G    = #cuir.mem<global>
#S    = #cuir.mem<shared>

cuir.kernel @flash_fwd_sm90_bf16_d128(
    %q: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_fwd.cu":509:27 to 509:79)),
    %k: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_fwd.cu":509:27 to 509:79)),
    %v: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_fwd.cu":509:27 to 509:79)),
    %o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_fwd.cu":509:27 to 509:79)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_fwd.cu":509:27 to 509:79)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_fwd.cu":509:27 to 509:79)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_fwd.cu":507:1 to 507:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_fwd.cu":509:27 to 509:79)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_fwd.cu":509:27 to 509:79)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_fwd.cu":509:27 to 509:79)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_fwd.cu":509:27 to 509:79)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_fwd.cu":509:27 to 509:79)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 128, hq, b)
    threads 384 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index loc("T::WG_ROWS")
  %c128 = arith.constant 128 : index loc("T::BLOCK_M")
  %cBN = arith.constant 128 : index loc("T::BLOCK_N")
  %cST = arith.constant 2 : index loc("T::STAGES")
  %true = arith.constant true
  %ninf = arith.constant 0xFF800000 : f32

  // ---- block coordinates, sequence views, masking offsets ----
  %m_block = cuir.block_id x loc("block.m_block"("flash_fwd.cu":517:3 to 517:53))
  %head_q = cuir.block_id y loc("block.head_q"("flash_fwd.cu":517:3 to 517:53))
  %b = cuir.block_id z loc("block.batch"("flash_fwd.cu":517:3 to 517:53))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("causal_offset"("flash_fwd.cu":520:13 to 520:49))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("ctx.last_key_offset"("flash_fwd.cu":386:3 to 386:90))
  %m_start = arith.muli %m_block, %c128 : index loc("m_start"("flash_fwd.cu":521:13 to 521:49))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("head_kv"("flash_fwd.cu":522:13 to 522:80))
  %head_kv = arith.divui %head_q, %group : index loc("head_kv"("flash_fwd.cu":522:13 to 522:80))
  %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("tma_q"("flash_fwd.cu":617:21 to 617:46))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("tma_k"("flash_fwd.cu":621:11 to 621:36))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("tma_v"("flash_fwd.cu":624:11 to 624:36))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":475:3 to 475:55))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":441:3 to 441:42))

  // ---- KV tiles this block visits: [n_block_min, n_block_max), of which [n_block_min, n_unmasked_blocks) need no mask ----
  %n_block_min = arith.constant 0 : index loc("n_block_min"("flash_fwd.cu":526:3 to 526:23))
  %n_block_all = arith.ceildivui %seqlen_kv, %cBN : index loc("n_block_max"("flash_fwd.cu":527:7 to 527:62))
  %n_full_all = arith.divui %seqlen_kv, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":528:7 to 528:49))
  %m_end = arith.addi %m_start, %c128 : index loc("last_row"("flash_fwd.cu":530:15 to 530:65))
  %m_end_clamped = arith.minui %m_end, %seqlen_q : index loc("last_row"("flash_fwd.cu":530:15 to 530:65))
  %last_row = arith.subi %m_end_clamped, %c1 : index loc("last_row"("flash_fwd.cu":530:15 to 530:65))
  %last_key_of_last_row = arith.addi %last_row, %causal_offset : index loc("last_key_of_last_row"("flash_fwd.cu":531:15 to 531:62))
  %last_key_of_first_row = arith.addi %m_start, %causal_offset : index loc("last_key_of_first_row"("flash_fwd.cu":532:15 to 532:62))
  %llr_neg = arith.cmpi slt, %last_key_of_last_row, %c0 : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %llr_blk = arith.divsi %last_key_of_last_row, %cBN : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %llr_end = arith.addi %llr_blk, %c1 : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %llr_bound = arith.select %llr_neg, %c0, %llr_end : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %n_block_causal = arith.minsi %n_block_all, %llr_bound : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %lfr_neg = arith.cmpi slt, %last_key_of_first_row, %c0 : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %lfr_next = arith.addi %last_key_of_first_row, %c1 : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %lfr_blk = arith.divsi %lfr_next, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %lfr_bound = arith.select %lfr_neg, %c0, %lfr_blk : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %n_full_causal = arith.minsi %n_full_all, %lfr_bound : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %n_block_max = arith.select %causal, %n_block_causal, %n_block_all : index loc("n_block_max"("flash_fwd.cu":529:3 to 529:27))
  %n_unmasked_blocks = arith.select %causal, %n_full_causal, %n_full_all : index loc("n_unmasked_blocks"("flash_fwd.cu":529:3 to 529:27))

  %no_keys = arith.cmpi sle, %n_block_max, %n_block_min : index loc("flash_fwd.cu":536:3 to 536:24)
  scf.if %no_keys {
    // No row of this block sees any key: O = 0, LSE = -inf (write_empty_block).
    %zero_o = arith.constant dense<0.0> : tensor<128x128xbf16, #WACC> loc("o_head"("flash_fwd.cu":498:103 to 498:125))
    cuir.store %zero_o -> %o_head[%m_start, %c0] : tensor<128x128xbf16, #WACC> -> memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":498:32 to 498:125))
    %ninf_lse = arith.constant dense<0xFF800000> : tensor<128xf32, #WROW> loc("lse_head"("flash_fwd.cu":503:7 to 503:30))
    cuir.store %ninf_lse -> %lse_head[%m_start] : tensor<128xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":503:7 to 503:30))
    scf.yield loc("flash_fwd.cu":538:5 to 538:12)
  } else {
    // ---- visits: n_visits, the last is visit n_visits - 1 ----
    %last_block = arith.subi %n_block_max, %c1 : index loc("i"("flash_fwd.cu":335:3 to 335:43))
    %n_visits = arith.subi %n_block_max, %n_block_min : index loc("n_visits"("flash_fwd.cu":163:3 to 163:50))
    %last_visit = arith.subi %n_visits, %c1 : index loc("flash_fwd.cu":430:3 to 430:83)

    // ---- shared memory: Q [128][d] (O in the epilogue), K and V rings [STAGES][BLOCK_N][d], 128-byte swizzled; the mbarriers ----
    %sQ = cuir.alloc {swizzle = 128} : memref<128x128xbf16, #S> loc("sQ"("flash_fwd.cu":91:24 to 91:37))
    %sK = cuir.alloc {swizzle = 128} : memref<2x128x128xbf16, #S> loc("sK"("flash_fwd.cu":92:24 to 92:60))
    %sV = cuir.alloc {swizzle = 128} : memref<2x128x128xbf16, #S> loc("sV"("flash_fwd.cu":93:24 to 93:70))
    %q_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1> loc("bars->q_full"("flash_fwd.cu":543:5 to 543:36))
    %k_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->k_full"("flash_fwd.cu":546:7 to 546:41))
    %v_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->v_full"("flash_fwd.cu":547:7 to 547:41))
    %k_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<2> loc("bars->k_empty"("flash_fwd.cu":548:7 to 548:64))
    %v_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<2> loc("bars->v_empty"("flash_fwd.cu":549:7 to 549:64))

    // =============================== producer warpgroup ===============================
    cuir.bind warpgroup [0] role producer regs 24 {
      cuir.bind warp [0] role producer {
        cuir.barrier.arrive %q_full[%c0] expect_tx 32768 : !cuir.mbarrier<1> loc("flash_fwd.cu":157:3 to 157:60)
        cuir.copy_async tma %q_head[%m_start, %c0] -> %sQ barrier %q_full[%c0]
            : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xbf16, #S>, !cuir.mbarrier<1> loc("sQ"("flash_fwd.cu":160:5 to 160:68))
        // K of visit i, then V of visit i - 1.
        %n_steps = arith.addi %n_visits, %c1 : index loc("flash_fwd.cu":164:3 to 164:38)
        scf.for %i = %c0 to %n_steps step %c1 {
          %has_k = arith.cmpi slt, %i, %n_visits : index loc("flash_fwd.cu":165:5 to 165:22)
          scf.if %has_k {
            %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":141:3 to 141:35) at "flash_fwd.cu":166:7 to 166:32))
            %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":166:7 to 166:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":166:7 to 166:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":166:7 to 166:32))
            cuir.barrier.wait %k_empty[%stage], %free : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":166:7 to 166:32))
            cuir.barrier.arrive %k_full[%stage] expect_tx 32768 : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":144:3 to 144:60 at "flash_fwd.cu":166:7 to 166:32))
            %blk = arith.subi %last_block, %i : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":166:7 to 166:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":166:7 to 166:32))
            %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
                : memref<2x128x128xbf16, #S> to memref<128x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":148:17 to 148:62) at "flash_fwd.cu":166:7 to 166:32))
            cuir.copy_async tma %k_head[%row, %c0] -> %sK_stage barrier %k_full[%stage]
                : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xbf16, strided<[128, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sK"("flash_fwd.cu":148:5 to 148:62) at "flash_fwd.cu":166:7 to 166:32))
            scf.yield loc("flash_fwd.cu":165:5 to 165:22)
          } loc("flash_fwd.cu":165:5 to 165:22)
          %has_v = arith.cmpi sge, %i, %c1 : index loc("flash_fwd.cu":167:5 to 167:16)
          scf.if %has_v {
            %iv = arith.subi %i, %c1 : index loc("flash_fwd.cu":168:83 to 168:110)
            %stage = arith.remui %iv, %cST : index loc(callsite("stage"("flash_fwd.cu":141:3 to 141:35) at "flash_fwd.cu":168:7 to 168:32))
            %round = arith.divui %iv, %cST : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":168:7 to 168:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":168:7 to 168:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":168:7 to 168:32))
            cuir.barrier.wait %v_empty[%stage], %free : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":168:7 to 168:32))
            cuir.barrier.arrive %v_full[%stage] expect_tx 32768 : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":144:3 to 144:60 at "flash_fwd.cu":168:7 to 168:32))
            %blk = arith.subi %last_block, %iv : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":168:7 to 168:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":168:7 to 168:32))
            %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
                : memref<2x128x128xbf16, #S> to memref<128x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":148:17 to 148:62) at "flash_fwd.cu":168:7 to 168:32))
            cuir.copy_async tma %v_head[%row, %c0] -> %sV_stage barrier %v_full[%stage]
                : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xbf16, strided<[128, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sV"("flash_fwd.cu":148:5 to 148:62) at "flash_fwd.cu":168:7 to 168:32))
            scf.yield loc("flash_fwd.cu":167:5 to 167:16)
          } loc("flash_fwd.cu":167:5 to 167:16)
          scf.yield loc("flash_fwd.cu":164:3 to 164:38)
        } loc("flash_fwd.cu":164:3 to 164:38)
        cuir.yield loc("flash_fwd.cu":560:7 to 560:41)
      } loc("flash_fwd.cu":559:5 to 559:51)
      cuir.yield loc("flash_fwd.cu":558:5 to 558:40)
    } loc("flash_fwd.cu":558:5 to 558:40)

    // =============================== consumer warpgroups ===============================
    cuir.bind warpgroup [1, 2] role consumer regs 240 {
      %consumer = cuir.worker_id loc("consumer_index"("flash_fwd.cu":370:3 to 370:40))
      %wg_row = arith.muli %consumer, %c64 : index loc("wg_row_in_block"("flash_fwd.cu":374:3 to 374:59))
      %q_wg = arith.addi %m_start, %wg_row : index loc("m_start + wg_row_in_block"("flash_fwd.cu":383:3 to 383:63))
      %sQ_wg = memref.subview %sQ[%wg_row, 0] [64, 128] [1, 1]
          : memref<128x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc("ctx.sq_rows"("flash_fwd.cu":378:3 to 378:66))
      %is_second = arith.cmpi eq, %consumer, %c1 : index loc("flash_fwd.cu":400:22 to 400:41)
      %my_turn = arith.addi %consumer, %c1 : index loc("flash_fwd.cu":292:30 to 292:102)
      %their_turn = arith.subi %c2, %consumer : index loc("flash_fwd.cu":297:35 to 297:115)

      // ---- accumulators and softmax state, all in registers ----
      %acc_o_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("acc_o"("flash_fwd.cu":397:39 to 397:53))
      %row_max_init = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("row_max"("flash_fwd.cu":393:3 to 393:22))
      %row_sum_init = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("row_sum"("flash_fwd.cu":394:3 to 394:22))
      %log2e = arith.constant 1.44269502 : f32 loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %scale_tile = tensor.splat %scale_log2 : tensor<64x128xf32, #WACC> loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %scale_row = tensor.splat %scale_log2 : tensor<64xf32, #WROW> loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %zero_row = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":251:30 to 251:77))
      %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":251:30 to 251:77))
      %acc_s_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("acc_s"("flash_fwd.cu":391:3 to 391:26))

      cuir.barrier.wait %q_full[%c0], %c0 : !cuir.mbarrier<1> loc("flash_fwd.cu":399:3 to 399:34)
      scf.if %is_second {
        cuir.barrier.named %c1 threads 256 arrive loc("flash_fwd.cu":400:43 to 400:110)
        scf.yield loc("flash_fwd.cu":400:3 to 400:42)
      } loc("flash_fwd.cu":400:3 to 400:42)

      // =============================== masking steps ===============================
      %n_masked = arith.subi %n_block_max, %n_unmasked_blocks : index loc("flash_fwd.cu":418:3 to 418:50)
      %m_acc_o, %m_row_max, %m_row_sum = scf.for %iv = %c0 to %n_masked step %c1
          iter_args(%acc_o = %acc_o_init, %row_max = %row_max_init, %row_sum = %row_sum_init)
          -> (tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>) {
        %top = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":414:3 to 414:33))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":418:3 to 418:50))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":335:3 to 335:43) at "flash_fwd.cu":419:5 to 419:35))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":320:3 to 320:35) at "flash_fwd.cu":419:5 to 419:35))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":419:5 to 419:35))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":419:5 to 419:35))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":219:20 to 219:40) at "flash_fwd.cu":351:5 to 351:43))
        %is_last = arith.cmpi eq, %i, %last_visit : index loc("flash_fwd.cu":431:3 to 431:46)
        %keep_turn = arith.andi %is_last, %is_second : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %pass_turn = arith.xori %keep_turn, %true : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xbf16, #S> to memref<128x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":340:34 to 340:67) at "flash_fwd.cu":419:5 to 419:35))
        %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xbf16, #S> to memref<128x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":323:29 to 323:62) at "flash_fwd.cu":341:25 to 341:53))

        // S = Q K^T on this warpgroup's turn
        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":338:3 to 338:38 at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":339:3 to 339:59 at "flash_fwd.cu":419:5 to 419:35))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":340:3 to 340:32) at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":342:3 to 342:45 at "flash_fwd.cu":419:5 to 419:35))
        %acc_s = cuir.gemm_wait %s_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":405:5 to 405:19) at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":346:3 to 346:41 at "flash_fwd.cu":419:5 to 419:35))

        // ------- score tile complete: acc_s = Q K^T (unscaled); the mask of a masking step -------
        %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_wg, %kv0]
            : (tensor<64x128xf32, #WACC>) -> tensor<64x128xf32, #WACC> {
        ^bb0(%x: f32 loc("acc_s"("flash_fwd.cu":226:60 to 226:86)), %bi: index loc("block.batch"("flash_fwd.cu":517:3 to 517:53)), %hi: index loc("block.head_q"("flash_fwd.cu":517:3 to 517:53)), %row: index loc("row"("flash_fwd.cu":224:7 to 224:42)), %col: index loc("col"("flash_fwd.cu":225:7 to 225:46))):
          %past_end = arith.cmpi sge, %col, %seqlen_kv : index loc(callsite("flash_fwd.cu":226:11 to 226:27 at "flash_fwd.cu":351:5 to 351:43))
          %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_fwd.cu":214:27 to 214:48 at "flash_fwd.cu":351:5 to 351:43))
          %past_diag = arith.cmpi sgt, %col, %row_last : index loc(callsite("flash_fwd.cu":226:31 to 226:58 at "flash_fwd.cu":351:5 to 351:43))
          %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_fwd.cu":226:7 to 226:27 at "flash_fwd.cu":351:5 to 351:43))
          %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_fwd.cu":226:60 to 226:86) at "flash_fwd.cu":351:5 to 351:43))
          cuir.yield %r : f32 loc("flash_fwd.cu":351:5 to 351:43)
        } loc("acc_s"("flash_fwd.cu":351:5 to 351:43))

        // ------- online softmax: row_max / row_sum, acc_s <- probabilities, the correction of O -------
        %blk_max = cuir.reduce_rows max %acc_s_masked : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:30 to 251:48) at "flash_fwd.cu":354:3 to 354:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:57 to 251:77) at "flash_fwd.cu":354:3 to 354:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:5 to 251:78) at "flash_fwd.cu":354:3 to 354:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:59) at "flash_fwd.cu":354:3 to 354:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:72) at "flash_fwd.cu":354:3 to 354:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:5 to 252:73) at "flash_fwd.cu":354:3 to 354:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %logits = math.fma %acc_s_masked, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:35 to 260:82) at "flash_fwd.cu":354:3 to 354:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:9 to 260:83) at "flash_fwd.cu":354:3 to 354:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":262:9 to 262:22) at "flash_fwd.cu":354:3 to 354:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:21 to 265:52) at "flash_fwd.cu":354:3 to 354:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:5 to 265:63) at "flash_fwd.cu":354:3 to 354:35))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xbf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":284:39 to 284:106) at "flash_fwd.cu":362:3 to 362:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xbf16, #WACC> -> tensor<64x128xbf16, #WA> loc("p_frag"("flash_fwd.cu":362:3 to 362:30))

        // ------- O = O * correction + P V on this warpgroup's turn -------
        %rescale_b = cuir.broadcast_rows %rescale : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        cuir.barrier.named %my_turn threads 256 loc("flash_fwd.cu":429:3 to 429:40)
        cuir.barrier.wait %v_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":322:3 to 322:59 at "flash_fwd.cu":341:25 to 341:53))
        %o_issued = cuir.gemm_async %p_frag, %sV_stage, %acc_o_rescaled
            : tensor<64x128xbf16, #WA>, memref<128x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":323:3 to 323:63) at "flash_fwd.cu":341:25 to 341:53))
        scf.if %pass_turn {
          cuir.barrier.named %their_turn threads 256 arrive loc("flash_fwd.cu":431:3 to 431:46)
          scf.yield loc("flash_fwd.cu":431:3 to 431:46)
        } loc("flash_fwd.cu":431:3 to 431:46)
        %acc_o_new = cuir.gemm_wait %o_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:5 to 357:34) at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.arrive %v_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":360:5 to 360:57 at "flash_fwd.cu":419:5 to 419:35))
        scf.yield %acc_o_new, %new_max, %row_sum_new
            : tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW> loc("flash_fwd.cu":418:3 to 418:50)
      } loc("flash_fwd.cu":418:3 to 418:50)

      // =============================== unmasked steps ===============================
      %n_unmasked = arith.subi %n_unmasked_blocks, %n_block_min : index loc("flash_fwd.cu":424:3 to 424:44)
      %u_acc_o, %u_row_max, %u_row_sum = scf.for %iv = %c0 to %n_unmasked step %c1
          iter_args(%acc_o = %m_acc_o, %row_max = %m_row_max, %row_sum = %m_row_sum)
          -> (tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>) {
        %top = arith.subi %n_unmasked_blocks, %c1 : index loc("n_block"("flash_fwd.cu":424:3 to 424:44))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":424:3 to 424:44))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":335:3 to 335:43) at "flash_fwd.cu":425:5 to 425:36))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":320:3 to 320:35) at "flash_fwd.cu":425:5 to 425:36))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":425:5 to 425:36))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":425:5 to 425:36))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":219:20 to 219:40) at "flash_fwd.cu":351:5 to 351:43))
        %is_last = arith.cmpi eq, %i, %last_visit : index loc("flash_fwd.cu":431:3 to 431:46)
        %keep_turn = arith.andi %is_last, %is_second : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %pass_turn = arith.xori %keep_turn, %true : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xbf16, #S> to memref<128x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":340:34 to 340:67) at "flash_fwd.cu":425:5 to 425:36))
        %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xbf16, #S> to memref<128x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":323:29 to 323:62) at "flash_fwd.cu":341:25 to 341:53))

        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":338:3 to 338:38 at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":339:3 to 339:59 at "flash_fwd.cu":425:5 to 425:36))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":340:3 to 340:32) at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":342:3 to 342:45 at "flash_fwd.cu":425:5 to 425:36))
        %acc_s = cuir.gemm_wait %s_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":408:5 to 408:19) at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":346:3 to 346:41 at "flash_fwd.cu":425:5 to 425:36))

        // ------- score tile complete: every score of this tile is visible -------

        // ------- online softmax -------
        %blk_max = cuir.reduce_rows max %acc_s : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:30 to 251:48) at "flash_fwd.cu":354:3 to 354:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:57 to 251:77) at "flash_fwd.cu":354:3 to 354:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:5 to 251:78) at "flash_fwd.cu":354:3 to 354:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:59) at "flash_fwd.cu":354:3 to 354:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:72) at "flash_fwd.cu":354:3 to 354:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:5 to 252:73) at "flash_fwd.cu":354:3 to 354:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %logits = math.fma %acc_s, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:35 to 260:82) at "flash_fwd.cu":354:3 to 354:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:9 to 260:83) at "flash_fwd.cu":354:3 to 354:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":262:9 to 262:22) at "flash_fwd.cu":354:3 to 354:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:21 to 265:52) at "flash_fwd.cu":354:3 to 354:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:5 to 265:63) at "flash_fwd.cu":354:3 to 354:35))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xbf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":284:39 to 284:106) at "flash_fwd.cu":362:3 to 362:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xbf16, #WACC> -> tensor<64x128xbf16, #WA> loc("p_frag"("flash_fwd.cu":362:3 to 362:30))

        %rescale_b = cuir.broadcast_rows %rescale : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        cuir.barrier.named %my_turn threads 256 loc("flash_fwd.cu":429:3 to 429:40)
        cuir.barrier.wait %v_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":322:3 to 322:59 at "flash_fwd.cu":341:25 to 341:53))
        %o_issued = cuir.gemm_async %p_frag, %sV_stage, %acc_o_rescaled
            : tensor<64x128xbf16, #WA>, memref<128x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":323:3 to 323:63) at "flash_fwd.cu":341:25 to 341:53))
        scf.if %pass_turn {
          cuir.barrier.named %their_turn threads 256 arrive loc("flash_fwd.cu":431:3 to 431:46)
          scf.yield loc("flash_fwd.cu":431:3 to 431:46)
        } loc("flash_fwd.cu":431:3 to 431:46)
        %acc_o_new = cuir.gemm_wait %o_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:5 to 357:34) at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.arrive %v_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":360:5 to 360:57 at "flash_fwd.cu":425:5 to 425:36))
        scf.yield %acc_o_new, %new_max, %row_sum_new
            : tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW> loc("flash_fwd.cu":424:3 to 424:44)
      } loc("flash_fwd.cu":424:3 to 424:44)

      // =============================== epilogue ===============================
      %sees_nothing = arith.cmpf oeq, %u_row_sum, %zero_row : tensor<64xf32, #WROW> loc("row_sees_nothing"("flash_fwd.cu":451:5 to 451:45))
      %one_row = arith.constant dense<1.0> : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":452:50 to 452:59))
      %inv = arith.divf %one_row, %u_row_sum : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":452:50 to 452:59))
      %row_inv_sum = arith.select %sees_nothing, %zero_row, %inv : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":452:5 to 452:60))
      %max_l2 = arith.mulf %u_row_max, %scale_row : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:53 to 453:83))
      %log_sum = math.log2 %u_row_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:86 to 453:100))
      %lse2 = arith.addf %max_l2, %log_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:52 to 453:101))
      %ln2 = arith.constant dense<0.693147182> : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:102 to 453:108))
      %lse_nat = arith.mulf %lse2, %ln2 : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:52 to 453:108))
      %lse_val = arith.select %sees_nothing, %ninf_row, %lse_nat : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:5 to 453:108))
      cuir.store %lse_val -> %lse_head[%q_wg] : tensor<64xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":455:72 to 455:91))
      %inv_b = cuir.broadcast_rows %row_inv_sum : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc("packed"("flash_fwd.cu":469:55 to 469:98))
      %o_norm = arith.mulf %u_acc_o, %inv_b : tensor<64x128xf32, #WACC> loc("packed"("flash_fwd.cu":469:55 to 469:98))
      %o16 = arith.truncf %o_norm : tensor<64x128xf32, #WACC> to tensor<64x128xbf16, #WACC> loc("packed"("flash_fwd.cu":469:7 to 469:54))
      cuir.store %o16 -> %sQ_wg : tensor<64x128xbf16, #WACC> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc("smem"("flash_fwd.cu":471:7 to 471:93))
      cuir.copy %sQ_wg -> %o_head[%q_wg, %c0] : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":485:7 to 485:100))
      cuir.yield loc("flash_fwd.cu":564:5 to 564:53)
    } loc("flash_fwd.cu":563:5 to 563:40)
    scf.yield loc("flash_fwd.cu":536:3 to 536:24)
  } loc("flash_fwd.cu":536:3 to 536:24)
  cuir.return loc("flash_fwd.cu":509:5 to 509:79)
} loc("flash_fwd_sm90_kernel"("flash_fwd.cu":509:5 to 509:79))
cuir.kernel @flash_fwd_sm90_bf16_d64(
    %q: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_fwd.cu":509:27 to 509:79)),
    %k: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_fwd.cu":509:27 to 509:79)),
    %v: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_fwd.cu":509:27 to 509:79)),
    %o: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_fwd.cu":509:27 to 509:79)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_fwd.cu":509:27 to 509:79)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_fwd.cu":509:27 to 509:79)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_fwd.cu":507:1 to 507:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_fwd.cu":509:27 to 509:79)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_fwd.cu":509:27 to 509:79)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_fwd.cu":509:27 to 509:79)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_fwd.cu":509:27 to 509:79)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_fwd.cu":509:27 to 509:79)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 128, hq, b)
    threads 384 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index loc("T::WG_ROWS")
  %c128 = arith.constant 128 : index loc("T::BLOCK_M")
  %cBN = arith.constant 128 : index loc("T::BLOCK_N")
  %cST = arith.constant 4 : index loc("T::STAGES")
  %true = arith.constant true
  %ninf = arith.constant 0xFF800000 : f32

  // ---- block coordinates, sequence views, masking offsets ----
  %m_block = cuir.block_id x loc("block.m_block"("flash_fwd.cu":517:3 to 517:53))
  %head_q = cuir.block_id y loc("block.head_q"("flash_fwd.cu":517:3 to 517:53))
  %b = cuir.block_id z loc("block.batch"("flash_fwd.cu":517:3 to 517:53))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("causal_offset"("flash_fwd.cu":520:13 to 520:49))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("ctx.last_key_offset"("flash_fwd.cu":386:3 to 386:90))
  %m_start = arith.muli %m_block, %c128 : index loc("m_start"("flash_fwd.cu":521:13 to 521:49))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("head_kv"("flash_fwd.cu":522:13 to 522:80))
  %head_kv = arith.divui %head_q, %group : index loc("head_kv"("flash_fwd.cu":522:13 to 522:80))
  %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("tma_q"("flash_fwd.cu":617:21 to 617:46))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("tma_k"("flash_fwd.cu":621:11 to 621:36))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("tma_v"("flash_fwd.cu":624:11 to 624:36))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":475:3 to 475:55))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":441:3 to 441:42))

  // ---- KV tiles this block visits: [n_block_min, n_block_max), of which [n_block_min, n_unmasked_blocks) need no mask ----
  %n_block_min = arith.constant 0 : index loc("n_block_min"("flash_fwd.cu":526:3 to 526:23))
  %n_block_all = arith.ceildivui %seqlen_kv, %cBN : index loc("n_block_max"("flash_fwd.cu":527:7 to 527:62))
  %n_full_all = arith.divui %seqlen_kv, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":528:7 to 528:49))
  %m_end = arith.addi %m_start, %c128 : index loc("last_row"("flash_fwd.cu":530:15 to 530:65))
  %m_end_clamped = arith.minui %m_end, %seqlen_q : index loc("last_row"("flash_fwd.cu":530:15 to 530:65))
  %last_row = arith.subi %m_end_clamped, %c1 : index loc("last_row"("flash_fwd.cu":530:15 to 530:65))
  %last_key_of_last_row = arith.addi %last_row, %causal_offset : index loc("last_key_of_last_row"("flash_fwd.cu":531:15 to 531:62))
  %last_key_of_first_row = arith.addi %m_start, %causal_offset : index loc("last_key_of_first_row"("flash_fwd.cu":532:15 to 532:62))
  %llr_neg = arith.cmpi slt, %last_key_of_last_row, %c0 : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %llr_blk = arith.divsi %last_key_of_last_row, %cBN : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %llr_end = arith.addi %llr_blk, %c1 : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %llr_bound = arith.select %llr_neg, %c0, %llr_end : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %n_block_causal = arith.minsi %n_block_all, %llr_bound : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %lfr_neg = arith.cmpi slt, %last_key_of_first_row, %c0 : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %lfr_next = arith.addi %last_key_of_first_row, %c1 : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %lfr_blk = arith.divsi %lfr_next, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %lfr_bound = arith.select %lfr_neg, %c0, %lfr_blk : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %n_full_causal = arith.minsi %n_full_all, %lfr_bound : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %n_block_max = arith.select %causal, %n_block_causal, %n_block_all : index loc("n_block_max"("flash_fwd.cu":529:3 to 529:27))
  %n_unmasked_blocks = arith.select %causal, %n_full_causal, %n_full_all : index loc("n_unmasked_blocks"("flash_fwd.cu":529:3 to 529:27))

  %no_keys = arith.cmpi sle, %n_block_max, %n_block_min : index loc("flash_fwd.cu":536:3 to 536:24)
  scf.if %no_keys {
    // No row of this block sees any key: O = 0, LSE = -inf (write_empty_block).
    %zero_o = arith.constant dense<0.0> : tensor<128x64xbf16, #WACC> loc("o_head"("flash_fwd.cu":498:103 to 498:125))
    cuir.store %zero_o -> %o_head[%m_start, %c0] : tensor<128x64xbf16, #WACC> -> memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":498:32 to 498:125))
    %ninf_lse = arith.constant dense<0xFF800000> : tensor<128xf32, #WROW> loc("lse_head"("flash_fwd.cu":503:7 to 503:30))
    cuir.store %ninf_lse -> %lse_head[%m_start] : tensor<128xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":503:7 to 503:30))
    scf.yield loc("flash_fwd.cu":538:5 to 538:12)
  } else {
    // ---- visits: n_visits, the last is visit n_visits - 1 ----
    %last_block = arith.subi %n_block_max, %c1 : index loc("i"("flash_fwd.cu":335:3 to 335:43))
    %n_visits = arith.subi %n_block_max, %n_block_min : index loc("n_visits"("flash_fwd.cu":163:3 to 163:50))
    %last_visit = arith.subi %n_visits, %c1 : index loc("flash_fwd.cu":430:3 to 430:83)

    // ---- shared memory: Q [128][d] (O in the epilogue), K and V rings [STAGES][BLOCK_N][d], 128-byte swizzled; the mbarriers ----
    %sQ = cuir.alloc {swizzle = 128} : memref<128x64xbf16, #S> loc("sQ"("flash_fwd.cu":91:24 to 91:37))
    %sK = cuir.alloc {swizzle = 128} : memref<4x128x64xbf16, #S> loc("sK"("flash_fwd.cu":92:24 to 92:60))
    %sV = cuir.alloc {swizzle = 128} : memref<4x128x64xbf16, #S> loc("sV"("flash_fwd.cu":93:24 to 93:70))
    %q_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1> loc("bars->q_full"("flash_fwd.cu":543:5 to 543:36))
    %k_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<4> loc("bars->k_full"("flash_fwd.cu":546:7 to 546:41))
    %v_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<4> loc("bars->v_full"("flash_fwd.cu":547:7 to 547:41))
    %k_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<4> loc("bars->k_empty"("flash_fwd.cu":548:7 to 548:64))
    %v_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<4> loc("bars->v_empty"("flash_fwd.cu":549:7 to 549:64))

    // =============================== producer warpgroup ===============================
    cuir.bind warpgroup [0] role producer regs 24 {
      cuir.bind warp [0] role producer {
        cuir.barrier.arrive %q_full[%c0] expect_tx 16384 : !cuir.mbarrier<1> loc("flash_fwd.cu":157:3 to 157:60)
        cuir.copy_async tma %q_head[%m_start, %c0] -> %sQ barrier %q_full[%c0]
            : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, #S>, !cuir.mbarrier<1> loc("sQ"("flash_fwd.cu":160:5 to 160:68))
        // K of visit i, then V of visit i - 1.
        %n_steps = arith.addi %n_visits, %c1 : index loc("flash_fwd.cu":164:3 to 164:38)
        scf.for %i = %c0 to %n_steps step %c1 {
          %has_k = arith.cmpi slt, %i, %n_visits : index loc("flash_fwd.cu":165:5 to 165:22)
          scf.if %has_k {
            %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":141:3 to 141:35) at "flash_fwd.cu":166:7 to 166:32))
            %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":166:7 to 166:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":166:7 to 166:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":166:7 to 166:32))
            cuir.barrier.wait %k_empty[%stage], %free : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":166:7 to 166:32))
            cuir.barrier.arrive %k_full[%stage] expect_tx 16384 : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":144:3 to 144:60 at "flash_fwd.cu":166:7 to 166:32))
            %blk = arith.subi %last_block, %i : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":166:7 to 166:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":166:7 to 166:32))
            %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
                : memref<4x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":148:17 to 148:62) at "flash_fwd.cu":166:7 to 166:32))
            cuir.copy_async tma %k_head[%row, %c0] -> %sK_stage barrier %k_full[%stage]
                : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, !cuir.mbarrier<4> loc(callsite("sK"("flash_fwd.cu":148:5 to 148:62) at "flash_fwd.cu":166:7 to 166:32))
            scf.yield loc("flash_fwd.cu":165:5 to 165:22)
          } loc("flash_fwd.cu":165:5 to 165:22)
          %has_v = arith.cmpi sge, %i, %c1 : index loc("flash_fwd.cu":167:5 to 167:16)
          scf.if %has_v {
            %iv = arith.subi %i, %c1 : index loc("flash_fwd.cu":168:83 to 168:110)
            %stage = arith.remui %iv, %cST : index loc(callsite("stage"("flash_fwd.cu":141:3 to 141:35) at "flash_fwd.cu":168:7 to 168:32))
            %round = arith.divui %iv, %cST : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":168:7 to 168:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":168:7 to 168:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":168:7 to 168:32))
            cuir.barrier.wait %v_empty[%stage], %free : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":168:7 to 168:32))
            cuir.barrier.arrive %v_full[%stage] expect_tx 16384 : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":144:3 to 144:60 at "flash_fwd.cu":168:7 to 168:32))
            %blk = arith.subi %last_block, %iv : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":168:7 to 168:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":168:7 to 168:32))
            %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
                : memref<4x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":148:17 to 148:62) at "flash_fwd.cu":168:7 to 168:32))
            cuir.copy_async tma %v_head[%row, %c0] -> %sV_stage barrier %v_full[%stage]
                : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, !cuir.mbarrier<4> loc(callsite("sV"("flash_fwd.cu":148:5 to 148:62) at "flash_fwd.cu":168:7 to 168:32))
            scf.yield loc("flash_fwd.cu":167:5 to 167:16)
          } loc("flash_fwd.cu":167:5 to 167:16)
          scf.yield loc("flash_fwd.cu":164:3 to 164:38)
        } loc("flash_fwd.cu":164:3 to 164:38)
        cuir.yield loc("flash_fwd.cu":560:7 to 560:41)
      } loc("flash_fwd.cu":559:5 to 559:51)
      cuir.yield loc("flash_fwd.cu":558:5 to 558:40)
    } loc("flash_fwd.cu":558:5 to 558:40)

    // =============================== consumer warpgroups ===============================
    cuir.bind warpgroup [1, 2] role consumer regs 240 {
      %consumer = cuir.worker_id loc("consumer_index"("flash_fwd.cu":370:3 to 370:40))
      %wg_row = arith.muli %consumer, %c64 : index loc("wg_row_in_block"("flash_fwd.cu":374:3 to 374:59))
      %q_wg = arith.addi %m_start, %wg_row : index loc("m_start + wg_row_in_block"("flash_fwd.cu":383:3 to 383:63))
      %sQ_wg = memref.subview %sQ[%wg_row, 0] [64, 64] [1, 1]
          : memref<128x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc("ctx.sq_rows"("flash_fwd.cu":378:3 to 378:66))
      %is_second = arith.cmpi eq, %consumer, %c1 : index loc("flash_fwd.cu":400:22 to 400:41)
      %my_turn = arith.addi %consumer, %c1 : index loc("flash_fwd.cu":292:30 to 292:102)
      %their_turn = arith.subi %c2, %consumer : index loc("flash_fwd.cu":297:35 to 297:115)

      // ---- accumulators and softmax state, all in registers ----
      %acc_o_init = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("acc_o"("flash_fwd.cu":397:39 to 397:53))
      %row_max_init = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("row_max"("flash_fwd.cu":393:3 to 393:22))
      %row_sum_init = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("row_sum"("flash_fwd.cu":394:3 to 394:22))
      %log2e = arith.constant 1.44269502 : f32 loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %scale_tile = tensor.splat %scale_log2 : tensor<64x128xf32, #WACC> loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %scale_row = tensor.splat %scale_log2 : tensor<64xf32, #WROW> loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %zero_row = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":251:30 to 251:77))
      %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":251:30 to 251:77))
      %acc_s_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("acc_s"("flash_fwd.cu":391:3 to 391:26))

      cuir.barrier.wait %q_full[%c0], %c0 : !cuir.mbarrier<1> loc("flash_fwd.cu":399:3 to 399:34)
      scf.if %is_second {
        cuir.barrier.named %c1 threads 256 arrive loc("flash_fwd.cu":400:43 to 400:110)
        scf.yield loc("flash_fwd.cu":400:3 to 400:42)
      } loc("flash_fwd.cu":400:3 to 400:42)

      // =============================== masking steps ===============================
      %n_masked = arith.subi %n_block_max, %n_unmasked_blocks : index loc("flash_fwd.cu":418:3 to 418:50)
      %m_acc_o, %m_row_max, %m_row_sum = scf.for %iv = %c0 to %n_masked step %c1
          iter_args(%acc_o = %acc_o_init, %row_max = %row_max_init, %row_sum = %row_sum_init)
          -> (tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>) {
        %top = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":414:3 to 414:33))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":418:3 to 418:50))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":335:3 to 335:43) at "flash_fwd.cu":419:5 to 419:35))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":320:3 to 320:35) at "flash_fwd.cu":419:5 to 419:35))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":419:5 to 419:35))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":419:5 to 419:35))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":219:20 to 219:40) at "flash_fwd.cu":351:5 to 351:43))
        %is_last = arith.cmpi eq, %i, %last_visit : index loc("flash_fwd.cu":431:3 to 431:46)
        %keep_turn = arith.andi %is_last, %is_second : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %pass_turn = arith.xori %keep_turn, %true : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":340:34 to 340:67) at "flash_fwd.cu":419:5 to 419:35))
        %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":323:29 to 323:62) at "flash_fwd.cu":341:25 to 341:53))

        // S = Q K^T on this warpgroup's turn
        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":338:3 to 338:38 at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":339:3 to 339:59 at "flash_fwd.cu":419:5 to 419:35))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":340:3 to 340:32) at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":342:3 to 342:45 at "flash_fwd.cu":419:5 to 419:35))
        %acc_s = cuir.gemm_wait %s_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":405:5 to 405:19) at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":346:3 to 346:41 at "flash_fwd.cu":419:5 to 419:35))

        // ------- score tile complete: acc_s = Q K^T (unscaled); the mask of a masking step -------
        %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_wg, %kv0]
            : (tensor<64x128xf32, #WACC>) -> tensor<64x128xf32, #WACC> {
        ^bb0(%x: f32 loc("acc_s"("flash_fwd.cu":226:60 to 226:86)), %bi: index loc("block.batch"("flash_fwd.cu":517:3 to 517:53)), %hi: index loc("block.head_q"("flash_fwd.cu":517:3 to 517:53)), %row: index loc("row"("flash_fwd.cu":224:7 to 224:42)), %col: index loc("col"("flash_fwd.cu":225:7 to 225:46))):
          %past_end = arith.cmpi sge, %col, %seqlen_kv : index loc(callsite("flash_fwd.cu":226:11 to 226:27 at "flash_fwd.cu":351:5 to 351:43))
          %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_fwd.cu":214:27 to 214:48 at "flash_fwd.cu":351:5 to 351:43))
          %past_diag = arith.cmpi sgt, %col, %row_last : index loc(callsite("flash_fwd.cu":226:31 to 226:58 at "flash_fwd.cu":351:5 to 351:43))
          %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_fwd.cu":226:7 to 226:27 at "flash_fwd.cu":351:5 to 351:43))
          %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_fwd.cu":226:60 to 226:86) at "flash_fwd.cu":351:5 to 351:43))
          cuir.yield %r : f32 loc("flash_fwd.cu":351:5 to 351:43)
        } loc("acc_s"("flash_fwd.cu":351:5 to 351:43))

        // ------- online softmax: row_max / row_sum, acc_s <- probabilities, the correction of O -------
        %blk_max = cuir.reduce_rows max %acc_s_masked : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:30 to 251:48) at "flash_fwd.cu":354:3 to 354:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:57 to 251:77) at "flash_fwd.cu":354:3 to 354:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:5 to 251:78) at "flash_fwd.cu":354:3 to 354:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:59) at "flash_fwd.cu":354:3 to 354:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:72) at "flash_fwd.cu":354:3 to 354:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:5 to 252:73) at "flash_fwd.cu":354:3 to 354:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %logits = math.fma %acc_s_masked, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:35 to 260:82) at "flash_fwd.cu":354:3 to 354:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:9 to 260:83) at "flash_fwd.cu":354:3 to 354:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":262:9 to 262:22) at "flash_fwd.cu":354:3 to 354:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:21 to 265:52) at "flash_fwd.cu":354:3 to 354:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:5 to 265:63) at "flash_fwd.cu":354:3 to 354:35))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xbf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":284:39 to 284:106) at "flash_fwd.cu":362:3 to 362:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xbf16, #WACC> -> tensor<64x128xbf16, #WA> loc("p_frag"("flash_fwd.cu":362:3 to 362:30))

        // ------- O = O * correction + P V on this warpgroup's turn -------
        %rescale_b = cuir.broadcast_rows %rescale : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        cuir.barrier.named %my_turn threads 256 loc("flash_fwd.cu":429:3 to 429:40)
        cuir.barrier.wait %v_full[%stage], %phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":322:3 to 322:59 at "flash_fwd.cu":341:25 to 341:53))
        %o_issued = cuir.gemm_async %p_frag, %sV_stage, %acc_o_rescaled
            : tensor<64x128xbf16, #WA>, memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":323:3 to 323:63) at "flash_fwd.cu":341:25 to 341:53))
        scf.if %pass_turn {
          cuir.barrier.named %their_turn threads 256 arrive loc("flash_fwd.cu":431:3 to 431:46)
          scf.yield loc("flash_fwd.cu":431:3 to 431:46)
        } loc("flash_fwd.cu":431:3 to 431:46)
        %acc_o_new = cuir.gemm_wait %o_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:5 to 357:34) at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.arrive %v_empty[%stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":360:5 to 360:57 at "flash_fwd.cu":419:5 to 419:35))
        scf.yield %acc_o_new, %new_max, %row_sum_new
            : tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW> loc("flash_fwd.cu":418:3 to 418:50)
      } loc("flash_fwd.cu":418:3 to 418:50)

      // =============================== unmasked steps ===============================
      %n_unmasked = arith.subi %n_unmasked_blocks, %n_block_min : index loc("flash_fwd.cu":424:3 to 424:44)
      %u_acc_o, %u_row_max, %u_row_sum = scf.for %iv = %c0 to %n_unmasked step %c1
          iter_args(%acc_o = %m_acc_o, %row_max = %m_row_max, %row_sum = %m_row_sum)
          -> (tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>) {
        %top = arith.subi %n_unmasked_blocks, %c1 : index loc("n_block"("flash_fwd.cu":424:3 to 424:44))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":424:3 to 424:44))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":335:3 to 335:43) at "flash_fwd.cu":425:5 to 425:36))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":320:3 to 320:35) at "flash_fwd.cu":425:5 to 425:36))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":425:5 to 425:36))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":425:5 to 425:36))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":219:20 to 219:40) at "flash_fwd.cu":351:5 to 351:43))
        %is_last = arith.cmpi eq, %i, %last_visit : index loc("flash_fwd.cu":431:3 to 431:46)
        %keep_turn = arith.andi %is_last, %is_second : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %pass_turn = arith.xori %keep_turn, %true : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":340:34 to 340:67) at "flash_fwd.cu":425:5 to 425:36))
        %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":323:29 to 323:62) at "flash_fwd.cu":341:25 to 341:53))

        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":338:3 to 338:38 at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":339:3 to 339:59 at "flash_fwd.cu":425:5 to 425:36))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":340:3 to 340:32) at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":342:3 to 342:45 at "flash_fwd.cu":425:5 to 425:36))
        %acc_s = cuir.gemm_wait %s_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":408:5 to 408:19) at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":346:3 to 346:41 at "flash_fwd.cu":425:5 to 425:36))

        // ------- score tile complete: every score of this tile is visible -------

        // ------- online softmax -------
        %blk_max = cuir.reduce_rows max %acc_s : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:30 to 251:48) at "flash_fwd.cu":354:3 to 354:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:57 to 251:77) at "flash_fwd.cu":354:3 to 354:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:5 to 251:78) at "flash_fwd.cu":354:3 to 354:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:59) at "flash_fwd.cu":354:3 to 354:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:72) at "flash_fwd.cu":354:3 to 354:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:5 to 252:73) at "flash_fwd.cu":354:3 to 354:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %logits = math.fma %acc_s, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:35 to 260:82) at "flash_fwd.cu":354:3 to 354:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:9 to 260:83) at "flash_fwd.cu":354:3 to 354:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":262:9 to 262:22) at "flash_fwd.cu":354:3 to 354:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:21 to 265:52) at "flash_fwd.cu":354:3 to 354:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:5 to 265:63) at "flash_fwd.cu":354:3 to 354:35))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xbf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":284:39 to 284:106) at "flash_fwd.cu":362:3 to 362:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xbf16, #WACC> -> tensor<64x128xbf16, #WA> loc("p_frag"("flash_fwd.cu":362:3 to 362:30))

        %rescale_b = cuir.broadcast_rows %rescale : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        cuir.barrier.named %my_turn threads 256 loc("flash_fwd.cu":429:3 to 429:40)
        cuir.barrier.wait %v_full[%stage], %phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":322:3 to 322:59 at "flash_fwd.cu":341:25 to 341:53))
        %o_issued = cuir.gemm_async %p_frag, %sV_stage, %acc_o_rescaled
            : tensor<64x128xbf16, #WA>, memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":323:3 to 323:63) at "flash_fwd.cu":341:25 to 341:53))
        scf.if %pass_turn {
          cuir.barrier.named %their_turn threads 256 arrive loc("flash_fwd.cu":431:3 to 431:46)
          scf.yield loc("flash_fwd.cu":431:3 to 431:46)
        } loc("flash_fwd.cu":431:3 to 431:46)
        %acc_o_new = cuir.gemm_wait %o_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:5 to 357:34) at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.arrive %v_empty[%stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":360:5 to 360:57 at "flash_fwd.cu":425:5 to 425:36))
        scf.yield %acc_o_new, %new_max, %row_sum_new
            : tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW> loc("flash_fwd.cu":424:3 to 424:44)
      } loc("flash_fwd.cu":424:3 to 424:44)

      // =============================== epilogue ===============================
      %sees_nothing = arith.cmpf oeq, %u_row_sum, %zero_row : tensor<64xf32, #WROW> loc("row_sees_nothing"("flash_fwd.cu":451:5 to 451:45))
      %one_row = arith.constant dense<1.0> : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":452:50 to 452:59))
      %inv = arith.divf %one_row, %u_row_sum : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":452:50 to 452:59))
      %row_inv_sum = arith.select %sees_nothing, %zero_row, %inv : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":452:5 to 452:60))
      %max_l2 = arith.mulf %u_row_max, %scale_row : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:53 to 453:83))
      %log_sum = math.log2 %u_row_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:86 to 453:100))
      %lse2 = arith.addf %max_l2, %log_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:52 to 453:101))
      %ln2 = arith.constant dense<0.693147182> : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:102 to 453:108))
      %lse_nat = arith.mulf %lse2, %ln2 : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:52 to 453:108))
      %lse_val = arith.select %sees_nothing, %ninf_row, %lse_nat : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:5 to 453:108))
      cuir.store %lse_val -> %lse_head[%q_wg] : tensor<64xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":455:72 to 455:91))
      %inv_b = cuir.broadcast_rows %row_inv_sum : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc("packed"("flash_fwd.cu":469:55 to 469:98))
      %o_norm = arith.mulf %u_acc_o, %inv_b : tensor<64x64xf32, #WACC> loc("packed"("flash_fwd.cu":469:55 to 469:98))
      %o16 = arith.truncf %o_norm : tensor<64x64xf32, #WACC> to tensor<64x64xbf16, #WACC> loc("packed"("flash_fwd.cu":469:7 to 469:54))
      cuir.store %o16 -> %sQ_wg : tensor<64x64xbf16, #WACC> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc("smem"("flash_fwd.cu":471:7 to 471:93))
      cuir.copy %sQ_wg -> %o_head[%q_wg, %c0] : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> -> memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":485:7 to 485:100))
      cuir.yield loc("flash_fwd.cu":564:5 to 564:53)
    } loc("flash_fwd.cu":563:5 to 563:40)
    scf.yield loc("flash_fwd.cu":536:3 to 536:24)
  } loc("flash_fwd.cu":536:3 to 536:24)
  cuir.return loc("flash_fwd.cu":509:5 to 509:79)
} loc("flash_fwd_sm90_kernel"("flash_fwd.cu":509:5 to 509:79))
cuir.kernel @flash_fwd_sm90_f16_d128(
    %q: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_fwd.cu":509:27 to 509:79)),
    %k: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_fwd.cu":509:27 to 509:79)),
    %v: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_fwd.cu":509:27 to 509:79)),
    %o: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_fwd.cu":509:27 to 509:79)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_fwd.cu":509:27 to 509:79)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_fwd.cu":509:27 to 509:79)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_fwd.cu":507:1 to 507:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_fwd.cu":509:27 to 509:79)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_fwd.cu":509:27 to 509:79)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_fwd.cu":509:27 to 509:79)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_fwd.cu":509:27 to 509:79)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_fwd.cu":509:27 to 509:79)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 128, hq, b)
    threads 384 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index loc("T::WG_ROWS")
  %c128 = arith.constant 128 : index loc("T::BLOCK_M")
  %cBN = arith.constant 128 : index loc("T::BLOCK_N")
  %cST = arith.constant 2 : index loc("T::STAGES")
  %true = arith.constant true
  %ninf = arith.constant 0xFF800000 : f32

  // ---- block coordinates, sequence views, masking offsets ----
  %m_block = cuir.block_id x loc("block.m_block"("flash_fwd.cu":517:3 to 517:53))
  %head_q = cuir.block_id y loc("block.head_q"("flash_fwd.cu":517:3 to 517:53))
  %b = cuir.block_id z loc("block.batch"("flash_fwd.cu":517:3 to 517:53))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("causal_offset"("flash_fwd.cu":520:13 to 520:49))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("ctx.last_key_offset"("flash_fwd.cu":386:3 to 386:90))
  %m_start = arith.muli %m_block, %c128 : index loc("m_start"("flash_fwd.cu":521:13 to 521:49))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("head_kv"("flash_fwd.cu":522:13 to 522:80))
  %head_kv = arith.divui %head_q, %group : index loc("head_kv"("flash_fwd.cu":522:13 to 522:80))
  %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("tma_q"("flash_fwd.cu":617:21 to 617:46))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("tma_k"("flash_fwd.cu":621:11 to 621:36))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("tma_v"("flash_fwd.cu":624:11 to 624:36))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":475:3 to 475:55))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":441:3 to 441:42))

  // ---- KV tiles this block visits: [n_block_min, n_block_max), of which [n_block_min, n_unmasked_blocks) need no mask ----
  %n_block_min = arith.constant 0 : index loc("n_block_min"("flash_fwd.cu":526:3 to 526:23))
  %n_block_all = arith.ceildivui %seqlen_kv, %cBN : index loc("n_block_max"("flash_fwd.cu":527:7 to 527:62))
  %n_full_all = arith.divui %seqlen_kv, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":528:7 to 528:49))
  %m_end = arith.addi %m_start, %c128 : index loc("last_row"("flash_fwd.cu":530:15 to 530:65))
  %m_end_clamped = arith.minui %m_end, %seqlen_q : index loc("last_row"("flash_fwd.cu":530:15 to 530:65))
  %last_row = arith.subi %m_end_clamped, %c1 : index loc("last_row"("flash_fwd.cu":530:15 to 530:65))
  %last_key_of_last_row = arith.addi %last_row, %causal_offset : index loc("last_key_of_last_row"("flash_fwd.cu":531:15 to 531:62))
  %last_key_of_first_row = arith.addi %m_start, %causal_offset : index loc("last_key_of_first_row"("flash_fwd.cu":532:15 to 532:62))
  %llr_neg = arith.cmpi slt, %last_key_of_last_row, %c0 : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %llr_blk = arith.divsi %last_key_of_last_row, %cBN : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %llr_end = arith.addi %llr_blk, %c1 : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %llr_bound = arith.select %llr_neg, %c0, %llr_end : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %n_block_causal = arith.minsi %n_block_all, %llr_bound : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %lfr_neg = arith.cmpi slt, %last_key_of_first_row, %c0 : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %lfr_next = arith.addi %last_key_of_first_row, %c1 : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %lfr_blk = arith.divsi %lfr_next, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %lfr_bound = arith.select %lfr_neg, %c0, %lfr_blk : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %n_full_causal = arith.minsi %n_full_all, %lfr_bound : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %n_block_max = arith.select %causal, %n_block_causal, %n_block_all : index loc("n_block_max"("flash_fwd.cu":529:3 to 529:27))
  %n_unmasked_blocks = arith.select %causal, %n_full_causal, %n_full_all : index loc("n_unmasked_blocks"("flash_fwd.cu":529:3 to 529:27))

  %no_keys = arith.cmpi sle, %n_block_max, %n_block_min : index loc("flash_fwd.cu":536:3 to 536:24)
  scf.if %no_keys {
    // No row of this block sees any key: O = 0, LSE = -inf (write_empty_block).
    %zero_o = arith.constant dense<0.0> : tensor<128x128xf16, #WACC> loc("o_head"("flash_fwd.cu":498:103 to 498:125))
    cuir.store %zero_o -> %o_head[%m_start, %c0] : tensor<128x128xf16, #WACC> -> memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":498:32 to 498:125))
    %ninf_lse = arith.constant dense<0xFF800000> : tensor<128xf32, #WROW> loc("lse_head"("flash_fwd.cu":503:7 to 503:30))
    cuir.store %ninf_lse -> %lse_head[%m_start] : tensor<128xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":503:7 to 503:30))
    scf.yield loc("flash_fwd.cu":538:5 to 538:12)
  } else {
    // ---- visits: n_visits, the last is visit n_visits - 1 ----
    %last_block = arith.subi %n_block_max, %c1 : index loc("i"("flash_fwd.cu":335:3 to 335:43))
    %n_visits = arith.subi %n_block_max, %n_block_min : index loc("n_visits"("flash_fwd.cu":163:3 to 163:50))
    %last_visit = arith.subi %n_visits, %c1 : index loc("flash_fwd.cu":430:3 to 430:83)

    // ---- shared memory: Q [128][d] (O in the epilogue), K and V rings [STAGES][BLOCK_N][d], 128-byte swizzled; the mbarriers ----
    %sQ = cuir.alloc {swizzle = 128} : memref<128x128xf16, #S> loc("sQ"("flash_fwd.cu":91:24 to 91:37))
    %sK = cuir.alloc {swizzle = 128} : memref<2x128x128xf16, #S> loc("sK"("flash_fwd.cu":92:24 to 92:60))
    %sV = cuir.alloc {swizzle = 128} : memref<2x128x128xf16, #S> loc("sV"("flash_fwd.cu":93:24 to 93:70))
    %q_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1> loc("bars->q_full"("flash_fwd.cu":543:5 to 543:36))
    %k_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->k_full"("flash_fwd.cu":546:7 to 546:41))
    %v_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->v_full"("flash_fwd.cu":547:7 to 547:41))
    %k_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<2> loc("bars->k_empty"("flash_fwd.cu":548:7 to 548:64))
    %v_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<2> loc("bars->v_empty"("flash_fwd.cu":549:7 to 549:64))

    // =============================== producer warpgroup ===============================
    cuir.bind warpgroup [0] role producer regs 24 {
      cuir.bind warp [0] role producer {
        cuir.barrier.arrive %q_full[%c0] expect_tx 32768 : !cuir.mbarrier<1> loc("flash_fwd.cu":157:3 to 157:60)
        cuir.copy_async tma %q_head[%m_start, %c0] -> %sQ barrier %q_full[%c0]
            : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xf16, #S>, !cuir.mbarrier<1> loc("sQ"("flash_fwd.cu":160:5 to 160:68))
        // K of visit i, then V of visit i - 1.
        %n_steps = arith.addi %n_visits, %c1 : index loc("flash_fwd.cu":164:3 to 164:38)
        scf.for %i = %c0 to %n_steps step %c1 {
          %has_k = arith.cmpi slt, %i, %n_visits : index loc("flash_fwd.cu":165:5 to 165:22)
          scf.if %has_k {
            %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":141:3 to 141:35) at "flash_fwd.cu":166:7 to 166:32))
            %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":166:7 to 166:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":166:7 to 166:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":166:7 to 166:32))
            cuir.barrier.wait %k_empty[%stage], %free : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":166:7 to 166:32))
            cuir.barrier.arrive %k_full[%stage] expect_tx 32768 : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":144:3 to 144:60 at "flash_fwd.cu":166:7 to 166:32))
            %blk = arith.subi %last_block, %i : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":166:7 to 166:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":166:7 to 166:32))
            %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
                : memref<2x128x128xf16, #S> to memref<128x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":148:17 to 148:62) at "flash_fwd.cu":166:7 to 166:32))
            cuir.copy_async tma %k_head[%row, %c0] -> %sK_stage barrier %k_full[%stage]
                : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xf16, strided<[128, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sK"("flash_fwd.cu":148:5 to 148:62) at "flash_fwd.cu":166:7 to 166:32))
            scf.yield loc("flash_fwd.cu":165:5 to 165:22)
          } loc("flash_fwd.cu":165:5 to 165:22)
          %has_v = arith.cmpi sge, %i, %c1 : index loc("flash_fwd.cu":167:5 to 167:16)
          scf.if %has_v {
            %iv = arith.subi %i, %c1 : index loc("flash_fwd.cu":168:83 to 168:110)
            %stage = arith.remui %iv, %cST : index loc(callsite("stage"("flash_fwd.cu":141:3 to 141:35) at "flash_fwd.cu":168:7 to 168:32))
            %round = arith.divui %iv, %cST : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":168:7 to 168:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":168:7 to 168:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":168:7 to 168:32))
            cuir.barrier.wait %v_empty[%stage], %free : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":168:7 to 168:32))
            cuir.barrier.arrive %v_full[%stage] expect_tx 32768 : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":144:3 to 144:60 at "flash_fwd.cu":168:7 to 168:32))
            %blk = arith.subi %last_block, %iv : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":168:7 to 168:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":168:7 to 168:32))
            %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
                : memref<2x128x128xf16, #S> to memref<128x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":148:17 to 148:62) at "flash_fwd.cu":168:7 to 168:32))
            cuir.copy_async tma %v_head[%row, %c0] -> %sV_stage barrier %v_full[%stage]
                : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xf16, strided<[128, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sV"("flash_fwd.cu":148:5 to 148:62) at "flash_fwd.cu":168:7 to 168:32))
            scf.yield loc("flash_fwd.cu":167:5 to 167:16)
          } loc("flash_fwd.cu":167:5 to 167:16)
          scf.yield loc("flash_fwd.cu":164:3 to 164:38)
        } loc("flash_fwd.cu":164:3 to 164:38)
        cuir.yield loc("flash_fwd.cu":560:7 to 560:41)
      } loc("flash_fwd.cu":559:5 to 559:51)
      cuir.yield loc("flash_fwd.cu":558:5 to 558:40)
    } loc("flash_fwd.cu":558:5 to 558:40)

    // =============================== consumer warpgroups ===============================
    cuir.bind warpgroup [1, 2] role consumer regs 240 {
      %consumer = cuir.worker_id loc("consumer_index"("flash_fwd.cu":370:3 to 370:40))
      %wg_row = arith.muli %consumer, %c64 : index loc("wg_row_in_block"("flash_fwd.cu":374:3 to 374:59))
      %q_wg = arith.addi %m_start, %wg_row : index loc("m_start + wg_row_in_block"("flash_fwd.cu":383:3 to 383:63))
      %sQ_wg = memref.subview %sQ[%wg_row, 0] [64, 128] [1, 1]
          : memref<128x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc("ctx.sq_rows"("flash_fwd.cu":378:3 to 378:66))
      %is_second = arith.cmpi eq, %consumer, %c1 : index loc("flash_fwd.cu":400:22 to 400:41)
      %my_turn = arith.addi %consumer, %c1 : index loc("flash_fwd.cu":292:30 to 292:102)
      %their_turn = arith.subi %c2, %consumer : index loc("flash_fwd.cu":297:35 to 297:115)

      // ---- accumulators and softmax state, all in registers ----
      %acc_o_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("acc_o"("flash_fwd.cu":397:39 to 397:53))
      %row_max_init = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("row_max"("flash_fwd.cu":393:3 to 393:22))
      %row_sum_init = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("row_sum"("flash_fwd.cu":394:3 to 394:22))
      %log2e = arith.constant 1.44269502 : f32 loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %scale_tile = tensor.splat %scale_log2 : tensor<64x128xf32, #WACC> loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %scale_row = tensor.splat %scale_log2 : tensor<64xf32, #WROW> loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %zero_row = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":251:30 to 251:77))
      %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":251:30 to 251:77))
      %acc_s_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("acc_s"("flash_fwd.cu":391:3 to 391:26))

      cuir.barrier.wait %q_full[%c0], %c0 : !cuir.mbarrier<1> loc("flash_fwd.cu":399:3 to 399:34)
      scf.if %is_second {
        cuir.barrier.named %c1 threads 256 arrive loc("flash_fwd.cu":400:43 to 400:110)
        scf.yield loc("flash_fwd.cu":400:3 to 400:42)
      } loc("flash_fwd.cu":400:3 to 400:42)

      // =============================== masking steps ===============================
      %n_masked = arith.subi %n_block_max, %n_unmasked_blocks : index loc("flash_fwd.cu":418:3 to 418:50)
      %m_acc_o, %m_row_max, %m_row_sum = scf.for %iv = %c0 to %n_masked step %c1
          iter_args(%acc_o = %acc_o_init, %row_max = %row_max_init, %row_sum = %row_sum_init)
          -> (tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>) {
        %top = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":414:3 to 414:33))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":418:3 to 418:50))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":335:3 to 335:43) at "flash_fwd.cu":419:5 to 419:35))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":320:3 to 320:35) at "flash_fwd.cu":419:5 to 419:35))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":419:5 to 419:35))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":419:5 to 419:35))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":219:20 to 219:40) at "flash_fwd.cu":351:5 to 351:43))
        %is_last = arith.cmpi eq, %i, %last_visit : index loc("flash_fwd.cu":431:3 to 431:46)
        %keep_turn = arith.andi %is_last, %is_second : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %pass_turn = arith.xori %keep_turn, %true : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xf16, #S> to memref<128x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":340:34 to 340:67) at "flash_fwd.cu":419:5 to 419:35))
        %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xf16, #S> to memref<128x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":323:29 to 323:62) at "flash_fwd.cu":341:25 to 341:53))

        // S = Q K^T on this warpgroup's turn
        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":338:3 to 338:38 at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":339:3 to 339:59 at "flash_fwd.cu":419:5 to 419:35))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":340:3 to 340:32) at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":342:3 to 342:45 at "flash_fwd.cu":419:5 to 419:35))
        %acc_s = cuir.gemm_wait %s_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":405:5 to 405:19) at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":346:3 to 346:41 at "flash_fwd.cu":419:5 to 419:35))

        // ------- score tile complete: acc_s = Q K^T (unscaled); the mask of a masking step -------
        %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_wg, %kv0]
            : (tensor<64x128xf32, #WACC>) -> tensor<64x128xf32, #WACC> {
        ^bb0(%x: f32 loc("acc_s"("flash_fwd.cu":226:60 to 226:86)), %bi: index loc("block.batch"("flash_fwd.cu":517:3 to 517:53)), %hi: index loc("block.head_q"("flash_fwd.cu":517:3 to 517:53)), %row: index loc("row"("flash_fwd.cu":224:7 to 224:42)), %col: index loc("col"("flash_fwd.cu":225:7 to 225:46))):
          %past_end = arith.cmpi sge, %col, %seqlen_kv : index loc(callsite("flash_fwd.cu":226:11 to 226:27 at "flash_fwd.cu":351:5 to 351:43))
          %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_fwd.cu":214:27 to 214:48 at "flash_fwd.cu":351:5 to 351:43))
          %past_diag = arith.cmpi sgt, %col, %row_last : index loc(callsite("flash_fwd.cu":226:31 to 226:58 at "flash_fwd.cu":351:5 to 351:43))
          %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_fwd.cu":226:7 to 226:27 at "flash_fwd.cu":351:5 to 351:43))
          %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_fwd.cu":226:60 to 226:86) at "flash_fwd.cu":351:5 to 351:43))
          cuir.yield %r : f32 loc("flash_fwd.cu":351:5 to 351:43)
        } loc("acc_s"("flash_fwd.cu":351:5 to 351:43))

        // ------- online softmax: row_max / row_sum, acc_s <- probabilities, the correction of O -------
        %blk_max = cuir.reduce_rows max %acc_s_masked : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:30 to 251:48) at "flash_fwd.cu":354:3 to 354:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:57 to 251:77) at "flash_fwd.cu":354:3 to 354:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:5 to 251:78) at "flash_fwd.cu":354:3 to 354:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:59) at "flash_fwd.cu":354:3 to 354:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:72) at "flash_fwd.cu":354:3 to 354:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:5 to 252:73) at "flash_fwd.cu":354:3 to 354:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %logits = math.fma %acc_s_masked, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:35 to 260:82) at "flash_fwd.cu":354:3 to 354:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:9 to 260:83) at "flash_fwd.cu":354:3 to 354:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":262:9 to 262:22) at "flash_fwd.cu":354:3 to 354:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:21 to 265:52) at "flash_fwd.cu":354:3 to 354:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:5 to 265:63) at "flash_fwd.cu":354:3 to 354:35))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":284:39 to 284:106) at "flash_fwd.cu":362:3 to 362:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xf16, #WACC> -> tensor<64x128xf16, #WA> loc("p_frag"("flash_fwd.cu":362:3 to 362:30))

        // ------- O = O * correction + P V on this warpgroup's turn -------
        %rescale_b = cuir.broadcast_rows %rescale : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        cuir.barrier.named %my_turn threads 256 loc("flash_fwd.cu":429:3 to 429:40)
        cuir.barrier.wait %v_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":322:3 to 322:59 at "flash_fwd.cu":341:25 to 341:53))
        %o_issued = cuir.gemm_async %p_frag, %sV_stage, %acc_o_rescaled
            : tensor<64x128xf16, #WA>, memref<128x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":323:3 to 323:63) at "flash_fwd.cu":341:25 to 341:53))
        scf.if %pass_turn {
          cuir.barrier.named %their_turn threads 256 arrive loc("flash_fwd.cu":431:3 to 431:46)
          scf.yield loc("flash_fwd.cu":431:3 to 431:46)
        } loc("flash_fwd.cu":431:3 to 431:46)
        %acc_o_new = cuir.gemm_wait %o_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:5 to 357:34) at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.arrive %v_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":360:5 to 360:57 at "flash_fwd.cu":419:5 to 419:35))
        scf.yield %acc_o_new, %new_max, %row_sum_new
            : tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW> loc("flash_fwd.cu":418:3 to 418:50)
      } loc("flash_fwd.cu":418:3 to 418:50)

      // =============================== unmasked steps ===============================
      %n_unmasked = arith.subi %n_unmasked_blocks, %n_block_min : index loc("flash_fwd.cu":424:3 to 424:44)
      %u_acc_o, %u_row_max, %u_row_sum = scf.for %iv = %c0 to %n_unmasked step %c1
          iter_args(%acc_o = %m_acc_o, %row_max = %m_row_max, %row_sum = %m_row_sum)
          -> (tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>) {
        %top = arith.subi %n_unmasked_blocks, %c1 : index loc("n_block"("flash_fwd.cu":424:3 to 424:44))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":424:3 to 424:44))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":335:3 to 335:43) at "flash_fwd.cu":425:5 to 425:36))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":320:3 to 320:35) at "flash_fwd.cu":425:5 to 425:36))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":425:5 to 425:36))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":425:5 to 425:36))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":219:20 to 219:40) at "flash_fwd.cu":351:5 to 351:43))
        %is_last = arith.cmpi eq, %i, %last_visit : index loc("flash_fwd.cu":431:3 to 431:46)
        %keep_turn = arith.andi %is_last, %is_second : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %pass_turn = arith.xori %keep_turn, %true : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xf16, #S> to memref<128x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":340:34 to 340:67) at "flash_fwd.cu":425:5 to 425:36))
        %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xf16, #S> to memref<128x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":323:29 to 323:62) at "flash_fwd.cu":341:25 to 341:53))

        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":338:3 to 338:38 at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":339:3 to 339:59 at "flash_fwd.cu":425:5 to 425:36))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":340:3 to 340:32) at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":342:3 to 342:45 at "flash_fwd.cu":425:5 to 425:36))
        %acc_s = cuir.gemm_wait %s_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":408:5 to 408:19) at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":346:3 to 346:41 at "flash_fwd.cu":425:5 to 425:36))

        // ------- score tile complete: every score of this tile is visible -------

        // ------- online softmax -------
        %blk_max = cuir.reduce_rows max %acc_s : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:30 to 251:48) at "flash_fwd.cu":354:3 to 354:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:57 to 251:77) at "flash_fwd.cu":354:3 to 354:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:5 to 251:78) at "flash_fwd.cu":354:3 to 354:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:59) at "flash_fwd.cu":354:3 to 354:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:72) at "flash_fwd.cu":354:3 to 354:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:5 to 252:73) at "flash_fwd.cu":354:3 to 354:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %logits = math.fma %acc_s, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:35 to 260:82) at "flash_fwd.cu":354:3 to 354:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:9 to 260:83) at "flash_fwd.cu":354:3 to 354:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":262:9 to 262:22) at "flash_fwd.cu":354:3 to 354:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:21 to 265:52) at "flash_fwd.cu":354:3 to 354:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:5 to 265:63) at "flash_fwd.cu":354:3 to 354:35))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":284:39 to 284:106) at "flash_fwd.cu":362:3 to 362:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xf16, #WACC> -> tensor<64x128xf16, #WA> loc("p_frag"("flash_fwd.cu":362:3 to 362:30))

        %rescale_b = cuir.broadcast_rows %rescale : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        cuir.barrier.named %my_turn threads 256 loc("flash_fwd.cu":429:3 to 429:40)
        cuir.barrier.wait %v_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":322:3 to 322:59 at "flash_fwd.cu":341:25 to 341:53))
        %o_issued = cuir.gemm_async %p_frag, %sV_stage, %acc_o_rescaled
            : tensor<64x128xf16, #WA>, memref<128x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":323:3 to 323:63) at "flash_fwd.cu":341:25 to 341:53))
        scf.if %pass_turn {
          cuir.barrier.named %their_turn threads 256 arrive loc("flash_fwd.cu":431:3 to 431:46)
          scf.yield loc("flash_fwd.cu":431:3 to 431:46)
        } loc("flash_fwd.cu":431:3 to 431:46)
        %acc_o_new = cuir.gemm_wait %o_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:5 to 357:34) at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.arrive %v_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":360:5 to 360:57 at "flash_fwd.cu":425:5 to 425:36))
        scf.yield %acc_o_new, %new_max, %row_sum_new
            : tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW> loc("flash_fwd.cu":424:3 to 424:44)
      } loc("flash_fwd.cu":424:3 to 424:44)

      // =============================== epilogue ===============================
      %sees_nothing = arith.cmpf oeq, %u_row_sum, %zero_row : tensor<64xf32, #WROW> loc("row_sees_nothing"("flash_fwd.cu":451:5 to 451:45))
      %one_row = arith.constant dense<1.0> : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":452:50 to 452:59))
      %inv = arith.divf %one_row, %u_row_sum : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":452:50 to 452:59))
      %row_inv_sum = arith.select %sees_nothing, %zero_row, %inv : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":452:5 to 452:60))
      %max_l2 = arith.mulf %u_row_max, %scale_row : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:53 to 453:83))
      %log_sum = math.log2 %u_row_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:86 to 453:100))
      %lse2 = arith.addf %max_l2, %log_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:52 to 453:101))
      %ln2 = arith.constant dense<0.693147182> : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:102 to 453:108))
      %lse_nat = arith.mulf %lse2, %ln2 : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:52 to 453:108))
      %lse_val = arith.select %sees_nothing, %ninf_row, %lse_nat : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:5 to 453:108))
      cuir.store %lse_val -> %lse_head[%q_wg] : tensor<64xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":455:72 to 455:91))
      %inv_b = cuir.broadcast_rows %row_inv_sum : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc("packed"("flash_fwd.cu":469:55 to 469:98))
      %o_norm = arith.mulf %u_acc_o, %inv_b : tensor<64x128xf32, #WACC> loc("packed"("flash_fwd.cu":469:55 to 469:98))
      %o16 = arith.truncf %o_norm : tensor<64x128xf32, #WACC> to tensor<64x128xf16, #WACC> loc("packed"("flash_fwd.cu":469:7 to 469:54))
      cuir.store %o16 -> %sQ_wg : tensor<64x128xf16, #WACC> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc("smem"("flash_fwd.cu":471:7 to 471:93))
      cuir.copy %sQ_wg -> %o_head[%q_wg, %c0] : memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":485:7 to 485:100))
      cuir.yield loc("flash_fwd.cu":564:5 to 564:53)
    } loc("flash_fwd.cu":563:5 to 563:40)
    scf.yield loc("flash_fwd.cu":536:3 to 536:24)
  } loc("flash_fwd.cu":536:3 to 536:24)
  cuir.return loc("flash_fwd.cu":509:5 to 509:79)
} loc("flash_fwd_sm90_kernel"("flash_fwd.cu":509:5 to 509:79))
cuir.kernel @flash_fwd_sm90_f16_d64(
    %q: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_fwd.cu":509:27 to 509:79)),
    %k: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_fwd.cu":509:27 to 509:79)),
    %v: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_fwd.cu":509:27 to 509:79)),
    %o: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_fwd.cu":509:27 to 509:79)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_fwd.cu":509:27 to 509:79)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_fwd.cu":509:27 to 509:79)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_fwd.cu":507:1 to 507:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_fwd.cu":509:27 to 509:79)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_fwd.cu":509:27 to 509:79)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_fwd.cu":509:27 to 509:79)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_fwd.cu":509:27 to 509:79)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_fwd.cu":509:27 to 509:79)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 128, hq, b)
    threads 384 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index loc("T::WG_ROWS")
  %c128 = arith.constant 128 : index loc("T::BLOCK_M")
  %cBN = arith.constant 128 : index loc("T::BLOCK_N")
  %cST = arith.constant 4 : index loc("T::STAGES")
  %true = arith.constant true
  %ninf = arith.constant 0xFF800000 : f32

  // ---- block coordinates, sequence views, masking offsets ----
  %m_block = cuir.block_id x loc("block.m_block"("flash_fwd.cu":517:3 to 517:53))
  %head_q = cuir.block_id y loc("block.head_q"("flash_fwd.cu":517:3 to 517:53))
  %b = cuir.block_id z loc("block.batch"("flash_fwd.cu":517:3 to 517:53))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("causal_offset"("flash_fwd.cu":520:13 to 520:49))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("ctx.last_key_offset"("flash_fwd.cu":386:3 to 386:90))
  %m_start = arith.muli %m_block, %c128 : index loc("m_start"("flash_fwd.cu":521:13 to 521:49))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("head_kv"("flash_fwd.cu":522:13 to 522:80))
  %head_kv = arith.divui %head_q, %group : index loc("head_kv"("flash_fwd.cu":522:13 to 522:80))
  %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("tma_q"("flash_fwd.cu":617:21 to 617:46))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("tma_k"("flash_fwd.cu":621:11 to 621:36))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("tma_v"("flash_fwd.cu":624:11 to 624:36))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":475:3 to 475:55))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":441:3 to 441:42))

  // ---- KV tiles this block visits: [n_block_min, n_block_max), of which [n_block_min, n_unmasked_blocks) need no mask ----
  %n_block_min = arith.constant 0 : index loc("n_block_min"("flash_fwd.cu":526:3 to 526:23))
  %n_block_all = arith.ceildivui %seqlen_kv, %cBN : index loc("n_block_max"("flash_fwd.cu":527:7 to 527:62))
  %n_full_all = arith.divui %seqlen_kv, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":528:7 to 528:49))
  %m_end = arith.addi %m_start, %c128 : index loc("last_row"("flash_fwd.cu":530:15 to 530:65))
  %m_end_clamped = arith.minui %m_end, %seqlen_q : index loc("last_row"("flash_fwd.cu":530:15 to 530:65))
  %last_row = arith.subi %m_end_clamped, %c1 : index loc("last_row"("flash_fwd.cu":530:15 to 530:65))
  %last_key_of_last_row = arith.addi %last_row, %causal_offset : index loc("last_key_of_last_row"("flash_fwd.cu":531:15 to 531:62))
  %last_key_of_first_row = arith.addi %m_start, %causal_offset : index loc("last_key_of_first_row"("flash_fwd.cu":532:15 to 532:62))
  %llr_neg = arith.cmpi slt, %last_key_of_last_row, %c0 : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %llr_blk = arith.divsi %last_key_of_last_row, %cBN : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %llr_end = arith.addi %llr_blk, %c1 : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %llr_bound = arith.select %llr_neg, %c0, %llr_end : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %n_block_causal = arith.minsi %n_block_all, %llr_bound : index loc("n_block_max"("flash_fwd.cu":533:5 to 533:105))
  %lfr_neg = arith.cmpi slt, %last_key_of_first_row, %c0 : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %lfr_next = arith.addi %last_key_of_first_row, %c1 : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %lfr_blk = arith.divsi %lfr_next, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %lfr_bound = arith.select %lfr_neg, %c0, %lfr_blk : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %n_full_causal = arith.minsi %n_full_all, %lfr_bound : index loc("n_unmasked_blocks"("flash_fwd.cu":534:5 to 534:121))
  %n_block_max = arith.select %causal, %n_block_causal, %n_block_all : index loc("n_block_max"("flash_fwd.cu":529:3 to 529:27))
  %n_unmasked_blocks = arith.select %causal, %n_full_causal, %n_full_all : index loc("n_unmasked_blocks"("flash_fwd.cu":529:3 to 529:27))

  %no_keys = arith.cmpi sle, %n_block_max, %n_block_min : index loc("flash_fwd.cu":536:3 to 536:24)
  scf.if %no_keys {
    // No row of this block sees any key: O = 0, LSE = -inf (write_empty_block).
    %zero_o = arith.constant dense<0.0> : tensor<128x64xf16, #WACC> loc("o_head"("flash_fwd.cu":498:103 to 498:125))
    cuir.store %zero_o -> %o_head[%m_start, %c0] : tensor<128x64xf16, #WACC> -> memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":498:32 to 498:125))
    %ninf_lse = arith.constant dense<0xFF800000> : tensor<128xf32, #WROW> loc("lse_head"("flash_fwd.cu":503:7 to 503:30))
    cuir.store %ninf_lse -> %lse_head[%m_start] : tensor<128xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":503:7 to 503:30))
    scf.yield loc("flash_fwd.cu":538:5 to 538:12)
  } else {
    // ---- visits: n_visits, the last is visit n_visits - 1 ----
    %last_block = arith.subi %n_block_max, %c1 : index loc("i"("flash_fwd.cu":335:3 to 335:43))
    %n_visits = arith.subi %n_block_max, %n_block_min : index loc("n_visits"("flash_fwd.cu":163:3 to 163:50))
    %last_visit = arith.subi %n_visits, %c1 : index loc("flash_fwd.cu":430:3 to 430:83)

    // ---- shared memory: Q [128][d] (O in the epilogue), K and V rings [STAGES][BLOCK_N][d], 128-byte swizzled; the mbarriers ----
    %sQ = cuir.alloc {swizzle = 128} : memref<128x64xf16, #S> loc("sQ"("flash_fwd.cu":91:24 to 91:37))
    %sK = cuir.alloc {swizzle = 128} : memref<4x128x64xf16, #S> loc("sK"("flash_fwd.cu":92:24 to 92:60))
    %sV = cuir.alloc {swizzle = 128} : memref<4x128x64xf16, #S> loc("sV"("flash_fwd.cu":93:24 to 93:70))
    %q_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1> loc("bars->q_full"("flash_fwd.cu":543:5 to 543:36))
    %k_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<4> loc("bars->k_full"("flash_fwd.cu":546:7 to 546:41))
    %v_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<4> loc("bars->v_full"("flash_fwd.cu":547:7 to 547:41))
    %k_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<4> loc("bars->k_empty"("flash_fwd.cu":548:7 to 548:64))
    %v_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<4> loc("bars->v_empty"("flash_fwd.cu":549:7 to 549:64))

    // =============================== producer warpgroup ===============================
    cuir.bind warpgroup [0] role producer regs 24 {
      cuir.bind warp [0] role producer {
        cuir.barrier.arrive %q_full[%c0] expect_tx 16384 : !cuir.mbarrier<1> loc("flash_fwd.cu":157:3 to 157:60)
        cuir.copy_async tma %q_head[%m_start, %c0] -> %sQ barrier %q_full[%c0]
            : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, #S>, !cuir.mbarrier<1> loc("sQ"("flash_fwd.cu":160:5 to 160:68))
        // K of visit i, then V of visit i - 1.
        %n_steps = arith.addi %n_visits, %c1 : index loc("flash_fwd.cu":164:3 to 164:38)
        scf.for %i = %c0 to %n_steps step %c1 {
          %has_k = arith.cmpi slt, %i, %n_visits : index loc("flash_fwd.cu":165:5 to 165:22)
          scf.if %has_k {
            %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":141:3 to 141:35) at "flash_fwd.cu":166:7 to 166:32))
            %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":166:7 to 166:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":166:7 to 166:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":166:7 to 166:32))
            cuir.barrier.wait %k_empty[%stage], %free : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":166:7 to 166:32))
            cuir.barrier.arrive %k_full[%stage] expect_tx 16384 : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":144:3 to 144:60 at "flash_fwd.cu":166:7 to 166:32))
            %blk = arith.subi %last_block, %i : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":166:7 to 166:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":166:7 to 166:32))
            %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
                : memref<4x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":148:17 to 148:62) at "flash_fwd.cu":166:7 to 166:32))
            cuir.copy_async tma %k_head[%row, %c0] -> %sK_stage barrier %k_full[%stage]
                : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, !cuir.mbarrier<4> loc(callsite("sK"("flash_fwd.cu":148:5 to 148:62) at "flash_fwd.cu":166:7 to 166:32))
            scf.yield loc("flash_fwd.cu":165:5 to 165:22)
          } loc("flash_fwd.cu":165:5 to 165:22)
          %has_v = arith.cmpi sge, %i, %c1 : index loc("flash_fwd.cu":167:5 to 167:16)
          scf.if %has_v {
            %iv = arith.subi %i, %c1 : index loc("flash_fwd.cu":168:83 to 168:110)
            %stage = arith.remui %iv, %cST : index loc(callsite("stage"("flash_fwd.cu":141:3 to 141:35) at "flash_fwd.cu":168:7 to 168:32))
            %round = arith.divui %iv, %cST : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":168:7 to 168:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":142:3 to 142:46) at "flash_fwd.cu":168:7 to 168:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":168:7 to 168:32))
            cuir.barrier.wait %v_empty[%stage], %free : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":143:3 to 143:42 at "flash_fwd.cu":168:7 to 168:32))
            cuir.barrier.arrive %v_full[%stage] expect_tx 16384 : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":144:3 to 144:60 at "flash_fwd.cu":168:7 to 168:32))
            %blk = arith.subi %last_block, %iv : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":168:7 to 168:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":145:3 to 145:54) at "flash_fwd.cu":168:7 to 168:32))
            %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
                : memref<4x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":148:17 to 148:62) at "flash_fwd.cu":168:7 to 168:32))
            cuir.copy_async tma %v_head[%row, %c0] -> %sV_stage barrier %v_full[%stage]
                : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, !cuir.mbarrier<4> loc(callsite("sV"("flash_fwd.cu":148:5 to 148:62) at "flash_fwd.cu":168:7 to 168:32))
            scf.yield loc("flash_fwd.cu":167:5 to 167:16)
          } loc("flash_fwd.cu":167:5 to 167:16)
          scf.yield loc("flash_fwd.cu":164:3 to 164:38)
        } loc("flash_fwd.cu":164:3 to 164:38)
        cuir.yield loc("flash_fwd.cu":560:7 to 560:41)
      } loc("flash_fwd.cu":559:5 to 559:51)
      cuir.yield loc("flash_fwd.cu":558:5 to 558:40)
    } loc("flash_fwd.cu":558:5 to 558:40)

    // =============================== consumer warpgroups ===============================
    cuir.bind warpgroup [1, 2] role consumer regs 240 {
      %consumer = cuir.worker_id loc("consumer_index"("flash_fwd.cu":370:3 to 370:40))
      %wg_row = arith.muli %consumer, %c64 : index loc("wg_row_in_block"("flash_fwd.cu":374:3 to 374:59))
      %q_wg = arith.addi %m_start, %wg_row : index loc("m_start + wg_row_in_block"("flash_fwd.cu":383:3 to 383:63))
      %sQ_wg = memref.subview %sQ[%wg_row, 0] [64, 64] [1, 1]
          : memref<128x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc("ctx.sq_rows"("flash_fwd.cu":378:3 to 378:66))
      %is_second = arith.cmpi eq, %consumer, %c1 : index loc("flash_fwd.cu":400:22 to 400:41)
      %my_turn = arith.addi %consumer, %c1 : index loc("flash_fwd.cu":292:30 to 292:102)
      %their_turn = arith.subi %c2, %consumer : index loc("flash_fwd.cu":297:35 to 297:115)

      // ---- accumulators and softmax state, all in registers ----
      %acc_o_init = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("acc_o"("flash_fwd.cu":397:39 to 397:53))
      %row_max_init = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("row_max"("flash_fwd.cu":393:3 to 393:22))
      %row_sum_init = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("row_sum"("flash_fwd.cu":394:3 to 394:22))
      %log2e = arith.constant 1.44269502 : f32 loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %scale_tile = tensor.splat %scale_log2 : tensor<64x128xf32, #WACC> loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %scale_row = tensor.splat %scale_log2 : tensor<64xf32, #WROW> loc("ctx.scale_log2"("flash_fwd.cu":387:3 to 387:49))
      %zero_row = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":251:30 to 251:77))
      %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":251:30 to 251:77))
      %acc_s_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("acc_s"("flash_fwd.cu":391:3 to 391:26))

      cuir.barrier.wait %q_full[%c0], %c0 : !cuir.mbarrier<1> loc("flash_fwd.cu":399:3 to 399:34)
      scf.if %is_second {
        cuir.barrier.named %c1 threads 256 arrive loc("flash_fwd.cu":400:43 to 400:110)
        scf.yield loc("flash_fwd.cu":400:3 to 400:42)
      } loc("flash_fwd.cu":400:3 to 400:42)

      // =============================== masking steps ===============================
      %n_masked = arith.subi %n_block_max, %n_unmasked_blocks : index loc("flash_fwd.cu":418:3 to 418:50)
      %m_acc_o, %m_row_max, %m_row_sum = scf.for %iv = %c0 to %n_masked step %c1
          iter_args(%acc_o = %acc_o_init, %row_max = %row_max_init, %row_sum = %row_sum_init)
          -> (tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>) {
        %top = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":414:3 to 414:33))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":418:3 to 418:50))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":335:3 to 335:43) at "flash_fwd.cu":419:5 to 419:35))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":320:3 to 320:35) at "flash_fwd.cu":419:5 to 419:35))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":419:5 to 419:35))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":419:5 to 419:35))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":219:20 to 219:40) at "flash_fwd.cu":351:5 to 351:43))
        %is_last = arith.cmpi eq, %i, %last_visit : index loc("flash_fwd.cu":431:3 to 431:46)
        %keep_turn = arith.andi %is_last, %is_second : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %pass_turn = arith.xori %keep_turn, %true : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":340:34 to 340:67) at "flash_fwd.cu":419:5 to 419:35))
        %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":323:29 to 323:62) at "flash_fwd.cu":341:25 to 341:53))

        // S = Q K^T on this warpgroup's turn
        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":338:3 to 338:38 at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":339:3 to 339:59 at "flash_fwd.cu":419:5 to 419:35))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":340:3 to 340:32) at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":342:3 to 342:45 at "flash_fwd.cu":419:5 to 419:35))
        %acc_s = cuir.gemm_wait %s_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":405:5 to 405:19) at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":346:3 to 346:41 at "flash_fwd.cu":419:5 to 419:35))

        // ------- score tile complete: acc_s = Q K^T (unscaled); the mask of a masking step -------
        %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_wg, %kv0]
            : (tensor<64x128xf32, #WACC>) -> tensor<64x128xf32, #WACC> {
        ^bb0(%x: f32 loc("acc_s"("flash_fwd.cu":226:60 to 226:86)), %bi: index loc("block.batch"("flash_fwd.cu":517:3 to 517:53)), %hi: index loc("block.head_q"("flash_fwd.cu":517:3 to 517:53)), %row: index loc("row"("flash_fwd.cu":224:7 to 224:42)), %col: index loc("col"("flash_fwd.cu":225:7 to 225:46))):
          %past_end = arith.cmpi sge, %col, %seqlen_kv : index loc(callsite("flash_fwd.cu":226:11 to 226:27 at "flash_fwd.cu":351:5 to 351:43))
          %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_fwd.cu":214:27 to 214:48 at "flash_fwd.cu":351:5 to 351:43))
          %past_diag = arith.cmpi sgt, %col, %row_last : index loc(callsite("flash_fwd.cu":226:31 to 226:58 at "flash_fwd.cu":351:5 to 351:43))
          %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_fwd.cu":226:7 to 226:27 at "flash_fwd.cu":351:5 to 351:43))
          %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_fwd.cu":226:60 to 226:86) at "flash_fwd.cu":351:5 to 351:43))
          cuir.yield %r : f32 loc("flash_fwd.cu":351:5 to 351:43)
        } loc("acc_s"("flash_fwd.cu":351:5 to 351:43))

        // ------- online softmax: row_max / row_sum, acc_s <- probabilities, the correction of O -------
        %blk_max = cuir.reduce_rows max %acc_s_masked : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:30 to 251:48) at "flash_fwd.cu":354:3 to 354:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:57 to 251:77) at "flash_fwd.cu":354:3 to 354:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:5 to 251:78) at "flash_fwd.cu":354:3 to 354:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:59) at "flash_fwd.cu":354:3 to 354:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:72) at "flash_fwd.cu":354:3 to 354:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:5 to 252:73) at "flash_fwd.cu":354:3 to 354:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %logits = math.fma %acc_s_masked, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:35 to 260:82) at "flash_fwd.cu":354:3 to 354:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:9 to 260:83) at "flash_fwd.cu":354:3 to 354:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":262:9 to 262:22) at "flash_fwd.cu":354:3 to 354:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:21 to 265:52) at "flash_fwd.cu":354:3 to 354:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:5 to 265:63) at "flash_fwd.cu":354:3 to 354:35))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":284:39 to 284:106) at "flash_fwd.cu":362:3 to 362:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xf16, #WACC> -> tensor<64x128xf16, #WA> loc("p_frag"("flash_fwd.cu":362:3 to 362:30))

        // ------- O = O * correction + P V on this warpgroup's turn -------
        %rescale_b = cuir.broadcast_rows %rescale : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        cuir.barrier.named %my_turn threads 256 loc("flash_fwd.cu":429:3 to 429:40)
        cuir.barrier.wait %v_full[%stage], %phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":322:3 to 322:59 at "flash_fwd.cu":341:25 to 341:53))
        %o_issued = cuir.gemm_async %p_frag, %sV_stage, %acc_o_rescaled
            : tensor<64x128xf16, #WA>, memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":323:3 to 323:63) at "flash_fwd.cu":341:25 to 341:53))
        scf.if %pass_turn {
          cuir.barrier.named %their_turn threads 256 arrive loc("flash_fwd.cu":431:3 to 431:46)
          scf.yield loc("flash_fwd.cu":431:3 to 431:46)
        } loc("flash_fwd.cu":431:3 to 431:46)
        %acc_o_new = cuir.gemm_wait %o_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:5 to 357:34) at "flash_fwd.cu":419:5 to 419:35))
        cuir.barrier.arrive %v_empty[%stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":360:5 to 360:57 at "flash_fwd.cu":419:5 to 419:35))
        scf.yield %acc_o_new, %new_max, %row_sum_new
            : tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW> loc("flash_fwd.cu":418:3 to 418:50)
      } loc("flash_fwd.cu":418:3 to 418:50)

      // =============================== unmasked steps ===============================
      %n_unmasked = arith.subi %n_unmasked_blocks, %n_block_min : index loc("flash_fwd.cu":424:3 to 424:44)
      %u_acc_o, %u_row_max, %u_row_sum = scf.for %iv = %c0 to %n_unmasked step %c1
          iter_args(%acc_o = %m_acc_o, %row_max = %m_row_max, %row_sum = %m_row_sum)
          -> (tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>) {
        %top = arith.subi %n_unmasked_blocks, %c1 : index loc("n_block"("flash_fwd.cu":424:3 to 424:44))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":424:3 to 424:44))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":335:3 to 335:43) at "flash_fwd.cu":425:5 to 425:36))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":320:3 to 320:35) at "flash_fwd.cu":425:5 to 425:36))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":425:5 to 425:36))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":322:39 to 322:58 at "flash_fwd.cu":425:5 to 425:36))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":219:20 to 219:40) at "flash_fwd.cu":351:5 to 351:43))
        %is_last = arith.cmpi eq, %i, %last_visit : index loc("flash_fwd.cu":431:3 to 431:46)
        %keep_turn = arith.andi %is_last, %is_second : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %pass_turn = arith.xori %keep_turn, %true : i1 loc("flash_fwd.cu":297:5 to 297:34)
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":340:34 to 340:67) at "flash_fwd.cu":425:5 to 425:36))
        %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":323:29 to 323:62) at "flash_fwd.cu":341:25 to 341:53))

        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":338:3 to 338:38 at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":339:3 to 339:59 at "flash_fwd.cu":425:5 to 425:36))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":340:3 to 340:32) at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":342:3 to 342:45 at "flash_fwd.cu":425:5 to 425:36))
        %acc_s = cuir.gemm_wait %s_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":408:5 to 408:19) at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":346:3 to 346:41 at "flash_fwd.cu":425:5 to 425:36))

        // ------- score tile complete: every score of this tile is visible -------

        // ------- online softmax -------
        %blk_max = cuir.reduce_rows max %acc_s : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":247:7 to 247:92) at "flash_fwd.cu":354:3 to 354:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:30 to 251:48) at "flash_fwd.cu":354:3 to 354:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:57 to 251:77) at "flash_fwd.cu":354:3 to 354:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":251:5 to 251:78) at "flash_fwd.cu":354:3 to 354:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:59) at "flash_fwd.cu":354:3 to 354:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:33 to 252:72) at "flash_fwd.cu":354:3 to 354:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":252:5 to 252:73) at "flash_fwd.cu":354:3 to 354:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:70 to 260:81) at "flash_fwd.cu":354:3 to 354:35))
        %logits = math.fma %acc_s, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:35 to 260:82) at "flash_fwd.cu":354:3 to 354:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":260:9 to 260:83) at "flash_fwd.cu":354:3 to 354:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":262:9 to 262:22) at "flash_fwd.cu":354:3 to 354:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:21 to 265:52) at "flash_fwd.cu":354:3 to 354:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":265:5 to 265:63) at "flash_fwd.cu":354:3 to 354:35))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":284:39 to 284:106) at "flash_fwd.cu":362:3 to 362:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xf16, #WACC> -> tensor<64x128xf16, #WA> loc("p_frag"("flash_fwd.cu":362:3 to 362:30))

        %rescale_b = cuir.broadcast_rows %rescale : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":275:33 to 275:69) at "flash_fwd.cu":321:3 to 321:34))
        cuir.barrier.named %my_turn threads 256 loc("flash_fwd.cu":429:3 to 429:40)
        cuir.barrier.wait %v_full[%stage], %phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":322:3 to 322:59 at "flash_fwd.cu":341:25 to 341:53))
        %o_issued = cuir.gemm_async %p_frag, %sV_stage, %acc_o_rescaled
            : tensor<64x128xf16, #WA>, memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":323:3 to 323:63) at "flash_fwd.cu":341:25 to 341:53))
        scf.if %pass_turn {
          cuir.barrier.named %their_turn threads 256 arrive loc("flash_fwd.cu":431:3 to 431:46)
          scf.yield loc("flash_fwd.cu":431:3 to 431:46)
        } loc("flash_fwd.cu":431:3 to 431:46)
        %acc_o_new = cuir.gemm_wait %o_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:5 to 357:34) at "flash_fwd.cu":425:5 to 425:36))
        cuir.barrier.arrive %v_empty[%stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":360:5 to 360:57 at "flash_fwd.cu":425:5 to 425:36))
        scf.yield %acc_o_new, %new_max, %row_sum_new
            : tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW> loc("flash_fwd.cu":424:3 to 424:44)
      } loc("flash_fwd.cu":424:3 to 424:44)

      // =============================== epilogue ===============================
      %sees_nothing = arith.cmpf oeq, %u_row_sum, %zero_row : tensor<64xf32, #WROW> loc("row_sees_nothing"("flash_fwd.cu":451:5 to 451:45))
      %one_row = arith.constant dense<1.0> : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":452:50 to 452:59))
      %inv = arith.divf %one_row, %u_row_sum : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":452:50 to 452:59))
      %row_inv_sum = arith.select %sees_nothing, %zero_row, %inv : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":452:5 to 452:60))
      %max_l2 = arith.mulf %u_row_max, %scale_row : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:53 to 453:83))
      %log_sum = math.log2 %u_row_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:86 to 453:100))
      %lse2 = arith.addf %max_l2, %log_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:52 to 453:101))
      %ln2 = arith.constant dense<0.693147182> : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:102 to 453:108))
      %lse_nat = arith.mulf %lse2, %ln2 : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:52 to 453:108))
      %lse_val = arith.select %sees_nothing, %ninf_row, %lse_nat : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":453:5 to 453:108))
      cuir.store %lse_val -> %lse_head[%q_wg] : tensor<64xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":455:72 to 455:91))
      %inv_b = cuir.broadcast_rows %row_inv_sum : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc("packed"("flash_fwd.cu":469:55 to 469:98))
      %o_norm = arith.mulf %u_acc_o, %inv_b : tensor<64x64xf32, #WACC> loc("packed"("flash_fwd.cu":469:55 to 469:98))
      %o16 = arith.truncf %o_norm : tensor<64x64xf32, #WACC> to tensor<64x64xf16, #WACC> loc("packed"("flash_fwd.cu":469:7 to 469:54))
      cuir.store %o16 -> %sQ_wg : tensor<64x64xf16, #WACC> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc("smem"("flash_fwd.cu":471:7 to 471:93))
      cuir.copy %sQ_wg -> %o_head[%q_wg, %c0] : memref<64x64xf16, strided<[64, 1], offset: ?>, #S> -> memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":485:7 to 485:100))
      cuir.yield loc("flash_fwd.cu":564:5 to 564:53)
    } loc("flash_fwd.cu":563:5 to 563:40)
    scf.yield loc("flash_fwd.cu":536:3 to 536:24)
  } loc("flash_fwd.cu":536:3 to 536:24)
  cuir.return loc("flash_fwd.cu":509:5 to 509:79)
} loc("flash_fwd_sm90_kernel"("flash_fwd.cu":509:5 to 509:79))
