// Source CuIR of kernels/sm90/flash_fwd.cu: the template from which
// flash_fwd.cuir.mlir is rendered (tools/lift/render_source_cuir.py), one
// kernel per instantiation of (element type, head dim). Every op names the
// source text it comes from; a test keeps the rendered file current.
//
// Modelling notes:
// - One worker group here is one work item of the source, which runs its
//   items persistently (WorkTickets: a thread block takes several in turn,
//   its producer handing each item's number to the consumers through a
//   work slot and its barriers, which no op stands for). The IR is one item
//   with the ring and the Q barriers fresh: the
//   source's visit counter i starts at the visits of the thread block's
//   earlier items (visits_before, 0 here) and its Q barriers' parity at
//   their count (items_before, 0 here). The cross-item protocol is modelled
//   as it runs for every item: the producer waits on q_empty before loading
//   Q (it passes at once here), the consumers release Q once the item's last
//   S has landed, O is staged through a buffer of its own, and consumer 1
//   passes every turn on, consumer 0 taking the last hand-off at the end.
// - The warp specialization is explicit: the producer warpgroup (one warp's
//   elected thread) issues the TMA copies into the K and V rings, each
//   completing on its stage's "full" mbarrier; the two consumer warpgroups
//   (cuir.worker_id 0 and 1, query rows [64c, 64c + 64) of the block)
//   release a stage on its "empty" mbarrier. An mbarrier arrival is one
//   worker's: the source's NUM_CONSUMER_THREADS arrivals are the two
//   consumer warpgroups here.
// - Visit i of a block reads KV tile n_block_max - 1 - i from ring stage
//   i % STAGES with parity (i / STAGES) % 2, as the source. The source maps
//   the virtual block n_block_max - 1 - i through its block-iteration point
//   kv_tiles (cuir/kv_tiles.cuh), the identity here: no op stands for it, and
//   the TMA row, the mask column and the score hook's block read the virtual
//   block where the source reads kv_tiles of it.
// - The consumers' software pipeline is the source's: step i issues S_i and
//   then, on the same turn, O = O * correction + P_(i-1) V_(i-1) (P and the
//   correction carried from step i-1), waits for S_i with one GEMM still
//   pending, runs the softmax of S_i while P V runs, then waits for P V and
//   releases V_(i-1). The last P V follows the loops. FIRST, a template
//   parameter of the source's step (the block's first visit, peeled there),
//   is `i > 0` here: the first step issues no P V and waits for S with
//   nothing pending (a pending count that is a value).
// - Ping-pong: a warpgroup takes a turn (named barrier 1 + c, 256 threads)
//   before issuing its GEMMs and hands it to the other warpgroup after;
//   consumer 1 hands consumer 0 the first turn and consumer 0 takes one
//   more after the last, so that every wait is matched by one arrival.
// - The block's first visit is the first step of the masking loop here (the
//   source runs it, masked, before that loop; where the top tile needs no
//   mask the two differ only in a mask that hides nothing).
// - The score tile is complete at the step's score hook (the lambdas
//   masking_scores / unmasked_scores in the source), which is where the
//   waited score tile is located. The source also calls the hook at the
//   start of the step with `gather` true, for loads issued early; no op
//   stands for that call, which the plain softmax leaves empty: the wait
//   names the flag (cuir.early_score_hook) for the lowering.
// - IS_CAUSAL is the kernel parameter `causal`, as in the sm_80 Source CuIR.

#WA   = #cuir.frag<a, wgmma_m64nNk16, warps = [1, 1]>
#WACC = #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>
#WROW = #cuir.frag<row, wgmma_m64nNk16, warps = [1, 1]>
#G    = #cuir.mem<global>
#S    = #cuir.mem<shared>

cuir.kernel @flash_fwd_sm90_bf16_d128(
    %q: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_fwd.cu":660:27 to 660:79)),
    %k: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_fwd.cu":660:27 to 660:79)),
    %v: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_fwd.cu":660:27 to 660:79)),
    %o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_fwd.cu":660:27 to 660:79)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_fwd.cu":660:27 to 660:79)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_fwd.cu":660:27 to 660:79)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_fwd.cu":658:1 to 658:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_fwd.cu":660:27 to 660:79)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_fwd.cu":660:27 to 660:79)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_fwd.cu":660:27 to 660:79)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_fwd.cu":660:27 to 660:79)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_fwd.cu":660:27 to 660:79)))
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
  %m_block = cuir.block_id x loc("block.m_block"("flash_fwd.cu":540:3 to 540:68))
  %head_q = cuir.block_id y loc("block.head_q"("flash_fwd.cu":540:3 to 540:68))
  %b = cuir.block_id z loc("block.batch"("flash_fwd.cu":540:3 to 540:68))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("causal_offset"("flash_fwd.cu":543:13 to 543:49))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("ctx.last_key_offset"("flash_fwd.cu":592:5 to 592:92))
  %m_start = arith.muli %m_block, %c128 : index loc("m_start"("flash_fwd.cu":544:13 to 544:49))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("head_kv"("flash_fwd.cu":545:13 to 545:80))
  %head_kv = arith.divui %head_q, %group : index loc("head_kv"("flash_fwd.cu":545:13 to 545:80))
  %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("tma_q"("flash_fwd.cu":814:21 to 814:46))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("tma_k"("flash_fwd.cu":818:11 to 818:36))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("tma_v"("flash_fwd.cu":821:11 to 821:36))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":497:3 to 497:55))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":463:3 to 463:42))

  // ---- KV tiles this block visits: [n_block_min, n_block_max), of which [n_block_min, n_unmasked_blocks) need no mask ----
  %n_block_min = arith.constant 0 : index loc("n_block_min"("flash_fwd.cu":549:3 to 549:23))
  %n_block_all = arith.ceildivui %seqlen_kv, %cBN : index loc("n_block_max"("flash_fwd.cu":550:7 to 550:62))
  %n_full_all = arith.divui %seqlen_kv, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":551:7 to 551:49))
  %m_end = arith.addi %m_start, %c128 : index loc("last_row"("flash_fwd.cu":553:15 to 553:65))
  %m_end_clamped = arith.minui %m_end, %seqlen_q : index loc("last_row"("flash_fwd.cu":553:15 to 553:65))
  %last_row = arith.subi %m_end_clamped, %c1 : index loc("last_row"("flash_fwd.cu":553:15 to 553:65))
  %last_key_of_last_row = arith.addi %last_row, %causal_offset : index loc("last_key_of_last_row"("flash_fwd.cu":554:15 to 554:62))
  %last_key_of_first_row = arith.addi %m_start, %causal_offset : index loc("last_key_of_first_row"("flash_fwd.cu":555:15 to 555:62))
  %llr_neg = arith.cmpi slt, %last_key_of_last_row, %c0 : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %llr_blk = arith.divsi %last_key_of_last_row, %cBN : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %llr_end = arith.addi %llr_blk, %c1 : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %llr_bound = arith.select %llr_neg, %c0, %llr_end : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %n_block_causal = arith.minsi %n_block_all, %llr_bound : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %lfr_neg = arith.cmpi slt, %last_key_of_first_row, %c0 : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %lfr_next = arith.addi %last_key_of_first_row, %c1 : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %lfr_blk = arith.divsi %lfr_next, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %lfr_bound = arith.select %lfr_neg, %c0, %lfr_blk : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %n_full_causal = arith.minsi %n_full_all, %lfr_bound : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %n_block_max = arith.select %causal, %n_block_causal, %n_block_all : index loc("n_block_max"("flash_fwd.cu":552:3 to 552:27))
  %n_unmasked_blocks = arith.select %causal, %n_full_causal, %n_full_all : index loc("n_unmasked_blocks"("flash_fwd.cu":552:3 to 552:27))

  %no_keys = arith.cmpi sle, %n_block_max, %n_block_min : index loc("flash_fwd.cu":563:3 to 563:24)
  scf.if %no_keys {
    // No row of this block sees any key: O = 0, LSE = -inf (write_empty_block).
    %zero_o = arith.constant dense<0.0> : tensor<128x128xbf16, #WACC> loc("o_head"("flash_fwd.cu":521:103 to 521:125))
    cuir.store %zero_o -> %o_head[%m_start, %c0] : tensor<128x128xbf16, #WACC> -> memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":521:32 to 521:125))
    %ninf_lse = arith.constant dense<0xFF800000> : tensor<128xf32, #WROW> loc("lse_head"("flash_fwd.cu":526:7 to 526:30))
    cuir.store %ninf_lse -> %lse_head[%m_start] : tensor<128xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":526:7 to 526:30))
    scf.yield loc("flash_fwd.cu":565:5 to 565:12)
  } else {
    // ---- visits: n_visits, the last is visit n_visits - 1 ----
    %last_block = arith.subi %n_block_max, %c1 : index loc("i"("flash_fwd.cu":421:3 to 421:63))
    %n_visits = arith.subi %n_block_max, %n_block_min : index loc("n_visits"("flash_fwd.cu":240:3 to 240:50))
    %last_visit = arith.subi %n_visits, %c1 : index loc("last_visit"("flash_fwd.cu":638:5 to 638:57))

    // ---- shared memory: Q [128][d] (O in the epilogue), K and V rings [STAGES][BLOCK_N][d], 128-byte swizzled; the mbarriers ----
    %sQ = cuir.alloc {swizzle = 128} : memref<128x128xbf16, #S> loc("sQ"("flash_fwd.cu":109:24 to 109:37))
    %sK = cuir.alloc {swizzle = 128} : memref<2x128x128xbf16, #S> loc("sK"("flash_fwd.cu":110:24 to 110:60))
    %sV = cuir.alloc {swizzle = 128} : memref<2x128x128xbf16, #S> loc("sV"("flash_fwd.cu":111:24 to 111:70))
    %sO = cuir.alloc {swizzle = 128} : memref<128x128xbf16, #S> loc("sO"("flash_fwd.cu":112:24 to 112:70))
    %q_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1> loc("bars->q_full"("flash_fwd.cu":673:5 to 673:36))
    %q_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<1> loc("bars->q_empty"("flash_fwd.cu":674:5 to 674:59))
    %k_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->k_full"("flash_fwd.cu":677:7 to 677:41))
    %v_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->v_full"("flash_fwd.cu":678:7 to 678:41))
    %k_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<2> loc("bars->k_empty"("flash_fwd.cu":679:7 to 679:64))
    %v_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<2> loc("bars->v_empty"("flash_fwd.cu":680:7 to 680:64))

    // =============================== producer warpgroup ===============================
    cuir.bind warpgroup [0] role producer regs 24 {
      cuir.bind warp [0] role producer {
        cuir.barrier.wait %q_empty[%c0], %c1 : !cuir.mbarrier<1> loc("flash_fwd.cu":233:3 to 233:56)
        cuir.barrier.arrive %q_full[%c0] expect_tx 32768 : !cuir.mbarrier<1> loc("flash_fwd.cu":234:3 to 234:60)
        cuir.copy_async tma %q_head[%m_start, %c0] -> %sQ barrier %q_full[%c0]
            : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xbf16, #S>, !cuir.mbarrier<1> loc("sQ"("flash_fwd.cu":237:5 to 237:68))
        // K of visit i, then V of visit i - 1.
        %n_steps = arith.addi %n_visits, %c1 : index loc("flash_fwd.cu":241:3 to 241:38)
        scf.for %i = %c0 to %n_steps step %c1 {
          %has_k = arith.cmpi slt, %i, %n_visits : index loc("flash_fwd.cu":242:5 to 242:22)
          scf.if %has_k {
            %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":214:3 to 214:35) at "flash_fwd.cu":243:7 to 243:32))
            %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":243:7 to 243:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":243:7 to 243:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":243:7 to 243:32))
            cuir.barrier.wait %k_empty[%stage], %free : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":243:7 to 243:32))
            cuir.barrier.arrive %k_full[%stage] expect_tx 32768 : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":217:3 to 217:60 at "flash_fwd.cu":243:7 to 243:32))
            %blk = arith.subi %last_block, %i : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":243:7 to 243:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":243:7 to 243:32))
            %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
                : memref<2x128x128xbf16, #S> to memref<128x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":221:17 to 221:62) at "flash_fwd.cu":243:7 to 243:32))
            cuir.copy_async tma %k_head[%row, %c0] -> %sK_stage barrier %k_full[%stage]
                : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xbf16, strided<[128, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sK"("flash_fwd.cu":221:5 to 221:62) at "flash_fwd.cu":243:7 to 243:32))
            scf.yield loc("flash_fwd.cu":242:5 to 242:22)
          } loc("flash_fwd.cu":242:5 to 242:22)
          %has_v = arith.cmpi sge, %i, %c1 : index loc("flash_fwd.cu":245:5 to 245:16)
          scf.if %has_v {
            %iv = arith.subi %i, %c1 : index loc("flash_fwd.cu":246:83 to 246:105)
            %stage = arith.remui %iv, %cST : index loc(callsite("stage"("flash_fwd.cu":214:3 to 214:35) at "flash_fwd.cu":246:7 to 246:32))
            %round = arith.divui %iv, %cST : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":246:7 to 246:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":246:7 to 246:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":246:7 to 246:32))
            cuir.barrier.wait %v_empty[%stage], %free : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":246:7 to 246:32))
            cuir.barrier.arrive %v_full[%stage] expect_tx 32768 : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":217:3 to 217:60 at "flash_fwd.cu":246:7 to 246:32))
            %blk = arith.subi %last_block, %iv : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":246:7 to 246:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":246:7 to 246:32))
            %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
                : memref<2x128x128xbf16, #S> to memref<128x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":221:17 to 221:62) at "flash_fwd.cu":246:7 to 246:32))
            cuir.copy_async tma %v_head[%row, %c0] -> %sV_stage barrier %v_full[%stage]
                : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xbf16, strided<[128, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sV"("flash_fwd.cu":221:5 to 221:62) at "flash_fwd.cu":246:7 to 246:32))
            scf.yield loc("flash_fwd.cu":245:5 to 245:16)
          } loc("flash_fwd.cu":245:5 to 245:16)
          scf.yield loc("flash_fwd.cu":241:3 to 241:38)
        } loc("flash_fwd.cu":241:3 to 241:38)
        cuir.yield loc("flash_fwd.cu":572:7 to 572:44)
      } loc("flash_fwd.cu":571:5 to 571:26)
      cuir.yield loc("flash_fwd.cu":694:5 to 694:40)
    } loc("flash_fwd.cu":694:5 to 694:40)

    // =============================== consumer warpgroups ===============================
    cuir.bind warpgroup [1, 2] role consumer regs 240 {
      %consumer = cuir.worker_id loc("consumer_index"("flash_fwd.cu":576:5 to 576:42))
      %wg_row = arith.muli %consumer, %c64 : index loc("wg_row_in_block"("flash_fwd.cu":579:5 to 579:61))
      %q_wg = arith.addi %m_start, %wg_row : index loc("m_start + wg_row_in_block"("flash_fwd.cu":589:5 to 589:65))
      %sQ_wg = memref.subview %sQ[%wg_row, 0] [64, 128] [1, 1]
          : memref<128x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc("ctx.sq_rows"("flash_fwd.cu":583:5 to 583:68))
      %is_second = arith.cmpi eq, %consumer, %c1 : index loc("flash_fwd.cu":704:24 to 704:43)
      %my_turn = arith.addi %consumer, %c1 : index loc("flash_fwd.cu":375:30 to 375:102)
      %their_turn = arith.subi %c2, %consumer : index loc("flash_fwd.cu":379:30 to 379:110)

      // ---- accumulators and softmax state, all in registers ----
      %acc_o_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("acc_o"("flash_fwd.cu":603:41 to 603:55))
      %row_max_init = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("row_max"("flash_fwd.cu":599:5 to 599:24))
      %row_sum_init = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("row_sum"("flash_fwd.cu":600:5 to 600:24))
      %log2e = arith.constant 1.44269502 : f32 loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %scale_tile = tensor.splat %scale_log2 : tensor<64x128xf32, #WACC> loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %scale_row = tensor.splat %scale_log2 : tensor<64xf32, #WROW> loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %zero_row = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":333:30 to 333:87))
      %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":333:30 to 333:87))
      %acc_s_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("acc_s"("flash_fwd.cu":597:5 to 597:28))
      %o_rescale_init = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("o_rescale"("flash_fwd.cu":601:5 to 601:24))
      %p_frag_init = arith.constant dense<0.0> : tensor<64x128xbf16, #WA> loc("p_frag"("flash_fwd.cu":598:5 to 598:32))

      cuir.barrier.wait %q_full[%c0], %c0 : !cuir.mbarrier<1> loc("flash_fwd.cu":605:5 to 605:51)
      scf.if %is_second {
        cuir.barrier.named %c1 threads 256 arrive loc("flash_fwd.cu":704:45 to 704:112)
        scf.yield loc("flash_fwd.cu":704:5 to 704:44)
      } loc("flash_fwd.cu":704:5 to 704:44)

      // =============================== masking steps ===============================
      %n_masked = arith.subi %n_block_max, %n_unmasked_blocks : index loc("flash_fwd.cu":626:5 to 626:52)
      %m_acc_o, %m_row_max, %m_row_sum, %m_rescale, %m_p = scf.for %iv = %c0 to %n_masked step %c1
          iter_args(%acc_o = %acc_o_init, %row_max = %row_max_init, %row_sum = %row_sum_init,
                    %o_rescale = %o_rescale_init, %p_prev = %p_frag_init)
          -> (tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xbf16, #WA>) {
        %top = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":622:5 to 622:35))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":626:5 to 626:52))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":421:3 to 421:63) at "flash_fwd.cu":627:7 to 627:37))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":422:3 to 422:35) at "flash_fwd.cu":627:7 to 627:37))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":627:7 to 627:37))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":627:7 to 627:37))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":297:20 to 297:40) at "flash_fwd.cu":439:5 to 439:43))
        // FIRST, a template parameter of the step, is whether this visit is the block's first: no P V before it.
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        %prev = arith.subi %i, %c1 : index loc(callsite("flash_fwd.cu":428:48 to 428:79 at "flash_fwd.cu":627:7 to 627:37))
        %prev_stage = arith.remui %prev, %cST : index loc(callsite("flash_fwd.cu":402:3 to 402:35 at "flash_fwd.cu":428:25 to 428:53))
        %prev_round = arith.divui %prev, %cST : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %prev_phase = arith.remui %prev_round, %c2 : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xbf16, #S> to memref<128x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":427:34 to 427:67) at "flash_fwd.cu":627:7 to 627:37))
        %sV_prev = memref.subview %sV[%prev_stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xbf16, #S> to memref<128x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":405:29 to 405:62) at "flash_fwd.cu":428:25 to 428:53))

        // ------- on this warpgroup's turn: S_i = Q K_i^T, then O = O * correction + P_(i-1) V_(i-1) -------
        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":425:3 to 425:38 at "flash_fwd.cu":627:7 to 627:37))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":426:3 to 426:59 at "flash_fwd.cu":627:7 to 627:37))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":427:3 to 427:32) at "flash_fwd.cu":627:7 to 627:37))
        %o_issued = scf.if %has_prev -> (tensor<64x128xf32, #WACC>) {
          %rescale_b = cuir.broadcast_rows %o_rescale : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          cuir.barrier.wait %v_full[%prev_stage], %prev_phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":404:3 to 404:59 at "flash_fwd.cu":428:25 to 428:53))
          %o_pv = cuir.gemm_async %p_prev, %sV_prev, %acc_o_rescaled
              : tensor<64x128xbf16, #WA>, memref<128x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":405:3 to 405:63) at "flash_fwd.cu":428:25 to 428:53))
          scf.yield %o_pv : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        } else {
          scf.yield %acc_o : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        } loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":429:3 to 429:38 at "flash_fwd.cu":627:7 to 627:37))
        // S_i has landed once at most the P V behind it is pending.
        %s_pending = arith.select %has_prev, %c1, %c0 : index loc(callsite("flash_fwd.cu":431:3 to 431:36 at "flash_fwd.cu":627:7 to 627:37))
        %acc_s = cuir.gemm_wait %s_issued pending %s_pending {cuir.early_score_hook = "gather"} : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":612:7 to 612:21) at "flash_fwd.cu":627:7 to 627:37))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":433:3 to 433:41 at "flash_fwd.cu":627:7 to 627:37))

        // ------- score tile complete: acc_s = Q K^T (unscaled); the mask of a masking step -------
        %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_wg, %kv0]
            : (tensor<64x128xf32, #WACC>) -> tensor<64x128xf32, #WACC> {
        ^bb0(%x: f32 loc("acc_s"("flash_fwd.cu":304:60 to 304:86)), %bi: index loc("block.batch"("flash_fwd.cu":540:3 to 540:68)), %hi: index loc("block.head_q"("flash_fwd.cu":540:3 to 540:68)), %row: index loc("row"("flash_fwd.cu":302:7 to 302:42)), %col: index loc("col"("flash_fwd.cu":303:7 to 303:46))):
          %past_end = arith.cmpi sge, %col, %seqlen_kv : index loc(callsite("flash_fwd.cu":304:11 to 304:27 at "flash_fwd.cu":439:5 to 439:43))
          %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_fwd.cu":292:27 to 292:48 at "flash_fwd.cu":439:5 to 439:43))
          %past_diag = arith.cmpi sgt, %col, %row_last : index loc(callsite("flash_fwd.cu":304:31 to 304:58 at "flash_fwd.cu":439:5 to 439:43))
          %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_fwd.cu":304:7 to 304:27 at "flash_fwd.cu":439:5 to 439:43))
          %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_fwd.cu":304:60 to 304:86) at "flash_fwd.cu":439:5 to 439:43))
          cuir.yield %r : f32 loc("flash_fwd.cu":439:5 to 439:43)
        } loc("acc_s"("flash_fwd.cu":439:5 to 439:43))

        // ------- online softmax (while P_(i-1) V_(i-1) may still run): row_max / row_sum, P_i, the correction for the next P V -------
        %blk_max = cuir.reduce_rows max %acc_s_masked : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:30 to 333:48) at "flash_fwd.cu":442:3 to 442:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:57 to 333:87) at "flash_fwd.cu":442:3 to 442:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:5 to 333:88) at "flash_fwd.cu":442:3 to 442:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:69) at "flash_fwd.cu":442:3 to 442:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:82) at "flash_fwd.cu":442:3 to 442:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:5 to 334:83) at "flash_fwd.cu":442:3 to 442:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %logits = math.fma %acc_s_masked, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:35 to 342:82) at "flash_fwd.cu":442:3 to 442:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:9 to 342:83) at "flash_fwd.cu":442:3 to 442:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":344:9 to 344:22) at "flash_fwd.cu":442:3 to 442:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:21 to 347:52) at "flash_fwd.cu":442:3 to 442:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:5 to 347:63) at "flash_fwd.cu":442:3 to 442:35))

        // ------- P_(i-1) V_(i-1) has landed: O is readable and V_(i-1)'s stage free; then P_i -------
        %acc_o_new = scf.if %has_prev -> (tensor<64x128xf32, #WACC>) {
          %o_done = cuir.gemm_wait %o_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":445:5 to 445:34) at "flash_fwd.cu":627:7 to 627:37))
          cuir.barrier.arrive %v_empty[%prev_stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":448:5 to 448:57 at "flash_fwd.cu":627:7 to 627:37))
          scf.yield %o_done : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":627:7 to 627:37))
        } else {
          scf.yield %o_issued : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":627:7 to 627:37))
        } loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":627:7 to 627:37))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xbf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":366:39 to 366:106) at "flash_fwd.cu":450:3 to 450:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xbf16, #WACC> -> tensor<64x128xbf16, #WA> loc("p_frag"("flash_fwd.cu":450:3 to 450:30))
        scf.yield %acc_o_new, %new_max, %row_sum_new, %rescale, %p_frag
            : tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xbf16, #WA> loc("flash_fwd.cu":626:5 to 626:52)
      } loc("flash_fwd.cu":626:5 to 626:52)

      // =============================== unmasked steps ===============================
      %n_unmasked = arith.subi %n_unmasked_blocks, %n_block_min : index loc("flash_fwd.cu":632:5 to 632:46)
      %u_acc_o, %u_row_max, %u_row_sum, %u_rescale, %u_p = scf.for %iv = %c0 to %n_unmasked step %c1
          iter_args(%acc_o = %m_acc_o, %row_max = %m_row_max, %row_sum = %m_row_sum,
                    %o_rescale = %m_rescale, %p_prev = %m_p)
          -> (tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xbf16, #WA>) {
        %top = arith.subi %n_unmasked_blocks, %c1 : index loc("n_block"("flash_fwd.cu":632:5 to 632:46))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":632:5 to 632:46))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":421:3 to 421:63) at "flash_fwd.cu":633:7 to 633:38))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":422:3 to 422:35) at "flash_fwd.cu":633:7 to 633:38))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":633:7 to 633:38))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":633:7 to 633:38))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":297:20 to 297:40) at "flash_fwd.cu":439:5 to 439:43))
        // FIRST, a template parameter of the step, is whether this visit is the block's first: no P V before it.
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        %prev = arith.subi %i, %c1 : index loc(callsite("flash_fwd.cu":428:48 to 428:79 at "flash_fwd.cu":633:7 to 633:38))
        %prev_stage = arith.remui %prev, %cST : index loc(callsite("flash_fwd.cu":402:3 to 402:35 at "flash_fwd.cu":428:25 to 428:53))
        %prev_round = arith.divui %prev, %cST : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %prev_phase = arith.remui %prev_round, %c2 : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xbf16, #S> to memref<128x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":427:34 to 427:67) at "flash_fwd.cu":633:7 to 633:38))
        %sV_prev = memref.subview %sV[%prev_stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xbf16, #S> to memref<128x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":405:29 to 405:62) at "flash_fwd.cu":428:25 to 428:53))

        // ------- on this warpgroup's turn: S_i = Q K_i^T, then O = O * correction + P_(i-1) V_(i-1) -------
        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":425:3 to 425:38 at "flash_fwd.cu":633:7 to 633:38))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":426:3 to 426:59 at "flash_fwd.cu":633:7 to 633:38))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":427:3 to 427:32) at "flash_fwd.cu":633:7 to 633:38))
        %o_issued = scf.if %has_prev -> (tensor<64x128xf32, #WACC>) {
          %rescale_b = cuir.broadcast_rows %o_rescale : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          cuir.barrier.wait %v_full[%prev_stage], %prev_phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":404:3 to 404:59 at "flash_fwd.cu":428:25 to 428:53))
          %o_pv = cuir.gemm_async %p_prev, %sV_prev, %acc_o_rescaled
              : tensor<64x128xbf16, #WA>, memref<128x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":405:3 to 405:63) at "flash_fwd.cu":428:25 to 428:53))
          scf.yield %o_pv : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        } else {
          scf.yield %acc_o : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        } loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":429:3 to 429:38 at "flash_fwd.cu":633:7 to 633:38))
        // S_i has landed once at most the P V behind it is pending.
        %s_pending = arith.select %has_prev, %c1, %c0 : index loc(callsite("flash_fwd.cu":431:3 to 431:36 at "flash_fwd.cu":633:7 to 633:38))
        %acc_s = cuir.gemm_wait %s_issued pending %s_pending {cuir.early_score_hook = "gather"} : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":616:7 to 616:21) at "flash_fwd.cu":633:7 to 633:38))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":433:3 to 433:41 at "flash_fwd.cu":633:7 to 633:38))

        // ------- score tile complete: every score of this tile is visible -------

        // ------- online softmax (while P_(i-1) V_(i-1) may still run): row_max / row_sum, P_i, the correction for the next P V -------
        %blk_max = cuir.reduce_rows max %acc_s : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:30 to 333:48) at "flash_fwd.cu":442:3 to 442:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:57 to 333:87) at "flash_fwd.cu":442:3 to 442:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:5 to 333:88) at "flash_fwd.cu":442:3 to 442:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:69) at "flash_fwd.cu":442:3 to 442:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:82) at "flash_fwd.cu":442:3 to 442:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:5 to 334:83) at "flash_fwd.cu":442:3 to 442:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %logits = math.fma %acc_s, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:35 to 342:82) at "flash_fwd.cu":442:3 to 442:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:9 to 342:83) at "flash_fwd.cu":442:3 to 442:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":344:9 to 344:22) at "flash_fwd.cu":442:3 to 442:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:21 to 347:52) at "flash_fwd.cu":442:3 to 442:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:5 to 347:63) at "flash_fwd.cu":442:3 to 442:35))

        // ------- P_(i-1) V_(i-1) has landed: O is readable and V_(i-1)'s stage free; then P_i -------
        %acc_o_new = scf.if %has_prev -> (tensor<64x128xf32, #WACC>) {
          %o_done = cuir.gemm_wait %o_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":445:5 to 445:34) at "flash_fwd.cu":633:7 to 633:38))
          cuir.barrier.arrive %v_empty[%prev_stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":448:5 to 448:57 at "flash_fwd.cu":633:7 to 633:38))
          scf.yield %o_done : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":633:7 to 633:38))
        } else {
          scf.yield %o_issued : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":633:7 to 633:38))
        } loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":633:7 to 633:38))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xbf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":366:39 to 366:106) at "flash_fwd.cu":450:3 to 450:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xbf16, #WACC> -> tensor<64x128xbf16, #WA> loc("p_frag"("flash_fwd.cu":450:3 to 450:30))
        scf.yield %acc_o_new, %new_max, %row_sum_new, %rescale, %p_frag
            : tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xbf16, #WA> loc("flash_fwd.cu":632:5 to 632:46)
      } loc("flash_fwd.cu":632:5 to 632:46)

      cuir.barrier.arrive %q_empty[%c0] : !cuir.mbarrier<1> loc("flash_fwd.cu":635:5 to 635:36)

      // =============================== last P V ===============================
      %last_stage = arith.remui %last_visit, %cST : index loc(callsite("flash_fwd.cu":402:3 to 402:35 at "flash_fwd.cu":640:5 to 640:38))
      %last_round = arith.divui %last_visit, %cST : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":640:5 to 640:38))
      %last_phase = arith.remui %last_round, %c2 : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":640:5 to 640:38))
      %sV_last = memref.subview %sV[%last_stage, 0, 0] [1, 128, 128] [1, 1, 1]
          : memref<2x128x128xbf16, #S> to memref<128x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":405:29 to 405:62) at "flash_fwd.cu":640:5 to 640:38))
      cuir.barrier.named %my_turn threads 256 loc("flash_fwd.cu":639:5 to 639:42)
      %last_rescale_b = cuir.broadcast_rows %u_rescale : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
      %last_acc_o = arith.mulf %u_acc_o, %last_rescale_b : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
      cuir.barrier.wait %v_full[%last_stage], %last_phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":404:3 to 404:59 at "flash_fwd.cu":640:5 to 640:38))
      %o_last = cuir.gemm_async %u_p, %sV_last, %last_acc_o
          : tensor<64x128xbf16, #WA>, memref<128x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":405:3 to 405:63) at "flash_fwd.cu":640:5 to 640:38))
      cuir.barrier.named %their_turn threads 256 arrive loc("flash_fwd.cu":641:5 to 641:42)
      %o_final = cuir.gemm_wait %o_last pending 0 : tensor<64x128xf32, #WACC> loc("acc_o"("flash_fwd.cu":642:5 to 642:27))
      cuir.barrier.arrive %v_empty[%last_stage] : !cuir.mbarrier<2> loc("flash_fwd.cu":645:5 to 645:60)

      // =============================== epilogue ===============================
      %sees_nothing = arith.cmpf oeq, %u_row_sum, %zero_row : tensor<64xf32, #WROW> loc("row_sees_nothing"("flash_fwd.cu":473:5 to 473:45))
      %one_row = arith.constant dense<1.0> : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":474:50 to 474:59))
      %inv = arith.divf %one_row, %u_row_sum : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":474:50 to 474:59))
      %row_inv_sum = arith.select %sees_nothing, %zero_row, %inv : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":474:5 to 474:60))
      %max_l2 = arith.mulf %u_row_max, %scale_row : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:53 to 475:93))
      %log_sum = math.log2 %u_row_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:96 to 475:110))
      %lse2 = arith.addf %max_l2, %log_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:52 to 475:111))
      %ln2 = arith.constant dense<0.693147182> : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:112 to 475:118))
      %lse_nat = arith.mulf %lse2, %ln2 : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:52 to 475:118))
      %lse_val = arith.select %sees_nothing, %ninf_row, %lse_nat : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:5 to 475:118))
      cuir.store %lse_val -> %lse_head[%q_wg] : tensor<64xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":477:72 to 477:91))
      %inv_b = cuir.broadcast_rows %row_inv_sum : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc("packed"("flash_fwd.cu":491:55 to 491:98))
      %o_norm = arith.mulf %o_final, %inv_b : tensor<64x128xf32, #WACC> loc("packed"("flash_fwd.cu":491:55 to 491:98))
      %o16 = arith.truncf %o_norm : tensor<64x128xf32, #WACC> to tensor<64x128xbf16, #WACC> loc("packed"("flash_fwd.cu":491:7 to 491:54))
      %sO_wg = memref.subview %sO[%wg_row, 0] [64, 128] [1, 1]
          : memref<128x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc("flash_fwd.cu":482:12 to 482:68)
      cuir.store %o16 -> %sO_wg : tensor<64x128xbf16, #WACC> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc("smem"("flash_fwd.cu":493:7 to 493:93))
      cuir.barrier.warp loc("flash_fwd.cu":496:3 to 496:16)
      cuir.copy %sO_wg -> %o_head[%q_wg, %c0] : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":507:7 to 507:100))
      // Consumer 0 takes the turn of consumer 1's last hand-off (after the thread block's last item).
      %is_first = arith.cmpi eq, %consumer, %c0 : index loc("flash_fwd.cu":710:9 to 710:28)
      scf.if %is_first {
        cuir.barrier.named %c1 threads 256 loc("flash_fwd.cu":710:30 to 710:54)
        scf.yield loc("flash_fwd.cu":710:5 to 710:55)
      } loc("flash_fwd.cu":710:5 to 710:55)
      cuir.yield loc("flash_fwd.cu":648:5 to 648:50)
    } loc("flash_fwd.cu":702:5 to 702:40)
    scf.yield loc("flash_fwd.cu":563:3 to 563:24)
  } loc("flash_fwd.cu":563:3 to 563:24)
  cuir.return loc("flash_fwd.cu":660:5 to 660:79)
} loc("flash_fwd_sm90_kernel"("flash_fwd.cu":660:5 to 660:79))
cuir.kernel @flash_fwd_sm90_bf16_d64(
    %q: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_fwd.cu":660:27 to 660:79)),
    %k: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_fwd.cu":660:27 to 660:79)),
    %v: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_fwd.cu":660:27 to 660:79)),
    %o: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_fwd.cu":660:27 to 660:79)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_fwd.cu":660:27 to 660:79)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_fwd.cu":660:27 to 660:79)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_fwd.cu":658:1 to 658:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_fwd.cu":660:27 to 660:79)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_fwd.cu":660:27 to 660:79)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_fwd.cu":660:27 to 660:79)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_fwd.cu":660:27 to 660:79)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_fwd.cu":660:27 to 660:79)))
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
  %m_block = cuir.block_id x loc("block.m_block"("flash_fwd.cu":540:3 to 540:68))
  %head_q = cuir.block_id y loc("block.head_q"("flash_fwd.cu":540:3 to 540:68))
  %b = cuir.block_id z loc("block.batch"("flash_fwd.cu":540:3 to 540:68))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("causal_offset"("flash_fwd.cu":543:13 to 543:49))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("ctx.last_key_offset"("flash_fwd.cu":592:5 to 592:92))
  %m_start = arith.muli %m_block, %c128 : index loc("m_start"("flash_fwd.cu":544:13 to 544:49))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("head_kv"("flash_fwd.cu":545:13 to 545:80))
  %head_kv = arith.divui %head_q, %group : index loc("head_kv"("flash_fwd.cu":545:13 to 545:80))
  %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("tma_q"("flash_fwd.cu":814:21 to 814:46))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("tma_k"("flash_fwd.cu":818:11 to 818:36))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("tma_v"("flash_fwd.cu":821:11 to 821:36))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":497:3 to 497:55))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":463:3 to 463:42))

  // ---- KV tiles this block visits: [n_block_min, n_block_max), of which [n_block_min, n_unmasked_blocks) need no mask ----
  %n_block_min = arith.constant 0 : index loc("n_block_min"("flash_fwd.cu":549:3 to 549:23))
  %n_block_all = arith.ceildivui %seqlen_kv, %cBN : index loc("n_block_max"("flash_fwd.cu":550:7 to 550:62))
  %n_full_all = arith.divui %seqlen_kv, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":551:7 to 551:49))
  %m_end = arith.addi %m_start, %c128 : index loc("last_row"("flash_fwd.cu":553:15 to 553:65))
  %m_end_clamped = arith.minui %m_end, %seqlen_q : index loc("last_row"("flash_fwd.cu":553:15 to 553:65))
  %last_row = arith.subi %m_end_clamped, %c1 : index loc("last_row"("flash_fwd.cu":553:15 to 553:65))
  %last_key_of_last_row = arith.addi %last_row, %causal_offset : index loc("last_key_of_last_row"("flash_fwd.cu":554:15 to 554:62))
  %last_key_of_first_row = arith.addi %m_start, %causal_offset : index loc("last_key_of_first_row"("flash_fwd.cu":555:15 to 555:62))
  %llr_neg = arith.cmpi slt, %last_key_of_last_row, %c0 : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %llr_blk = arith.divsi %last_key_of_last_row, %cBN : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %llr_end = arith.addi %llr_blk, %c1 : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %llr_bound = arith.select %llr_neg, %c0, %llr_end : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %n_block_causal = arith.minsi %n_block_all, %llr_bound : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %lfr_neg = arith.cmpi slt, %last_key_of_first_row, %c0 : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %lfr_next = arith.addi %last_key_of_first_row, %c1 : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %lfr_blk = arith.divsi %lfr_next, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %lfr_bound = arith.select %lfr_neg, %c0, %lfr_blk : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %n_full_causal = arith.minsi %n_full_all, %lfr_bound : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %n_block_max = arith.select %causal, %n_block_causal, %n_block_all : index loc("n_block_max"("flash_fwd.cu":552:3 to 552:27))
  %n_unmasked_blocks = arith.select %causal, %n_full_causal, %n_full_all : index loc("n_unmasked_blocks"("flash_fwd.cu":552:3 to 552:27))

  %no_keys = arith.cmpi sle, %n_block_max, %n_block_min : index loc("flash_fwd.cu":563:3 to 563:24)
  scf.if %no_keys {
    // No row of this block sees any key: O = 0, LSE = -inf (write_empty_block).
    %zero_o = arith.constant dense<0.0> : tensor<128x64xbf16, #WACC> loc("o_head"("flash_fwd.cu":521:103 to 521:125))
    cuir.store %zero_o -> %o_head[%m_start, %c0] : tensor<128x64xbf16, #WACC> -> memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":521:32 to 521:125))
    %ninf_lse = arith.constant dense<0xFF800000> : tensor<128xf32, #WROW> loc("lse_head"("flash_fwd.cu":526:7 to 526:30))
    cuir.store %ninf_lse -> %lse_head[%m_start] : tensor<128xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":526:7 to 526:30))
    scf.yield loc("flash_fwd.cu":565:5 to 565:12)
  } else {
    // ---- visits: n_visits, the last is visit n_visits - 1 ----
    %last_block = arith.subi %n_block_max, %c1 : index loc("i"("flash_fwd.cu":421:3 to 421:63))
    %n_visits = arith.subi %n_block_max, %n_block_min : index loc("n_visits"("flash_fwd.cu":240:3 to 240:50))
    %last_visit = arith.subi %n_visits, %c1 : index loc("last_visit"("flash_fwd.cu":638:5 to 638:57))

    // ---- shared memory: Q [128][d] (O in the epilogue), K and V rings [STAGES][BLOCK_N][d], 128-byte swizzled; the mbarriers ----
    %sQ = cuir.alloc {swizzle = 128} : memref<128x64xbf16, #S> loc("sQ"("flash_fwd.cu":109:24 to 109:37))
    %sK = cuir.alloc {swizzle = 128} : memref<4x128x64xbf16, #S> loc("sK"("flash_fwd.cu":110:24 to 110:60))
    %sV = cuir.alloc {swizzle = 128} : memref<4x128x64xbf16, #S> loc("sV"("flash_fwd.cu":111:24 to 111:70))
    %sO = cuir.alloc {swizzle = 128} : memref<128x64xbf16, #S> loc("sO"("flash_fwd.cu":112:24 to 112:70))
    %q_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1> loc("bars->q_full"("flash_fwd.cu":673:5 to 673:36))
    %q_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<1> loc("bars->q_empty"("flash_fwd.cu":674:5 to 674:59))
    %k_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<4> loc("bars->k_full"("flash_fwd.cu":677:7 to 677:41))
    %v_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<4> loc("bars->v_full"("flash_fwd.cu":678:7 to 678:41))
    %k_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<4> loc("bars->k_empty"("flash_fwd.cu":679:7 to 679:64))
    %v_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<4> loc("bars->v_empty"("flash_fwd.cu":680:7 to 680:64))

    // =============================== producer warpgroup ===============================
    cuir.bind warpgroup [0] role producer regs 24 {
      cuir.bind warp [0] role producer {
        cuir.barrier.wait %q_empty[%c0], %c1 : !cuir.mbarrier<1> loc("flash_fwd.cu":233:3 to 233:56)
        cuir.barrier.arrive %q_full[%c0] expect_tx 16384 : !cuir.mbarrier<1> loc("flash_fwd.cu":234:3 to 234:60)
        cuir.copy_async tma %q_head[%m_start, %c0] -> %sQ barrier %q_full[%c0]
            : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, #S>, !cuir.mbarrier<1> loc("sQ"("flash_fwd.cu":237:5 to 237:68))
        // K of visit i, then V of visit i - 1.
        %n_steps = arith.addi %n_visits, %c1 : index loc("flash_fwd.cu":241:3 to 241:38)
        scf.for %i = %c0 to %n_steps step %c1 {
          %has_k = arith.cmpi slt, %i, %n_visits : index loc("flash_fwd.cu":242:5 to 242:22)
          scf.if %has_k {
            %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":214:3 to 214:35) at "flash_fwd.cu":243:7 to 243:32))
            %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":243:7 to 243:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":243:7 to 243:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":243:7 to 243:32))
            cuir.barrier.wait %k_empty[%stage], %free : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":243:7 to 243:32))
            cuir.barrier.arrive %k_full[%stage] expect_tx 16384 : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":217:3 to 217:60 at "flash_fwd.cu":243:7 to 243:32))
            %blk = arith.subi %last_block, %i : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":243:7 to 243:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":243:7 to 243:32))
            %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
                : memref<4x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":221:17 to 221:62) at "flash_fwd.cu":243:7 to 243:32))
            cuir.copy_async tma %k_head[%row, %c0] -> %sK_stage barrier %k_full[%stage]
                : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, !cuir.mbarrier<4> loc(callsite("sK"("flash_fwd.cu":221:5 to 221:62) at "flash_fwd.cu":243:7 to 243:32))
            scf.yield loc("flash_fwd.cu":242:5 to 242:22)
          } loc("flash_fwd.cu":242:5 to 242:22)
          %has_v = arith.cmpi sge, %i, %c1 : index loc("flash_fwd.cu":245:5 to 245:16)
          scf.if %has_v {
            %iv = arith.subi %i, %c1 : index loc("flash_fwd.cu":246:83 to 246:105)
            %stage = arith.remui %iv, %cST : index loc(callsite("stage"("flash_fwd.cu":214:3 to 214:35) at "flash_fwd.cu":246:7 to 246:32))
            %round = arith.divui %iv, %cST : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":246:7 to 246:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":246:7 to 246:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":246:7 to 246:32))
            cuir.barrier.wait %v_empty[%stage], %free : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":246:7 to 246:32))
            cuir.barrier.arrive %v_full[%stage] expect_tx 16384 : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":217:3 to 217:60 at "flash_fwd.cu":246:7 to 246:32))
            %blk = arith.subi %last_block, %iv : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":246:7 to 246:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":246:7 to 246:32))
            %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
                : memref<4x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":221:17 to 221:62) at "flash_fwd.cu":246:7 to 246:32))
            cuir.copy_async tma %v_head[%row, %c0] -> %sV_stage barrier %v_full[%stage]
                : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, !cuir.mbarrier<4> loc(callsite("sV"("flash_fwd.cu":221:5 to 221:62) at "flash_fwd.cu":246:7 to 246:32))
            scf.yield loc("flash_fwd.cu":245:5 to 245:16)
          } loc("flash_fwd.cu":245:5 to 245:16)
          scf.yield loc("flash_fwd.cu":241:3 to 241:38)
        } loc("flash_fwd.cu":241:3 to 241:38)
        cuir.yield loc("flash_fwd.cu":572:7 to 572:44)
      } loc("flash_fwd.cu":571:5 to 571:26)
      cuir.yield loc("flash_fwd.cu":694:5 to 694:40)
    } loc("flash_fwd.cu":694:5 to 694:40)

    // =============================== consumer warpgroups ===============================
    cuir.bind warpgroup [1, 2] role consumer regs 240 {
      %consumer = cuir.worker_id loc("consumer_index"("flash_fwd.cu":576:5 to 576:42))
      %wg_row = arith.muli %consumer, %c64 : index loc("wg_row_in_block"("flash_fwd.cu":579:5 to 579:61))
      %q_wg = arith.addi %m_start, %wg_row : index loc("m_start + wg_row_in_block"("flash_fwd.cu":589:5 to 589:65))
      %sQ_wg = memref.subview %sQ[%wg_row, 0] [64, 64] [1, 1]
          : memref<128x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc("ctx.sq_rows"("flash_fwd.cu":583:5 to 583:68))
      %is_second = arith.cmpi eq, %consumer, %c1 : index loc("flash_fwd.cu":704:24 to 704:43)
      %my_turn = arith.addi %consumer, %c1 : index loc("flash_fwd.cu":375:30 to 375:102)
      %their_turn = arith.subi %c2, %consumer : index loc("flash_fwd.cu":379:30 to 379:110)

      // ---- accumulators and softmax state, all in registers ----
      %acc_o_init = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("acc_o"("flash_fwd.cu":603:41 to 603:55))
      %row_max_init = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("row_max"("flash_fwd.cu":599:5 to 599:24))
      %row_sum_init = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("row_sum"("flash_fwd.cu":600:5 to 600:24))
      %log2e = arith.constant 1.44269502 : f32 loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %scale_tile = tensor.splat %scale_log2 : tensor<64x128xf32, #WACC> loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %scale_row = tensor.splat %scale_log2 : tensor<64xf32, #WROW> loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %zero_row = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":333:30 to 333:87))
      %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":333:30 to 333:87))
      %acc_s_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("acc_s"("flash_fwd.cu":597:5 to 597:28))
      %o_rescale_init = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("o_rescale"("flash_fwd.cu":601:5 to 601:24))
      %p_frag_init = arith.constant dense<0.0> : tensor<64x128xbf16, #WA> loc("p_frag"("flash_fwd.cu":598:5 to 598:32))

      cuir.barrier.wait %q_full[%c0], %c0 : !cuir.mbarrier<1> loc("flash_fwd.cu":605:5 to 605:51)
      scf.if %is_second {
        cuir.barrier.named %c1 threads 256 arrive loc("flash_fwd.cu":704:45 to 704:112)
        scf.yield loc("flash_fwd.cu":704:5 to 704:44)
      } loc("flash_fwd.cu":704:5 to 704:44)

      // =============================== masking steps ===============================
      %n_masked = arith.subi %n_block_max, %n_unmasked_blocks : index loc("flash_fwd.cu":626:5 to 626:52)
      %m_acc_o, %m_row_max, %m_row_sum, %m_rescale, %m_p = scf.for %iv = %c0 to %n_masked step %c1
          iter_args(%acc_o = %acc_o_init, %row_max = %row_max_init, %row_sum = %row_sum_init,
                    %o_rescale = %o_rescale_init, %p_prev = %p_frag_init)
          -> (tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xbf16, #WA>) {
        %top = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":622:5 to 622:35))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":626:5 to 626:52))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":421:3 to 421:63) at "flash_fwd.cu":627:7 to 627:37))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":422:3 to 422:35) at "flash_fwd.cu":627:7 to 627:37))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":627:7 to 627:37))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":627:7 to 627:37))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":297:20 to 297:40) at "flash_fwd.cu":439:5 to 439:43))
        // FIRST, a template parameter of the step, is whether this visit is the block's first: no P V before it.
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        %prev = arith.subi %i, %c1 : index loc(callsite("flash_fwd.cu":428:48 to 428:79 at "flash_fwd.cu":627:7 to 627:37))
        %prev_stage = arith.remui %prev, %cST : index loc(callsite("flash_fwd.cu":402:3 to 402:35 at "flash_fwd.cu":428:25 to 428:53))
        %prev_round = arith.divui %prev, %cST : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %prev_phase = arith.remui %prev_round, %c2 : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":427:34 to 427:67) at "flash_fwd.cu":627:7 to 627:37))
        %sV_prev = memref.subview %sV[%prev_stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":405:29 to 405:62) at "flash_fwd.cu":428:25 to 428:53))

        // ------- on this warpgroup's turn: S_i = Q K_i^T, then O = O * correction + P_(i-1) V_(i-1) -------
        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":425:3 to 425:38 at "flash_fwd.cu":627:7 to 627:37))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":426:3 to 426:59 at "flash_fwd.cu":627:7 to 627:37))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":427:3 to 427:32) at "flash_fwd.cu":627:7 to 627:37))
        %o_issued = scf.if %has_prev -> (tensor<64x64xf32, #WACC>) {
          %rescale_b = cuir.broadcast_rows %o_rescale : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          cuir.barrier.wait %v_full[%prev_stage], %prev_phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":404:3 to 404:59 at "flash_fwd.cu":428:25 to 428:53))
          %o_pv = cuir.gemm_async %p_prev, %sV_prev, %acc_o_rescaled
              : tensor<64x128xbf16, #WA>, memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":405:3 to 405:63) at "flash_fwd.cu":428:25 to 428:53))
          scf.yield %o_pv : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        } else {
          scf.yield %acc_o : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        } loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":429:3 to 429:38 at "flash_fwd.cu":627:7 to 627:37))
        // S_i has landed once at most the P V behind it is pending.
        %s_pending = arith.select %has_prev, %c1, %c0 : index loc(callsite("flash_fwd.cu":431:3 to 431:36 at "flash_fwd.cu":627:7 to 627:37))
        %acc_s = cuir.gemm_wait %s_issued pending %s_pending {cuir.early_score_hook = "gather"} : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":612:7 to 612:21) at "flash_fwd.cu":627:7 to 627:37))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":433:3 to 433:41 at "flash_fwd.cu":627:7 to 627:37))

        // ------- score tile complete: acc_s = Q K^T (unscaled); the mask of a masking step -------
        %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_wg, %kv0]
            : (tensor<64x128xf32, #WACC>) -> tensor<64x128xf32, #WACC> {
        ^bb0(%x: f32 loc("acc_s"("flash_fwd.cu":304:60 to 304:86)), %bi: index loc("block.batch"("flash_fwd.cu":540:3 to 540:68)), %hi: index loc("block.head_q"("flash_fwd.cu":540:3 to 540:68)), %row: index loc("row"("flash_fwd.cu":302:7 to 302:42)), %col: index loc("col"("flash_fwd.cu":303:7 to 303:46))):
          %past_end = arith.cmpi sge, %col, %seqlen_kv : index loc(callsite("flash_fwd.cu":304:11 to 304:27 at "flash_fwd.cu":439:5 to 439:43))
          %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_fwd.cu":292:27 to 292:48 at "flash_fwd.cu":439:5 to 439:43))
          %past_diag = arith.cmpi sgt, %col, %row_last : index loc(callsite("flash_fwd.cu":304:31 to 304:58 at "flash_fwd.cu":439:5 to 439:43))
          %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_fwd.cu":304:7 to 304:27 at "flash_fwd.cu":439:5 to 439:43))
          %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_fwd.cu":304:60 to 304:86) at "flash_fwd.cu":439:5 to 439:43))
          cuir.yield %r : f32 loc("flash_fwd.cu":439:5 to 439:43)
        } loc("acc_s"("flash_fwd.cu":439:5 to 439:43))

        // ------- online softmax (while P_(i-1) V_(i-1) may still run): row_max / row_sum, P_i, the correction for the next P V -------
        %blk_max = cuir.reduce_rows max %acc_s_masked : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:30 to 333:48) at "flash_fwd.cu":442:3 to 442:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:57 to 333:87) at "flash_fwd.cu":442:3 to 442:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:5 to 333:88) at "flash_fwd.cu":442:3 to 442:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:69) at "flash_fwd.cu":442:3 to 442:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:82) at "flash_fwd.cu":442:3 to 442:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:5 to 334:83) at "flash_fwd.cu":442:3 to 442:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %logits = math.fma %acc_s_masked, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:35 to 342:82) at "flash_fwd.cu":442:3 to 442:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:9 to 342:83) at "flash_fwd.cu":442:3 to 442:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":344:9 to 344:22) at "flash_fwd.cu":442:3 to 442:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:21 to 347:52) at "flash_fwd.cu":442:3 to 442:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:5 to 347:63) at "flash_fwd.cu":442:3 to 442:35))

        // ------- P_(i-1) V_(i-1) has landed: O is readable and V_(i-1)'s stage free; then P_i -------
        %acc_o_new = scf.if %has_prev -> (tensor<64x64xf32, #WACC>) {
          %o_done = cuir.gemm_wait %o_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":445:5 to 445:34) at "flash_fwd.cu":627:7 to 627:37))
          cuir.barrier.arrive %v_empty[%prev_stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":448:5 to 448:57 at "flash_fwd.cu":627:7 to 627:37))
          scf.yield %o_done : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":627:7 to 627:37))
        } else {
          scf.yield %o_issued : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":627:7 to 627:37))
        } loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":627:7 to 627:37))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xbf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":366:39 to 366:106) at "flash_fwd.cu":450:3 to 450:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xbf16, #WACC> -> tensor<64x128xbf16, #WA> loc("p_frag"("flash_fwd.cu":450:3 to 450:30))
        scf.yield %acc_o_new, %new_max, %row_sum_new, %rescale, %p_frag
            : tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xbf16, #WA> loc("flash_fwd.cu":626:5 to 626:52)
      } loc("flash_fwd.cu":626:5 to 626:52)

      // =============================== unmasked steps ===============================
      %n_unmasked = arith.subi %n_unmasked_blocks, %n_block_min : index loc("flash_fwd.cu":632:5 to 632:46)
      %u_acc_o, %u_row_max, %u_row_sum, %u_rescale, %u_p = scf.for %iv = %c0 to %n_unmasked step %c1
          iter_args(%acc_o = %m_acc_o, %row_max = %m_row_max, %row_sum = %m_row_sum,
                    %o_rescale = %m_rescale, %p_prev = %m_p)
          -> (tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xbf16, #WA>) {
        %top = arith.subi %n_unmasked_blocks, %c1 : index loc("n_block"("flash_fwd.cu":632:5 to 632:46))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":632:5 to 632:46))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":421:3 to 421:63) at "flash_fwd.cu":633:7 to 633:38))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":422:3 to 422:35) at "flash_fwd.cu":633:7 to 633:38))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":633:7 to 633:38))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":633:7 to 633:38))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":297:20 to 297:40) at "flash_fwd.cu":439:5 to 439:43))
        // FIRST, a template parameter of the step, is whether this visit is the block's first: no P V before it.
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        %prev = arith.subi %i, %c1 : index loc(callsite("flash_fwd.cu":428:48 to 428:79 at "flash_fwd.cu":633:7 to 633:38))
        %prev_stage = arith.remui %prev, %cST : index loc(callsite("flash_fwd.cu":402:3 to 402:35 at "flash_fwd.cu":428:25 to 428:53))
        %prev_round = arith.divui %prev, %cST : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %prev_phase = arith.remui %prev_round, %c2 : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":427:34 to 427:67) at "flash_fwd.cu":633:7 to 633:38))
        %sV_prev = memref.subview %sV[%prev_stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":405:29 to 405:62) at "flash_fwd.cu":428:25 to 428:53))

        // ------- on this warpgroup's turn: S_i = Q K_i^T, then O = O * correction + P_(i-1) V_(i-1) -------
        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":425:3 to 425:38 at "flash_fwd.cu":633:7 to 633:38))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":426:3 to 426:59 at "flash_fwd.cu":633:7 to 633:38))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":427:3 to 427:32) at "flash_fwd.cu":633:7 to 633:38))
        %o_issued = scf.if %has_prev -> (tensor<64x64xf32, #WACC>) {
          %rescale_b = cuir.broadcast_rows %o_rescale : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          cuir.barrier.wait %v_full[%prev_stage], %prev_phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":404:3 to 404:59 at "flash_fwd.cu":428:25 to 428:53))
          %o_pv = cuir.gemm_async %p_prev, %sV_prev, %acc_o_rescaled
              : tensor<64x128xbf16, #WA>, memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":405:3 to 405:63) at "flash_fwd.cu":428:25 to 428:53))
          scf.yield %o_pv : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        } else {
          scf.yield %acc_o : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        } loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":429:3 to 429:38 at "flash_fwd.cu":633:7 to 633:38))
        // S_i has landed once at most the P V behind it is pending.
        %s_pending = arith.select %has_prev, %c1, %c0 : index loc(callsite("flash_fwd.cu":431:3 to 431:36 at "flash_fwd.cu":633:7 to 633:38))
        %acc_s = cuir.gemm_wait %s_issued pending %s_pending {cuir.early_score_hook = "gather"} : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":616:7 to 616:21) at "flash_fwd.cu":633:7 to 633:38))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":433:3 to 433:41 at "flash_fwd.cu":633:7 to 633:38))

        // ------- score tile complete: every score of this tile is visible -------

        // ------- online softmax (while P_(i-1) V_(i-1) may still run): row_max / row_sum, P_i, the correction for the next P V -------
        %blk_max = cuir.reduce_rows max %acc_s : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:30 to 333:48) at "flash_fwd.cu":442:3 to 442:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:57 to 333:87) at "flash_fwd.cu":442:3 to 442:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:5 to 333:88) at "flash_fwd.cu":442:3 to 442:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:69) at "flash_fwd.cu":442:3 to 442:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:82) at "flash_fwd.cu":442:3 to 442:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:5 to 334:83) at "flash_fwd.cu":442:3 to 442:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %logits = math.fma %acc_s, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:35 to 342:82) at "flash_fwd.cu":442:3 to 442:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:9 to 342:83) at "flash_fwd.cu":442:3 to 442:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":344:9 to 344:22) at "flash_fwd.cu":442:3 to 442:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:21 to 347:52) at "flash_fwd.cu":442:3 to 442:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:5 to 347:63) at "flash_fwd.cu":442:3 to 442:35))

        // ------- P_(i-1) V_(i-1) has landed: O is readable and V_(i-1)'s stage free; then P_i -------
        %acc_o_new = scf.if %has_prev -> (tensor<64x64xf32, #WACC>) {
          %o_done = cuir.gemm_wait %o_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":445:5 to 445:34) at "flash_fwd.cu":633:7 to 633:38))
          cuir.barrier.arrive %v_empty[%prev_stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":448:5 to 448:57 at "flash_fwd.cu":633:7 to 633:38))
          scf.yield %o_done : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":633:7 to 633:38))
        } else {
          scf.yield %o_issued : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":633:7 to 633:38))
        } loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":633:7 to 633:38))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xbf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":366:39 to 366:106) at "flash_fwd.cu":450:3 to 450:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xbf16, #WACC> -> tensor<64x128xbf16, #WA> loc("p_frag"("flash_fwd.cu":450:3 to 450:30))
        scf.yield %acc_o_new, %new_max, %row_sum_new, %rescale, %p_frag
            : tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xbf16, #WA> loc("flash_fwd.cu":632:5 to 632:46)
      } loc("flash_fwd.cu":632:5 to 632:46)

      cuir.barrier.arrive %q_empty[%c0] : !cuir.mbarrier<1> loc("flash_fwd.cu":635:5 to 635:36)

      // =============================== last P V ===============================
      %last_stage = arith.remui %last_visit, %cST : index loc(callsite("flash_fwd.cu":402:3 to 402:35 at "flash_fwd.cu":640:5 to 640:38))
      %last_round = arith.divui %last_visit, %cST : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":640:5 to 640:38))
      %last_phase = arith.remui %last_round, %c2 : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":640:5 to 640:38))
      %sV_last = memref.subview %sV[%last_stage, 0, 0] [1, 128, 64] [1, 1, 1]
          : memref<4x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":405:29 to 405:62) at "flash_fwd.cu":640:5 to 640:38))
      cuir.barrier.named %my_turn threads 256 loc("flash_fwd.cu":639:5 to 639:42)
      %last_rescale_b = cuir.broadcast_rows %u_rescale : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
      %last_acc_o = arith.mulf %u_acc_o, %last_rescale_b : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
      cuir.barrier.wait %v_full[%last_stage], %last_phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":404:3 to 404:59 at "flash_fwd.cu":640:5 to 640:38))
      %o_last = cuir.gemm_async %u_p, %sV_last, %last_acc_o
          : tensor<64x128xbf16, #WA>, memref<128x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":405:3 to 405:63) at "flash_fwd.cu":640:5 to 640:38))
      cuir.barrier.named %their_turn threads 256 arrive loc("flash_fwd.cu":641:5 to 641:42)
      %o_final = cuir.gemm_wait %o_last pending 0 : tensor<64x64xf32, #WACC> loc("acc_o"("flash_fwd.cu":642:5 to 642:27))
      cuir.barrier.arrive %v_empty[%last_stage] : !cuir.mbarrier<4> loc("flash_fwd.cu":645:5 to 645:60)

      // =============================== epilogue ===============================
      %sees_nothing = arith.cmpf oeq, %u_row_sum, %zero_row : tensor<64xf32, #WROW> loc("row_sees_nothing"("flash_fwd.cu":473:5 to 473:45))
      %one_row = arith.constant dense<1.0> : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":474:50 to 474:59))
      %inv = arith.divf %one_row, %u_row_sum : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":474:50 to 474:59))
      %row_inv_sum = arith.select %sees_nothing, %zero_row, %inv : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":474:5 to 474:60))
      %max_l2 = arith.mulf %u_row_max, %scale_row : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:53 to 475:93))
      %log_sum = math.log2 %u_row_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:96 to 475:110))
      %lse2 = arith.addf %max_l2, %log_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:52 to 475:111))
      %ln2 = arith.constant dense<0.693147182> : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:112 to 475:118))
      %lse_nat = arith.mulf %lse2, %ln2 : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:52 to 475:118))
      %lse_val = arith.select %sees_nothing, %ninf_row, %lse_nat : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:5 to 475:118))
      cuir.store %lse_val -> %lse_head[%q_wg] : tensor<64xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":477:72 to 477:91))
      %inv_b = cuir.broadcast_rows %row_inv_sum : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc("packed"("flash_fwd.cu":491:55 to 491:98))
      %o_norm = arith.mulf %o_final, %inv_b : tensor<64x64xf32, #WACC> loc("packed"("flash_fwd.cu":491:55 to 491:98))
      %o16 = arith.truncf %o_norm : tensor<64x64xf32, #WACC> to tensor<64x64xbf16, #WACC> loc("packed"("flash_fwd.cu":491:7 to 491:54))
      %sO_wg = memref.subview %sO[%wg_row, 0] [64, 64] [1, 1]
          : memref<128x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc("flash_fwd.cu":482:12 to 482:68)
      cuir.store %o16 -> %sO_wg : tensor<64x64xbf16, #WACC> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc("smem"("flash_fwd.cu":493:7 to 493:93))
      cuir.barrier.warp loc("flash_fwd.cu":496:3 to 496:16)
      cuir.copy %sO_wg -> %o_head[%q_wg, %c0] : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> -> memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":507:7 to 507:100))
      // Consumer 0 takes the turn of consumer 1's last hand-off (after the thread block's last item).
      %is_first = arith.cmpi eq, %consumer, %c0 : index loc("flash_fwd.cu":710:9 to 710:28)
      scf.if %is_first {
        cuir.barrier.named %c1 threads 256 loc("flash_fwd.cu":710:30 to 710:54)
        scf.yield loc("flash_fwd.cu":710:5 to 710:55)
      } loc("flash_fwd.cu":710:5 to 710:55)
      cuir.yield loc("flash_fwd.cu":648:5 to 648:50)
    } loc("flash_fwd.cu":702:5 to 702:40)
    scf.yield loc("flash_fwd.cu":563:3 to 563:24)
  } loc("flash_fwd.cu":563:3 to 563:24)
  cuir.return loc("flash_fwd.cu":660:5 to 660:79)
} loc("flash_fwd_sm90_kernel"("flash_fwd.cu":660:5 to 660:79))
cuir.kernel @flash_fwd_sm90_f16_d128(
    %q: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_fwd.cu":660:27 to 660:79)),
    %k: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_fwd.cu":660:27 to 660:79)),
    %v: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_fwd.cu":660:27 to 660:79)),
    %o: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_fwd.cu":660:27 to 660:79)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_fwd.cu":660:27 to 660:79)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_fwd.cu":660:27 to 660:79)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_fwd.cu":658:1 to 658:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_fwd.cu":660:27 to 660:79)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_fwd.cu":660:27 to 660:79)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_fwd.cu":660:27 to 660:79)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_fwd.cu":660:27 to 660:79)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_fwd.cu":660:27 to 660:79)))
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
  %m_block = cuir.block_id x loc("block.m_block"("flash_fwd.cu":540:3 to 540:68))
  %head_q = cuir.block_id y loc("block.head_q"("flash_fwd.cu":540:3 to 540:68))
  %b = cuir.block_id z loc("block.batch"("flash_fwd.cu":540:3 to 540:68))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("causal_offset"("flash_fwd.cu":543:13 to 543:49))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("ctx.last_key_offset"("flash_fwd.cu":592:5 to 592:92))
  %m_start = arith.muli %m_block, %c128 : index loc("m_start"("flash_fwd.cu":544:13 to 544:49))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("head_kv"("flash_fwd.cu":545:13 to 545:80))
  %head_kv = arith.divui %head_q, %group : index loc("head_kv"("flash_fwd.cu":545:13 to 545:80))
  %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("tma_q"("flash_fwd.cu":814:21 to 814:46))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("tma_k"("flash_fwd.cu":818:11 to 818:36))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("tma_v"("flash_fwd.cu":821:11 to 821:36))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":497:3 to 497:55))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":463:3 to 463:42))

  // ---- KV tiles this block visits: [n_block_min, n_block_max), of which [n_block_min, n_unmasked_blocks) need no mask ----
  %n_block_min = arith.constant 0 : index loc("n_block_min"("flash_fwd.cu":549:3 to 549:23))
  %n_block_all = arith.ceildivui %seqlen_kv, %cBN : index loc("n_block_max"("flash_fwd.cu":550:7 to 550:62))
  %n_full_all = arith.divui %seqlen_kv, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":551:7 to 551:49))
  %m_end = arith.addi %m_start, %c128 : index loc("last_row"("flash_fwd.cu":553:15 to 553:65))
  %m_end_clamped = arith.minui %m_end, %seqlen_q : index loc("last_row"("flash_fwd.cu":553:15 to 553:65))
  %last_row = arith.subi %m_end_clamped, %c1 : index loc("last_row"("flash_fwd.cu":553:15 to 553:65))
  %last_key_of_last_row = arith.addi %last_row, %causal_offset : index loc("last_key_of_last_row"("flash_fwd.cu":554:15 to 554:62))
  %last_key_of_first_row = arith.addi %m_start, %causal_offset : index loc("last_key_of_first_row"("flash_fwd.cu":555:15 to 555:62))
  %llr_neg = arith.cmpi slt, %last_key_of_last_row, %c0 : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %llr_blk = arith.divsi %last_key_of_last_row, %cBN : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %llr_end = arith.addi %llr_blk, %c1 : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %llr_bound = arith.select %llr_neg, %c0, %llr_end : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %n_block_causal = arith.minsi %n_block_all, %llr_bound : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %lfr_neg = arith.cmpi slt, %last_key_of_first_row, %c0 : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %lfr_next = arith.addi %last_key_of_first_row, %c1 : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %lfr_blk = arith.divsi %lfr_next, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %lfr_bound = arith.select %lfr_neg, %c0, %lfr_blk : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %n_full_causal = arith.minsi %n_full_all, %lfr_bound : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %n_block_max = arith.select %causal, %n_block_causal, %n_block_all : index loc("n_block_max"("flash_fwd.cu":552:3 to 552:27))
  %n_unmasked_blocks = arith.select %causal, %n_full_causal, %n_full_all : index loc("n_unmasked_blocks"("flash_fwd.cu":552:3 to 552:27))

  %no_keys = arith.cmpi sle, %n_block_max, %n_block_min : index loc("flash_fwd.cu":563:3 to 563:24)
  scf.if %no_keys {
    // No row of this block sees any key: O = 0, LSE = -inf (write_empty_block).
    %zero_o = arith.constant dense<0.0> : tensor<128x128xf16, #WACC> loc("o_head"("flash_fwd.cu":521:103 to 521:125))
    cuir.store %zero_o -> %o_head[%m_start, %c0] : tensor<128x128xf16, #WACC> -> memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":521:32 to 521:125))
    %ninf_lse = arith.constant dense<0xFF800000> : tensor<128xf32, #WROW> loc("lse_head"("flash_fwd.cu":526:7 to 526:30))
    cuir.store %ninf_lse -> %lse_head[%m_start] : tensor<128xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":526:7 to 526:30))
    scf.yield loc("flash_fwd.cu":565:5 to 565:12)
  } else {
    // ---- visits: n_visits, the last is visit n_visits - 1 ----
    %last_block = arith.subi %n_block_max, %c1 : index loc("i"("flash_fwd.cu":421:3 to 421:63))
    %n_visits = arith.subi %n_block_max, %n_block_min : index loc("n_visits"("flash_fwd.cu":240:3 to 240:50))
    %last_visit = arith.subi %n_visits, %c1 : index loc("last_visit"("flash_fwd.cu":638:5 to 638:57))

    // ---- shared memory: Q [128][d] (O in the epilogue), K and V rings [STAGES][BLOCK_N][d], 128-byte swizzled; the mbarriers ----
    %sQ = cuir.alloc {swizzle = 128} : memref<128x128xf16, #S> loc("sQ"("flash_fwd.cu":109:24 to 109:37))
    %sK = cuir.alloc {swizzle = 128} : memref<2x128x128xf16, #S> loc("sK"("flash_fwd.cu":110:24 to 110:60))
    %sV = cuir.alloc {swizzle = 128} : memref<2x128x128xf16, #S> loc("sV"("flash_fwd.cu":111:24 to 111:70))
    %sO = cuir.alloc {swizzle = 128} : memref<128x128xf16, #S> loc("sO"("flash_fwd.cu":112:24 to 112:70))
    %q_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1> loc("bars->q_full"("flash_fwd.cu":673:5 to 673:36))
    %q_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<1> loc("bars->q_empty"("flash_fwd.cu":674:5 to 674:59))
    %k_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->k_full"("flash_fwd.cu":677:7 to 677:41))
    %v_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->v_full"("flash_fwd.cu":678:7 to 678:41))
    %k_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<2> loc("bars->k_empty"("flash_fwd.cu":679:7 to 679:64))
    %v_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<2> loc("bars->v_empty"("flash_fwd.cu":680:7 to 680:64))

    // =============================== producer warpgroup ===============================
    cuir.bind warpgroup [0] role producer regs 24 {
      cuir.bind warp [0] role producer {
        cuir.barrier.wait %q_empty[%c0], %c1 : !cuir.mbarrier<1> loc("flash_fwd.cu":233:3 to 233:56)
        cuir.barrier.arrive %q_full[%c0] expect_tx 32768 : !cuir.mbarrier<1> loc("flash_fwd.cu":234:3 to 234:60)
        cuir.copy_async tma %q_head[%m_start, %c0] -> %sQ barrier %q_full[%c0]
            : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xf16, #S>, !cuir.mbarrier<1> loc("sQ"("flash_fwd.cu":237:5 to 237:68))
        // K of visit i, then V of visit i - 1.
        %n_steps = arith.addi %n_visits, %c1 : index loc("flash_fwd.cu":241:3 to 241:38)
        scf.for %i = %c0 to %n_steps step %c1 {
          %has_k = arith.cmpi slt, %i, %n_visits : index loc("flash_fwd.cu":242:5 to 242:22)
          scf.if %has_k {
            %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":214:3 to 214:35) at "flash_fwd.cu":243:7 to 243:32))
            %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":243:7 to 243:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":243:7 to 243:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":243:7 to 243:32))
            cuir.barrier.wait %k_empty[%stage], %free : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":243:7 to 243:32))
            cuir.barrier.arrive %k_full[%stage] expect_tx 32768 : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":217:3 to 217:60 at "flash_fwd.cu":243:7 to 243:32))
            %blk = arith.subi %last_block, %i : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":243:7 to 243:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":243:7 to 243:32))
            %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
                : memref<2x128x128xf16, #S> to memref<128x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":221:17 to 221:62) at "flash_fwd.cu":243:7 to 243:32))
            cuir.copy_async tma %k_head[%row, %c0] -> %sK_stage barrier %k_full[%stage]
                : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xf16, strided<[128, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sK"("flash_fwd.cu":221:5 to 221:62) at "flash_fwd.cu":243:7 to 243:32))
            scf.yield loc("flash_fwd.cu":242:5 to 242:22)
          } loc("flash_fwd.cu":242:5 to 242:22)
          %has_v = arith.cmpi sge, %i, %c1 : index loc("flash_fwd.cu":245:5 to 245:16)
          scf.if %has_v {
            %iv = arith.subi %i, %c1 : index loc("flash_fwd.cu":246:83 to 246:105)
            %stage = arith.remui %iv, %cST : index loc(callsite("stage"("flash_fwd.cu":214:3 to 214:35) at "flash_fwd.cu":246:7 to 246:32))
            %round = arith.divui %iv, %cST : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":246:7 to 246:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":246:7 to 246:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":246:7 to 246:32))
            cuir.barrier.wait %v_empty[%stage], %free : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":246:7 to 246:32))
            cuir.barrier.arrive %v_full[%stage] expect_tx 32768 : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":217:3 to 217:60 at "flash_fwd.cu":246:7 to 246:32))
            %blk = arith.subi %last_block, %iv : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":246:7 to 246:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":246:7 to 246:32))
            %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
                : memref<2x128x128xf16, #S> to memref<128x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":221:17 to 221:62) at "flash_fwd.cu":246:7 to 246:32))
            cuir.copy_async tma %v_head[%row, %c0] -> %sV_stage barrier %v_full[%stage]
                : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xf16, strided<[128, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sV"("flash_fwd.cu":221:5 to 221:62) at "flash_fwd.cu":246:7 to 246:32))
            scf.yield loc("flash_fwd.cu":245:5 to 245:16)
          } loc("flash_fwd.cu":245:5 to 245:16)
          scf.yield loc("flash_fwd.cu":241:3 to 241:38)
        } loc("flash_fwd.cu":241:3 to 241:38)
        cuir.yield loc("flash_fwd.cu":572:7 to 572:44)
      } loc("flash_fwd.cu":571:5 to 571:26)
      cuir.yield loc("flash_fwd.cu":694:5 to 694:40)
    } loc("flash_fwd.cu":694:5 to 694:40)

    // =============================== consumer warpgroups ===============================
    cuir.bind warpgroup [1, 2] role consumer regs 240 {
      %consumer = cuir.worker_id loc("consumer_index"("flash_fwd.cu":576:5 to 576:42))
      %wg_row = arith.muli %consumer, %c64 : index loc("wg_row_in_block"("flash_fwd.cu":579:5 to 579:61))
      %q_wg = arith.addi %m_start, %wg_row : index loc("m_start + wg_row_in_block"("flash_fwd.cu":589:5 to 589:65))
      %sQ_wg = memref.subview %sQ[%wg_row, 0] [64, 128] [1, 1]
          : memref<128x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc("ctx.sq_rows"("flash_fwd.cu":583:5 to 583:68))
      %is_second = arith.cmpi eq, %consumer, %c1 : index loc("flash_fwd.cu":704:24 to 704:43)
      %my_turn = arith.addi %consumer, %c1 : index loc("flash_fwd.cu":375:30 to 375:102)
      %their_turn = arith.subi %c2, %consumer : index loc("flash_fwd.cu":379:30 to 379:110)

      // ---- accumulators and softmax state, all in registers ----
      %acc_o_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("acc_o"("flash_fwd.cu":603:41 to 603:55))
      %row_max_init = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("row_max"("flash_fwd.cu":599:5 to 599:24))
      %row_sum_init = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("row_sum"("flash_fwd.cu":600:5 to 600:24))
      %log2e = arith.constant 1.44269502 : f32 loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %scale_tile = tensor.splat %scale_log2 : tensor<64x128xf32, #WACC> loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %scale_row = tensor.splat %scale_log2 : tensor<64xf32, #WROW> loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %zero_row = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":333:30 to 333:87))
      %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":333:30 to 333:87))
      %acc_s_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("acc_s"("flash_fwd.cu":597:5 to 597:28))
      %o_rescale_init = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("o_rescale"("flash_fwd.cu":601:5 to 601:24))
      %p_frag_init = arith.constant dense<0.0> : tensor<64x128xf16, #WA> loc("p_frag"("flash_fwd.cu":598:5 to 598:32))

      cuir.barrier.wait %q_full[%c0], %c0 : !cuir.mbarrier<1> loc("flash_fwd.cu":605:5 to 605:51)
      scf.if %is_second {
        cuir.barrier.named %c1 threads 256 arrive loc("flash_fwd.cu":704:45 to 704:112)
        scf.yield loc("flash_fwd.cu":704:5 to 704:44)
      } loc("flash_fwd.cu":704:5 to 704:44)

      // =============================== masking steps ===============================
      %n_masked = arith.subi %n_block_max, %n_unmasked_blocks : index loc("flash_fwd.cu":626:5 to 626:52)
      %m_acc_o, %m_row_max, %m_row_sum, %m_rescale, %m_p = scf.for %iv = %c0 to %n_masked step %c1
          iter_args(%acc_o = %acc_o_init, %row_max = %row_max_init, %row_sum = %row_sum_init,
                    %o_rescale = %o_rescale_init, %p_prev = %p_frag_init)
          -> (tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xf16, #WA>) {
        %top = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":622:5 to 622:35))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":626:5 to 626:52))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":421:3 to 421:63) at "flash_fwd.cu":627:7 to 627:37))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":422:3 to 422:35) at "flash_fwd.cu":627:7 to 627:37))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":627:7 to 627:37))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":627:7 to 627:37))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":297:20 to 297:40) at "flash_fwd.cu":439:5 to 439:43))
        // FIRST, a template parameter of the step, is whether this visit is the block's first: no P V before it.
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        %prev = arith.subi %i, %c1 : index loc(callsite("flash_fwd.cu":428:48 to 428:79 at "flash_fwd.cu":627:7 to 627:37))
        %prev_stage = arith.remui %prev, %cST : index loc(callsite("flash_fwd.cu":402:3 to 402:35 at "flash_fwd.cu":428:25 to 428:53))
        %prev_round = arith.divui %prev, %cST : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %prev_phase = arith.remui %prev_round, %c2 : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xf16, #S> to memref<128x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":427:34 to 427:67) at "flash_fwd.cu":627:7 to 627:37))
        %sV_prev = memref.subview %sV[%prev_stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xf16, #S> to memref<128x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":405:29 to 405:62) at "flash_fwd.cu":428:25 to 428:53))

        // ------- on this warpgroup's turn: S_i = Q K_i^T, then O = O * correction + P_(i-1) V_(i-1) -------
        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":425:3 to 425:38 at "flash_fwd.cu":627:7 to 627:37))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":426:3 to 426:59 at "flash_fwd.cu":627:7 to 627:37))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":427:3 to 427:32) at "flash_fwd.cu":627:7 to 627:37))
        %o_issued = scf.if %has_prev -> (tensor<64x128xf32, #WACC>) {
          %rescale_b = cuir.broadcast_rows %o_rescale : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          cuir.barrier.wait %v_full[%prev_stage], %prev_phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":404:3 to 404:59 at "flash_fwd.cu":428:25 to 428:53))
          %o_pv = cuir.gemm_async %p_prev, %sV_prev, %acc_o_rescaled
              : tensor<64x128xf16, #WA>, memref<128x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":405:3 to 405:63) at "flash_fwd.cu":428:25 to 428:53))
          scf.yield %o_pv : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        } else {
          scf.yield %acc_o : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        } loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":429:3 to 429:38 at "flash_fwd.cu":627:7 to 627:37))
        // S_i has landed once at most the P V behind it is pending.
        %s_pending = arith.select %has_prev, %c1, %c0 : index loc(callsite("flash_fwd.cu":431:3 to 431:36 at "flash_fwd.cu":627:7 to 627:37))
        %acc_s = cuir.gemm_wait %s_issued pending %s_pending {cuir.early_score_hook = "gather"} : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":612:7 to 612:21) at "flash_fwd.cu":627:7 to 627:37))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":433:3 to 433:41 at "flash_fwd.cu":627:7 to 627:37))

        // ------- score tile complete: acc_s = Q K^T (unscaled); the mask of a masking step -------
        %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_wg, %kv0]
            : (tensor<64x128xf32, #WACC>) -> tensor<64x128xf32, #WACC> {
        ^bb0(%x: f32 loc("acc_s"("flash_fwd.cu":304:60 to 304:86)), %bi: index loc("block.batch"("flash_fwd.cu":540:3 to 540:68)), %hi: index loc("block.head_q"("flash_fwd.cu":540:3 to 540:68)), %row: index loc("row"("flash_fwd.cu":302:7 to 302:42)), %col: index loc("col"("flash_fwd.cu":303:7 to 303:46))):
          %past_end = arith.cmpi sge, %col, %seqlen_kv : index loc(callsite("flash_fwd.cu":304:11 to 304:27 at "flash_fwd.cu":439:5 to 439:43))
          %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_fwd.cu":292:27 to 292:48 at "flash_fwd.cu":439:5 to 439:43))
          %past_diag = arith.cmpi sgt, %col, %row_last : index loc(callsite("flash_fwd.cu":304:31 to 304:58 at "flash_fwd.cu":439:5 to 439:43))
          %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_fwd.cu":304:7 to 304:27 at "flash_fwd.cu":439:5 to 439:43))
          %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_fwd.cu":304:60 to 304:86) at "flash_fwd.cu":439:5 to 439:43))
          cuir.yield %r : f32 loc("flash_fwd.cu":439:5 to 439:43)
        } loc("acc_s"("flash_fwd.cu":439:5 to 439:43))

        // ------- online softmax (while P_(i-1) V_(i-1) may still run): row_max / row_sum, P_i, the correction for the next P V -------
        %blk_max = cuir.reduce_rows max %acc_s_masked : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:30 to 333:48) at "flash_fwd.cu":442:3 to 442:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:57 to 333:87) at "flash_fwd.cu":442:3 to 442:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:5 to 333:88) at "flash_fwd.cu":442:3 to 442:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:69) at "flash_fwd.cu":442:3 to 442:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:82) at "flash_fwd.cu":442:3 to 442:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:5 to 334:83) at "flash_fwd.cu":442:3 to 442:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %logits = math.fma %acc_s_masked, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:35 to 342:82) at "flash_fwd.cu":442:3 to 442:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:9 to 342:83) at "flash_fwd.cu":442:3 to 442:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":344:9 to 344:22) at "flash_fwd.cu":442:3 to 442:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:21 to 347:52) at "flash_fwd.cu":442:3 to 442:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:5 to 347:63) at "flash_fwd.cu":442:3 to 442:35))

        // ------- P_(i-1) V_(i-1) has landed: O is readable and V_(i-1)'s stage free; then P_i -------
        %acc_o_new = scf.if %has_prev -> (tensor<64x128xf32, #WACC>) {
          %o_done = cuir.gemm_wait %o_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":445:5 to 445:34) at "flash_fwd.cu":627:7 to 627:37))
          cuir.barrier.arrive %v_empty[%prev_stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":448:5 to 448:57 at "flash_fwd.cu":627:7 to 627:37))
          scf.yield %o_done : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":627:7 to 627:37))
        } else {
          scf.yield %o_issued : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":627:7 to 627:37))
        } loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":627:7 to 627:37))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":366:39 to 366:106) at "flash_fwd.cu":450:3 to 450:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xf16, #WACC> -> tensor<64x128xf16, #WA> loc("p_frag"("flash_fwd.cu":450:3 to 450:30))
        scf.yield %acc_o_new, %new_max, %row_sum_new, %rescale, %p_frag
            : tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xf16, #WA> loc("flash_fwd.cu":626:5 to 626:52)
      } loc("flash_fwd.cu":626:5 to 626:52)

      // =============================== unmasked steps ===============================
      %n_unmasked = arith.subi %n_unmasked_blocks, %n_block_min : index loc("flash_fwd.cu":632:5 to 632:46)
      %u_acc_o, %u_row_max, %u_row_sum, %u_rescale, %u_p = scf.for %iv = %c0 to %n_unmasked step %c1
          iter_args(%acc_o = %m_acc_o, %row_max = %m_row_max, %row_sum = %m_row_sum,
                    %o_rescale = %m_rescale, %p_prev = %m_p)
          -> (tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xf16, #WA>) {
        %top = arith.subi %n_unmasked_blocks, %c1 : index loc("n_block"("flash_fwd.cu":632:5 to 632:46))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":632:5 to 632:46))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":421:3 to 421:63) at "flash_fwd.cu":633:7 to 633:38))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":422:3 to 422:35) at "flash_fwd.cu":633:7 to 633:38))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":633:7 to 633:38))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":633:7 to 633:38))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":297:20 to 297:40) at "flash_fwd.cu":439:5 to 439:43))
        // FIRST, a template parameter of the step, is whether this visit is the block's first: no P V before it.
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        %prev = arith.subi %i, %c1 : index loc(callsite("flash_fwd.cu":428:48 to 428:79 at "flash_fwd.cu":633:7 to 633:38))
        %prev_stage = arith.remui %prev, %cST : index loc(callsite("flash_fwd.cu":402:3 to 402:35 at "flash_fwd.cu":428:25 to 428:53))
        %prev_round = arith.divui %prev, %cST : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %prev_phase = arith.remui %prev_round, %c2 : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xf16, #S> to memref<128x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":427:34 to 427:67) at "flash_fwd.cu":633:7 to 633:38))
        %sV_prev = memref.subview %sV[%prev_stage, 0, 0] [1, 128, 128] [1, 1, 1]
            : memref<2x128x128xf16, #S> to memref<128x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":405:29 to 405:62) at "flash_fwd.cu":428:25 to 428:53))

        // ------- on this warpgroup's turn: S_i = Q K_i^T, then O = O * correction + P_(i-1) V_(i-1) -------
        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":425:3 to 425:38 at "flash_fwd.cu":633:7 to 633:38))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":426:3 to 426:59 at "flash_fwd.cu":633:7 to 633:38))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":427:3 to 427:32) at "flash_fwd.cu":633:7 to 633:38))
        %o_issued = scf.if %has_prev -> (tensor<64x128xf32, #WACC>) {
          %rescale_b = cuir.broadcast_rows %o_rescale : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          cuir.barrier.wait %v_full[%prev_stage], %prev_phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":404:3 to 404:59 at "flash_fwd.cu":428:25 to 428:53))
          %o_pv = cuir.gemm_async %p_prev, %sV_prev, %acc_o_rescaled
              : tensor<64x128xf16, #WA>, memref<128x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":405:3 to 405:63) at "flash_fwd.cu":428:25 to 428:53))
          scf.yield %o_pv : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        } else {
          scf.yield %acc_o : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        } loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":429:3 to 429:38 at "flash_fwd.cu":633:7 to 633:38))
        // S_i has landed once at most the P V behind it is pending.
        %s_pending = arith.select %has_prev, %c1, %c0 : index loc(callsite("flash_fwd.cu":431:3 to 431:36 at "flash_fwd.cu":633:7 to 633:38))
        %acc_s = cuir.gemm_wait %s_issued pending %s_pending {cuir.early_score_hook = "gather"} : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":616:7 to 616:21) at "flash_fwd.cu":633:7 to 633:38))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":433:3 to 433:41 at "flash_fwd.cu":633:7 to 633:38))

        // ------- score tile complete: every score of this tile is visible -------

        // ------- online softmax (while P_(i-1) V_(i-1) may still run): row_max / row_sum, P_i, the correction for the next P V -------
        %blk_max = cuir.reduce_rows max %acc_s : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:30 to 333:48) at "flash_fwd.cu":442:3 to 442:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:57 to 333:87) at "flash_fwd.cu":442:3 to 442:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:5 to 333:88) at "flash_fwd.cu":442:3 to 442:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:69) at "flash_fwd.cu":442:3 to 442:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:82) at "flash_fwd.cu":442:3 to 442:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:5 to 334:83) at "flash_fwd.cu":442:3 to 442:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %logits = math.fma %acc_s, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:35 to 342:82) at "flash_fwd.cu":442:3 to 442:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:9 to 342:83) at "flash_fwd.cu":442:3 to 442:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":344:9 to 344:22) at "flash_fwd.cu":442:3 to 442:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:21 to 347:52) at "flash_fwd.cu":442:3 to 442:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:5 to 347:63) at "flash_fwd.cu":442:3 to 442:35))

        // ------- P_(i-1) V_(i-1) has landed: O is readable and V_(i-1)'s stage free; then P_i -------
        %acc_o_new = scf.if %has_prev -> (tensor<64x128xf32, #WACC>) {
          %o_done = cuir.gemm_wait %o_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":445:5 to 445:34) at "flash_fwd.cu":633:7 to 633:38))
          cuir.barrier.arrive %v_empty[%prev_stage] : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":448:5 to 448:57 at "flash_fwd.cu":633:7 to 633:38))
          scf.yield %o_done : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":633:7 to 633:38))
        } else {
          scf.yield %o_issued : tensor<64x128xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":633:7 to 633:38))
        } loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":633:7 to 633:38))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":366:39 to 366:106) at "flash_fwd.cu":450:3 to 450:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xf16, #WACC> -> tensor<64x128xf16, #WA> loc("p_frag"("flash_fwd.cu":450:3 to 450:30))
        scf.yield %acc_o_new, %new_max, %row_sum_new, %rescale, %p_frag
            : tensor<64x128xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xf16, #WA> loc("flash_fwd.cu":632:5 to 632:46)
      } loc("flash_fwd.cu":632:5 to 632:46)

      cuir.barrier.arrive %q_empty[%c0] : !cuir.mbarrier<1> loc("flash_fwd.cu":635:5 to 635:36)

      // =============================== last P V ===============================
      %last_stage = arith.remui %last_visit, %cST : index loc(callsite("flash_fwd.cu":402:3 to 402:35 at "flash_fwd.cu":640:5 to 640:38))
      %last_round = arith.divui %last_visit, %cST : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":640:5 to 640:38))
      %last_phase = arith.remui %last_round, %c2 : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":640:5 to 640:38))
      %sV_last = memref.subview %sV[%last_stage, 0, 0] [1, 128, 128] [1, 1, 1]
          : memref<2x128x128xf16, #S> to memref<128x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":405:29 to 405:62) at "flash_fwd.cu":640:5 to 640:38))
      cuir.barrier.named %my_turn threads 256 loc("flash_fwd.cu":639:5 to 639:42)
      %last_rescale_b = cuir.broadcast_rows %u_rescale : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
      %last_acc_o = arith.mulf %u_acc_o, %last_rescale_b : tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
      cuir.barrier.wait %v_full[%last_stage], %last_phase : !cuir.mbarrier<2> loc(callsite("flash_fwd.cu":404:3 to 404:59 at "flash_fwd.cu":640:5 to 640:38))
      %o_last = cuir.gemm_async %u_p, %sV_last, %last_acc_o
          : tensor<64x128xf16, #WA>, memref<128x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":405:3 to 405:63) at "flash_fwd.cu":640:5 to 640:38))
      cuir.barrier.named %their_turn threads 256 arrive loc("flash_fwd.cu":641:5 to 641:42)
      %o_final = cuir.gemm_wait %o_last pending 0 : tensor<64x128xf32, #WACC> loc("acc_o"("flash_fwd.cu":642:5 to 642:27))
      cuir.barrier.arrive %v_empty[%last_stage] : !cuir.mbarrier<2> loc("flash_fwd.cu":645:5 to 645:60)

      // =============================== epilogue ===============================
      %sees_nothing = arith.cmpf oeq, %u_row_sum, %zero_row : tensor<64xf32, #WROW> loc("row_sees_nothing"("flash_fwd.cu":473:5 to 473:45))
      %one_row = arith.constant dense<1.0> : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":474:50 to 474:59))
      %inv = arith.divf %one_row, %u_row_sum : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":474:50 to 474:59))
      %row_inv_sum = arith.select %sees_nothing, %zero_row, %inv : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":474:5 to 474:60))
      %max_l2 = arith.mulf %u_row_max, %scale_row : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:53 to 475:93))
      %log_sum = math.log2 %u_row_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:96 to 475:110))
      %lse2 = arith.addf %max_l2, %log_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:52 to 475:111))
      %ln2 = arith.constant dense<0.693147182> : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:112 to 475:118))
      %lse_nat = arith.mulf %lse2, %ln2 : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:52 to 475:118))
      %lse_val = arith.select %sees_nothing, %ninf_row, %lse_nat : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:5 to 475:118))
      cuir.store %lse_val -> %lse_head[%q_wg] : tensor<64xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":477:72 to 477:91))
      %inv_b = cuir.broadcast_rows %row_inv_sum : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc("packed"("flash_fwd.cu":491:55 to 491:98))
      %o_norm = arith.mulf %o_final, %inv_b : tensor<64x128xf32, #WACC> loc("packed"("flash_fwd.cu":491:55 to 491:98))
      %o16 = arith.truncf %o_norm : tensor<64x128xf32, #WACC> to tensor<64x128xf16, #WACC> loc("packed"("flash_fwd.cu":491:7 to 491:54))
      %sO_wg = memref.subview %sO[%wg_row, 0] [64, 128] [1, 1]
          : memref<128x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc("flash_fwd.cu":482:12 to 482:68)
      cuir.store %o16 -> %sO_wg : tensor<64x128xf16, #WACC> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc("smem"("flash_fwd.cu":493:7 to 493:93))
      cuir.barrier.warp loc("flash_fwd.cu":496:3 to 496:16)
      cuir.copy %sO_wg -> %o_head[%q_wg, %c0] : memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":507:7 to 507:100))
      // Consumer 0 takes the turn of consumer 1's last hand-off (after the thread block's last item).
      %is_first = arith.cmpi eq, %consumer, %c0 : index loc("flash_fwd.cu":710:9 to 710:28)
      scf.if %is_first {
        cuir.barrier.named %c1 threads 256 loc("flash_fwd.cu":710:30 to 710:54)
        scf.yield loc("flash_fwd.cu":710:5 to 710:55)
      } loc("flash_fwd.cu":710:5 to 710:55)
      cuir.yield loc("flash_fwd.cu":648:5 to 648:50)
    } loc("flash_fwd.cu":702:5 to 702:40)
    scf.yield loc("flash_fwd.cu":563:3 to 563:24)
  } loc("flash_fwd.cu":563:3 to 563:24)
  cuir.return loc("flash_fwd.cu":660:5 to 660:79)
} loc("flash_fwd_sm90_kernel"("flash_fwd.cu":660:5 to 660:79))
cuir.kernel @flash_fwd_sm90_f16_d64(
    %q: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_fwd.cu":660:27 to 660:79)),
    %k: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_fwd.cu":660:27 to 660:79)),
    %v: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_fwd.cu":660:27 to 660:79)),
    %o: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_fwd.cu":660:27 to 660:79)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_fwd.cu":660:27 to 660:79)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_fwd.cu":660:27 to 660:79)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_fwd.cu":658:1 to 658:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_fwd.cu":660:27 to 660:79)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_fwd.cu":660:27 to 660:79)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_fwd.cu":660:27 to 660:79)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_fwd.cu":660:27 to 660:79)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_fwd.cu":660:27 to 660:79)))
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
  %m_block = cuir.block_id x loc("block.m_block"("flash_fwd.cu":540:3 to 540:68))
  %head_q = cuir.block_id y loc("block.head_q"("flash_fwd.cu":540:3 to 540:68))
  %b = cuir.block_id z loc("block.batch"("flash_fwd.cu":540:3 to 540:68))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("causal_offset"("flash_fwd.cu":543:13 to 543:49))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("ctx.last_key_offset"("flash_fwd.cu":592:5 to 592:92))
  %m_start = arith.muli %m_block, %c128 : index loc("m_start"("flash_fwd.cu":544:13 to 544:49))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("head_kv"("flash_fwd.cu":545:13 to 545:80))
  %head_kv = arith.divui %head_q, %group : index loc("head_kv"("flash_fwd.cu":545:13 to 545:80))
  %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("tma_q"("flash_fwd.cu":814:21 to 814:46))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("tma_k"("flash_fwd.cu":818:11 to 818:36))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("tma_v"("flash_fwd.cu":821:11 to 821:36))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":497:3 to 497:55))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":463:3 to 463:42))

  // ---- KV tiles this block visits: [n_block_min, n_block_max), of which [n_block_min, n_unmasked_blocks) need no mask ----
  %n_block_min = arith.constant 0 : index loc("n_block_min"("flash_fwd.cu":549:3 to 549:23))
  %n_block_all = arith.ceildivui %seqlen_kv, %cBN : index loc("n_block_max"("flash_fwd.cu":550:7 to 550:62))
  %n_full_all = arith.divui %seqlen_kv, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":551:7 to 551:49))
  %m_end = arith.addi %m_start, %c128 : index loc("last_row"("flash_fwd.cu":553:15 to 553:65))
  %m_end_clamped = arith.minui %m_end, %seqlen_q : index loc("last_row"("flash_fwd.cu":553:15 to 553:65))
  %last_row = arith.subi %m_end_clamped, %c1 : index loc("last_row"("flash_fwd.cu":553:15 to 553:65))
  %last_key_of_last_row = arith.addi %last_row, %causal_offset : index loc("last_key_of_last_row"("flash_fwd.cu":554:15 to 554:62))
  %last_key_of_first_row = arith.addi %m_start, %causal_offset : index loc("last_key_of_first_row"("flash_fwd.cu":555:15 to 555:62))
  %llr_neg = arith.cmpi slt, %last_key_of_last_row, %c0 : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %llr_blk = arith.divsi %last_key_of_last_row, %cBN : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %llr_end = arith.addi %llr_blk, %c1 : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %llr_bound = arith.select %llr_neg, %c0, %llr_end : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %n_block_causal = arith.minsi %n_block_all, %llr_bound : index loc("n_block_max"("flash_fwd.cu":556:5 to 556:105))
  %lfr_neg = arith.cmpi slt, %last_key_of_first_row, %c0 : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %lfr_next = arith.addi %last_key_of_first_row, %c1 : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %lfr_blk = arith.divsi %lfr_next, %cBN : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %lfr_bound = arith.select %lfr_neg, %c0, %lfr_blk : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %n_full_causal = arith.minsi %n_full_all, %lfr_bound : index loc("n_unmasked_blocks"("flash_fwd.cu":557:5 to 557:121))
  %n_block_max = arith.select %causal, %n_block_causal, %n_block_all : index loc("n_block_max"("flash_fwd.cu":552:3 to 552:27))
  %n_unmasked_blocks = arith.select %causal, %n_full_causal, %n_full_all : index loc("n_unmasked_blocks"("flash_fwd.cu":552:3 to 552:27))

  %no_keys = arith.cmpi sle, %n_block_max, %n_block_min : index loc("flash_fwd.cu":563:3 to 563:24)
  scf.if %no_keys {
    // No row of this block sees any key: O = 0, LSE = -inf (write_empty_block).
    %zero_o = arith.constant dense<0.0> : tensor<128x64xf16, #WACC> loc("o_head"("flash_fwd.cu":521:103 to 521:125))
    cuir.store %zero_o -> %o_head[%m_start, %c0] : tensor<128x64xf16, #WACC> -> memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":521:32 to 521:125))
    %ninf_lse = arith.constant dense<0xFF800000> : tensor<128xf32, #WROW> loc("lse_head"("flash_fwd.cu":526:7 to 526:30))
    cuir.store %ninf_lse -> %lse_head[%m_start] : tensor<128xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":526:7 to 526:30))
    scf.yield loc("flash_fwd.cu":565:5 to 565:12)
  } else {
    // ---- visits: n_visits, the last is visit n_visits - 1 ----
    %last_block = arith.subi %n_block_max, %c1 : index loc("i"("flash_fwd.cu":421:3 to 421:63))
    %n_visits = arith.subi %n_block_max, %n_block_min : index loc("n_visits"("flash_fwd.cu":240:3 to 240:50))
    %last_visit = arith.subi %n_visits, %c1 : index loc("last_visit"("flash_fwd.cu":638:5 to 638:57))

    // ---- shared memory: Q [128][d] (O in the epilogue), K and V rings [STAGES][BLOCK_N][d], 128-byte swizzled; the mbarriers ----
    %sQ = cuir.alloc {swizzle = 128} : memref<128x64xf16, #S> loc("sQ"("flash_fwd.cu":109:24 to 109:37))
    %sK = cuir.alloc {swizzle = 128} : memref<4x128x64xf16, #S> loc("sK"("flash_fwd.cu":110:24 to 110:60))
    %sV = cuir.alloc {swizzle = 128} : memref<4x128x64xf16, #S> loc("sV"("flash_fwd.cu":111:24 to 111:70))
    %sO = cuir.alloc {swizzle = 128} : memref<128x64xf16, #S> loc("sO"("flash_fwd.cu":112:24 to 112:70))
    %q_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1> loc("bars->q_full"("flash_fwd.cu":673:5 to 673:36))
    %q_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<1> loc("bars->q_empty"("flash_fwd.cu":674:5 to 674:59))
    %k_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<4> loc("bars->k_full"("flash_fwd.cu":677:7 to 677:41))
    %v_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<4> loc("bars->v_full"("flash_fwd.cu":678:7 to 678:41))
    %k_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<4> loc("bars->k_empty"("flash_fwd.cu":679:7 to 679:64))
    %v_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<4> loc("bars->v_empty"("flash_fwd.cu":680:7 to 680:64))

    // =============================== producer warpgroup ===============================
    cuir.bind warpgroup [0] role producer regs 24 {
      cuir.bind warp [0] role producer {
        cuir.barrier.wait %q_empty[%c0], %c1 : !cuir.mbarrier<1> loc("flash_fwd.cu":233:3 to 233:56)
        cuir.barrier.arrive %q_full[%c0] expect_tx 16384 : !cuir.mbarrier<1> loc("flash_fwd.cu":234:3 to 234:60)
        cuir.copy_async tma %q_head[%m_start, %c0] -> %sQ barrier %q_full[%c0]
            : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, #S>, !cuir.mbarrier<1> loc("sQ"("flash_fwd.cu":237:5 to 237:68))
        // K of visit i, then V of visit i - 1.
        %n_steps = arith.addi %n_visits, %c1 : index loc("flash_fwd.cu":241:3 to 241:38)
        scf.for %i = %c0 to %n_steps step %c1 {
          %has_k = arith.cmpi slt, %i, %n_visits : index loc("flash_fwd.cu":242:5 to 242:22)
          scf.if %has_k {
            %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":214:3 to 214:35) at "flash_fwd.cu":243:7 to 243:32))
            %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":243:7 to 243:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":243:7 to 243:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":243:7 to 243:32))
            cuir.barrier.wait %k_empty[%stage], %free : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":243:7 to 243:32))
            cuir.barrier.arrive %k_full[%stage] expect_tx 16384 : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":217:3 to 217:60 at "flash_fwd.cu":243:7 to 243:32))
            %blk = arith.subi %last_block, %i : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":243:7 to 243:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":243:7 to 243:32))
            %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
                : memref<4x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":221:17 to 221:62) at "flash_fwd.cu":243:7 to 243:32))
            cuir.copy_async tma %k_head[%row, %c0] -> %sK_stage barrier %k_full[%stage]
                : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, !cuir.mbarrier<4> loc(callsite("sK"("flash_fwd.cu":221:5 to 221:62) at "flash_fwd.cu":243:7 to 243:32))
            scf.yield loc("flash_fwd.cu":242:5 to 242:22)
          } loc("flash_fwd.cu":242:5 to 242:22)
          %has_v = arith.cmpi sge, %i, %c1 : index loc("flash_fwd.cu":245:5 to 245:16)
          scf.if %has_v {
            %iv = arith.subi %i, %c1 : index loc("flash_fwd.cu":246:83 to 246:105)
            %stage = arith.remui %iv, %cST : index loc(callsite("stage"("flash_fwd.cu":214:3 to 214:35) at "flash_fwd.cu":246:7 to 246:32))
            %round = arith.divui %iv, %cST : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":246:7 to 246:32))
            %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_fwd.cu":215:3 to 215:46) at "flash_fwd.cu":246:7 to 246:32))
            %free = arith.xori %phase, %c1 : index loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":246:7 to 246:32))
            cuir.barrier.wait %v_empty[%stage], %free : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":216:3 to 216:42 at "flash_fwd.cu":246:7 to 246:32))
            cuir.barrier.arrive %v_full[%stage] expect_tx 16384 : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":217:3 to 217:60 at "flash_fwd.cu":246:7 to 246:32))
            %blk = arith.subi %last_block, %iv : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":246:7 to 246:32))
            %row = arith.muli %blk, %cBN : index loc(callsite("row"("flash_fwd.cu":218:3 to 218:50) at "flash_fwd.cu":246:7 to 246:32))
            %sV_stage = memref.subview %sV[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
                : memref<4x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":221:17 to 221:62) at "flash_fwd.cu":246:7 to 246:32))
            cuir.copy_async tma %v_head[%row, %c0] -> %sV_stage barrier %v_full[%stage]
                : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, !cuir.mbarrier<4> loc(callsite("sV"("flash_fwd.cu":221:5 to 221:62) at "flash_fwd.cu":246:7 to 246:32))
            scf.yield loc("flash_fwd.cu":245:5 to 245:16)
          } loc("flash_fwd.cu":245:5 to 245:16)
          scf.yield loc("flash_fwd.cu":241:3 to 241:38)
        } loc("flash_fwd.cu":241:3 to 241:38)
        cuir.yield loc("flash_fwd.cu":572:7 to 572:44)
      } loc("flash_fwd.cu":571:5 to 571:26)
      cuir.yield loc("flash_fwd.cu":694:5 to 694:40)
    } loc("flash_fwd.cu":694:5 to 694:40)

    // =============================== consumer warpgroups ===============================
    cuir.bind warpgroup [1, 2] role consumer regs 240 {
      %consumer = cuir.worker_id loc("consumer_index"("flash_fwd.cu":576:5 to 576:42))
      %wg_row = arith.muli %consumer, %c64 : index loc("wg_row_in_block"("flash_fwd.cu":579:5 to 579:61))
      %q_wg = arith.addi %m_start, %wg_row : index loc("m_start + wg_row_in_block"("flash_fwd.cu":589:5 to 589:65))
      %sQ_wg = memref.subview %sQ[%wg_row, 0] [64, 64] [1, 1]
          : memref<128x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc("ctx.sq_rows"("flash_fwd.cu":583:5 to 583:68))
      %is_second = arith.cmpi eq, %consumer, %c1 : index loc("flash_fwd.cu":704:24 to 704:43)
      %my_turn = arith.addi %consumer, %c1 : index loc("flash_fwd.cu":375:30 to 375:102)
      %their_turn = arith.subi %c2, %consumer : index loc("flash_fwd.cu":379:30 to 379:110)

      // ---- accumulators and softmax state, all in registers ----
      %acc_o_init = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("acc_o"("flash_fwd.cu":603:41 to 603:55))
      %row_max_init = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("row_max"("flash_fwd.cu":599:5 to 599:24))
      %row_sum_init = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("row_sum"("flash_fwd.cu":600:5 to 600:24))
      %log2e = arith.constant 1.44269502 : f32 loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %scale_tile = tensor.splat %scale_log2 : tensor<64x128xf32, #WACC> loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %scale_row = tensor.splat %scale_log2 : tensor<64xf32, #WROW> loc("ctx.scale_log2"("flash_fwd.cu":593:5 to 593:51))
      %zero_row = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":333:30 to 333:87))
      %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32, #WROW> loc("max_scaled"("flash_fwd.cu":333:30 to 333:87))
      %acc_s_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("acc_s"("flash_fwd.cu":597:5 to 597:28))
      %o_rescale_init = arith.constant dense<0.0> : tensor<64xf32, #WROW> loc("o_rescale"("flash_fwd.cu":601:5 to 601:24))
      %p_frag_init = arith.constant dense<0.0> : tensor<64x128xf16, #WA> loc("p_frag"("flash_fwd.cu":598:5 to 598:32))

      cuir.barrier.wait %q_full[%c0], %c0 : !cuir.mbarrier<1> loc("flash_fwd.cu":605:5 to 605:51)
      scf.if %is_second {
        cuir.barrier.named %c1 threads 256 arrive loc("flash_fwd.cu":704:45 to 704:112)
        scf.yield loc("flash_fwd.cu":704:5 to 704:44)
      } loc("flash_fwd.cu":704:5 to 704:44)

      // =============================== masking steps ===============================
      %n_masked = arith.subi %n_block_max, %n_unmasked_blocks : index loc("flash_fwd.cu":626:5 to 626:52)
      %m_acc_o, %m_row_max, %m_row_sum, %m_rescale, %m_p = scf.for %iv = %c0 to %n_masked step %c1
          iter_args(%acc_o = %acc_o_init, %row_max = %row_max_init, %row_sum = %row_sum_init,
                    %o_rescale = %o_rescale_init, %p_prev = %p_frag_init)
          -> (tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xf16, #WA>) {
        %top = arith.subi %n_block_max, %c1 : index loc("n_block"("flash_fwd.cu":622:5 to 622:35))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":626:5 to 626:52))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":421:3 to 421:63) at "flash_fwd.cu":627:7 to 627:37))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":422:3 to 422:35) at "flash_fwd.cu":627:7 to 627:37))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":627:7 to 627:37))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":627:7 to 627:37))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":297:20 to 297:40) at "flash_fwd.cu":439:5 to 439:43))
        // FIRST, a template parameter of the step, is whether this visit is the block's first: no P V before it.
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        %prev = arith.subi %i, %c1 : index loc(callsite("flash_fwd.cu":428:48 to 428:79 at "flash_fwd.cu":627:7 to 627:37))
        %prev_stage = arith.remui %prev, %cST : index loc(callsite("flash_fwd.cu":402:3 to 402:35 at "flash_fwd.cu":428:25 to 428:53))
        %prev_round = arith.divui %prev, %cST : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %prev_phase = arith.remui %prev_round, %c2 : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":427:34 to 427:67) at "flash_fwd.cu":627:7 to 627:37))
        %sV_prev = memref.subview %sV[%prev_stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":405:29 to 405:62) at "flash_fwd.cu":428:25 to 428:53))

        // ------- on this warpgroup's turn: S_i = Q K_i^T, then O = O * correction + P_(i-1) V_(i-1) -------
        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":425:3 to 425:38 at "flash_fwd.cu":627:7 to 627:37))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":426:3 to 426:59 at "flash_fwd.cu":627:7 to 627:37))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":427:3 to 427:32) at "flash_fwd.cu":627:7 to 627:37))
        %o_issued = scf.if %has_prev -> (tensor<64x64xf32, #WACC>) {
          %rescale_b = cuir.broadcast_rows %o_rescale : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          cuir.barrier.wait %v_full[%prev_stage], %prev_phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":404:3 to 404:59 at "flash_fwd.cu":428:25 to 428:53))
          %o_pv = cuir.gemm_async %p_prev, %sV_prev, %acc_o_rescaled
              : tensor<64x128xf16, #WA>, memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":405:3 to 405:63) at "flash_fwd.cu":428:25 to 428:53))
          scf.yield %o_pv : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        } else {
          scf.yield %acc_o : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        } loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":627:7 to 627:37))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":429:3 to 429:38 at "flash_fwd.cu":627:7 to 627:37))
        // S_i has landed once at most the P V behind it is pending.
        %s_pending = arith.select %has_prev, %c1, %c0 : index loc(callsite("flash_fwd.cu":431:3 to 431:36 at "flash_fwd.cu":627:7 to 627:37))
        %acc_s = cuir.gemm_wait %s_issued pending %s_pending {cuir.early_score_hook = "gather"} : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":612:7 to 612:21) at "flash_fwd.cu":627:7 to 627:37))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":433:3 to 433:41 at "flash_fwd.cu":627:7 to 627:37))

        // ------- score tile complete: acc_s = Q K^T (unscaled); the mask of a masking step -------
        %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_wg, %kv0]
            : (tensor<64x128xf32, #WACC>) -> tensor<64x128xf32, #WACC> {
        ^bb0(%x: f32 loc("acc_s"("flash_fwd.cu":304:60 to 304:86)), %bi: index loc("block.batch"("flash_fwd.cu":540:3 to 540:68)), %hi: index loc("block.head_q"("flash_fwd.cu":540:3 to 540:68)), %row: index loc("row"("flash_fwd.cu":302:7 to 302:42)), %col: index loc("col"("flash_fwd.cu":303:7 to 303:46))):
          %past_end = arith.cmpi sge, %col, %seqlen_kv : index loc(callsite("flash_fwd.cu":304:11 to 304:27 at "flash_fwd.cu":439:5 to 439:43))
          %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_fwd.cu":292:27 to 292:48 at "flash_fwd.cu":439:5 to 439:43))
          %past_diag = arith.cmpi sgt, %col, %row_last : index loc(callsite("flash_fwd.cu":304:31 to 304:58 at "flash_fwd.cu":439:5 to 439:43))
          %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_fwd.cu":304:7 to 304:27 at "flash_fwd.cu":439:5 to 439:43))
          %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_fwd.cu":304:60 to 304:86) at "flash_fwd.cu":439:5 to 439:43))
          cuir.yield %r : f32 loc("flash_fwd.cu":439:5 to 439:43)
        } loc("acc_s"("flash_fwd.cu":439:5 to 439:43))

        // ------- online softmax (while P_(i-1) V_(i-1) may still run): row_max / row_sum, P_i, the correction for the next P V -------
        %blk_max = cuir.reduce_rows max %acc_s_masked : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:30 to 333:48) at "flash_fwd.cu":442:3 to 442:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:57 to 333:87) at "flash_fwd.cu":442:3 to 442:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:5 to 333:88) at "flash_fwd.cu":442:3 to 442:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:69) at "flash_fwd.cu":442:3 to 442:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:82) at "flash_fwd.cu":442:3 to 442:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:5 to 334:83) at "flash_fwd.cu":442:3 to 442:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %logits = math.fma %acc_s_masked, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:35 to 342:82) at "flash_fwd.cu":442:3 to 442:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:9 to 342:83) at "flash_fwd.cu":442:3 to 442:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":344:9 to 344:22) at "flash_fwd.cu":442:3 to 442:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:21 to 347:52) at "flash_fwd.cu":442:3 to 442:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:5 to 347:63) at "flash_fwd.cu":442:3 to 442:35))

        // ------- P_(i-1) V_(i-1) has landed: O is readable and V_(i-1)'s stage free; then P_i -------
        %acc_o_new = scf.if %has_prev -> (tensor<64x64xf32, #WACC>) {
          %o_done = cuir.gemm_wait %o_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":445:5 to 445:34) at "flash_fwd.cu":627:7 to 627:37))
          cuir.barrier.arrive %v_empty[%prev_stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":448:5 to 448:57 at "flash_fwd.cu":627:7 to 627:37))
          scf.yield %o_done : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":627:7 to 627:37))
        } else {
          scf.yield %o_issued : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":627:7 to 627:37))
        } loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":627:7 to 627:37))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":366:39 to 366:106) at "flash_fwd.cu":450:3 to 450:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xf16, #WACC> -> tensor<64x128xf16, #WA> loc("p_frag"("flash_fwd.cu":450:3 to 450:30))
        scf.yield %acc_o_new, %new_max, %row_sum_new, %rescale, %p_frag
            : tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xf16, #WA> loc("flash_fwd.cu":626:5 to 626:52)
      } loc("flash_fwd.cu":626:5 to 626:52)

      // =============================== unmasked steps ===============================
      %n_unmasked = arith.subi %n_unmasked_blocks, %n_block_min : index loc("flash_fwd.cu":632:5 to 632:46)
      %u_acc_o, %u_row_max, %u_row_sum, %u_rescale, %u_p = scf.for %iv = %c0 to %n_unmasked step %c1
          iter_args(%acc_o = %m_acc_o, %row_max = %m_row_max, %row_sum = %m_row_sum,
                    %o_rescale = %m_rescale, %p_prev = %m_p)
          -> (tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xf16, #WA>) {
        %top = arith.subi %n_unmasked_blocks, %c1 : index loc("n_block"("flash_fwd.cu":632:5 to 632:46))
        %n_block = arith.subi %top, %iv : index loc("n_block"("flash_fwd.cu":632:5 to 632:46))
        %i = arith.subi %last_block, %n_block : index loc(callsite("i"("flash_fwd.cu":421:3 to 421:63) at "flash_fwd.cu":633:7 to 633:38))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_fwd.cu":422:3 to 422:35) at "flash_fwd.cu":633:7 to 633:38))
        %round = arith.divui %i, %cST : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":633:7 to 633:38))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_fwd.cu":426:39 to 426:58 at "flash_fwd.cu":633:7 to 633:38))
        %kv0 = arith.muli %n_block, %cBN : index loc(callsite("n_block"("flash_fwd.cu":297:20 to 297:40) at "flash_fwd.cu":439:5 to 439:43))
        // FIRST, a template parameter of the step, is whether this visit is the block's first: no P V before it.
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        %prev = arith.subi %i, %c1 : index loc(callsite("flash_fwd.cu":428:48 to 428:79 at "flash_fwd.cu":633:7 to 633:38))
        %prev_stage = arith.remui %prev, %cST : index loc(callsite("flash_fwd.cu":402:3 to 402:35 at "flash_fwd.cu":428:25 to 428:53))
        %prev_round = arith.divui %prev, %cST : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %prev_phase = arith.remui %prev_round, %c2 : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":428:25 to 428:53))
        %sK_stage = memref.subview %sK[%stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sK"("flash_fwd.cu":427:34 to 427:67) at "flash_fwd.cu":633:7 to 633:38))
        %sV_prev = memref.subview %sV[%prev_stage, 0, 0] [1, 128, 64] [1, 1, 1]
            : memref<4x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":405:29 to 405:62) at "flash_fwd.cu":428:25 to 428:53))

        // ------- on this warpgroup's turn: S_i = Q K_i^T, then O = O * correction + P_(i-1) V_(i-1) -------
        cuir.barrier.named %my_turn threads 256 loc(callsite("flash_fwd.cu":425:3 to 425:38 at "flash_fwd.cu":633:7 to 633:38))
        cuir.barrier.wait %k_full[%stage], %phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":426:3 to 426:59 at "flash_fwd.cu":633:7 to 633:38))
        %s_issued = cuir.gemm_async %sQ_wg, %sK_stage transpose_b, %acc_s_init
            : memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":427:3 to 427:32) at "flash_fwd.cu":633:7 to 633:38))
        %o_issued = scf.if %has_prev -> (tensor<64x64xf32, #WACC>) {
          %rescale_b = cuir.broadcast_rows %o_rescale : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          %acc_o_rescaled = arith.mulf %acc_o, %rescale_b : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
          cuir.barrier.wait %v_full[%prev_stage], %prev_phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":404:3 to 404:59 at "flash_fwd.cu":428:25 to 428:53))
          %o_pv = cuir.gemm_async %p_prev, %sV_prev, %acc_o_rescaled
              : tensor<64x128xf16, #WA>, memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":405:3 to 405:63) at "flash_fwd.cu":428:25 to 428:53))
          scf.yield %o_pv : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        } else {
          scf.yield %acc_o : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        } loc(callsite("flash_fwd.cu":428:3 to 428:36 at "flash_fwd.cu":633:7 to 633:38))
        cuir.barrier.named %their_turn threads 256 arrive loc(callsite("flash_fwd.cu":429:3 to 429:38 at "flash_fwd.cu":633:7 to 633:38))
        // S_i has landed once at most the P V behind it is pending.
        %s_pending = arith.select %has_prev, %c1, %c0 : index loc(callsite("flash_fwd.cu":431:3 to 431:36 at "flash_fwd.cu":633:7 to 633:38))
        %acc_s = cuir.gemm_wait %s_issued pending %s_pending {cuir.early_score_hook = "gather"} : tensor<64x128xf32, #WACC> loc(callsite("acc_s"("flash_fwd.cu":616:7 to 616:21) at "flash_fwd.cu":633:7 to 633:38))
        cuir.barrier.arrive %k_empty[%stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":433:3 to 433:41 at "flash_fwd.cu":633:7 to 633:38))

        // ------- score tile complete: every score of this tile is visible -------

        // ------- online softmax (while P_(i-1) V_(i-1) may still run): row_max / row_sum, P_i, the correction for the next P V -------
        %blk_max = cuir.reduce_rows max %acc_s : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %new_max = arith.maximumf %row_max, %blk_max : tensor<64xf32, #WROW> loc(callsite("new_max"("flash_fwd.cu":329:7 to 329:92) at "flash_fwd.cu":442:3 to 442:35))
        %none = arith.cmpf oeq, %new_max, %ninf_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:30 to 333:48) at "flash_fwd.cu":442:3 to 442:35))
        %new_max_s = arith.mulf %new_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:57 to 333:87) at "flash_fwd.cu":442:3 to 442:35))
        %max_scaled = arith.select %none, %zero_row, %new_max_s : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc(callsite("max_scaled"("flash_fwd.cu":333:5 to 333:88) at "flash_fwd.cu":442:3 to 442:35))
        %old_max_s = arith.mulf %row_max, %scale_row : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:69) at "flash_fwd.cu":442:3 to 442:35))
        %max_diff = arith.subf %old_max_s, %max_scaled : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:33 to 334:82) at "flash_fwd.cu":442:3 to 442:35))
        %rescale = math.exp2 %max_diff : tensor<64xf32, #WROW> loc(callsite("o_rescale"("flash_fwd.cu":334:5 to 334:83) at "flash_fwd.cu":442:3 to 442:35))
        %max_b = cuir.broadcast_rows %max_scaled : tensor<64xf32, #WROW> -> tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %neg_max = arith.negf %max_b : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:70 to 342:81) at "flash_fwd.cu":442:3 to 442:35))
        %logits = math.fma %acc_s, %scale_tile, %neg_max : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:35 to 342:82) at "flash_fwd.cu":442:3 to 442:35))
        %p = math.exp2 %logits : tensor<64x128xf32, #WACC> loc(callsite("p"("flash_fwd.cu":342:9 to 342:83) at "flash_fwd.cu":442:3 to 442:35))
        %tile_sum = cuir.reduce_rows sum %p : tensor<64x128xf32, #WACC> -> tensor<64xf32, #WROW> loc(callsite("tile_sum"("flash_fwd.cu":344:9 to 344:22) at "flash_fwd.cu":442:3 to 442:35))
        %sum_rescaled = arith.mulf %row_sum, %rescale : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:21 to 347:52) at "flash_fwd.cu":442:3 to 442:35))
        %row_sum_new = arith.addf %sum_rescaled, %tile_sum : tensor<64xf32, #WROW> loc(callsite("row_sum"("flash_fwd.cu":347:5 to 347:63) at "flash_fwd.cu":442:3 to 442:35))

        // ------- P_(i-1) V_(i-1) has landed: O is readable and V_(i-1)'s stage free; then P_i -------
        %acc_o_new = scf.if %has_prev -> (tensor<64x64xf32, #WACC>) {
          %o_done = cuir.gemm_wait %o_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":445:5 to 445:34) at "flash_fwd.cu":633:7 to 633:38))
          cuir.barrier.arrive %v_empty[%prev_stage] : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":448:5 to 448:57 at "flash_fwd.cu":633:7 to 633:38))
          scf.yield %o_done : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":633:7 to 633:38))
        } else {
          scf.yield %o_issued : tensor<64x64xf32, #WACC> loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":633:7 to 633:38))
        } loc(callsite("flash_fwd.cu":444:3 to 444:24 at "flash_fwd.cu":633:7 to 633:38))
        %p16 = arith.truncf %p : tensor<64x128xf32, #WACC> to tensor<64x128xf16, #WACC> loc(callsite("p_frag"("flash_fwd.cu":366:39 to 366:106) at "flash_fwd.cu":450:3 to 450:30))
        %p_frag = cuir.convert_layout %p16 : tensor<64x128xf16, #WACC> -> tensor<64x128xf16, #WA> loc("p_frag"("flash_fwd.cu":450:3 to 450:30))
        scf.yield %acc_o_new, %new_max, %row_sum_new, %rescale, %p_frag
            : tensor<64x64xf32, #WACC>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64xf32, #WROW>, tensor<64x128xf16, #WA> loc("flash_fwd.cu":632:5 to 632:46)
      } loc("flash_fwd.cu":632:5 to 632:46)

      cuir.barrier.arrive %q_empty[%c0] : !cuir.mbarrier<1> loc("flash_fwd.cu":635:5 to 635:36)

      // =============================== last P V ===============================
      %last_stage = arith.remui %last_visit, %cST : index loc(callsite("flash_fwd.cu":402:3 to 402:35 at "flash_fwd.cu":640:5 to 640:38))
      %last_round = arith.divui %last_visit, %cST : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":640:5 to 640:38))
      %last_phase = arith.remui %last_round, %c2 : index loc(callsite("flash_fwd.cu":404:39 to 404:58 at "flash_fwd.cu":640:5 to 640:38))
      %sV_last = memref.subview %sV[%last_stage, 0, 0] [1, 128, 64] [1, 1, 1]
          : memref<4x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sV"("flash_fwd.cu":405:29 to 405:62) at "flash_fwd.cu":640:5 to 640:38))
      cuir.barrier.named %my_turn threads 256 loc("flash_fwd.cu":639:5 to 639:42)
      %last_rescale_b = cuir.broadcast_rows %u_rescale : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
      %last_acc_o = arith.mulf %u_acc_o, %last_rescale_b : tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":357:33 to 357:69) at "flash_fwd.cu":403:3 to 403:34))
      cuir.barrier.wait %v_full[%last_stage], %last_phase : !cuir.mbarrier<4> loc(callsite("flash_fwd.cu":404:3 to 404:59 at "flash_fwd.cu":640:5 to 640:38))
      %o_last = cuir.gemm_async %u_p, %sV_last, %last_acc_o
          : tensor<64x128xf16, #WA>, memref<128x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_o"("flash_fwd.cu":405:3 to 405:63) at "flash_fwd.cu":640:5 to 640:38))
      cuir.barrier.named %their_turn threads 256 arrive loc("flash_fwd.cu":641:5 to 641:42)
      %o_final = cuir.gemm_wait %o_last pending 0 : tensor<64x64xf32, #WACC> loc("acc_o"("flash_fwd.cu":642:5 to 642:27))
      cuir.barrier.arrive %v_empty[%last_stage] : !cuir.mbarrier<4> loc("flash_fwd.cu":645:5 to 645:60)

      // =============================== epilogue ===============================
      %sees_nothing = arith.cmpf oeq, %u_row_sum, %zero_row : tensor<64xf32, #WROW> loc("row_sees_nothing"("flash_fwd.cu":473:5 to 473:45))
      %one_row = arith.constant dense<1.0> : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":474:50 to 474:59))
      %inv = arith.divf %one_row, %u_row_sum : tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":474:50 to 474:59))
      %row_inv_sum = arith.select %sees_nothing, %zero_row, %inv : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("row_inv_sum"("flash_fwd.cu":474:5 to 474:60))
      %max_l2 = arith.mulf %u_row_max, %scale_row : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:53 to 475:93))
      %log_sum = math.log2 %u_row_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:96 to 475:110))
      %lse2 = arith.addf %max_l2, %log_sum : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:52 to 475:111))
      %ln2 = arith.constant dense<0.693147182> : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:112 to 475:118))
      %lse_nat = arith.mulf %lse2, %ln2 : tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:52 to 475:118))
      %lse_val = arith.select %sees_nothing, %ninf_row, %lse_nat : tensor<64xi1, #WROW>, tensor<64xf32, #WROW> loc("lse"("flash_fwd.cu":475:5 to 475:118))
      cuir.store %lse_val -> %lse_head[%q_wg] : tensor<64xf32, #WROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("lse_head"("flash_fwd.cu":477:72 to 477:91))
      %inv_b = cuir.broadcast_rows %row_inv_sum : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc("packed"("flash_fwd.cu":491:55 to 491:98))
      %o_norm = arith.mulf %o_final, %inv_b : tensor<64x64xf32, #WACC> loc("packed"("flash_fwd.cu":491:55 to 491:98))
      %o16 = arith.truncf %o_norm : tensor<64x64xf32, #WACC> to tensor<64x64xf16, #WACC> loc("packed"("flash_fwd.cu":491:7 to 491:54))
      %sO_wg = memref.subview %sO[%wg_row, 0] [64, 64] [1, 1]
          : memref<128x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc("flash_fwd.cu":482:12 to 482:68)
      cuir.store %o16 -> %sO_wg : tensor<64x64xf16, #WACC> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc("smem"("flash_fwd.cu":493:7 to 493:93))
      cuir.barrier.warp loc("flash_fwd.cu":496:3 to 496:16)
      cuir.copy %sO_wg -> %o_head[%q_wg, %c0] : memref<64x64xf16, strided<[64, 1], offset: ?>, #S> -> memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("o_head"("flash_fwd.cu":507:7 to 507:100))
      // Consumer 0 takes the turn of consumer 1's last hand-off (after the thread block's last item).
      %is_first = arith.cmpi eq, %consumer, %c0 : index loc("flash_fwd.cu":710:9 to 710:28)
      scf.if %is_first {
        cuir.barrier.named %c1 threads 256 loc("flash_fwd.cu":710:30 to 710:54)
        scf.yield loc("flash_fwd.cu":710:5 to 710:55)
      } loc("flash_fwd.cu":710:5 to 710:55)
      cuir.yield loc("flash_fwd.cu":648:5 to 648:50)
    } loc("flash_fwd.cu":702:5 to 702:40)
    scf.yield loc("flash_fwd.cu":563:3 to 563:24)
  } loc("flash_fwd.cu":563:3 to 563:24)
  cuir.return loc("flash_fwd.cu":660:5 to 660:79)
} loc("flash_fwd_sm90_kernel"("flash_fwd.cu":660:5 to 660:79))
