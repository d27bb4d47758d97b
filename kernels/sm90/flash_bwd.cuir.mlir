// Source CuIR of kernels/sm90/flash_bwd.cu: the template from which
// flash_bwd.cuir.mlir is rendered (tools/lift/render_source_cuir.py), one
// launch sequence (preprocess, main, convert) per instantiation of (element
// type, head dim). Every op names the source text it comes from; a test keeps
// the rendered file current (test/Integration/Kernels/sm90-bwd-source-cuir.test).
//
// The convention of the score tile (the variant transfer relies on it):
// - The hardware computes the transposed scores S^T = K Q^T (keys as the
//   wgmma M dimension), so that P^T and dS^T are A fragments in registers.
//   This IR models the score tile in the logical orientation S = Q K^T: rows
//   are the step's 64 queries, columns the consumer's 64 keys. Everything
//   from the score GEMM to dS sees [queries x keys] tiles:
//     %s_issued = cuir.gemm_async %sQ_stage, %sK_wg transpose_b, ...
//               acc_transposed, at the score wgmma (gemm_key_query<T>(acc_s,
//               ...)): the registers hold S^T, as the source's; and
//     %acc_s  = cuir.gemm_wait %s_issued pending 1: the unscaled S, located
//               at the fence_operands(acc_s) after wgmma_wait_group<1>, where
//               the compiler may first read it (a wgmma
//               is cuir.gemm_async: cuir.gemm is mma.sync, whose verifier
//               refuses the wgmma layouts);
//     %acc_dp = cuir.gemm_wait of %dp_issued = cuir.gemm_async %sdO_stage,
//               %sV_wg transpose_b: dP = dO V^T;
//     masking steps only: %acc_s_masked = cuir.elementwise (%acc_s)
//               at [%b, %head_q, %q_row0, %kv0], -inf (0xFF800000) where the
//               key is past seqlen_kv or past the causal diagonal (apply_mask);
//     %p  = math.exp2 (math.fma %s, splat(%scale_log2), -broadcast_rows(%lse_log2))
//               with %scale_log2 = arith.mulf %softmax_scale, %log2e and
//               %log2e = arith.constant 1.44269502 : f32 (scores_to_probs);
//     %ds = arith.mulf %p, (arith.subf %acc_dp, broadcast_rows(%dpsum))
//               (probs_to_dscores);
//   then dV += P^T dO, dK += dS^T Q and dQ = dS K. The hardware's
//   orientation shows only after dS: `cuir.convert_layout ... transpose`
//   turns the 16-bit P and dS into the A fragments P^T and dS^T (the same
//   registers in the source), and dS^T is what goes to shared memory.
//
// Modelling notes:
// - Three kernels in one cuir.launch_sequence, on buffers shared by role:
//   the workspace's fp32 dQ accumulator (workspace:dq_accum), LSE * log2 e
//   (workspace:lse_log2) and D = rowsum(dO * O) (workspace:dpsum), each of
//   rows_pad = roundup(Nq, 64) rows per (batch, query head). The source keeps
//   each 64-row query block of dq_accum in the consumers' fragment order
//   (dq_fragment_index); here it is row-major, a layout of the workspace that
//   no value depends on. The deterministic mode's semaphores are not
//   modelled: this is the DETERMINISTIC = false kernel, whose bulk
//   reductions from different thread blocks commute.
// - The main kernel's grid is (KV tiles, Hkv, B), one block per KV tile: a
//   logical block. The source's one-dimensional grid (block_index) deals
//   them with the tile fastest (an affine grid cannot multiply two sizes),
//   and under the causal mask with GQA in the default mode as pairs
//   (u, T - 1 - u) that one thread block runs one after the other (%paired
//   here): the pair's second tile
//   visits its unmasked query blocks ascending (%descending here), reloads K
//   and V once the first tile's dK and dV have left the Q / dO stages
//   (kv_empty, not modelled: the logical blocks do not share shared
//   memory), and continues the first tile's count of ring stages and dQ
//   hand-offs, where each logical block here starts from 0 (which stage a
//   step uses changes no value).
// - Warp specialization as in the source: warp 0 (one elected thread) is the
//   producer: K and V once on kv_full, then Q + LSE on q_full[stage] and
//   dO + D on do_full[stage] of a ring of STAGES stages, reused once both
//   consumer warpgroups have arrived on q_empty[stage] (an mbarrier arrival
//   is one worker's: the source's NUM_CONSUMER_THREADS arrivals are the two
//   consumer warpgroups here). Warp 1 is the dQ writer: it waits on named
//   barrier DQ_FULL + c (a consumer warpgroup and its warp, 160 threads) for
//   consumer c's dQ tile in shared memory, adds it into the workspace and
//   hands the buffer back on DQ_EMPTY + c. The bulk reduction
//   (cp.reduce.async.bulk .add.f32 of the tile, waited for reading before
//   the hand-back) is a cuir.load of the tile and a cuir.atomic_add: the adds
//   of different thread blocks to one query block commute, and a plain store
//   there is a race the interpreter reports. The two warps are workers of
//   their own (a nested bind would run one after the other in the
//   interpreter), so the producer warpgroup's setmaxnreg budget (32) is not
//   recorded (a warp's bind carries none); the consumers' 232 is.
// - Warpgroups 1 and 2 are the consumers (cuir.worker_id 0 and 1), each
//   owning keys [64c, 64c + 64) of the block's 128. At head dim 128 consumer
//   c computes dQ columns [64c, 64c + 64) over all 128 keys, after named
//   barrier DS_BARRIER (both warpgroups stored dS^T); at head dim 64 each
//   computes all columns over its own keys (DS_WG_BARRIER + c) and both
//   tiles are added into the same dQ block.
// - The wgmmas are cuir.gemm_async + cuir.gemm_wait as in the source: S and
//   dP in flight together, S waited for with dP pending (wgmma_wait_group<1>),
//   dP before dS; dV and dK (one wgmma group in the source, two GEMMs here)
//   and dQ waited for together (wgmma_wait_group<0>) before the step releases
//   its stage (q_empty) and before dQ leaves the registers. dQ's A operand,
//   dS read transposed from the dS^T buffer (an MN-major descriptor in the
//   source), is a transposing cuir.load into registers here.
// - A step's query block is virtual; the block-iteration point q_tiles
//   (cuir_kernels::DenseQTiles, cuir/kv_tiles.cuh) maps it to the query tile
//   that is loaded and masked, the identity here: no op stands for it, and
//   the TMA row, the mask row, the LSE / D rows and the dQ block read the
//   virtual block m where the source reads q_tiles(m). The steps loop over
//   virtual blocks v: [m_begin, m_unmasked_begin) masking, then up to m_end;
//   visit v is block range.visit(v), v for the masking ones and the
//   unmasked ones from the last down; each block for every head of the GQA
//   group (the source's consumers count both along one loop per kind of
//   step). The deterministic mode (ascending unmasked blocks) is not
//   modelled.
// - The masking steps (a ragged KV tile, or for causal the query blocks
//   crossing the diagonal) come first, then the unmasked ones; each loop has
//   the step's body, the mask only in the first.
// - dK (times softmax_scale) and dV leave through the Q and dO stages once
//   both warpgroups are past their last GEMM (DS_BARRIER): consumer c's 64
//   rows are stage c here (the source interleaves them by 64-column slab);
//   the copy out drops keys past Nkv.
// - Padded query rows (past Nq) load as zeros (TMA), and get LSE = +inf and
//   D = 0 from the preprocess: their P is 0, as in the source.
// - IS_CAUSAL is the kernel parameter `causal`, as in the forward's Source CuIR.

#WA    = #cuir.frag<a, wgmma_m64nNk16, warps = [1, 1]>
#WACC  = #cuir.frag<acc, wgmma_m64nNk16, warps = [1, 1]>
#WROW  = #cuir.frag<row, wgmma_m64nNk16, warps = [1, 1]>
#RACC  = #cuir.frag<acc, mma_m16n8k16, warps = [1, 1]>
#RROW  = #cuir.frag<row, mma_m16n8k16, warps = [1, 1]>
#G     = #cuir.mem<global>
#S     = #cuir.mem<shared>

// E: element type, D: head dim, RPB: rows per preprocess / convert block (256 threads, D / 8 per row),
// QB: bytes of Q (or dO) + LSE (or D) of a step, KVB: bytes of K + V, DQK: keys of a dQ GEMM (DQ_KEYS),
// DQKS / DQCS: the first key / column of consumer c's dQ GEMM is c times this, DSB / DSBS / DST: the dS
// barrier (DS_BARRIER or DS_WG_BARRIER + c) and its threads.
cuir.launch_sequence @flash_bwd_sm90_bf16_d128 [@flash_bwd_sm90_bf16_d128_preprocess, @flash_bwd_sm90_bf16_d128_main, @flash_bwd_sm90_bf16_d128_convert_dq] loc("flash_bwd.cu":876:20 to 876:94)

// =============================== preprocess: D, LSE * log2 e, dQ accumulator zeroed ===============================
cuir.kernel @flash_bwd_sm90_bf16_d128_preprocess(
    %o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_bwd.cu":190:33 to 190:89)),
    %d_o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":190:33 to 190:89)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_bwd.cu":190:33 to 190:89)),
    %ws_dq_accum: memref<?x?x?x128xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":190:91 to 190:109)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":190:91 to 190:109)),
    %ws_dpsum: memref<?x?x?xf32, #G> {cuir.arg = "workspace:dpsum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.dpsum"("flash_bwd.cu":190:91 to 190:109)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":190:33 to 190:89)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":190:33 to 190:89)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":190:33 to 190:89)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":190:33 to 190:89)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":190:33 to 190:89)))
    grid (b, hq, hkv, nq, nkv) -> (((nq ceildiv 64) * 64) ceildiv 16, hq, b)
    threads 256 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %cRPB = arith.constant 16 : index loc("kRowKernelThreads / THREADS_PER_ROW")
  %fzero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %log2e = arith.constant 1.44269502 : f32
  %blk = cuir.block_id x loc("row"("flash_bwd.cu":193:3 to 193:102))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":192:3 to 192:53))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":192:3 to 192:53))
  %row0 = arith.muli %blk, %cRPB : index loc("row"("flash_bwd.cu":193:3 to 193:102))
  %zero = arith.constant dense<0.0> : tensor<16x128xf32, #RACC> loc("dot"("flash_bwd.cu":195:3 to 195:19))

  // ---- O and dO of the block's rows (a row past Nq reads nothing: 0) ----
  %o16 = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<16x128xf32, #RACC>) -> tensor<16x128xbf16, #RACC> {
  ^bb0(%x: f32 loc("o"("flash_bwd.cu":199:5 to 199:102)), %bi: index loc("batch"("flash_bwd.cu":192:3 to 192:53)), %hi: index loc("head_q"("flash_bwd.cu":192:3 to 192:53)), %qi: index loc("row"("flash_bwd.cu":193:3 to 193:102)), %ci: index loc("chunk"("flash_bwd.cu":194:3 to 194:51))):
    %in = arith.cmpi slt, %qi, %seqlen_q : index loc("flash_bwd.cu":196:3 to 196:29)
    %qc = arith.select %in, %qi, %c0 : index loc("flash_bwd.cu":196:3 to 196:29)
    %v = memref.load %o[%bi, %qc, %hi, %ci] : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> loc("o"("flash_bwd.cu":199:5 to 199:102))
    %z = arith.constant 0.0 : bf16
    %r = arith.select %in, %v, %z : bf16 loc("flash_bwd.cu":196:3 to 196:29)
    cuir.yield %r : bf16 loc("o"("flash_bwd.cu":199:5 to 199:102))
  } loc("o"("flash_bwd.cu":199:5 to 199:102))
  %do16 = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<16x128xf32, #RACC>) -> tensor<16x128xbf16, #RACC> {
  ^bb0(%x: f32 loc("d_o"("flash_bwd.cu":200:5 to 200:107)), %bi: index loc("batch"("flash_bwd.cu":192:3 to 192:53)), %hi: index loc("head_q"("flash_bwd.cu":192:3 to 192:53)), %qi: index loc("row"("flash_bwd.cu":193:3 to 193:102)), %ci: index loc("chunk"("flash_bwd.cu":194:3 to 194:51))):
    %in = arith.cmpi slt, %qi, %seqlen_q : index loc("flash_bwd.cu":196:3 to 196:29)
    %qc = arith.select %in, %qi, %c0 : index loc("flash_bwd.cu":196:3 to 196:29)
    %v = memref.load %d_o[%bi, %qc, %hi, %ci] : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> loc("d_o"("flash_bwd.cu":200:5 to 200:107))
    %z = arith.constant 0.0 : bf16
    %r = arith.select %in, %v, %z : bf16 loc("flash_bwd.cu":196:3 to 196:29)
    cuir.yield %r : bf16 loc("d_o"("flash_bwd.cu":200:5 to 200:107))
  } loc("d_o"("flash_bwd.cu":200:5 to 200:107))

  // ---- D = rowsum(dO * O) in fp32 ----
  %of = arith.extf %o16 : tensor<16x128xbf16, #RACC> to tensor<16x128xf32, #RACC> loc("a"("flash_bwd.cu":204:7 to 204:67))
  %dof = arith.extf %do16 : tensor<16x128xbf16, #RACC> to tensor<16x128xf32, #RACC> loc("b"("flash_bwd.cu":204:69 to 204:116))
  %prod = arith.mulf %of, %dof : tensor<16x128xf32, #RACC> loc("dot"("flash_bwd.cu":205:7 to 205:49))
  %d_rows = cuir.reduce_rows sum %prod : tensor<16x128xf32, #RACC> -> tensor<16xf32, #RROW> loc("dot"("flash_bwd.cu":209:67 to 209:115))

  // ---- LSE * log2 e; +inf for a row that sees no key and for padded rows (their P is then 0) ----
  %lse_tile = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<16x128xf32, #RACC>) -> tensor<16x128xf32, #RACC> {
  ^bb0(%x: f32 loc("lse"("flash_bwd.cu":215:5 to 215:22)), %bi: index loc("batch"("flash_bwd.cu":192:3 to 192:53)), %hi: index loc("head_q"("flash_bwd.cu":192:3 to 192:53)), %qi: index loc("row"("flash_bwd.cu":193:3 to 193:102)), %ci: index loc("chunk"("flash_bwd.cu":194:3 to 194:51))):
    %in = arith.cmpi slt, %qi, %seqlen_q : index loc("lse"("flash_bwd.cu":216:9 to 216:32))
    %qc = arith.select %in, %qi, %c0 : index loc("lse"("flash_bwd.cu":216:9 to 216:32))
    %l = memref.load %lse[%bi, %hi, %qc] : memref<?x?x?xf32, #G> loc("lse"("flash_bwd.cu":216:33 to 216:128))
    %lv = arith.select %in, %l, %ninf : f32 loc("lse"("flash_bwd.cu":216:9 to 216:136))
    %none = arith.cmpf oeq, %lv, %ninf : f32 loc("flash_bwd.cu":218:23 to 218:35)
    %scaled = arith.mulf %lv, %log2e : f32 loc("flash_bwd.cu":218:45 to 218:57)
    %r = arith.select %none, %pinf, %scaled : f32 loc("flash_bwd.cu":218:5 to 218:58)
    cuir.yield %r : f32 loc("flash_bwd.cu":218:5 to 218:58)
  } loc("flash_bwd.cu":218:5 to 218:58)
  // One value per row (the row's chunk-0 thread writes it): the row vector.
  %lse_rows = cuir.reduce_rows max %lse_tile : tensor<16x128xf32, #RACC> -> tensor<16xf32, #RROW> loc("flash_bwd.cu":214:3 to 214:18)

  // ---- the workspace rows of (batch, head_q) ----
  %rows_pad = memref.dim %ws_dpsum, %c2 : memref<?x?x?xf32, #G> loc("ws.rows_pad"("flash_bwd.cu":177:70 to 177:89))
  %dpsum_head = memref.subview %ws_dpsum[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":211:3 to 211:61))
  %lse_head = memref.subview %ws_lse_log2[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":211:3 to 211:61))
  %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows_pad, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf32, #G> to memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":212:3 to 212:84))
  cuir.store %zero -> %dq_head[%row0, %c0] : tensor<16x128xf32, #RACC> -> memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":213:3 to 213:51))
  cuir.store %d_rows -> %dpsum_head[%row0] : tensor<16xf32, #RROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.dpsum"("flash_bwd.cu":217:5 to 217:24))
  cuir.store %lse_rows -> %lse_head[%row0] : tensor<16xf32, #RROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.lse_log2"("flash_bwd.cu":218:5 to 218:58))
  cuir.return loc("flash_bwd.cu":210:3 to 210:34)
} loc("flash_bwd_preprocess_kernel"("flash_bwd.cu":190:5 to 190:110))

// =============================== main: one block per (KV tile, KV head, batch) ===============================
cuir.kernel @flash_bwd_sm90_bf16_d128_main(
    %q: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_bwd.cu":759:27 to 759:83)),
    %k: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_bwd.cu":759:27 to 759:83)),
    %v: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_bwd.cu":759:27 to 759:83)),
    %d_o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":759:27 to 759:83)),
    %dk: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dk"} loc("params.dk"("flash_bwd.cu":759:27 to 759:83)),
    %dv: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dv"} loc("params.dv"("flash_bwd.cu":759:27 to 759:83)),
    %ws_dq_accum: memref<?x?x?x128xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":759:85 to 759:103)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":759:85 to 759:103)),
    %ws_dpsum: memref<?x?x?xf32, #G> {cuir.arg = "workspace:dpsum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.dpsum"("flash_bwd.cu":759:85 to 759:103)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":759:27 to 759:83)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_bwd.cu":757:1 to 757:77)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":759:27 to 759:83)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":759:27 to 759:83)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":759:27 to 759:83)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":759:27 to 759:83)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":759:27 to 759:83)))
    grid (b, hq, hkv, nq, nkv) -> (nkv ceildiv 128, hkv, b)
    threads 384 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index loc("DQ_EMPTY_BARRIER")
  %c6 = arith.constant 6 : index loc("DQ_FULL_BARRIER")
  %c63 = arith.constant 63 : index loc("T::BLOCK_M - 1")
  %c64 = arith.constant 64 : index loc("T::BLOCK_M")
  %c128 = arith.constant 128 : index loc("T::BLOCK_N")
  %cST = arith.constant 2 : index loc("T::STAGES")
  %cDQKS = arith.constant 0 : index loc("T::DQ_SPLIT_COLUMNS ? 0 : T::WG_KEYS")
  %cDQCS = arith.constant 64 : index loc("T::DQ_SPLIT_COLUMNS ? T::DQ_COLS : 0")
  %cDSB = arith.constant 1 : index loc("T::DQ_SPLIT_COLUMNS ? DS_BARRIER : DS_WG_BARRIER")
  %cDSBS = arith.constant 0 : index loc("T::DQ_SPLIT_COLUMNS ? 0 : 1")

  // ---- block coordinates ----
  %n_block = cuir.block_id x loc("n_block"("flash_bwd.cu":785:7 to 785:41))
  %head_kv = cuir.block_id y loc("head_kv"("flash_bwd.cu":766:3 to 766:58))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":766:3 to 766:58))

  // ---- query_blocks<T, IS_CAUSAL>: virtual query blocks [m_min, m_max) see a key of the tile, [m_min, m_unmasked) need the mask ----
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc(callsite("m_blocks"("flash_bwd.cu":293:3 to 293:72) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key0 = arith.muli %n_block, %c128 : index loc(callsite("key0"("flash_bwd.cu":294:3 to 294:41) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key_end = arith.addi %key0, %c128 : index loc(callsite("key_last"("flash_bwd.cu":295:3 to 295:69) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key_end_c = arith.minsi %key_end, %seqlen_kv : index loc(callsite("key_last"("flash_bwd.cu":295:3 to 295:69) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key_last = arith.subi %key_end_c, %c1 : index loc(callsite("key_last"("flash_bwd.cu":295:3 to 295:69) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %ragged = arith.cmpi sgt, %key_end, %seqlen_kv : index loc(callsite("ragged"("flash_bwd.cu":296:3 to 296:60) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %full_unmasked = arith.select %ragged, %m_blocks, %c0 : index loc(callsite("flash_bwd.cu":297:3 to 297:47 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %offset = arith.subi %seqlen_kv, %seqlen_q : index loc(callsite("offset"("flash_bwd.cu":298:3 to 298:57) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %first_row = arith.subi %key0, %offset : index loc(callsite("first_row"("flash_bwd.cu":299:3 to 299:39) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %last_q = arith.subi %seqlen_q, %c1 : index loc(callsite("flash_bwd.cu":300:7 to 300:38 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %no_rows = arith.cmpi sgt, %first_row, %last_q : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %first_row_c = arith.maxsi %first_row, %c0 : index loc(callsite("m_min"("flash_bwd.cu":301:3 to 301:52) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_min = arith.divsi %first_row_c, %c64 : index loc(callsite("m_min"("flash_bwd.cu":301:3 to 301:52) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr = arith.subi %key_last, %offset : index loc(callsite("all_keys_row"("flash_bwd.cu":302:3 to 302:54) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %all_keys_row = arith.maxsi %akr, %c0 : index loc(callsite("all_keys_row"("flash_bwd.cu":302:3 to 302:54) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_up = arith.addi %all_keys_row, %c63 : index loc(callsite("m_unmasked"("flash_bwd.cu":303:54 to 303:98) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_blk = arith.divsi %akr_up, %c64 : index loc(callsite("m_unmasked"("flash_bwd.cu":303:54 to 303:98) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_min = arith.maxsi %akr_blk, %c_min : index loc(callsite("m_unmasked"("flash_bwd.cu":303:50 to 303:106) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_max = arith.minsi %akr_min, %m_blocks : index loc(callsite("m_unmasked"("flash_bwd.cu":303:46 to 303:117) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_unmasked = arith.select %ragged, %m_blocks, %akr_max : index loc(callsite("m_unmasked"("flash_bwd.cu":303:3 to 303:118) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_min2 = arith.select %no_rows, %c0, %c_min : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_unmasked2 = arith.select %no_rows, %c0, %c_unmasked : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_max2 = arith.select %no_rows, %c0, %m_blocks : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %m_min = arith.select %causal, %c_min2, %c0 : index loc(callsite("flash_bwd.cu":297:3 to 297:28 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %m_unmasked = arith.select %causal, %c_unmasked2, %full_unmasked : index loc(callsite("flash_bwd.cu":297:3 to 297:28 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %m_max = arith.select %causal, %c_max2, %m_blocks : index loc(callsite("flash_bwd.cu":297:3 to 297:28 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %num_steps = arith.subi %m_max, %m_min : index loc("flash_bwd.cu":281:30 to 281:51)

  // ---- block_index: causal GQA tiles are dealt in pairs (u, T - 1 - u); the second visits its unmasked query blocks ascending ----
  %kv_tiles = arith.ceildivui %seqlen_kv, %c128 : index loc("kv_tiles"("flash_bwd.cu":751:28 to 751:88))
  %last_tile = arith.subi %kv_tiles, %c1 : index loc("flash_bwd.cu":753:33 to 753:49)
  %mirror = arith.subi %last_tile, %n_block : index loc("flash_bwd.cu":753:33 to 753:49)
  %after_mirror = arith.cmpi sgt, %n_block, %mirror : index loc("partner"("flash_bwd.cu":753:3 to 753:79))
  %gqa = arith.cmpi ne, %num_heads_q, %num_heads_kv : index loc(callsite("flash_bwd.cu":745:41 to 745:82 at "paired"("flash_bwd.cu":752:3 to 752:70)))
  %paired = arith.andi %causal, %gqa : i1 loc("paired"("flash_bwd.cu":752:3 to 752:70))
  %second_of_pair = arith.andi %paired, %after_mirror : i1 loc("partner"("flash_bwd.cu":753:3 to 753:79))
  %true = arith.constant true loc("flash_bwd.cu":790:7 to 790:33)
  %descending = arith.xori %second_of_pair, %true : i1 loc("range.descending"("flash_bwd.cu":790:7 to 790:33))

  // ---- the GQA group, the sequence views ----
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("group"("flash_bwd.cu":707:3 to 707:62))
  %head_q0 = arith.muli %head_kv, %group : index loc("head_q0"("flash_bwd.cu":708:3 to 708:38))
  %head_end = arith.addi %head_q0, %group : index loc("head_end"("flash_bwd.cu":708:40 to 708:66))
  %last_key_offset = arith.select %causal, %offset, %seqlen_kv : index loc("ctx.last_key_offset"("flash_bwd.cu":823:5 to 823:93))
  %rows_pad = memref.dim %ws_dpsum, %c2 : memref<?x?x?xf32, #G> loc("ws.rows_pad"("flash_bwd.cu":177:70 to 177:89))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("maps.k"("flash_bwd.cu":859:11 to 859:42))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("maps.v"("flash_bwd.cu":862:11 to 862:42))

  // ---- shared memory: K, V [BLOCK_N][d]; Q, dO [STAGES][BLOCK_M][d]; dS^T [2][BLOCK_N][BLOCK_M]; dQ [2][64][64] fp32; LSE, D [STAGES][BLOCK_M]; the mbarriers ----
  %sK = cuir.alloc {swizzle = 128} : memref<128x128xbf16, #S> loc("sK"("flash_bwd.cu":109:24 to 109:37))
  %sV = cuir.alloc {swizzle = 128} : memref<128x128xbf16, #S> loc("sV"("flash_bwd.cu":110:24 to 110:61))
  %sQ = cuir.alloc {swizzle = 128} : memref<2x64x128xbf16, #S> loc("sQ"("flash_bwd.cu":111:24 to 111:61))
  %sdO = cuir.alloc {swizzle = 128} : memref<2x64x128xbf16, #S> loc("sdO"("flash_bwd.cu":112:24 to 112:70))
  %sdS = cuir.alloc {swizzle = 128} : memref<2x128x64xbf16, #S> loc("sdS"("flash_bwd.cu":113:24 to 113:71))
  %sdQ = cuir.alloc : memref<2x64x64xf32, #S> loc("sdQ"("flash_bwd.cu":114:24 to 114:67))
  %sLSE = cuir.alloc : memref<2x64xf32, #S> loc("sLSE"("flash_bwd.cu":115:24 to 115:78))
  %sdPsum = cuir.alloc : memref<2x64xf32, #S> loc("sdPsum"("flash_bwd.cu":116:24 to 116:72))
  %kv_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1> loc("bars->kv_full"("flash_bwd.cu":769:5 to 769:37))
  %q_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->q_full"("flash_bwd.cu":773:7 to 773:41))
  %do_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->do_full"("flash_bwd.cu":774:7 to 774:42))
  %q_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<2> loc("bars->q_empty"("flash_bwd.cu":775:7 to 775:64))

  // =============================== producer: warp 0, one elected thread ===============================
  cuir.bind warp [0] role producer {
    cuir.barrier.arrive %kv_full[%c0] expect_tx 65536 : !cuir.mbarrier<1> loc("flash_bwd.cu":346:3 to 346:66)
    cuir.copy_async tma %k_head[%key0, %c0] -> %sK barrier %kv_full[%c0]
        : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xbf16, #S>, !cuir.mbarrier<1> loc("sK"("flash_bwd.cu":349:5 to 349:71))
    cuir.copy_async tma %v_head[%key0, %c0] -> %sV barrier %kv_full[%c0]
        : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xbf16, #S>, !cuir.mbarrier<1> loc("sV"("flash_bwd.cu":351:5 to 351:71))
    %i_p = scf.for %vb = %m_min to %m_max step %c1 iter_args(%i_v = %c0) -> (index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":358:70 to 358:93))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":358:70 to 358:93))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":358:70 to 358:93))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":358:70 to 358:93))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":358:70 to 358:93))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":358:70 to 358:93))
      %i_k = scf.for %head_q = %head_q0 to %head_end step %c1 iter_args(%i = %i_v) -> (index) {
      %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
          : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("maps.q"("flash_bwd.cu":853:21 to 853:52))
      %do_head = memref.subview %d_o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
          : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("maps.d_o"("flash_bwd.cu":856:11 to 856:46))
      %lse_head = memref.subview %ws_lse_log2[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
          : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":325:3 to 325:61))
      %dpsum_head = memref.subview %ws_dpsum[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
          : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":325:3 to 325:61))
        // producer_load_step: Q + LSE and dO + D of step i into stage i % STAGES, once both consumers released it.
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_bwd.cu":322:3 to 322:35) at "flash_bwd.cu":358:7 to 358:60))
        %round = arith.divui %i, %cST : index loc(callsite("flash_bwd.cu":323:40 to 323:65 at "flash_bwd.cu":358:7 to 358:60))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_bwd.cu":323:40 to 323:65 at "flash_bwd.cu":358:7 to 358:60))
        %free = arith.xori %phase, %c1 : index loc(callsite("flash_bwd.cu":323:40 to 323:65 at "flash_bwd.cu":358:7 to 358:60))
        cuir.barrier.wait %q_empty[%stage], %free : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":323:3 to 323:66 at "flash_bwd.cu":358:7 to 358:60))
        %row = arith.muli %m, %c64 : index loc(callsite("row"("flash_bwd.cu":324:3 to 324:39) at "flash_bwd.cu":358:7 to 358:60))
        %sQ_stage = memref.subview %sQ[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":329:17 to 329:87) at "flash_bwd.cu":358:7 to 358:60))
        %sLSE_stage = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("sLSE"("flash_bwd.cu":331:13 to 331:57) at "flash_bwd.cu":358:7 to 358:60))
        cuir.barrier.arrive %q_full[%stage] expect_tx 16640 : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":326:3 to 326:82 at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %q_head[%row, %c0] -> %sQ_stage barrier %q_full[%stage]
            : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sQ"("flash_bwd.cu":329:5 to 329:96) at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %lse_head[%row] -> %sLSE_stage barrier %q_full[%stage]
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sLSE"("flash_bwd.cu":331:3 to 331:112) at "flash_bwd.cu":358:7 to 358:60))
        %sdO_stage = memref.subview %sdO[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":335:17 to 335:88) at "flash_bwd.cu":358:7 to 358:60))
        %sdPsum_stage = memref.subview %sdPsum[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("sdPsum"("flash_bwd.cu":337:13 to 337:59) at "flash_bwd.cu":358:7 to 358:60))
        cuir.barrier.arrive %do_full[%stage] expect_tx 16640 : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":332:3 to 332:83 at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %do_head[%row, %c0] -> %sdO_stage barrier %do_full[%stage]
            : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sdO"("flash_bwd.cu":335:5 to 335:99) at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %dpsum_head[%row] -> %sdPsum_stage barrier %do_full[%stage]
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sdPsum"("flash_bwd.cu":337:3 to 337:112) at "flash_bwd.cu":358:7 to 358:60))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":357:72 to 357:86)
        scf.yield %i_next : index loc("flash_bwd.cu":357:5 to 357:86)
      } loc("head_q"("flash_bwd.cu":357:5 to 357:86))
      scf.yield %i_k : index loc("flash_bwd.cu":356:3 to 356:52)
    } loc("v"("flash_bwd.cu":356:3 to 356:52))
    cuir.yield loc("flash_bwd.cu":802:16 to 802:117)
  } loc("flash_bwd.cu":798:5 to 798:51)

  // =============================== dQ writer: warp 1 ===============================
  cuir.bind warp [1] role producer {
    %steps = arith.muli %group, %num_steps : index loc("steps"("flash_bwd.cu":389:3 to 389:52))
    %i_w = scf.for %vb = %m_min to %m_max step %c1 iter_args(%i_v = %c0) -> (index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":393:72 to 393:102))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":393:72 to 393:102))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":393:72 to 393:102))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":393:72 to 393:102))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":393:72 to 393:102))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":393:72 to 393:102))
      %i_k = scf.for %head_q = %head_q0 to %head_end step %c1 iter_args(%i = %i_v) -> (index) {
      %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows_pad, 128] [1, 1, 1, 1]
          : memref<?x?x?x128xf32, #G> to memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("dq_block"("flash_bwd.cu":394:7 to 394:60))
        %row_at = arith.muli %m, %c64 : index loc("row_at"("flash_bwd.cu":393:64 to 393:116))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":392:72 to 392:86)
        %more = arith.cmpi slt, %i_next, %steps : index loc("flash_bwd.cu":411:9 to 411:26)
        scf.for %c = %c0 to %c2 step %c1 {
          %full_id = arith.addi %c6, %c : index loc("flash_bwd.cu":399:9 to 399:68)
          cuir.barrier.named %full_id threads 160 loc("flash_bwd.cu":399:9 to 399:68)
          %sdQ_c = memref.subview %sdQ[%c, 0, 0] [1, 64, 64] [1, 1, 1]
              : memref<2x64x64xf32, #S> to memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":402:31 to 402:105)
          // The bulk reduction: the tile read from shared memory, added into the workspace.
          %dq_tile = cuir.load %sdQ_c : memref<64x64xf32, strided<[64, 1], offset: ?>, #S> -> tensor<64x64xf32, #WACC> loc("flash_bwd.cu":401:11 to 401:90)
          %col = arith.muli %c, %cDQCS : index loc("flash_bwd.cu":401:43 to 401:88)
          cuir.atomic_add %dq_tile -> %dq_head[%row_at, %col] : tensor<64x64xf32, #WACC> -> memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("flash_bwd.cu":401:11 to 401:90)
          scf.if %more {
            %empty_id = arith.addi %c4, %c : index loc("flash_bwd.cu":411:42 to 411:104)
            cuir.barrier.named %empty_id threads 160 arrive loc("flash_bwd.cu":411:42 to 411:104)
            scf.yield loc("flash_bwd.cu":411:9 to 411:26)
          } loc("flash_bwd.cu":411:9 to 411:26)
          scf.yield loc("flash_bwd.cu":398:7 to 398:49)
        } loc("flash_bwd.cu":398:7 to 398:49)
        scf.yield %i_next : index loc("flash_bwd.cu":392:5 to 392:86)
      } loc("head_q"("flash_bwd.cu":392:5 to 392:86))
      scf.yield %i_k : index loc("flash_bwd.cu":391:3 to 391:52)
    } loc("v"("flash_bwd.cu":391:3 to 391:52))
    cuir.yield loc("flash_bwd.cu":808:16 to 808:113)
  } loc("flash_bwd.cu":804:7 to 804:38)

  // =============================== consumer warpgroups 1 and 2 ===============================
  cuir.bind warpgroup [1, 2] role consumer regs 232 {
    %consumer = cuir.worker_id loc("ctx.consumer"("flash_bwd.cu":819:5 to 819:30))
    %kv_rows = arith.muli %consumer, %c64 : index loc("kv_rows"("flash_bwd.cu":587:3 to 587:60))
    // The first key of this warpgroup's 64: a column of the score tile here (a row in the source).
    %kv0 = arith.addi %key0, %kv_rows : index loc("ctx.wg_key0"("flash_bwd.cu":832:7 to 832:70))
    %sK_wg = memref.subview %sK[%kv_rows, 0] [64, 128] [1, 1]
        : memref<128x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc("flash_bwd.cu":596:28 to 596:62)
    %sV_wg = memref.subview %sV[%kv_rows, 0] [64, 128] [1, 1]
        : memref<128x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc("flash_bwd.cu":598:29 to 598:63)
    // dQ = dS K of this warpgroup: keys [dq_key0, dq_key0 + DQ_KEYS), columns [dq_slab * 64, + 64).
    %dq_key0 = arith.muli %consumer, %cDQKS : index loc("dq_key0"("flash_bwd.cu":627:3 to 627:75))
    %dq_col0 = arith.muli %consumer, %cDQCS : index loc("dq_slab"("flash_bwd.cu":628:3 to 628:62))
    %sK_dq = memref.subview %sK[%dq_key0, %dq_col0] [128, 64] [1, 1]
        : memref<128x128xbf16, #S> to memref<128x64xbf16, strided<[128, 1], offset: ?>, #S> loc("flash_bwd.cu":630:14 to 630:83)
    %ds_bar_c = arith.muli %consumer, %cDSBS : index loc("flash_bwd.cu":623:5 to 623:58)
    %ds_bar = arith.addi %cDSB, %ds_bar_c : index loc("flash_bwd.cu":623:5 to 623:58)
    %dq_empty_id = arith.addi %c4, %consumer : index loc("flash_bwd.cu":640:14 to 640:85)
    %dq_full_id = arith.addi %c6, %consumer : index loc("flash_bwd.cu":643:3 to 643:75)
    %sdQ_wg = memref.subview %sdQ[%consumer, 0, 0] [1, 64, 64] [1, 1, 1]
        : memref<2x64x64xf32, #S> to memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc("dst"("flash_bwd.cu":566:44 to 566:100))

    // ---- constants of the steps; dK, dV in registers over all of them ----
    %log2e = arith.constant 1.44269502 : f32 loc("ctx.scale_log2"("flash_bwd.cu":824:5 to 824:52))
    %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("ctx.scale_log2"("flash_bwd.cu":824:5 to 824:52))
    %scale_tile = tensor.splat %scale_log2 : tensor<64x64xf32, #WACC> loc("ctx.scale_log2"("flash_bwd.cu":824:5 to 824:52))
    %ninf = arith.constant 0xFF800000 : f32 loc("flash_bwd.cu":504:87 to 504:92)
    %zero_s = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("acc_s"("flash_bwd.cu":594:3 to 594:45))
    %zero_dq = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("acc_dq"("flash_bwd.cu":626:3 to 626:28))
    %acc_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("flash_bwd.cu":705:41 to 705:68)
    cuir.barrier.wait %kv_full[%c0], %c0 : !cuir.mbarrier<1> loc("flash_bwd.cu":706:3 to 706:42)

    // The source runs each kind of step as one loop over i, counting the head
    // and the query block along; here a loop over the query blocks, each over
    // the group's heads.
    // =============================== masking steps ===============================
    %m_dk, %m_dv, %m_i = scf.for %vb = %m_min to %m_unmasked step %c1
        iter_args(%dk_v = %acc_init, %dv_v = %acc_init, %i_v = %c0)
        -> (tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":713:58 to 713:81))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":713:58 to 713:81))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":713:58 to 713:81))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":713:58 to 713:81))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":713:58 to 713:81))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":713:58 to 713:81))
      %h_dk, %h_dv, %h_i = scf.for %head_q = %head_q0 to %head_end step %c1
          iter_args(%acc_dk = %dk_v, %acc_dv = %dv_v, %i = %i_v)
          -> (tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index) {
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_bwd.cu":580:3 to 580:35) at "flash_bwd.cu":713:5 to 713:28))
        %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":713:5 to 713:28))
        %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":713:5 to 713:28))
        %q_row0 = arith.muli %m, %c64 : index loc(callsite("q_row0"("flash_bwd.cu":581:3 to 581:42) at "flash_bwd.cu":713:5 to 713:28))
        %sQ_stage = memref.subview %sQ[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sq"("flash_bwd.cu":588:3 to 588:74) at "flash_bwd.cu":713:5 to 713:28))
        %sdO_stage = memref.subview %sdO[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdo"("flash_bwd.cu":589:3 to 589:76) at "flash_bwd.cu":713:5 to 713:28))
        %sLSE_stage = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("lse_log2"("flash_bwd.cu":590:59 to 590:107) at "flash_bwd.cu":713:5 to 713:28))
        %sdPsum_stage = memref.subview %sdPsum[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dpsum"("flash_bwd.cu":591:56 to 591:106) at "flash_bwd.cu":713:5 to 713:28))

        // ---- S = Q K^T and dP = dO V^T (the hardware's K Q^T and V dO^T), [queries x keys] ----
        cuir.barrier.wait %q_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":595:3 to 595:45 at "flash_bwd.cu":713:5 to 713:28))
        %s_issued = cuir.gemm_async %sQ_stage, %sK_wg transpose_b, %zero_s acc_transposed
            : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":596:3 to 596:67) at "flash_bwd.cu":713:5 to 713:28))
        cuir.barrier.wait %do_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":597:3 to 597:46 at "flash_bwd.cu":713:5 to 713:28))
        %dp_issued = cuir.gemm_async %sdO_stage, %sV_wg transpose_b, %zero_s acc_transposed
            : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":598:3 to 598:69) at "flash_bwd.cu":713:5 to 713:28))
        // S has landed once at most dP, issued after it, is pending.
        %acc_s = cuir.gemm_wait %s_issued pending 1 : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":600:3 to 600:25) at "flash_bwd.cu":713:5 to 713:28))

        // ------- score tile complete: acc_s = Q K^T (unscaled) of query tile m_tile; the mask of a masking step -------
        %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_row0, %kv0]
            : (tensor<64x64xf32, #WACC>) -> tensor<64x64xf32, #WACC> {
        ^bb0(%x: f32 loc("acc_s"("flash_bwd.cu":504:68 to 504:92)), %bi: index loc("batch"("flash_bwd.cu":766:3 to 766:58)), %hi: index loc("head_q"("flash_bwd.cu":711:3 to 711:51)), %qi: index loc("row"("flash_bwd.cu":503:7 to 503:46)), %ki: index loc("key"("flash_bwd.cu":502:7 to 502:50))):
          %past_end = arith.cmpi sge, %ki, %seqlen_kv : index loc(callsite("flash_bwd.cu":504:11 to 504:31 at "flash_bwd.cu":603:28 to 603:61))
          %row_last = arith.addi %qi, %last_key_offset : index loc(callsite("flash_bwd.cu":504:41 to 504:66 at "flash_bwd.cu":603:28 to 603:61))
          %past_diag = arith.cmpi sgt, %ki, %row_last : index loc(callsite("flash_bwd.cu":504:35 to 504:66 at "flash_bwd.cu":603:28 to 603:61))
          %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_bwd.cu":504:7 to 504:31 at "flash_bwd.cu":603:28 to 603:61))
          %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_bwd.cu":504:68 to 504:92) at "flash_bwd.cu":603:28 to 603:61))
          cuir.yield %r : f32 loc("flash_bwd.cu":603:28 to 603:61)
        } loc("acc_s"("flash_bwd.cu":603:28 to 603:61))

        // ---- P = exp2(S * scale * log2 e - LSE * log2 e) (scores_to_probs) ----
        %lse_log2 = cuir.load %sLSE_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("lse"("flash_bwd.cu":516:5 to 516:93) at "flash_bwd.cu":604:3 to 604:64))
        %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %neg_lse = arith.negf %lse_b : tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %logits = math.fma %acc_s_masked, %scale_tile, %neg_lse : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:36 to 519:96) at "flash_bwd.cu":604:3 to 604:64))
        %p = math.exp2 %logits : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:7 to 519:97) at "flash_bwd.cu":604:3 to 604:64))

        // ---- dS = P * (dP - D) (probs_to_dscores), once dP has landed ----
        %acc_dp = cuir.gemm_wait %dp_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":605:3 to 605:25) at "flash_bwd.cu":713:5 to 713:28))
        %dpsum = cuir.load %sdPsum_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("d"("flash_bwd.cu":529:5 to 529:88) at "flash_bwd.cu":607:3 to 607:54))
        %d_b = cuir.broadcast_rows %dpsum : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":531:93 to 531:112 at "flash_bwd.cu":607:3 to 607:54))
        %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:72 to 531:113) at "flash_bwd.cu":607:3 to 607:54))
        %ds = arith.mulf %p, %dp_minus_d : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:33 to 531:113) at "flash_bwd.cu":607:3 to 607:54))

        // ---- dV += P^T dO, dK += dS^T Q: the 16-bit P and dS as the A fragments P^T and dS^T (the same registers in the source) ----
        %p16 = arith.truncf %p : tensor<64x64xf32, #WACC> to tensor<64x64xbf16, #WACC> loc(callsite("p_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":611:3 to 611:28))
        %p_t = cuir.convert_layout %p16 transpose : tensor<64x64xbf16, #WACC> -> tensor<64x64xbf16, #WA> loc("p_frag"("flash_bwd.cu":611:3 to 611:28))
        %ds16 = arith.truncf %ds : tensor<64x64xf32, #WACC> to tensor<64x64xbf16, #WACC> loc(callsite("ds_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":612:3 to 612:30))
        %ds_t = cuir.convert_layout %ds16 transpose : tensor<64x64xbf16, #WACC> -> tensor<64x64xbf16, #WA> loc("ds_frag"("flash_bwd.cu":612:3 to 612:30))
        %dv_issued = cuir.gemm_async %p_t, %sdO_stage, %acc_dv
            : tensor<64x64xbf16, #WA>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":614:3 to 614:39) at "flash_bwd.cu":713:5 to 713:28))
        %dk_issued = cuir.gemm_async %ds_t, %sQ_stage, %acc_dk
            : tensor<64x64xbf16, #WA>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":615:3 to 615:39) at "flash_bwd.cu":713:5 to 713:28))

        // ---- dS^T to shared memory (buffer i % 2, this warpgroup's 64 key rows), then dQ = dS K ----
        %ds_buf = arith.remui %i, %c2 : index loc(callsite("ds"("flash_bwd.cu":617:3 to 617:77) at "flash_bwd.cu":713:5 to 713:28))
        %sdS_wg = memref.subview %sdS[%ds_buf, %kv_rows, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x128x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("rows"("flash_bwd.cu":551:3 to 551:58) at "flash_bwd.cu":618:3 to 618:37))
        cuir.store %ds_t -> %sdS_wg : tensor<64x64xbf16, #WA> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":556:7 to 556:114 at "flash_bwd.cu":618:3 to 618:37))
        cuir.barrier.named %ds_bar threads 256 loc(callsite("flash_bwd.cu":620:3 to 620:37 at "flash_bwd.cu":713:5 to 713:28))
        %sdS_dq = memref.subview %sdS[%ds_buf, %dq_key0, 0] [1, 128, 64] [1, 1, 1]
            : memref<2x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":629:22 to 629:54 at "flash_bwd.cu":713:5 to 713:28))
        %ds_a = cuir.load %sdS_dq transpose : memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> -> tensor<64x128xbf16, #WA> loc(callsite("flash_bwd.cu":466:20 to 466:85 at "flash_bwd.cu":713:5 to 713:28))
        %dq_issued = cuir.gemm_async %ds_a, %sK_dq, %zero_dq
            : tensor<64x128xbf16, #WA>, memref<128x64xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":629:3 to 629:55) at "flash_bwd.cu":713:5 to 713:28))
        // wgmma_wait_group<0>: dV, dK and dQ have landed; Q, dO and dS^T are read.
        %dv_n = cuir.gemm_wait %dv_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":713:5 to 713:28))
        %dk_n = cuir.gemm_wait %dk_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":713:5 to 713:28))
        %acc_dq = cuir.gemm_wait %dq_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":713:5 to 713:28))
        cuir.barrier.arrive %q_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":637:3 to 637:41 at "flash_bwd.cu":713:5 to 713:28))

        // ---- dQ to shared memory for the dQ writer, once it has read the previous step's ----
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":713:5 to 713:28))
        scf.if %has_prev {
          cuir.barrier.named %dq_empty_id threads 160 loc(callsite("flash_bwd.cu":640:14 to 640:85 at "flash_bwd.cu":713:5 to 713:28))
          scf.yield loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":713:5 to 713:28))
        } loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":713:5 to 713:28))
        cuir.store %acc_dq -> %sdQ_wg : tensor<64x64xf32, #WACC> -> memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":569:5 to 569:103) at "flash_bwd.cu":641:3 to 641:27))
        cuir.barrier.named %dq_full_id threads 160 arrive loc(callsite("flash_bwd.cu":643:3 to 643:75 at "flash_bwd.cu":713:5 to 713:28))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":712:3 to 712:33)
        scf.yield %dk_n, %dv_n, %i_next : tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index loc("flash_bwd.cu":714:5 to 714:53)
      } loc("head_q"("flash_bwd.cu":714:5 to 714:53))
      scf.yield %h_dk, %h_dv, %h_i : tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index loc("flash_bwd.cu":712:3 to 712:33)
    } loc("v"("flash_bwd.cu":712:3 to 712:33))

    // =============================== unmasked steps ===============================
    %dk_acc, %dv_acc, %i_c = scf.for %vb = %m_unmasked to %m_max step %c1
        iter_args(%dk_v = %m_dk, %dv_v = %m_dv, %i_v = %m_i)
        -> (tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":717:59 to 717:82))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":717:59 to 717:82))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":717:59 to 717:82))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":717:59 to 717:82))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":717:59 to 717:82))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":717:59 to 717:82))
      %h_dk, %h_dv, %h_i = scf.for %head_q = %head_q0 to %head_end step %c1
          iter_args(%acc_dk = %dk_v, %acc_dv = %dv_v, %i = %i_v)
          -> (tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index) {
        %q_row0 = arith.muli %m, %c64 : index loc(callsite("q_row0"("flash_bwd.cu":581:3 to 581:42) at "flash_bwd.cu":717:5 to 717:29))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_bwd.cu":580:3 to 580:35) at "flash_bwd.cu":717:5 to 717:29))
        %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":717:5 to 717:29))
        %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":717:5 to 717:29))
        %sQ_stage = memref.subview %sQ[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sq"("flash_bwd.cu":588:3 to 588:74) at "flash_bwd.cu":717:5 to 717:29))
        %sdO_stage = memref.subview %sdO[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdo"("flash_bwd.cu":589:3 to 589:76) at "flash_bwd.cu":717:5 to 717:29))
        %sLSE_stage = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("lse_log2"("flash_bwd.cu":590:59 to 590:107) at "flash_bwd.cu":717:5 to 717:29))
        %sdPsum_stage = memref.subview %sdPsum[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dpsum"("flash_bwd.cu":591:56 to 591:106) at "flash_bwd.cu":717:5 to 717:29))

        // ---- S = Q K^T and dP = dO V^T (the hardware's K Q^T and V dO^T), [queries x keys] ----
        cuir.barrier.wait %q_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":595:3 to 595:45 at "flash_bwd.cu":717:5 to 717:29))
        %s_issued = cuir.gemm_async %sQ_stage, %sK_wg transpose_b, %zero_s acc_transposed
            : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":596:3 to 596:67) at "flash_bwd.cu":717:5 to 717:29))
        cuir.barrier.wait %do_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":597:3 to 597:46 at "flash_bwd.cu":717:5 to 717:29))
        %dp_issued = cuir.gemm_async %sdO_stage, %sV_wg transpose_b, %zero_s acc_transposed
            : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":598:3 to 598:69) at "flash_bwd.cu":717:5 to 717:29))
        // S has landed once at most dP, issued after it, is pending.
        %acc_s = cuir.gemm_wait %s_issued pending 1 : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":600:3 to 600:25) at "flash_bwd.cu":717:5 to 717:29))

        // ------- score tile complete: acc_s = Q K^T (unscaled) of query tile m_tile; no mask -------

        // ---- P = exp2(S * scale * log2 e - LSE * log2 e) (scores_to_probs) ----
        %lse_log2 = cuir.load %sLSE_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("lse"("flash_bwd.cu":516:5 to 516:93) at "flash_bwd.cu":604:3 to 604:64))
        %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %neg_lse = arith.negf %lse_b : tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %logits = math.fma %acc_s, %scale_tile, %neg_lse : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:36 to 519:96) at "flash_bwd.cu":604:3 to 604:64))
        %p = math.exp2 %logits : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:7 to 519:97) at "flash_bwd.cu":604:3 to 604:64))

        // ---- dS = P * (dP - D) (probs_to_dscores), once dP has landed ----
        %acc_dp = cuir.gemm_wait %dp_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":605:3 to 605:25) at "flash_bwd.cu":717:5 to 717:29))
        %dpsum = cuir.load %sdPsum_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("d"("flash_bwd.cu":529:5 to 529:88) at "flash_bwd.cu":607:3 to 607:54))
        %d_b = cuir.broadcast_rows %dpsum : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":531:93 to 531:112 at "flash_bwd.cu":607:3 to 607:54))
        %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:72 to 531:113) at "flash_bwd.cu":607:3 to 607:54))
        %ds = arith.mulf %p, %dp_minus_d : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:33 to 531:113) at "flash_bwd.cu":607:3 to 607:54))

        // ---- dV += P^T dO, dK += dS^T Q: the 16-bit P and dS as the A fragments P^T and dS^T (the same registers in the source) ----
        %p16 = arith.truncf %p : tensor<64x64xf32, #WACC> to tensor<64x64xbf16, #WACC> loc(callsite("p_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":611:3 to 611:28))
        %p_t = cuir.convert_layout %p16 transpose : tensor<64x64xbf16, #WACC> -> tensor<64x64xbf16, #WA> loc("p_frag"("flash_bwd.cu":611:3 to 611:28))
        %ds16 = arith.truncf %ds : tensor<64x64xf32, #WACC> to tensor<64x64xbf16, #WACC> loc(callsite("ds_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":612:3 to 612:30))
        %ds_t = cuir.convert_layout %ds16 transpose : tensor<64x64xbf16, #WACC> -> tensor<64x64xbf16, #WA> loc("ds_frag"("flash_bwd.cu":612:3 to 612:30))
        %dv_issued = cuir.gemm_async %p_t, %sdO_stage, %acc_dv
            : tensor<64x64xbf16, #WA>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":614:3 to 614:39) at "flash_bwd.cu":717:5 to 717:29))
        %dk_issued = cuir.gemm_async %ds_t, %sQ_stage, %acc_dk
            : tensor<64x64xbf16, #WA>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":615:3 to 615:39) at "flash_bwd.cu":717:5 to 717:29))

        // ---- dS^T to shared memory (buffer i % 2, this warpgroup's 64 key rows), then dQ = dS K ----
        %ds_buf = arith.remui %i, %c2 : index loc(callsite("ds"("flash_bwd.cu":617:3 to 617:77) at "flash_bwd.cu":717:5 to 717:29))
        %sdS_wg = memref.subview %sdS[%ds_buf, %kv_rows, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x128x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("rows"("flash_bwd.cu":551:3 to 551:58) at "flash_bwd.cu":618:3 to 618:37))
        cuir.store %ds_t -> %sdS_wg : tensor<64x64xbf16, #WA> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":556:7 to 556:114 at "flash_bwd.cu":618:3 to 618:37))
        cuir.barrier.named %ds_bar threads 256 loc(callsite("flash_bwd.cu":620:3 to 620:37 at "flash_bwd.cu":717:5 to 717:29))
        %sdS_dq = memref.subview %sdS[%ds_buf, %dq_key0, 0] [1, 128, 64] [1, 1, 1]
            : memref<2x128x64xbf16, #S> to memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":629:22 to 629:54 at "flash_bwd.cu":717:5 to 717:29))
        %ds_a = cuir.load %sdS_dq transpose : memref<128x64xbf16, strided<[64, 1], offset: ?>, #S> -> tensor<64x128xbf16, #WA> loc(callsite("flash_bwd.cu":466:20 to 466:85 at "flash_bwd.cu":717:5 to 717:29))
        %dq_issued = cuir.gemm_async %ds_a, %sK_dq, %zero_dq
            : tensor<64x128xbf16, #WA>, memref<128x64xbf16, strided<[128, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":629:3 to 629:55) at "flash_bwd.cu":717:5 to 717:29))
        // wgmma_wait_group<0>: dV, dK and dQ have landed; Q, dO and dS^T are read.
        %dv_n = cuir.gemm_wait %dv_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":717:5 to 717:29))
        %dk_n = cuir.gemm_wait %dk_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":717:5 to 717:29))
        %acc_dq = cuir.gemm_wait %dq_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":717:5 to 717:29))
        cuir.barrier.arrive %q_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":637:3 to 637:41 at "flash_bwd.cu":717:5 to 717:29))

        // ---- dQ to shared memory for the dQ writer, once it has read the previous step's ----
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":717:5 to 717:29))
        scf.if %has_prev {
          cuir.barrier.named %dq_empty_id threads 160 loc(callsite("flash_bwd.cu":640:14 to 640:85 at "flash_bwd.cu":717:5 to 717:29))
          scf.yield loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":717:5 to 717:29))
        } loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":717:5 to 717:29))
        cuir.store %acc_dq -> %sdQ_wg : tensor<64x64xf32, #WACC> -> memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":569:5 to 569:103) at "flash_bwd.cu":641:3 to 641:27))
        cuir.barrier.named %dq_full_id threads 160 arrive loc(callsite("flash_bwd.cu":643:3 to 643:75 at "flash_bwd.cu":717:5 to 717:29))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":716:3 to 716:25)
        scf.yield %dk_n, %dv_n, %i_next : tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index loc("flash_bwd.cu":718:5 to 718:53)
      } loc("head_q"("flash_bwd.cu":718:5 to 718:53))
      scf.yield %h_dk, %h_dv, %h_i : tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index loc("flash_bwd.cu":716:3 to 716:25)
    } loc("v"("flash_bwd.cu":716:3 to 716:25))

    // =============================== write_dkv: dK * softmax_scale and dV through the Q and dO stages ===============================
    cuir.barrier.named %c1 threads 256 loc("flash_bwd.cu":685:3 to 685:58)
    %scale_b = tensor.splat %softmax_scale : tensor<64x128xf32, #WACC> loc("flash_bwd.cu":689:51 to 689:77)
    %dk_scaled = arith.mulf %dk_acc, %scale_b : tensor<64x128xf32, #WACC> loc(callsite("flash_bwd.cu":665:35 to 665:64 at "flash_bwd.cu":687:3 to 687:45))
    %dk16 = arith.truncf %dk_scaled : tensor<64x128xf32, #WACC> to tensor<64x128xbf16, #WACC> loc(callsite("flash_bwd.cu":665:11 to 665:100 at "flash_bwd.cu":687:3 to 687:45))
    %dv16 = arith.truncf %dv_acc : tensor<64x128xf32, #WACC> to tensor<64x128xbf16, #WACC> loc(callsite("flash_bwd.cu":665:11 to 665:100 at "flash_bwd.cu":690:3 to 690:46))
    %sQ_out = memref.subview %sQ[%consumer, 0, 0] [1, 64, 128] [1, 1, 1]
        : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc("flash_bwd.cu":687:3 to 687:45)
    %sdO_out = memref.subview %sdO[%consumer, 0, 0] [1, 64, 128] [1, 1, 1]
        : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc("flash_bwd.cu":690:3 to 690:46)
    %dk_head = memref.subview %dk[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
        : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":688:21 to 688:122)
    %dv_head = memref.subview %dv[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
        : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":691:21 to 691:122)
    cuir.store %dk16 -> %sQ_out : tensor<64x128xbf16, #WACC> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":664:7 to 664:89 at "flash_bwd.cu":687:3 to 687:45))
    cuir.barrier.warp loc(callsite("flash_bwd.cu":668:3 to 668:16 at "flash_bwd.cu":687:3 to 687:45))
    cuir.copy %sQ_out -> %dk_head[%kv0, %c0] : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("flash_bwd.cu":675:5 to 675:117 at "flash_bwd.cu":687:3 to 687:45))
    cuir.store %dv16 -> %sdO_out : tensor<64x128xbf16, #WACC> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":664:7 to 664:89 at "flash_bwd.cu":690:3 to 690:46))
    cuir.barrier.warp loc(callsite("flash_bwd.cu":668:3 to 668:16 at "flash_bwd.cu":690:3 to 690:46))
    cuir.copy %sdO_out -> %dv_head[%kv0, %c0] : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("flash_bwd.cu":675:5 to 675:117 at "flash_bwd.cu":690:3 to 690:46))
    cuir.yield loc("flash_bwd.cu":835:11 to 835:95)
  } loc("flash_bwd.cu":814:5 to 814:40)
  cuir.return loc("flash_bwd.cu":759:5 to 759:104)
} loc("flash_bwd_sm90_kernel"("flash_bwd.cu":759:5 to 759:104))

// =============================== convert: dQ = softmax_scale * accumulator ===============================
cuir.kernel @flash_bwd_sm90_bf16_d128_convert_dq(
    %ws_dq_accum: memref<?x?x?x128xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":237:91 to 237:109)),
    %dq: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dq"} loc("params.dq"("flash_bwd.cu":237:33 to 237:89)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":237:33 to 237:89)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":237:33 to 237:89)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":237:33 to 237:89)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":237:33 to 237:89)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":237:33 to 237:89)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":237:33 to 237:89)))
    grid (b, hq, hkv, nq, nkv) -> (((nq ceildiv 64) * 64) ceildiv 16, hq, b)
    threads 256 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %cRPB = arith.constant 16 : index loc("kRowKernelThreads / THREADS_PER_ROW")
  %blk = cuir.block_id x loc("row"("flash_bwd.cu":240:3 to 240:102))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":239:3 to 239:53))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":239:3 to 239:53))
  %row0 = arith.muli %blk, %cRPB : index loc("row"("flash_bwd.cu":240:3 to 240:102))
  %zero = arith.constant dense<0.0> : tensor<16x128xf32, #RACC> loc("flash_bwd.cu":245:3 to 245:22)
  // The accumulator's rows of the block (row-major here; the fragment order in the source).
  %acc = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<16x128xf32, #RACC>) -> tensor<16x128xf32, #RACC> {
  ^bb0(%x: f32 loc("a"("flash_bwd.cu":248:5 to 248:21)), %bi: index loc("batch"("flash_bwd.cu":239:3 to 239:53)), %hi: index loc("head_q"("flash_bwd.cu":239:3 to 239:53)), %qi: index loc("row"("flash_bwd.cu":240:3 to 240:102)), %ci: index loc("chunk"("flash_bwd.cu":241:3 to 241:51))):
    %a = memref.load %ws_dq_accum[%bi, %hi, %qi, %ci] : memref<?x?x?x128xf32, #G> loc("a"("flash_bwd.cu":249:9 to 249:114))
    cuir.yield %a : f32 loc("a"("flash_bwd.cu":249:9 to 249:114))
  } loc("block"("flash_bwd.cu":243:3 to 243:104))
  %s = tensor.splat %softmax_scale : tensor<16x128xf32, #RACC> loc("s"("flash_bwd.cu":244:3 to 244:40))
  %dq_f = arith.mulf %acc, %s : tensor<16x128xf32, #RACC> loc("flash_bwd.cu":250:38 to 250:45)
  %dq16 = arith.truncf %dq_f : tensor<16x128xf32, #RACC> to tensor<16x128xbf16, #RACC> loc("packed"("flash_bwd.cu":250:5 to 250:56))
  %dq_head = memref.subview %dq[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":253:30 to 253:97)
  // Rows past Nq are not written (if (row >= params.seqlen_q) return): the store skips them.
  cuir.store %dq16 -> %dq_head[%row0, %c0] : tensor<16x128xbf16, #RACC> -> memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":253:3 to 253:128)
  cuir.return loc("flash_bwd.cu":242:3 to 242:38)
} loc("flash_bwd_convert_dq_kernel"("flash_bwd.cu":237:5 to 237:110))
cuir.launch_sequence @flash_bwd_sm90_bf16_d64 [@flash_bwd_sm90_bf16_d64_preprocess, @flash_bwd_sm90_bf16_d64_main, @flash_bwd_sm90_bf16_d64_convert_dq] loc("flash_bwd.cu":876:20 to 876:94)

// =============================== preprocess: D, LSE * log2 e, dQ accumulator zeroed ===============================
cuir.kernel @flash_bwd_sm90_bf16_d64_preprocess(
    %o: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_bwd.cu":190:33 to 190:89)),
    %d_o: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":190:33 to 190:89)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_bwd.cu":190:33 to 190:89)),
    %ws_dq_accum: memref<?x?x?x64xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":190:91 to 190:109)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":190:91 to 190:109)),
    %ws_dpsum: memref<?x?x?xf32, #G> {cuir.arg = "workspace:dpsum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.dpsum"("flash_bwd.cu":190:91 to 190:109)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":190:33 to 190:89)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":190:33 to 190:89)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":190:33 to 190:89)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":190:33 to 190:89)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":190:33 to 190:89)))
    grid (b, hq, hkv, nq, nkv) -> (((nq ceildiv 64) * 64) ceildiv 32, hq, b)
    threads 256 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %cRPB = arith.constant 32 : index loc("kRowKernelThreads / THREADS_PER_ROW")
  %fzero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %log2e = arith.constant 1.44269502 : f32
  %blk = cuir.block_id x loc("row"("flash_bwd.cu":193:3 to 193:102))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":192:3 to 192:53))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":192:3 to 192:53))
  %row0 = arith.muli %blk, %cRPB : index loc("row"("flash_bwd.cu":193:3 to 193:102))
  %zero = arith.constant dense<0.0> : tensor<32x64xf32, #RACC> loc("dot"("flash_bwd.cu":195:3 to 195:19))

  // ---- O and dO of the block's rows (a row past Nq reads nothing: 0) ----
  %o16 = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<32x64xf32, #RACC>) -> tensor<32x64xbf16, #RACC> {
  ^bb0(%x: f32 loc("o"("flash_bwd.cu":199:5 to 199:102)), %bi: index loc("batch"("flash_bwd.cu":192:3 to 192:53)), %hi: index loc("head_q"("flash_bwd.cu":192:3 to 192:53)), %qi: index loc("row"("flash_bwd.cu":193:3 to 193:102)), %ci: index loc("chunk"("flash_bwd.cu":194:3 to 194:51))):
    %in = arith.cmpi slt, %qi, %seqlen_q : index loc("flash_bwd.cu":196:3 to 196:29)
    %qc = arith.select %in, %qi, %c0 : index loc("flash_bwd.cu":196:3 to 196:29)
    %v = memref.load %o[%bi, %qc, %hi, %ci] : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> loc("o"("flash_bwd.cu":199:5 to 199:102))
    %z = arith.constant 0.0 : bf16
    %r = arith.select %in, %v, %z : bf16 loc("flash_bwd.cu":196:3 to 196:29)
    cuir.yield %r : bf16 loc("o"("flash_bwd.cu":199:5 to 199:102))
  } loc("o"("flash_bwd.cu":199:5 to 199:102))
  %do16 = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<32x64xf32, #RACC>) -> tensor<32x64xbf16, #RACC> {
  ^bb0(%x: f32 loc("d_o"("flash_bwd.cu":200:5 to 200:107)), %bi: index loc("batch"("flash_bwd.cu":192:3 to 192:53)), %hi: index loc("head_q"("flash_bwd.cu":192:3 to 192:53)), %qi: index loc("row"("flash_bwd.cu":193:3 to 193:102)), %ci: index loc("chunk"("flash_bwd.cu":194:3 to 194:51))):
    %in = arith.cmpi slt, %qi, %seqlen_q : index loc("flash_bwd.cu":196:3 to 196:29)
    %qc = arith.select %in, %qi, %c0 : index loc("flash_bwd.cu":196:3 to 196:29)
    %v = memref.load %d_o[%bi, %qc, %hi, %ci] : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> loc("d_o"("flash_bwd.cu":200:5 to 200:107))
    %z = arith.constant 0.0 : bf16
    %r = arith.select %in, %v, %z : bf16 loc("flash_bwd.cu":196:3 to 196:29)
    cuir.yield %r : bf16 loc("d_o"("flash_bwd.cu":200:5 to 200:107))
  } loc("d_o"("flash_bwd.cu":200:5 to 200:107))

  // ---- D = rowsum(dO * O) in fp32 ----
  %of = arith.extf %o16 : tensor<32x64xbf16, #RACC> to tensor<32x64xf32, #RACC> loc("a"("flash_bwd.cu":204:7 to 204:67))
  %dof = arith.extf %do16 : tensor<32x64xbf16, #RACC> to tensor<32x64xf32, #RACC> loc("b"("flash_bwd.cu":204:69 to 204:116))
  %prod = arith.mulf %of, %dof : tensor<32x64xf32, #RACC> loc("dot"("flash_bwd.cu":205:7 to 205:49))
  %d_rows = cuir.reduce_rows sum %prod : tensor<32x64xf32, #RACC> -> tensor<32xf32, #RROW> loc("dot"("flash_bwd.cu":209:67 to 209:115))

  // ---- LSE * log2 e; +inf for a row that sees no key and for padded rows (their P is then 0) ----
  %lse_tile = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<32x64xf32, #RACC>) -> tensor<32x64xf32, #RACC> {
  ^bb0(%x: f32 loc("lse"("flash_bwd.cu":215:5 to 215:22)), %bi: index loc("batch"("flash_bwd.cu":192:3 to 192:53)), %hi: index loc("head_q"("flash_bwd.cu":192:3 to 192:53)), %qi: index loc("row"("flash_bwd.cu":193:3 to 193:102)), %ci: index loc("chunk"("flash_bwd.cu":194:3 to 194:51))):
    %in = arith.cmpi slt, %qi, %seqlen_q : index loc("lse"("flash_bwd.cu":216:9 to 216:32))
    %qc = arith.select %in, %qi, %c0 : index loc("lse"("flash_bwd.cu":216:9 to 216:32))
    %l = memref.load %lse[%bi, %hi, %qc] : memref<?x?x?xf32, #G> loc("lse"("flash_bwd.cu":216:33 to 216:128))
    %lv = arith.select %in, %l, %ninf : f32 loc("lse"("flash_bwd.cu":216:9 to 216:136))
    %none = arith.cmpf oeq, %lv, %ninf : f32 loc("flash_bwd.cu":218:23 to 218:35)
    %scaled = arith.mulf %lv, %log2e : f32 loc("flash_bwd.cu":218:45 to 218:57)
    %r = arith.select %none, %pinf, %scaled : f32 loc("flash_bwd.cu":218:5 to 218:58)
    cuir.yield %r : f32 loc("flash_bwd.cu":218:5 to 218:58)
  } loc("flash_bwd.cu":218:5 to 218:58)
  // One value per row (the row's chunk-0 thread writes it): the row vector.
  %lse_rows = cuir.reduce_rows max %lse_tile : tensor<32x64xf32, #RACC> -> tensor<32xf32, #RROW> loc("flash_bwd.cu":214:3 to 214:18)

  // ---- the workspace rows of (batch, head_q) ----
  %rows_pad = memref.dim %ws_dpsum, %c2 : memref<?x?x?xf32, #G> loc("ws.rows_pad"("flash_bwd.cu":177:70 to 177:89))
  %dpsum_head = memref.subview %ws_dpsum[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":211:3 to 211:61))
  %lse_head = memref.subview %ws_lse_log2[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":211:3 to 211:61))
  %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows_pad, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf32, #G> to memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":212:3 to 212:84))
  cuir.store %zero -> %dq_head[%row0, %c0] : tensor<32x64xf32, #RACC> -> memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":213:3 to 213:51))
  cuir.store %d_rows -> %dpsum_head[%row0] : tensor<32xf32, #RROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.dpsum"("flash_bwd.cu":217:5 to 217:24))
  cuir.store %lse_rows -> %lse_head[%row0] : tensor<32xf32, #RROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.lse_log2"("flash_bwd.cu":218:5 to 218:58))
  cuir.return loc("flash_bwd.cu":210:3 to 210:34)
} loc("flash_bwd_preprocess_kernel"("flash_bwd.cu":190:5 to 190:110))

// =============================== main: one block per (KV tile, KV head, batch) ===============================
cuir.kernel @flash_bwd_sm90_bf16_d64_main(
    %q: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_bwd.cu":759:27 to 759:83)),
    %k: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_bwd.cu":759:27 to 759:83)),
    %v: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_bwd.cu":759:27 to 759:83)),
    %d_o: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":759:27 to 759:83)),
    %dk: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dk"} loc("params.dk"("flash_bwd.cu":759:27 to 759:83)),
    %dv: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dv"} loc("params.dv"("flash_bwd.cu":759:27 to 759:83)),
    %ws_dq_accum: memref<?x?x?x64xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":759:85 to 759:103)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":759:85 to 759:103)),
    %ws_dpsum: memref<?x?x?xf32, #G> {cuir.arg = "workspace:dpsum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.dpsum"("flash_bwd.cu":759:85 to 759:103)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":759:27 to 759:83)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_bwd.cu":757:1 to 757:77)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":759:27 to 759:83)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":759:27 to 759:83)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":759:27 to 759:83)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":759:27 to 759:83)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":759:27 to 759:83)))
    grid (b, hq, hkv, nq, nkv) -> (nkv ceildiv 128, hkv, b)
    threads 384 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index loc("DQ_EMPTY_BARRIER")
  %c6 = arith.constant 6 : index loc("DQ_FULL_BARRIER")
  %c63 = arith.constant 63 : index loc("T::BLOCK_M - 1")
  %c64 = arith.constant 64 : index loc("T::BLOCK_M")
  %c128 = arith.constant 128 : index loc("T::BLOCK_N")
  %cST = arith.constant 2 : index loc("T::STAGES")
  %cDQKS = arith.constant 64 : index loc("T::DQ_SPLIT_COLUMNS ? 0 : T::WG_KEYS")
  %cDQCS = arith.constant 0 : index loc("T::DQ_SPLIT_COLUMNS ? T::DQ_COLS : 0")
  %cDSB = arith.constant 2 : index loc("T::DQ_SPLIT_COLUMNS ? DS_BARRIER : DS_WG_BARRIER")
  %cDSBS = arith.constant 1 : index loc("T::DQ_SPLIT_COLUMNS ? 0 : 1")

  // ---- block coordinates ----
  %n_block = cuir.block_id x loc("n_block"("flash_bwd.cu":785:7 to 785:41))
  %head_kv = cuir.block_id y loc("head_kv"("flash_bwd.cu":766:3 to 766:58))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":766:3 to 766:58))

  // ---- query_blocks<T, IS_CAUSAL>: virtual query blocks [m_min, m_max) see a key of the tile, [m_min, m_unmasked) need the mask ----
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc(callsite("m_blocks"("flash_bwd.cu":293:3 to 293:72) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key0 = arith.muli %n_block, %c128 : index loc(callsite("key0"("flash_bwd.cu":294:3 to 294:41) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key_end = arith.addi %key0, %c128 : index loc(callsite("key_last"("flash_bwd.cu":295:3 to 295:69) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key_end_c = arith.minsi %key_end, %seqlen_kv : index loc(callsite("key_last"("flash_bwd.cu":295:3 to 295:69) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key_last = arith.subi %key_end_c, %c1 : index loc(callsite("key_last"("flash_bwd.cu":295:3 to 295:69) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %ragged = arith.cmpi sgt, %key_end, %seqlen_kv : index loc(callsite("ragged"("flash_bwd.cu":296:3 to 296:60) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %full_unmasked = arith.select %ragged, %m_blocks, %c0 : index loc(callsite("flash_bwd.cu":297:3 to 297:47 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %offset = arith.subi %seqlen_kv, %seqlen_q : index loc(callsite("offset"("flash_bwd.cu":298:3 to 298:57) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %first_row = arith.subi %key0, %offset : index loc(callsite("first_row"("flash_bwd.cu":299:3 to 299:39) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %last_q = arith.subi %seqlen_q, %c1 : index loc(callsite("flash_bwd.cu":300:7 to 300:38 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %no_rows = arith.cmpi sgt, %first_row, %last_q : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %first_row_c = arith.maxsi %first_row, %c0 : index loc(callsite("m_min"("flash_bwd.cu":301:3 to 301:52) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_min = arith.divsi %first_row_c, %c64 : index loc(callsite("m_min"("flash_bwd.cu":301:3 to 301:52) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr = arith.subi %key_last, %offset : index loc(callsite("all_keys_row"("flash_bwd.cu":302:3 to 302:54) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %all_keys_row = arith.maxsi %akr, %c0 : index loc(callsite("all_keys_row"("flash_bwd.cu":302:3 to 302:54) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_up = arith.addi %all_keys_row, %c63 : index loc(callsite("m_unmasked"("flash_bwd.cu":303:54 to 303:98) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_blk = arith.divsi %akr_up, %c64 : index loc(callsite("m_unmasked"("flash_bwd.cu":303:54 to 303:98) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_min = arith.maxsi %akr_blk, %c_min : index loc(callsite("m_unmasked"("flash_bwd.cu":303:50 to 303:106) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_max = arith.minsi %akr_min, %m_blocks : index loc(callsite("m_unmasked"("flash_bwd.cu":303:46 to 303:117) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_unmasked = arith.select %ragged, %m_blocks, %akr_max : index loc(callsite("m_unmasked"("flash_bwd.cu":303:3 to 303:118) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_min2 = arith.select %no_rows, %c0, %c_min : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_unmasked2 = arith.select %no_rows, %c0, %c_unmasked : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_max2 = arith.select %no_rows, %c0, %m_blocks : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %m_min = arith.select %causal, %c_min2, %c0 : index loc(callsite("flash_bwd.cu":297:3 to 297:28 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %m_unmasked = arith.select %causal, %c_unmasked2, %full_unmasked : index loc(callsite("flash_bwd.cu":297:3 to 297:28 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %m_max = arith.select %causal, %c_max2, %m_blocks : index loc(callsite("flash_bwd.cu":297:3 to 297:28 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %num_steps = arith.subi %m_max, %m_min : index loc("flash_bwd.cu":281:30 to 281:51)

  // ---- block_index: causal GQA tiles are dealt in pairs (u, T - 1 - u); the second visits its unmasked query blocks ascending ----
  %kv_tiles = arith.ceildivui %seqlen_kv, %c128 : index loc("kv_tiles"("flash_bwd.cu":751:28 to 751:88))
  %last_tile = arith.subi %kv_tiles, %c1 : index loc("flash_bwd.cu":753:33 to 753:49)
  %mirror = arith.subi %last_tile, %n_block : index loc("flash_bwd.cu":753:33 to 753:49)
  %after_mirror = arith.cmpi sgt, %n_block, %mirror : index loc("partner"("flash_bwd.cu":753:3 to 753:79))
  %gqa = arith.cmpi ne, %num_heads_q, %num_heads_kv : index loc(callsite("flash_bwd.cu":745:41 to 745:82 at "paired"("flash_bwd.cu":752:3 to 752:70)))
  %paired = arith.andi %causal, %gqa : i1 loc("paired"("flash_bwd.cu":752:3 to 752:70))
  %second_of_pair = arith.andi %paired, %after_mirror : i1 loc("partner"("flash_bwd.cu":753:3 to 753:79))
  %true = arith.constant true loc("flash_bwd.cu":790:7 to 790:33)
  %descending = arith.xori %second_of_pair, %true : i1 loc("range.descending"("flash_bwd.cu":790:7 to 790:33))

  // ---- the GQA group, the sequence views ----
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("group"("flash_bwd.cu":707:3 to 707:62))
  %head_q0 = arith.muli %head_kv, %group : index loc("head_q0"("flash_bwd.cu":708:3 to 708:38))
  %head_end = arith.addi %head_q0, %group : index loc("head_end"("flash_bwd.cu":708:40 to 708:66))
  %last_key_offset = arith.select %causal, %offset, %seqlen_kv : index loc("ctx.last_key_offset"("flash_bwd.cu":823:5 to 823:93))
  %rows_pad = memref.dim %ws_dpsum, %c2 : memref<?x?x?xf32, #G> loc("ws.rows_pad"("flash_bwd.cu":177:70 to 177:89))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("maps.k"("flash_bwd.cu":859:11 to 859:42))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("maps.v"("flash_bwd.cu":862:11 to 862:42))

  // ---- shared memory: K, V [BLOCK_N][d]; Q, dO [STAGES][BLOCK_M][d]; dS^T [2][BLOCK_N][BLOCK_M]; dQ [2][64][64] fp32; LSE, D [STAGES][BLOCK_M]; the mbarriers ----
  %sK = cuir.alloc {swizzle = 128} : memref<128x64xbf16, #S> loc("sK"("flash_bwd.cu":109:24 to 109:37))
  %sV = cuir.alloc {swizzle = 128} : memref<128x64xbf16, #S> loc("sV"("flash_bwd.cu":110:24 to 110:61))
  %sQ = cuir.alloc {swizzle = 128} : memref<2x64x64xbf16, #S> loc("sQ"("flash_bwd.cu":111:24 to 111:61))
  %sdO = cuir.alloc {swizzle = 128} : memref<2x64x64xbf16, #S> loc("sdO"("flash_bwd.cu":112:24 to 112:70))
  %sdS = cuir.alloc {swizzle = 128} : memref<2x128x64xbf16, #S> loc("sdS"("flash_bwd.cu":113:24 to 113:71))
  %sdQ = cuir.alloc : memref<2x64x64xf32, #S> loc("sdQ"("flash_bwd.cu":114:24 to 114:67))
  %sLSE = cuir.alloc : memref<2x64xf32, #S> loc("sLSE"("flash_bwd.cu":115:24 to 115:78))
  %sdPsum = cuir.alloc : memref<2x64xf32, #S> loc("sdPsum"("flash_bwd.cu":116:24 to 116:72))
  %kv_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1> loc("bars->kv_full"("flash_bwd.cu":769:5 to 769:37))
  %q_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->q_full"("flash_bwd.cu":773:7 to 773:41))
  %do_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->do_full"("flash_bwd.cu":774:7 to 774:42))
  %q_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<2> loc("bars->q_empty"("flash_bwd.cu":775:7 to 775:64))

  // =============================== producer: warp 0, one elected thread ===============================
  cuir.bind warp [0] role producer {
    cuir.barrier.arrive %kv_full[%c0] expect_tx 32768 : !cuir.mbarrier<1> loc("flash_bwd.cu":346:3 to 346:66)
    cuir.copy_async tma %k_head[%key0, %c0] -> %sK barrier %kv_full[%c0]
        : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, #S>, !cuir.mbarrier<1> loc("sK"("flash_bwd.cu":349:5 to 349:71))
    cuir.copy_async tma %v_head[%key0, %c0] -> %sV barrier %kv_full[%c0]
        : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, #S>, !cuir.mbarrier<1> loc("sV"("flash_bwd.cu":351:5 to 351:71))
    %i_p = scf.for %vb = %m_min to %m_max step %c1 iter_args(%i_v = %c0) -> (index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":358:70 to 358:93))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":358:70 to 358:93))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":358:70 to 358:93))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":358:70 to 358:93))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":358:70 to 358:93))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":358:70 to 358:93))
      %i_k = scf.for %head_q = %head_q0 to %head_end step %c1 iter_args(%i = %i_v) -> (index) {
      %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
          : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("maps.q"("flash_bwd.cu":853:21 to 853:52))
      %do_head = memref.subview %d_o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
          : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("maps.d_o"("flash_bwd.cu":856:11 to 856:46))
      %lse_head = memref.subview %ws_lse_log2[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
          : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":325:3 to 325:61))
      %dpsum_head = memref.subview %ws_dpsum[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
          : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":325:3 to 325:61))
        // producer_load_step: Q + LSE and dO + D of step i into stage i % STAGES, once both consumers released it.
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_bwd.cu":322:3 to 322:35) at "flash_bwd.cu":358:7 to 358:60))
        %round = arith.divui %i, %cST : index loc(callsite("flash_bwd.cu":323:40 to 323:65 at "flash_bwd.cu":358:7 to 358:60))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_bwd.cu":323:40 to 323:65 at "flash_bwd.cu":358:7 to 358:60))
        %free = arith.xori %phase, %c1 : index loc(callsite("flash_bwd.cu":323:40 to 323:65 at "flash_bwd.cu":358:7 to 358:60))
        cuir.barrier.wait %q_empty[%stage], %free : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":323:3 to 323:66 at "flash_bwd.cu":358:7 to 358:60))
        %row = arith.muli %m, %c64 : index loc(callsite("row"("flash_bwd.cu":324:3 to 324:39) at "flash_bwd.cu":358:7 to 358:60))
        %sQ_stage = memref.subview %sQ[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":329:17 to 329:87) at "flash_bwd.cu":358:7 to 358:60))
        %sLSE_stage = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("sLSE"("flash_bwd.cu":331:13 to 331:57) at "flash_bwd.cu":358:7 to 358:60))
        cuir.barrier.arrive %q_full[%stage] expect_tx 8448 : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":326:3 to 326:82 at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %q_head[%row, %c0] -> %sQ_stage barrier %q_full[%stage]
            : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sQ"("flash_bwd.cu":329:5 to 329:96) at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %lse_head[%row] -> %sLSE_stage barrier %q_full[%stage]
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sLSE"("flash_bwd.cu":331:3 to 331:112) at "flash_bwd.cu":358:7 to 358:60))
        %sdO_stage = memref.subview %sdO[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":335:17 to 335:88) at "flash_bwd.cu":358:7 to 358:60))
        %sdPsum_stage = memref.subview %sdPsum[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("sdPsum"("flash_bwd.cu":337:13 to 337:59) at "flash_bwd.cu":358:7 to 358:60))
        cuir.barrier.arrive %do_full[%stage] expect_tx 8448 : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":332:3 to 332:83 at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %do_head[%row, %c0] -> %sdO_stage barrier %do_full[%stage]
            : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sdO"("flash_bwd.cu":335:5 to 335:99) at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %dpsum_head[%row] -> %sdPsum_stage barrier %do_full[%stage]
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sdPsum"("flash_bwd.cu":337:3 to 337:112) at "flash_bwd.cu":358:7 to 358:60))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":357:72 to 357:86)
        scf.yield %i_next : index loc("flash_bwd.cu":357:5 to 357:86)
      } loc("head_q"("flash_bwd.cu":357:5 to 357:86))
      scf.yield %i_k : index loc("flash_bwd.cu":356:3 to 356:52)
    } loc("v"("flash_bwd.cu":356:3 to 356:52))
    cuir.yield loc("flash_bwd.cu":802:16 to 802:117)
  } loc("flash_bwd.cu":798:5 to 798:51)

  // =============================== dQ writer: warp 1 ===============================
  cuir.bind warp [1] role producer {
    %steps = arith.muli %group, %num_steps : index loc("steps"("flash_bwd.cu":389:3 to 389:52))
    %i_w = scf.for %vb = %m_min to %m_max step %c1 iter_args(%i_v = %c0) -> (index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":393:72 to 393:102))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":393:72 to 393:102))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":393:72 to 393:102))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":393:72 to 393:102))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":393:72 to 393:102))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":393:72 to 393:102))
      %i_k = scf.for %head_q = %head_q0 to %head_end step %c1 iter_args(%i = %i_v) -> (index) {
      %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows_pad, 64] [1, 1, 1, 1]
          : memref<?x?x?x64xf32, #G> to memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("dq_block"("flash_bwd.cu":394:7 to 394:60))
        %row_at = arith.muli %m, %c64 : index loc("row_at"("flash_bwd.cu":393:64 to 393:116))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":392:72 to 392:86)
        %more = arith.cmpi slt, %i_next, %steps : index loc("flash_bwd.cu":411:9 to 411:26)
        scf.for %c = %c0 to %c2 step %c1 {
          %full_id = arith.addi %c6, %c : index loc("flash_bwd.cu":399:9 to 399:68)
          cuir.barrier.named %full_id threads 160 loc("flash_bwd.cu":399:9 to 399:68)
          %sdQ_c = memref.subview %sdQ[%c, 0, 0] [1, 64, 64] [1, 1, 1]
              : memref<2x64x64xf32, #S> to memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":402:31 to 402:105)
          // The bulk reduction: the tile read from shared memory, added into the workspace.
          %dq_tile = cuir.load %sdQ_c : memref<64x64xf32, strided<[64, 1], offset: ?>, #S> -> tensor<64x64xf32, #WACC> loc("flash_bwd.cu":401:11 to 401:90)
          %col = arith.muli %c, %cDQCS : index loc("flash_bwd.cu":401:43 to 401:88)
          cuir.atomic_add %dq_tile -> %dq_head[%row_at, %col] : tensor<64x64xf32, #WACC> -> memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("flash_bwd.cu":401:11 to 401:90)
          scf.if %more {
            %empty_id = arith.addi %c4, %c : index loc("flash_bwd.cu":411:42 to 411:104)
            cuir.barrier.named %empty_id threads 160 arrive loc("flash_bwd.cu":411:42 to 411:104)
            scf.yield loc("flash_bwd.cu":411:9 to 411:26)
          } loc("flash_bwd.cu":411:9 to 411:26)
          scf.yield loc("flash_bwd.cu":398:7 to 398:49)
        } loc("flash_bwd.cu":398:7 to 398:49)
        scf.yield %i_next : index loc("flash_bwd.cu":392:5 to 392:86)
      } loc("head_q"("flash_bwd.cu":392:5 to 392:86))
      scf.yield %i_k : index loc("flash_bwd.cu":391:3 to 391:52)
    } loc("v"("flash_bwd.cu":391:3 to 391:52))
    cuir.yield loc("flash_bwd.cu":808:16 to 808:113)
  } loc("flash_bwd.cu":804:7 to 804:38)

  // =============================== consumer warpgroups 1 and 2 ===============================
  cuir.bind warpgroup [1, 2] role consumer regs 232 {
    %consumer = cuir.worker_id loc("ctx.consumer"("flash_bwd.cu":819:5 to 819:30))
    %kv_rows = arith.muli %consumer, %c64 : index loc("kv_rows"("flash_bwd.cu":587:3 to 587:60))
    // The first key of this warpgroup's 64: a column of the score tile here (a row in the source).
    %kv0 = arith.addi %key0, %kv_rows : index loc("ctx.wg_key0"("flash_bwd.cu":832:7 to 832:70))
    %sK_wg = memref.subview %sK[%kv_rows, 0] [64, 64] [1, 1]
        : memref<128x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":596:28 to 596:62)
    %sV_wg = memref.subview %sV[%kv_rows, 0] [64, 64] [1, 1]
        : memref<128x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":598:29 to 598:63)
    // dQ = dS K of this warpgroup: keys [dq_key0, dq_key0 + DQ_KEYS), columns [dq_slab * 64, + 64).
    %dq_key0 = arith.muli %consumer, %cDQKS : index loc("dq_key0"("flash_bwd.cu":627:3 to 627:75))
    %dq_col0 = arith.muli %consumer, %cDQCS : index loc("dq_slab"("flash_bwd.cu":628:3 to 628:62))
    %sK_dq = memref.subview %sK[%dq_key0, %dq_col0] [64, 64] [1, 1]
        : memref<128x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":630:14 to 630:83)
    %ds_bar_c = arith.muli %consumer, %cDSBS : index loc("flash_bwd.cu":623:5 to 623:58)
    %ds_bar = arith.addi %cDSB, %ds_bar_c : index loc("flash_bwd.cu":623:5 to 623:58)
    %dq_empty_id = arith.addi %c4, %consumer : index loc("flash_bwd.cu":640:14 to 640:85)
    %dq_full_id = arith.addi %c6, %consumer : index loc("flash_bwd.cu":643:3 to 643:75)
    %sdQ_wg = memref.subview %sdQ[%consumer, 0, 0] [1, 64, 64] [1, 1, 1]
        : memref<2x64x64xf32, #S> to memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc("dst"("flash_bwd.cu":566:44 to 566:100))

    // ---- constants of the steps; dK, dV in registers over all of them ----
    %log2e = arith.constant 1.44269502 : f32 loc("ctx.scale_log2"("flash_bwd.cu":824:5 to 824:52))
    %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("ctx.scale_log2"("flash_bwd.cu":824:5 to 824:52))
    %scale_tile = tensor.splat %scale_log2 : tensor<64x64xf32, #WACC> loc("ctx.scale_log2"("flash_bwd.cu":824:5 to 824:52))
    %ninf = arith.constant 0xFF800000 : f32 loc("flash_bwd.cu":504:87 to 504:92)
    %zero_s = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("acc_s"("flash_bwd.cu":594:3 to 594:45))
    %zero_dq = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("acc_dq"("flash_bwd.cu":626:3 to 626:28))
    %acc_init = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("flash_bwd.cu":705:41 to 705:68)
    cuir.barrier.wait %kv_full[%c0], %c0 : !cuir.mbarrier<1> loc("flash_bwd.cu":706:3 to 706:42)

    // The source runs each kind of step as one loop over i, counting the head
    // and the query block along; here a loop over the query blocks, each over
    // the group's heads.
    // =============================== masking steps ===============================
    %m_dk, %m_dv, %m_i = scf.for %vb = %m_min to %m_unmasked step %c1
        iter_args(%dk_v = %acc_init, %dv_v = %acc_init, %i_v = %c0)
        -> (tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":713:58 to 713:81))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":713:58 to 713:81))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":713:58 to 713:81))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":713:58 to 713:81))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":713:58 to 713:81))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":713:58 to 713:81))
      %h_dk, %h_dv, %h_i = scf.for %head_q = %head_q0 to %head_end step %c1
          iter_args(%acc_dk = %dk_v, %acc_dv = %dv_v, %i = %i_v)
          -> (tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index) {
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_bwd.cu":580:3 to 580:35) at "flash_bwd.cu":713:5 to 713:28))
        %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":713:5 to 713:28))
        %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":713:5 to 713:28))
        %q_row0 = arith.muli %m, %c64 : index loc(callsite("q_row0"("flash_bwd.cu":581:3 to 581:42) at "flash_bwd.cu":713:5 to 713:28))
        %sQ_stage = memref.subview %sQ[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sq"("flash_bwd.cu":588:3 to 588:74) at "flash_bwd.cu":713:5 to 713:28))
        %sdO_stage = memref.subview %sdO[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdo"("flash_bwd.cu":589:3 to 589:76) at "flash_bwd.cu":713:5 to 713:28))
        %sLSE_stage = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("lse_log2"("flash_bwd.cu":590:59 to 590:107) at "flash_bwd.cu":713:5 to 713:28))
        %sdPsum_stage = memref.subview %sdPsum[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dpsum"("flash_bwd.cu":591:56 to 591:106) at "flash_bwd.cu":713:5 to 713:28))

        // ---- S = Q K^T and dP = dO V^T (the hardware's K Q^T and V dO^T), [queries x keys] ----
        cuir.barrier.wait %q_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":595:3 to 595:45 at "flash_bwd.cu":713:5 to 713:28))
        %s_issued = cuir.gemm_async %sQ_stage, %sK_wg transpose_b, %zero_s acc_transposed
            : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":596:3 to 596:67) at "flash_bwd.cu":713:5 to 713:28))
        cuir.barrier.wait %do_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":597:3 to 597:46 at "flash_bwd.cu":713:5 to 713:28))
        %dp_issued = cuir.gemm_async %sdO_stage, %sV_wg transpose_b, %zero_s acc_transposed
            : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":598:3 to 598:69) at "flash_bwd.cu":713:5 to 713:28))
        // S has landed once at most dP, issued after it, is pending.
        %acc_s = cuir.gemm_wait %s_issued pending 1 : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":600:3 to 600:25) at "flash_bwd.cu":713:5 to 713:28))

        // ------- score tile complete: acc_s = Q K^T (unscaled) of query tile m_tile; the mask of a masking step -------
        %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_row0, %kv0]
            : (tensor<64x64xf32, #WACC>) -> tensor<64x64xf32, #WACC> {
        ^bb0(%x: f32 loc("acc_s"("flash_bwd.cu":504:68 to 504:92)), %bi: index loc("batch"("flash_bwd.cu":766:3 to 766:58)), %hi: index loc("head_q"("flash_bwd.cu":711:3 to 711:51)), %qi: index loc("row"("flash_bwd.cu":503:7 to 503:46)), %ki: index loc("key"("flash_bwd.cu":502:7 to 502:50))):
          %past_end = arith.cmpi sge, %ki, %seqlen_kv : index loc(callsite("flash_bwd.cu":504:11 to 504:31 at "flash_bwd.cu":603:28 to 603:61))
          %row_last = arith.addi %qi, %last_key_offset : index loc(callsite("flash_bwd.cu":504:41 to 504:66 at "flash_bwd.cu":603:28 to 603:61))
          %past_diag = arith.cmpi sgt, %ki, %row_last : index loc(callsite("flash_bwd.cu":504:35 to 504:66 at "flash_bwd.cu":603:28 to 603:61))
          %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_bwd.cu":504:7 to 504:31 at "flash_bwd.cu":603:28 to 603:61))
          %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_bwd.cu":504:68 to 504:92) at "flash_bwd.cu":603:28 to 603:61))
          cuir.yield %r : f32 loc("flash_bwd.cu":603:28 to 603:61)
        } loc("acc_s"("flash_bwd.cu":603:28 to 603:61))

        // ---- P = exp2(S * scale * log2 e - LSE * log2 e) (scores_to_probs) ----
        %lse_log2 = cuir.load %sLSE_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("lse"("flash_bwd.cu":516:5 to 516:93) at "flash_bwd.cu":604:3 to 604:64))
        %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %neg_lse = arith.negf %lse_b : tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %logits = math.fma %acc_s_masked, %scale_tile, %neg_lse : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:36 to 519:96) at "flash_bwd.cu":604:3 to 604:64))
        %p = math.exp2 %logits : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:7 to 519:97) at "flash_bwd.cu":604:3 to 604:64))

        // ---- dS = P * (dP - D) (probs_to_dscores), once dP has landed ----
        %acc_dp = cuir.gemm_wait %dp_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":605:3 to 605:25) at "flash_bwd.cu":713:5 to 713:28))
        %dpsum = cuir.load %sdPsum_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("d"("flash_bwd.cu":529:5 to 529:88) at "flash_bwd.cu":607:3 to 607:54))
        %d_b = cuir.broadcast_rows %dpsum : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":531:93 to 531:112 at "flash_bwd.cu":607:3 to 607:54))
        %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:72 to 531:113) at "flash_bwd.cu":607:3 to 607:54))
        %ds = arith.mulf %p, %dp_minus_d : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:33 to 531:113) at "flash_bwd.cu":607:3 to 607:54))

        // ---- dV += P^T dO, dK += dS^T Q: the 16-bit P and dS as the A fragments P^T and dS^T (the same registers in the source) ----
        %p16 = arith.truncf %p : tensor<64x64xf32, #WACC> to tensor<64x64xbf16, #WACC> loc(callsite("p_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":611:3 to 611:28))
        %p_t = cuir.convert_layout %p16 transpose : tensor<64x64xbf16, #WACC> -> tensor<64x64xbf16, #WA> loc("p_frag"("flash_bwd.cu":611:3 to 611:28))
        %ds16 = arith.truncf %ds : tensor<64x64xf32, #WACC> to tensor<64x64xbf16, #WACC> loc(callsite("ds_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":612:3 to 612:30))
        %ds_t = cuir.convert_layout %ds16 transpose : tensor<64x64xbf16, #WACC> -> tensor<64x64xbf16, #WA> loc("ds_frag"("flash_bwd.cu":612:3 to 612:30))
        %dv_issued = cuir.gemm_async %p_t, %sdO_stage, %acc_dv
            : tensor<64x64xbf16, #WA>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":614:3 to 614:39) at "flash_bwd.cu":713:5 to 713:28))
        %dk_issued = cuir.gemm_async %ds_t, %sQ_stage, %acc_dk
            : tensor<64x64xbf16, #WA>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":615:3 to 615:39) at "flash_bwd.cu":713:5 to 713:28))

        // ---- dS^T to shared memory (buffer i % 2, this warpgroup's 64 key rows), then dQ = dS K ----
        %ds_buf = arith.remui %i, %c2 : index loc(callsite("ds"("flash_bwd.cu":617:3 to 617:77) at "flash_bwd.cu":713:5 to 713:28))
        %sdS_wg = memref.subview %sdS[%ds_buf, %kv_rows, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x128x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("rows"("flash_bwd.cu":551:3 to 551:58) at "flash_bwd.cu":618:3 to 618:37))
        cuir.store %ds_t -> %sdS_wg : tensor<64x64xbf16, #WA> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":556:7 to 556:114 at "flash_bwd.cu":618:3 to 618:37))
        cuir.barrier.named %ds_bar threads 128 loc(callsite("flash_bwd.cu":620:3 to 620:37 at "flash_bwd.cu":713:5 to 713:28))
        %sdS_dq = memref.subview %sdS[%ds_buf, %dq_key0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x128x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":629:22 to 629:54 at "flash_bwd.cu":713:5 to 713:28))
        %ds_a = cuir.load %sdS_dq transpose : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> -> tensor<64x64xbf16, #WA> loc(callsite("flash_bwd.cu":466:20 to 466:85 at "flash_bwd.cu":713:5 to 713:28))
        %dq_issued = cuir.gemm_async %ds_a, %sK_dq, %zero_dq
            : tensor<64x64xbf16, #WA>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":629:3 to 629:55) at "flash_bwd.cu":713:5 to 713:28))
        // wgmma_wait_group<0>: dV, dK and dQ have landed; Q, dO and dS^T are read.
        %dv_n = cuir.gemm_wait %dv_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":713:5 to 713:28))
        %dk_n = cuir.gemm_wait %dk_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":713:5 to 713:28))
        %acc_dq = cuir.gemm_wait %dq_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":713:5 to 713:28))
        cuir.barrier.arrive %q_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":637:3 to 637:41 at "flash_bwd.cu":713:5 to 713:28))

        // ---- dQ to shared memory for the dQ writer, once it has read the previous step's ----
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":713:5 to 713:28))
        scf.if %has_prev {
          cuir.barrier.named %dq_empty_id threads 160 loc(callsite("flash_bwd.cu":640:14 to 640:85 at "flash_bwd.cu":713:5 to 713:28))
          scf.yield loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":713:5 to 713:28))
        } loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":713:5 to 713:28))
        cuir.store %acc_dq -> %sdQ_wg : tensor<64x64xf32, #WACC> -> memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":569:5 to 569:103) at "flash_bwd.cu":641:3 to 641:27))
        cuir.barrier.named %dq_full_id threads 160 arrive loc(callsite("flash_bwd.cu":643:3 to 643:75 at "flash_bwd.cu":713:5 to 713:28))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":712:3 to 712:33)
        scf.yield %dk_n, %dv_n, %i_next : tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index loc("flash_bwd.cu":714:5 to 714:53)
      } loc("head_q"("flash_bwd.cu":714:5 to 714:53))
      scf.yield %h_dk, %h_dv, %h_i : tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index loc("flash_bwd.cu":712:3 to 712:33)
    } loc("v"("flash_bwd.cu":712:3 to 712:33))

    // =============================== unmasked steps ===============================
    %dk_acc, %dv_acc, %i_c = scf.for %vb = %m_unmasked to %m_max step %c1
        iter_args(%dk_v = %m_dk, %dv_v = %m_dv, %i_v = %m_i)
        -> (tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":717:59 to 717:82))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":717:59 to 717:82))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":717:59 to 717:82))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":717:59 to 717:82))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":717:59 to 717:82))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":717:59 to 717:82))
      %h_dk, %h_dv, %h_i = scf.for %head_q = %head_q0 to %head_end step %c1
          iter_args(%acc_dk = %dk_v, %acc_dv = %dv_v, %i = %i_v)
          -> (tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index) {
        %q_row0 = arith.muli %m, %c64 : index loc(callsite("q_row0"("flash_bwd.cu":581:3 to 581:42) at "flash_bwd.cu":717:5 to 717:29))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_bwd.cu":580:3 to 580:35) at "flash_bwd.cu":717:5 to 717:29))
        %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":717:5 to 717:29))
        %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":717:5 to 717:29))
        %sQ_stage = memref.subview %sQ[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sq"("flash_bwd.cu":588:3 to 588:74) at "flash_bwd.cu":717:5 to 717:29))
        %sdO_stage = memref.subview %sdO[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdo"("flash_bwd.cu":589:3 to 589:76) at "flash_bwd.cu":717:5 to 717:29))
        %sLSE_stage = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("lse_log2"("flash_bwd.cu":590:59 to 590:107) at "flash_bwd.cu":717:5 to 717:29))
        %sdPsum_stage = memref.subview %sdPsum[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dpsum"("flash_bwd.cu":591:56 to 591:106) at "flash_bwd.cu":717:5 to 717:29))

        // ---- S = Q K^T and dP = dO V^T (the hardware's K Q^T and V dO^T), [queries x keys] ----
        cuir.barrier.wait %q_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":595:3 to 595:45 at "flash_bwd.cu":717:5 to 717:29))
        %s_issued = cuir.gemm_async %sQ_stage, %sK_wg transpose_b, %zero_s acc_transposed
            : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":596:3 to 596:67) at "flash_bwd.cu":717:5 to 717:29))
        cuir.barrier.wait %do_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":597:3 to 597:46 at "flash_bwd.cu":717:5 to 717:29))
        %dp_issued = cuir.gemm_async %sdO_stage, %sV_wg transpose_b, %zero_s acc_transposed
            : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":598:3 to 598:69) at "flash_bwd.cu":717:5 to 717:29))
        // S has landed once at most dP, issued after it, is pending.
        %acc_s = cuir.gemm_wait %s_issued pending 1 : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":600:3 to 600:25) at "flash_bwd.cu":717:5 to 717:29))

        // ------- score tile complete: acc_s = Q K^T (unscaled) of query tile m_tile; no mask -------

        // ---- P = exp2(S * scale * log2 e - LSE * log2 e) (scores_to_probs) ----
        %lse_log2 = cuir.load %sLSE_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("lse"("flash_bwd.cu":516:5 to 516:93) at "flash_bwd.cu":604:3 to 604:64))
        %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %neg_lse = arith.negf %lse_b : tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %logits = math.fma %acc_s, %scale_tile, %neg_lse : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:36 to 519:96) at "flash_bwd.cu":604:3 to 604:64))
        %p = math.exp2 %logits : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:7 to 519:97) at "flash_bwd.cu":604:3 to 604:64))

        // ---- dS = P * (dP - D) (probs_to_dscores), once dP has landed ----
        %acc_dp = cuir.gemm_wait %dp_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":605:3 to 605:25) at "flash_bwd.cu":717:5 to 717:29))
        %dpsum = cuir.load %sdPsum_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("d"("flash_bwd.cu":529:5 to 529:88) at "flash_bwd.cu":607:3 to 607:54))
        %d_b = cuir.broadcast_rows %dpsum : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":531:93 to 531:112 at "flash_bwd.cu":607:3 to 607:54))
        %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:72 to 531:113) at "flash_bwd.cu":607:3 to 607:54))
        %ds = arith.mulf %p, %dp_minus_d : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:33 to 531:113) at "flash_bwd.cu":607:3 to 607:54))

        // ---- dV += P^T dO, dK += dS^T Q: the 16-bit P and dS as the A fragments P^T and dS^T (the same registers in the source) ----
        %p16 = arith.truncf %p : tensor<64x64xf32, #WACC> to tensor<64x64xbf16, #WACC> loc(callsite("p_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":611:3 to 611:28))
        %p_t = cuir.convert_layout %p16 transpose : tensor<64x64xbf16, #WACC> -> tensor<64x64xbf16, #WA> loc("p_frag"("flash_bwd.cu":611:3 to 611:28))
        %ds16 = arith.truncf %ds : tensor<64x64xf32, #WACC> to tensor<64x64xbf16, #WACC> loc(callsite("ds_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":612:3 to 612:30))
        %ds_t = cuir.convert_layout %ds16 transpose : tensor<64x64xbf16, #WACC> -> tensor<64x64xbf16, #WA> loc("ds_frag"("flash_bwd.cu":612:3 to 612:30))
        %dv_issued = cuir.gemm_async %p_t, %sdO_stage, %acc_dv
            : tensor<64x64xbf16, #WA>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":614:3 to 614:39) at "flash_bwd.cu":717:5 to 717:29))
        %dk_issued = cuir.gemm_async %ds_t, %sQ_stage, %acc_dk
            : tensor<64x64xbf16, #WA>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":615:3 to 615:39) at "flash_bwd.cu":717:5 to 717:29))

        // ---- dS^T to shared memory (buffer i % 2, this warpgroup's 64 key rows), then dQ = dS K ----
        %ds_buf = arith.remui %i, %c2 : index loc(callsite("ds"("flash_bwd.cu":617:3 to 617:77) at "flash_bwd.cu":717:5 to 717:29))
        %sdS_wg = memref.subview %sdS[%ds_buf, %kv_rows, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x128x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("rows"("flash_bwd.cu":551:3 to 551:58) at "flash_bwd.cu":618:3 to 618:37))
        cuir.store %ds_t -> %sdS_wg : tensor<64x64xbf16, #WA> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":556:7 to 556:114 at "flash_bwd.cu":618:3 to 618:37))
        cuir.barrier.named %ds_bar threads 128 loc(callsite("flash_bwd.cu":620:3 to 620:37 at "flash_bwd.cu":717:5 to 717:29))
        %sdS_dq = memref.subview %sdS[%ds_buf, %dq_key0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x128x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":629:22 to 629:54 at "flash_bwd.cu":717:5 to 717:29))
        %ds_a = cuir.load %sdS_dq transpose : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> -> tensor<64x64xbf16, #WA> loc(callsite("flash_bwd.cu":466:20 to 466:85 at "flash_bwd.cu":717:5 to 717:29))
        %dq_issued = cuir.gemm_async %ds_a, %sK_dq, %zero_dq
            : tensor<64x64xbf16, #WA>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":629:3 to 629:55) at "flash_bwd.cu":717:5 to 717:29))
        // wgmma_wait_group<0>: dV, dK and dQ have landed; Q, dO and dS^T are read.
        %dv_n = cuir.gemm_wait %dv_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":717:5 to 717:29))
        %dk_n = cuir.gemm_wait %dk_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":717:5 to 717:29))
        %acc_dq = cuir.gemm_wait %dq_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":717:5 to 717:29))
        cuir.barrier.arrive %q_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":637:3 to 637:41 at "flash_bwd.cu":717:5 to 717:29))

        // ---- dQ to shared memory for the dQ writer, once it has read the previous step's ----
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":717:5 to 717:29))
        scf.if %has_prev {
          cuir.barrier.named %dq_empty_id threads 160 loc(callsite("flash_bwd.cu":640:14 to 640:85 at "flash_bwd.cu":717:5 to 717:29))
          scf.yield loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":717:5 to 717:29))
        } loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":717:5 to 717:29))
        cuir.store %acc_dq -> %sdQ_wg : tensor<64x64xf32, #WACC> -> memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":569:5 to 569:103) at "flash_bwd.cu":641:3 to 641:27))
        cuir.barrier.named %dq_full_id threads 160 arrive loc(callsite("flash_bwd.cu":643:3 to 643:75 at "flash_bwd.cu":717:5 to 717:29))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":716:3 to 716:25)
        scf.yield %dk_n, %dv_n, %i_next : tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index loc("flash_bwd.cu":718:5 to 718:53)
      } loc("head_q"("flash_bwd.cu":718:5 to 718:53))
      scf.yield %h_dk, %h_dv, %h_i : tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index loc("flash_bwd.cu":716:3 to 716:25)
    } loc("v"("flash_bwd.cu":716:3 to 716:25))

    // =============================== write_dkv: dK * softmax_scale and dV through the Q and dO stages ===============================
    cuir.barrier.named %c1 threads 256 loc("flash_bwd.cu":685:3 to 685:58)
    %scale_b = tensor.splat %softmax_scale : tensor<64x64xf32, #WACC> loc("flash_bwd.cu":689:51 to 689:77)
    %dk_scaled = arith.mulf %dk_acc, %scale_b : tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":665:35 to 665:64 at "flash_bwd.cu":687:3 to 687:45))
    %dk16 = arith.truncf %dk_scaled : tensor<64x64xf32, #WACC> to tensor<64x64xbf16, #WACC> loc(callsite("flash_bwd.cu":665:11 to 665:100 at "flash_bwd.cu":687:3 to 687:45))
    %dv16 = arith.truncf %dv_acc : tensor<64x64xf32, #WACC> to tensor<64x64xbf16, #WACC> loc(callsite("flash_bwd.cu":665:11 to 665:100 at "flash_bwd.cu":690:3 to 690:46))
    %sQ_out = memref.subview %sQ[%consumer, 0, 0] [1, 64, 64] [1, 1, 1]
        : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":687:3 to 687:45)
    %sdO_out = memref.subview %sdO[%consumer, 0, 0] [1, 64, 64] [1, 1, 1]
        : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":690:3 to 690:46)
    %dk_head = memref.subview %dk[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
        : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":688:21 to 688:122)
    %dv_head = memref.subview %dv[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
        : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":691:21 to 691:122)
    cuir.store %dk16 -> %sQ_out : tensor<64x64xbf16, #WACC> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":664:7 to 664:89 at "flash_bwd.cu":687:3 to 687:45))
    cuir.barrier.warp loc(callsite("flash_bwd.cu":668:3 to 668:16 at "flash_bwd.cu":687:3 to 687:45))
    cuir.copy %sQ_out -> %dk_head[%kv0, %c0] : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> -> memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("flash_bwd.cu":675:5 to 675:117 at "flash_bwd.cu":687:3 to 687:45))
    cuir.store %dv16 -> %sdO_out : tensor<64x64xbf16, #WACC> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":664:7 to 664:89 at "flash_bwd.cu":690:3 to 690:46))
    cuir.barrier.warp loc(callsite("flash_bwd.cu":668:3 to 668:16 at "flash_bwd.cu":690:3 to 690:46))
    cuir.copy %sdO_out -> %dv_head[%kv0, %c0] : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> -> memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("flash_bwd.cu":675:5 to 675:117 at "flash_bwd.cu":690:3 to 690:46))
    cuir.yield loc("flash_bwd.cu":835:11 to 835:95)
  } loc("flash_bwd.cu":814:5 to 814:40)
  cuir.return loc("flash_bwd.cu":759:5 to 759:104)
} loc("flash_bwd_sm90_kernel"("flash_bwd.cu":759:5 to 759:104))

// =============================== convert: dQ = softmax_scale * accumulator ===============================
cuir.kernel @flash_bwd_sm90_bf16_d64_convert_dq(
    %ws_dq_accum: memref<?x?x?x64xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":237:91 to 237:109)),
    %dq: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dq"} loc("params.dq"("flash_bwd.cu":237:33 to 237:89)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":237:33 to 237:89)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":237:33 to 237:89)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":237:33 to 237:89)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":237:33 to 237:89)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":237:33 to 237:89)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":237:33 to 237:89)))
    grid (b, hq, hkv, nq, nkv) -> (((nq ceildiv 64) * 64) ceildiv 32, hq, b)
    threads 256 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %cRPB = arith.constant 32 : index loc("kRowKernelThreads / THREADS_PER_ROW")
  %blk = cuir.block_id x loc("row"("flash_bwd.cu":240:3 to 240:102))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":239:3 to 239:53))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":239:3 to 239:53))
  %row0 = arith.muli %blk, %cRPB : index loc("row"("flash_bwd.cu":240:3 to 240:102))
  %zero = arith.constant dense<0.0> : tensor<32x64xf32, #RACC> loc("flash_bwd.cu":245:3 to 245:22)
  // The accumulator's rows of the block (row-major here; the fragment order in the source).
  %acc = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<32x64xf32, #RACC>) -> tensor<32x64xf32, #RACC> {
  ^bb0(%x: f32 loc("a"("flash_bwd.cu":248:5 to 248:21)), %bi: index loc("batch"("flash_bwd.cu":239:3 to 239:53)), %hi: index loc("head_q"("flash_bwd.cu":239:3 to 239:53)), %qi: index loc("row"("flash_bwd.cu":240:3 to 240:102)), %ci: index loc("chunk"("flash_bwd.cu":241:3 to 241:51))):
    %a = memref.load %ws_dq_accum[%bi, %hi, %qi, %ci] : memref<?x?x?x64xf32, #G> loc("a"("flash_bwd.cu":249:9 to 249:114))
    cuir.yield %a : f32 loc("a"("flash_bwd.cu":249:9 to 249:114))
  } loc("block"("flash_bwd.cu":243:3 to 243:104))
  %s = tensor.splat %softmax_scale : tensor<32x64xf32, #RACC> loc("s"("flash_bwd.cu":244:3 to 244:40))
  %dq_f = arith.mulf %acc, %s : tensor<32x64xf32, #RACC> loc("flash_bwd.cu":250:38 to 250:45)
  %dq16 = arith.truncf %dq_f : tensor<32x64xf32, #RACC> to tensor<32x64xbf16, #RACC> loc("packed"("flash_bwd.cu":250:5 to 250:56))
  %dq_head = memref.subview %dq[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":253:30 to 253:97)
  // Rows past Nq are not written (if (row >= params.seqlen_q) return): the store skips them.
  cuir.store %dq16 -> %dq_head[%row0, %c0] : tensor<32x64xbf16, #RACC> -> memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":253:3 to 253:128)
  cuir.return loc("flash_bwd.cu":242:3 to 242:38)
} loc("flash_bwd_convert_dq_kernel"("flash_bwd.cu":237:5 to 237:110))
cuir.launch_sequence @flash_bwd_sm90_f16_d128 [@flash_bwd_sm90_f16_d128_preprocess, @flash_bwd_sm90_f16_d128_main, @flash_bwd_sm90_f16_d128_convert_dq] loc("flash_bwd.cu":876:20 to 876:94)

// =============================== preprocess: D, LSE * log2 e, dQ accumulator zeroed ===============================
cuir.kernel @flash_bwd_sm90_f16_d128_preprocess(
    %o: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_bwd.cu":190:33 to 190:89)),
    %d_o: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":190:33 to 190:89)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_bwd.cu":190:33 to 190:89)),
    %ws_dq_accum: memref<?x?x?x128xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":190:91 to 190:109)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":190:91 to 190:109)),
    %ws_dpsum: memref<?x?x?xf32, #G> {cuir.arg = "workspace:dpsum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.dpsum"("flash_bwd.cu":190:91 to 190:109)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":190:33 to 190:89)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":190:33 to 190:89)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":190:33 to 190:89)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":190:33 to 190:89)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":190:33 to 190:89)))
    grid (b, hq, hkv, nq, nkv) -> (((nq ceildiv 64) * 64) ceildiv 16, hq, b)
    threads 256 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %cRPB = arith.constant 16 : index loc("kRowKernelThreads / THREADS_PER_ROW")
  %fzero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %log2e = arith.constant 1.44269502 : f32
  %blk = cuir.block_id x loc("row"("flash_bwd.cu":193:3 to 193:102))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":192:3 to 192:53))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":192:3 to 192:53))
  %row0 = arith.muli %blk, %cRPB : index loc("row"("flash_bwd.cu":193:3 to 193:102))
  %zero = arith.constant dense<0.0> : tensor<16x128xf32, #RACC> loc("dot"("flash_bwd.cu":195:3 to 195:19))

  // ---- O and dO of the block's rows (a row past Nq reads nothing: 0) ----
  %o16 = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<16x128xf32, #RACC>) -> tensor<16x128xf16, #RACC> {
  ^bb0(%x: f32 loc("o"("flash_bwd.cu":199:5 to 199:102)), %bi: index loc("batch"("flash_bwd.cu":192:3 to 192:53)), %hi: index loc("head_q"("flash_bwd.cu":192:3 to 192:53)), %qi: index loc("row"("flash_bwd.cu":193:3 to 193:102)), %ci: index loc("chunk"("flash_bwd.cu":194:3 to 194:51))):
    %in = arith.cmpi slt, %qi, %seqlen_q : index loc("flash_bwd.cu":196:3 to 196:29)
    %qc = arith.select %in, %qi, %c0 : index loc("flash_bwd.cu":196:3 to 196:29)
    %v = memref.load %o[%bi, %qc, %hi, %ci] : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> loc("o"("flash_bwd.cu":199:5 to 199:102))
    %z = arith.constant 0.0 : f16
    %r = arith.select %in, %v, %z : f16 loc("flash_bwd.cu":196:3 to 196:29)
    cuir.yield %r : f16 loc("o"("flash_bwd.cu":199:5 to 199:102))
  } loc("o"("flash_bwd.cu":199:5 to 199:102))
  %do16 = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<16x128xf32, #RACC>) -> tensor<16x128xf16, #RACC> {
  ^bb0(%x: f32 loc("d_o"("flash_bwd.cu":200:5 to 200:107)), %bi: index loc("batch"("flash_bwd.cu":192:3 to 192:53)), %hi: index loc("head_q"("flash_bwd.cu":192:3 to 192:53)), %qi: index loc("row"("flash_bwd.cu":193:3 to 193:102)), %ci: index loc("chunk"("flash_bwd.cu":194:3 to 194:51))):
    %in = arith.cmpi slt, %qi, %seqlen_q : index loc("flash_bwd.cu":196:3 to 196:29)
    %qc = arith.select %in, %qi, %c0 : index loc("flash_bwd.cu":196:3 to 196:29)
    %v = memref.load %d_o[%bi, %qc, %hi, %ci] : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> loc("d_o"("flash_bwd.cu":200:5 to 200:107))
    %z = arith.constant 0.0 : f16
    %r = arith.select %in, %v, %z : f16 loc("flash_bwd.cu":196:3 to 196:29)
    cuir.yield %r : f16 loc("d_o"("flash_bwd.cu":200:5 to 200:107))
  } loc("d_o"("flash_bwd.cu":200:5 to 200:107))

  // ---- D = rowsum(dO * O) in fp32 ----
  %of = arith.extf %o16 : tensor<16x128xf16, #RACC> to tensor<16x128xf32, #RACC> loc("a"("flash_bwd.cu":204:7 to 204:67))
  %dof = arith.extf %do16 : tensor<16x128xf16, #RACC> to tensor<16x128xf32, #RACC> loc("b"("flash_bwd.cu":204:69 to 204:116))
  %prod = arith.mulf %of, %dof : tensor<16x128xf32, #RACC> loc("dot"("flash_bwd.cu":205:7 to 205:49))
  %d_rows = cuir.reduce_rows sum %prod : tensor<16x128xf32, #RACC> -> tensor<16xf32, #RROW> loc("dot"("flash_bwd.cu":209:67 to 209:115))

  // ---- LSE * log2 e; +inf for a row that sees no key and for padded rows (their P is then 0) ----
  %lse_tile = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<16x128xf32, #RACC>) -> tensor<16x128xf32, #RACC> {
  ^bb0(%x: f32 loc("lse"("flash_bwd.cu":215:5 to 215:22)), %bi: index loc("batch"("flash_bwd.cu":192:3 to 192:53)), %hi: index loc("head_q"("flash_bwd.cu":192:3 to 192:53)), %qi: index loc("row"("flash_bwd.cu":193:3 to 193:102)), %ci: index loc("chunk"("flash_bwd.cu":194:3 to 194:51))):
    %in = arith.cmpi slt, %qi, %seqlen_q : index loc("lse"("flash_bwd.cu":216:9 to 216:32))
    %qc = arith.select %in, %qi, %c0 : index loc("lse"("flash_bwd.cu":216:9 to 216:32))
    %l = memref.load %lse[%bi, %hi, %qc] : memref<?x?x?xf32, #G> loc("lse"("flash_bwd.cu":216:33 to 216:128))
    %lv = arith.select %in, %l, %ninf : f32 loc("lse"("flash_bwd.cu":216:9 to 216:136))
    %none = arith.cmpf oeq, %lv, %ninf : f32 loc("flash_bwd.cu":218:23 to 218:35)
    %scaled = arith.mulf %lv, %log2e : f32 loc("flash_bwd.cu":218:45 to 218:57)
    %r = arith.select %none, %pinf, %scaled : f32 loc("flash_bwd.cu":218:5 to 218:58)
    cuir.yield %r : f32 loc("flash_bwd.cu":218:5 to 218:58)
  } loc("flash_bwd.cu":218:5 to 218:58)
  // One value per row (the row's chunk-0 thread writes it): the row vector.
  %lse_rows = cuir.reduce_rows max %lse_tile : tensor<16x128xf32, #RACC> -> tensor<16xf32, #RROW> loc("flash_bwd.cu":214:3 to 214:18)

  // ---- the workspace rows of (batch, head_q) ----
  %rows_pad = memref.dim %ws_dpsum, %c2 : memref<?x?x?xf32, #G> loc("ws.rows_pad"("flash_bwd.cu":177:70 to 177:89))
  %dpsum_head = memref.subview %ws_dpsum[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":211:3 to 211:61))
  %lse_head = memref.subview %ws_lse_log2[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":211:3 to 211:61))
  %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows_pad, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf32, #G> to memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":212:3 to 212:84))
  cuir.store %zero -> %dq_head[%row0, %c0] : tensor<16x128xf32, #RACC> -> memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":213:3 to 213:51))
  cuir.store %d_rows -> %dpsum_head[%row0] : tensor<16xf32, #RROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.dpsum"("flash_bwd.cu":217:5 to 217:24))
  cuir.store %lse_rows -> %lse_head[%row0] : tensor<16xf32, #RROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.lse_log2"("flash_bwd.cu":218:5 to 218:58))
  cuir.return loc("flash_bwd.cu":210:3 to 210:34)
} loc("flash_bwd_preprocess_kernel"("flash_bwd.cu":190:5 to 190:110))

// =============================== main: one block per (KV tile, KV head, batch) ===============================
cuir.kernel @flash_bwd_sm90_f16_d128_main(
    %q: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_bwd.cu":759:27 to 759:83)),
    %k: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_bwd.cu":759:27 to 759:83)),
    %v: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_bwd.cu":759:27 to 759:83)),
    %d_o: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":759:27 to 759:83)),
    %dk: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dk"} loc("params.dk"("flash_bwd.cu":759:27 to 759:83)),
    %dv: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dv"} loc("params.dv"("flash_bwd.cu":759:27 to 759:83)),
    %ws_dq_accum: memref<?x?x?x128xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":759:85 to 759:103)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":759:85 to 759:103)),
    %ws_dpsum: memref<?x?x?xf32, #G> {cuir.arg = "workspace:dpsum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.dpsum"("flash_bwd.cu":759:85 to 759:103)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":759:27 to 759:83)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_bwd.cu":757:1 to 757:77)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":759:27 to 759:83)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":759:27 to 759:83)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":759:27 to 759:83)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":759:27 to 759:83)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":759:27 to 759:83)))
    grid (b, hq, hkv, nq, nkv) -> (nkv ceildiv 128, hkv, b)
    threads 384 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index loc("DQ_EMPTY_BARRIER")
  %c6 = arith.constant 6 : index loc("DQ_FULL_BARRIER")
  %c63 = arith.constant 63 : index loc("T::BLOCK_M - 1")
  %c64 = arith.constant 64 : index loc("T::BLOCK_M")
  %c128 = arith.constant 128 : index loc("T::BLOCK_N")
  %cST = arith.constant 2 : index loc("T::STAGES")
  %cDQKS = arith.constant 0 : index loc("T::DQ_SPLIT_COLUMNS ? 0 : T::WG_KEYS")
  %cDQCS = arith.constant 64 : index loc("T::DQ_SPLIT_COLUMNS ? T::DQ_COLS : 0")
  %cDSB = arith.constant 1 : index loc("T::DQ_SPLIT_COLUMNS ? DS_BARRIER : DS_WG_BARRIER")
  %cDSBS = arith.constant 0 : index loc("T::DQ_SPLIT_COLUMNS ? 0 : 1")

  // ---- block coordinates ----
  %n_block = cuir.block_id x loc("n_block"("flash_bwd.cu":785:7 to 785:41))
  %head_kv = cuir.block_id y loc("head_kv"("flash_bwd.cu":766:3 to 766:58))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":766:3 to 766:58))

  // ---- query_blocks<T, IS_CAUSAL>: virtual query blocks [m_min, m_max) see a key of the tile, [m_min, m_unmasked) need the mask ----
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc(callsite("m_blocks"("flash_bwd.cu":293:3 to 293:72) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key0 = arith.muli %n_block, %c128 : index loc(callsite("key0"("flash_bwd.cu":294:3 to 294:41) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key_end = arith.addi %key0, %c128 : index loc(callsite("key_last"("flash_bwd.cu":295:3 to 295:69) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key_end_c = arith.minsi %key_end, %seqlen_kv : index loc(callsite("key_last"("flash_bwd.cu":295:3 to 295:69) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key_last = arith.subi %key_end_c, %c1 : index loc(callsite("key_last"("flash_bwd.cu":295:3 to 295:69) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %ragged = arith.cmpi sgt, %key_end, %seqlen_kv : index loc(callsite("ragged"("flash_bwd.cu":296:3 to 296:60) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %full_unmasked = arith.select %ragged, %m_blocks, %c0 : index loc(callsite("flash_bwd.cu":297:3 to 297:47 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %offset = arith.subi %seqlen_kv, %seqlen_q : index loc(callsite("offset"("flash_bwd.cu":298:3 to 298:57) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %first_row = arith.subi %key0, %offset : index loc(callsite("first_row"("flash_bwd.cu":299:3 to 299:39) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %last_q = arith.subi %seqlen_q, %c1 : index loc(callsite("flash_bwd.cu":300:7 to 300:38 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %no_rows = arith.cmpi sgt, %first_row, %last_q : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %first_row_c = arith.maxsi %first_row, %c0 : index loc(callsite("m_min"("flash_bwd.cu":301:3 to 301:52) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_min = arith.divsi %first_row_c, %c64 : index loc(callsite("m_min"("flash_bwd.cu":301:3 to 301:52) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr = arith.subi %key_last, %offset : index loc(callsite("all_keys_row"("flash_bwd.cu":302:3 to 302:54) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %all_keys_row = arith.maxsi %akr, %c0 : index loc(callsite("all_keys_row"("flash_bwd.cu":302:3 to 302:54) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_up = arith.addi %all_keys_row, %c63 : index loc(callsite("m_unmasked"("flash_bwd.cu":303:54 to 303:98) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_blk = arith.divsi %akr_up, %c64 : index loc(callsite("m_unmasked"("flash_bwd.cu":303:54 to 303:98) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_min = arith.maxsi %akr_blk, %c_min : index loc(callsite("m_unmasked"("flash_bwd.cu":303:50 to 303:106) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_max = arith.minsi %akr_min, %m_blocks : index loc(callsite("m_unmasked"("flash_bwd.cu":303:46 to 303:117) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_unmasked = arith.select %ragged, %m_blocks, %akr_max : index loc(callsite("m_unmasked"("flash_bwd.cu":303:3 to 303:118) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_min2 = arith.select %no_rows, %c0, %c_min : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_unmasked2 = arith.select %no_rows, %c0, %c_unmasked : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_max2 = arith.select %no_rows, %c0, %m_blocks : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %m_min = arith.select %causal, %c_min2, %c0 : index loc(callsite("flash_bwd.cu":297:3 to 297:28 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %m_unmasked = arith.select %causal, %c_unmasked2, %full_unmasked : index loc(callsite("flash_bwd.cu":297:3 to 297:28 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %m_max = arith.select %causal, %c_max2, %m_blocks : index loc(callsite("flash_bwd.cu":297:3 to 297:28 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %num_steps = arith.subi %m_max, %m_min : index loc("flash_bwd.cu":281:30 to 281:51)

  // ---- block_index: causal GQA tiles are dealt in pairs (u, T - 1 - u); the second visits its unmasked query blocks ascending ----
  %kv_tiles = arith.ceildivui %seqlen_kv, %c128 : index loc("kv_tiles"("flash_bwd.cu":751:28 to 751:88))
  %last_tile = arith.subi %kv_tiles, %c1 : index loc("flash_bwd.cu":753:33 to 753:49)
  %mirror = arith.subi %last_tile, %n_block : index loc("flash_bwd.cu":753:33 to 753:49)
  %after_mirror = arith.cmpi sgt, %n_block, %mirror : index loc("partner"("flash_bwd.cu":753:3 to 753:79))
  %gqa = arith.cmpi ne, %num_heads_q, %num_heads_kv : index loc(callsite("flash_bwd.cu":745:41 to 745:82 at "paired"("flash_bwd.cu":752:3 to 752:70)))
  %paired = arith.andi %causal, %gqa : i1 loc("paired"("flash_bwd.cu":752:3 to 752:70))
  %second_of_pair = arith.andi %paired, %after_mirror : i1 loc("partner"("flash_bwd.cu":753:3 to 753:79))
  %true = arith.constant true loc("flash_bwd.cu":790:7 to 790:33)
  %descending = arith.xori %second_of_pair, %true : i1 loc("range.descending"("flash_bwd.cu":790:7 to 790:33))

  // ---- the GQA group, the sequence views ----
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("group"("flash_bwd.cu":707:3 to 707:62))
  %head_q0 = arith.muli %head_kv, %group : index loc("head_q0"("flash_bwd.cu":708:3 to 708:38))
  %head_end = arith.addi %head_q0, %group : index loc("head_end"("flash_bwd.cu":708:40 to 708:66))
  %last_key_offset = arith.select %causal, %offset, %seqlen_kv : index loc("ctx.last_key_offset"("flash_bwd.cu":823:5 to 823:93))
  %rows_pad = memref.dim %ws_dpsum, %c2 : memref<?x?x?xf32, #G> loc("ws.rows_pad"("flash_bwd.cu":177:70 to 177:89))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("maps.k"("flash_bwd.cu":859:11 to 859:42))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("maps.v"("flash_bwd.cu":862:11 to 862:42))

  // ---- shared memory: K, V [BLOCK_N][d]; Q, dO [STAGES][BLOCK_M][d]; dS^T [2][BLOCK_N][BLOCK_M]; dQ [2][64][64] fp32; LSE, D [STAGES][BLOCK_M]; the mbarriers ----
  %sK = cuir.alloc {swizzle = 128} : memref<128x128xf16, #S> loc("sK"("flash_bwd.cu":109:24 to 109:37))
  %sV = cuir.alloc {swizzle = 128} : memref<128x128xf16, #S> loc("sV"("flash_bwd.cu":110:24 to 110:61))
  %sQ = cuir.alloc {swizzle = 128} : memref<2x64x128xf16, #S> loc("sQ"("flash_bwd.cu":111:24 to 111:61))
  %sdO = cuir.alloc {swizzle = 128} : memref<2x64x128xf16, #S> loc("sdO"("flash_bwd.cu":112:24 to 112:70))
  %sdS = cuir.alloc {swizzle = 128} : memref<2x128x64xf16, #S> loc("sdS"("flash_bwd.cu":113:24 to 113:71))
  %sdQ = cuir.alloc : memref<2x64x64xf32, #S> loc("sdQ"("flash_bwd.cu":114:24 to 114:67))
  %sLSE = cuir.alloc : memref<2x64xf32, #S> loc("sLSE"("flash_bwd.cu":115:24 to 115:78))
  %sdPsum = cuir.alloc : memref<2x64xf32, #S> loc("sdPsum"("flash_bwd.cu":116:24 to 116:72))
  %kv_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1> loc("bars->kv_full"("flash_bwd.cu":769:5 to 769:37))
  %q_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->q_full"("flash_bwd.cu":773:7 to 773:41))
  %do_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->do_full"("flash_bwd.cu":774:7 to 774:42))
  %q_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<2> loc("bars->q_empty"("flash_bwd.cu":775:7 to 775:64))

  // =============================== producer: warp 0, one elected thread ===============================
  cuir.bind warp [0] role producer {
    cuir.barrier.arrive %kv_full[%c0] expect_tx 65536 : !cuir.mbarrier<1> loc("flash_bwd.cu":346:3 to 346:66)
    cuir.copy_async tma %k_head[%key0, %c0] -> %sK barrier %kv_full[%c0]
        : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xf16, #S>, !cuir.mbarrier<1> loc("sK"("flash_bwd.cu":349:5 to 349:71))
    cuir.copy_async tma %v_head[%key0, %c0] -> %sV barrier %kv_full[%c0]
        : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xf16, #S>, !cuir.mbarrier<1> loc("sV"("flash_bwd.cu":351:5 to 351:71))
    %i_p = scf.for %vb = %m_min to %m_max step %c1 iter_args(%i_v = %c0) -> (index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":358:70 to 358:93))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":358:70 to 358:93))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":358:70 to 358:93))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":358:70 to 358:93))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":358:70 to 358:93))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":358:70 to 358:93))
      %i_k = scf.for %head_q = %head_q0 to %head_end step %c1 iter_args(%i = %i_v) -> (index) {
      %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
          : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("maps.q"("flash_bwd.cu":853:21 to 853:52))
      %do_head = memref.subview %d_o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
          : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("maps.d_o"("flash_bwd.cu":856:11 to 856:46))
      %lse_head = memref.subview %ws_lse_log2[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
          : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":325:3 to 325:61))
      %dpsum_head = memref.subview %ws_dpsum[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
          : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":325:3 to 325:61))
        // producer_load_step: Q + LSE and dO + D of step i into stage i % STAGES, once both consumers released it.
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_bwd.cu":322:3 to 322:35) at "flash_bwd.cu":358:7 to 358:60))
        %round = arith.divui %i, %cST : index loc(callsite("flash_bwd.cu":323:40 to 323:65 at "flash_bwd.cu":358:7 to 358:60))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_bwd.cu":323:40 to 323:65 at "flash_bwd.cu":358:7 to 358:60))
        %free = arith.xori %phase, %c1 : index loc(callsite("flash_bwd.cu":323:40 to 323:65 at "flash_bwd.cu":358:7 to 358:60))
        cuir.barrier.wait %q_empty[%stage], %free : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":323:3 to 323:66 at "flash_bwd.cu":358:7 to 358:60))
        %row = arith.muli %m, %c64 : index loc(callsite("row"("flash_bwd.cu":324:3 to 324:39) at "flash_bwd.cu":358:7 to 358:60))
        %sQ_stage = memref.subview %sQ[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":329:17 to 329:87) at "flash_bwd.cu":358:7 to 358:60))
        %sLSE_stage = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("sLSE"("flash_bwd.cu":331:13 to 331:57) at "flash_bwd.cu":358:7 to 358:60))
        cuir.barrier.arrive %q_full[%stage] expect_tx 16640 : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":326:3 to 326:82 at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %q_head[%row, %c0] -> %sQ_stage barrier %q_full[%stage]
            : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sQ"("flash_bwd.cu":329:5 to 329:96) at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %lse_head[%row] -> %sLSE_stage barrier %q_full[%stage]
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sLSE"("flash_bwd.cu":331:3 to 331:112) at "flash_bwd.cu":358:7 to 358:60))
        %sdO_stage = memref.subview %sdO[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":335:17 to 335:88) at "flash_bwd.cu":358:7 to 358:60))
        %sdPsum_stage = memref.subview %sdPsum[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("sdPsum"("flash_bwd.cu":337:13 to 337:59) at "flash_bwd.cu":358:7 to 358:60))
        cuir.barrier.arrive %do_full[%stage] expect_tx 16640 : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":332:3 to 332:83 at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %do_head[%row, %c0] -> %sdO_stage barrier %do_full[%stage]
            : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sdO"("flash_bwd.cu":335:5 to 335:99) at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %dpsum_head[%row] -> %sdPsum_stage barrier %do_full[%stage]
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sdPsum"("flash_bwd.cu":337:3 to 337:112) at "flash_bwd.cu":358:7 to 358:60))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":357:72 to 357:86)
        scf.yield %i_next : index loc("flash_bwd.cu":357:5 to 357:86)
      } loc("head_q"("flash_bwd.cu":357:5 to 357:86))
      scf.yield %i_k : index loc("flash_bwd.cu":356:3 to 356:52)
    } loc("v"("flash_bwd.cu":356:3 to 356:52))
    cuir.yield loc("flash_bwd.cu":802:16 to 802:117)
  } loc("flash_bwd.cu":798:5 to 798:51)

  // =============================== dQ writer: warp 1 ===============================
  cuir.bind warp [1] role producer {
    %steps = arith.muli %group, %num_steps : index loc("steps"("flash_bwd.cu":389:3 to 389:52))
    %i_w = scf.for %vb = %m_min to %m_max step %c1 iter_args(%i_v = %c0) -> (index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":393:72 to 393:102))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":393:72 to 393:102))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":393:72 to 393:102))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":393:72 to 393:102))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":393:72 to 393:102))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":393:72 to 393:102))
      %i_k = scf.for %head_q = %head_q0 to %head_end step %c1 iter_args(%i = %i_v) -> (index) {
      %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows_pad, 128] [1, 1, 1, 1]
          : memref<?x?x?x128xf32, #G> to memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("dq_block"("flash_bwd.cu":394:7 to 394:60))
        %row_at = arith.muli %m, %c64 : index loc("row_at"("flash_bwd.cu":393:64 to 393:116))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":392:72 to 392:86)
        %more = arith.cmpi slt, %i_next, %steps : index loc("flash_bwd.cu":411:9 to 411:26)
        scf.for %c = %c0 to %c2 step %c1 {
          %full_id = arith.addi %c6, %c : index loc("flash_bwd.cu":399:9 to 399:68)
          cuir.barrier.named %full_id threads 160 loc("flash_bwd.cu":399:9 to 399:68)
          %sdQ_c = memref.subview %sdQ[%c, 0, 0] [1, 64, 64] [1, 1, 1]
              : memref<2x64x64xf32, #S> to memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":402:31 to 402:105)
          // The bulk reduction: the tile read from shared memory, added into the workspace.
          %dq_tile = cuir.load %sdQ_c : memref<64x64xf32, strided<[64, 1], offset: ?>, #S> -> tensor<64x64xf32, #WACC> loc("flash_bwd.cu":401:11 to 401:90)
          %col = arith.muli %c, %cDQCS : index loc("flash_bwd.cu":401:43 to 401:88)
          cuir.atomic_add %dq_tile -> %dq_head[%row_at, %col] : tensor<64x64xf32, #WACC> -> memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("flash_bwd.cu":401:11 to 401:90)
          scf.if %more {
            %empty_id = arith.addi %c4, %c : index loc("flash_bwd.cu":411:42 to 411:104)
            cuir.barrier.named %empty_id threads 160 arrive loc("flash_bwd.cu":411:42 to 411:104)
            scf.yield loc("flash_bwd.cu":411:9 to 411:26)
          } loc("flash_bwd.cu":411:9 to 411:26)
          scf.yield loc("flash_bwd.cu":398:7 to 398:49)
        } loc("flash_bwd.cu":398:7 to 398:49)
        scf.yield %i_next : index loc("flash_bwd.cu":392:5 to 392:86)
      } loc("head_q"("flash_bwd.cu":392:5 to 392:86))
      scf.yield %i_k : index loc("flash_bwd.cu":391:3 to 391:52)
    } loc("v"("flash_bwd.cu":391:3 to 391:52))
    cuir.yield loc("flash_bwd.cu":808:16 to 808:113)
  } loc("flash_bwd.cu":804:7 to 804:38)

  // =============================== consumer warpgroups 1 and 2 ===============================
  cuir.bind warpgroup [1, 2] role consumer regs 232 {
    %consumer = cuir.worker_id loc("ctx.consumer"("flash_bwd.cu":819:5 to 819:30))
    %kv_rows = arith.muli %consumer, %c64 : index loc("kv_rows"("flash_bwd.cu":587:3 to 587:60))
    // The first key of this warpgroup's 64: a column of the score tile here (a row in the source).
    %kv0 = arith.addi %key0, %kv_rows : index loc("ctx.wg_key0"("flash_bwd.cu":832:7 to 832:70))
    %sK_wg = memref.subview %sK[%kv_rows, 0] [64, 128] [1, 1]
        : memref<128x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc("flash_bwd.cu":596:28 to 596:62)
    %sV_wg = memref.subview %sV[%kv_rows, 0] [64, 128] [1, 1]
        : memref<128x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc("flash_bwd.cu":598:29 to 598:63)
    // dQ = dS K of this warpgroup: keys [dq_key0, dq_key0 + DQ_KEYS), columns [dq_slab * 64, + 64).
    %dq_key0 = arith.muli %consumer, %cDQKS : index loc("dq_key0"("flash_bwd.cu":627:3 to 627:75))
    %dq_col0 = arith.muli %consumer, %cDQCS : index loc("dq_slab"("flash_bwd.cu":628:3 to 628:62))
    %sK_dq = memref.subview %sK[%dq_key0, %dq_col0] [128, 64] [1, 1]
        : memref<128x128xf16, #S> to memref<128x64xf16, strided<[128, 1], offset: ?>, #S> loc("flash_bwd.cu":630:14 to 630:83)
    %ds_bar_c = arith.muli %consumer, %cDSBS : index loc("flash_bwd.cu":623:5 to 623:58)
    %ds_bar = arith.addi %cDSB, %ds_bar_c : index loc("flash_bwd.cu":623:5 to 623:58)
    %dq_empty_id = arith.addi %c4, %consumer : index loc("flash_bwd.cu":640:14 to 640:85)
    %dq_full_id = arith.addi %c6, %consumer : index loc("flash_bwd.cu":643:3 to 643:75)
    %sdQ_wg = memref.subview %sdQ[%consumer, 0, 0] [1, 64, 64] [1, 1, 1]
        : memref<2x64x64xf32, #S> to memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc("dst"("flash_bwd.cu":566:44 to 566:100))

    // ---- constants of the steps; dK, dV in registers over all of them ----
    %log2e = arith.constant 1.44269502 : f32 loc("ctx.scale_log2"("flash_bwd.cu":824:5 to 824:52))
    %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("ctx.scale_log2"("flash_bwd.cu":824:5 to 824:52))
    %scale_tile = tensor.splat %scale_log2 : tensor<64x64xf32, #WACC> loc("ctx.scale_log2"("flash_bwd.cu":824:5 to 824:52))
    %ninf = arith.constant 0xFF800000 : f32 loc("flash_bwd.cu":504:87 to 504:92)
    %zero_s = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("acc_s"("flash_bwd.cu":594:3 to 594:45))
    %zero_dq = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("acc_dq"("flash_bwd.cu":626:3 to 626:28))
    %acc_init = arith.constant dense<0.0> : tensor<64x128xf32, #WACC> loc("flash_bwd.cu":705:41 to 705:68)
    cuir.barrier.wait %kv_full[%c0], %c0 : !cuir.mbarrier<1> loc("flash_bwd.cu":706:3 to 706:42)

    // The source runs each kind of step as one loop over i, counting the head
    // and the query block along; here a loop over the query blocks, each over
    // the group's heads.
    // =============================== masking steps ===============================
    %m_dk, %m_dv, %m_i = scf.for %vb = %m_min to %m_unmasked step %c1
        iter_args(%dk_v = %acc_init, %dv_v = %acc_init, %i_v = %c0)
        -> (tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":713:58 to 713:81))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":713:58 to 713:81))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":713:58 to 713:81))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":713:58 to 713:81))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":713:58 to 713:81))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":713:58 to 713:81))
      %h_dk, %h_dv, %h_i = scf.for %head_q = %head_q0 to %head_end step %c1
          iter_args(%acc_dk = %dk_v, %acc_dv = %dv_v, %i = %i_v)
          -> (tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index) {
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_bwd.cu":580:3 to 580:35) at "flash_bwd.cu":713:5 to 713:28))
        %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":713:5 to 713:28))
        %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":713:5 to 713:28))
        %q_row0 = arith.muli %m, %c64 : index loc(callsite("q_row0"("flash_bwd.cu":581:3 to 581:42) at "flash_bwd.cu":713:5 to 713:28))
        %sQ_stage = memref.subview %sQ[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sq"("flash_bwd.cu":588:3 to 588:74) at "flash_bwd.cu":713:5 to 713:28))
        %sdO_stage = memref.subview %sdO[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdo"("flash_bwd.cu":589:3 to 589:76) at "flash_bwd.cu":713:5 to 713:28))
        %sLSE_stage = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("lse_log2"("flash_bwd.cu":590:59 to 590:107) at "flash_bwd.cu":713:5 to 713:28))
        %sdPsum_stage = memref.subview %sdPsum[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dpsum"("flash_bwd.cu":591:56 to 591:106) at "flash_bwd.cu":713:5 to 713:28))

        // ---- S = Q K^T and dP = dO V^T (the hardware's K Q^T and V dO^T), [queries x keys] ----
        cuir.barrier.wait %q_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":595:3 to 595:45 at "flash_bwd.cu":713:5 to 713:28))
        %s_issued = cuir.gemm_async %sQ_stage, %sK_wg transpose_b, %zero_s acc_transposed
            : memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":596:3 to 596:67) at "flash_bwd.cu":713:5 to 713:28))
        cuir.barrier.wait %do_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":597:3 to 597:46 at "flash_bwd.cu":713:5 to 713:28))
        %dp_issued = cuir.gemm_async %sdO_stage, %sV_wg transpose_b, %zero_s acc_transposed
            : memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":598:3 to 598:69) at "flash_bwd.cu":713:5 to 713:28))
        // S has landed once at most dP, issued after it, is pending.
        %acc_s = cuir.gemm_wait %s_issued pending 1 : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":600:3 to 600:25) at "flash_bwd.cu":713:5 to 713:28))

        // ------- score tile complete: acc_s = Q K^T (unscaled) of query tile m_tile; the mask of a masking step -------
        %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_row0, %kv0]
            : (tensor<64x64xf32, #WACC>) -> tensor<64x64xf32, #WACC> {
        ^bb0(%x: f32 loc("acc_s"("flash_bwd.cu":504:68 to 504:92)), %bi: index loc("batch"("flash_bwd.cu":766:3 to 766:58)), %hi: index loc("head_q"("flash_bwd.cu":711:3 to 711:51)), %qi: index loc("row"("flash_bwd.cu":503:7 to 503:46)), %ki: index loc("key"("flash_bwd.cu":502:7 to 502:50))):
          %past_end = arith.cmpi sge, %ki, %seqlen_kv : index loc(callsite("flash_bwd.cu":504:11 to 504:31 at "flash_bwd.cu":603:28 to 603:61))
          %row_last = arith.addi %qi, %last_key_offset : index loc(callsite("flash_bwd.cu":504:41 to 504:66 at "flash_bwd.cu":603:28 to 603:61))
          %past_diag = arith.cmpi sgt, %ki, %row_last : index loc(callsite("flash_bwd.cu":504:35 to 504:66 at "flash_bwd.cu":603:28 to 603:61))
          %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_bwd.cu":504:7 to 504:31 at "flash_bwd.cu":603:28 to 603:61))
          %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_bwd.cu":504:68 to 504:92) at "flash_bwd.cu":603:28 to 603:61))
          cuir.yield %r : f32 loc("flash_bwd.cu":603:28 to 603:61)
        } loc("acc_s"("flash_bwd.cu":603:28 to 603:61))

        // ---- P = exp2(S * scale * log2 e - LSE * log2 e) (scores_to_probs) ----
        %lse_log2 = cuir.load %sLSE_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("lse"("flash_bwd.cu":516:5 to 516:93) at "flash_bwd.cu":604:3 to 604:64))
        %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %neg_lse = arith.negf %lse_b : tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %logits = math.fma %acc_s_masked, %scale_tile, %neg_lse : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:36 to 519:96) at "flash_bwd.cu":604:3 to 604:64))
        %p = math.exp2 %logits : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:7 to 519:97) at "flash_bwd.cu":604:3 to 604:64))

        // ---- dS = P * (dP - D) (probs_to_dscores), once dP has landed ----
        %acc_dp = cuir.gemm_wait %dp_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":605:3 to 605:25) at "flash_bwd.cu":713:5 to 713:28))
        %dpsum = cuir.load %sdPsum_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("d"("flash_bwd.cu":529:5 to 529:88) at "flash_bwd.cu":607:3 to 607:54))
        %d_b = cuir.broadcast_rows %dpsum : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":531:93 to 531:112 at "flash_bwd.cu":607:3 to 607:54))
        %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:72 to 531:113) at "flash_bwd.cu":607:3 to 607:54))
        %ds = arith.mulf %p, %dp_minus_d : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:33 to 531:113) at "flash_bwd.cu":607:3 to 607:54))

        // ---- dV += P^T dO, dK += dS^T Q: the 16-bit P and dS as the A fragments P^T and dS^T (the same registers in the source) ----
        %p16 = arith.truncf %p : tensor<64x64xf32, #WACC> to tensor<64x64xf16, #WACC> loc(callsite("p_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":611:3 to 611:28))
        %p_t = cuir.convert_layout %p16 transpose : tensor<64x64xf16, #WACC> -> tensor<64x64xf16, #WA> loc("p_frag"("flash_bwd.cu":611:3 to 611:28))
        %ds16 = arith.truncf %ds : tensor<64x64xf32, #WACC> to tensor<64x64xf16, #WACC> loc(callsite("ds_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":612:3 to 612:30))
        %ds_t = cuir.convert_layout %ds16 transpose : tensor<64x64xf16, #WACC> -> tensor<64x64xf16, #WA> loc("ds_frag"("flash_bwd.cu":612:3 to 612:30))
        %dv_issued = cuir.gemm_async %p_t, %sdO_stage, %acc_dv
            : tensor<64x64xf16, #WA>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":614:3 to 614:39) at "flash_bwd.cu":713:5 to 713:28))
        %dk_issued = cuir.gemm_async %ds_t, %sQ_stage, %acc_dk
            : tensor<64x64xf16, #WA>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":615:3 to 615:39) at "flash_bwd.cu":713:5 to 713:28))

        // ---- dS^T to shared memory (buffer i % 2, this warpgroup's 64 key rows), then dQ = dS K ----
        %ds_buf = arith.remui %i, %c2 : index loc(callsite("ds"("flash_bwd.cu":617:3 to 617:77) at "flash_bwd.cu":713:5 to 713:28))
        %sdS_wg = memref.subview %sdS[%ds_buf, %kv_rows, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x128x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("rows"("flash_bwd.cu":551:3 to 551:58) at "flash_bwd.cu":618:3 to 618:37))
        cuir.store %ds_t -> %sdS_wg : tensor<64x64xf16, #WA> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":556:7 to 556:114 at "flash_bwd.cu":618:3 to 618:37))
        cuir.barrier.named %ds_bar threads 256 loc(callsite("flash_bwd.cu":620:3 to 620:37 at "flash_bwd.cu":713:5 to 713:28))
        %sdS_dq = memref.subview %sdS[%ds_buf, %dq_key0, 0] [1, 128, 64] [1, 1, 1]
            : memref<2x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":629:22 to 629:54 at "flash_bwd.cu":713:5 to 713:28))
        %ds_a = cuir.load %sdS_dq transpose : memref<128x64xf16, strided<[64, 1], offset: ?>, #S> -> tensor<64x128xf16, #WA> loc(callsite("flash_bwd.cu":466:20 to 466:85 at "flash_bwd.cu":713:5 to 713:28))
        %dq_issued = cuir.gemm_async %ds_a, %sK_dq, %zero_dq
            : tensor<64x128xf16, #WA>, memref<128x64xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":629:3 to 629:55) at "flash_bwd.cu":713:5 to 713:28))
        // wgmma_wait_group<0>: dV, dK and dQ have landed; Q, dO and dS^T are read.
        %dv_n = cuir.gemm_wait %dv_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":713:5 to 713:28))
        %dk_n = cuir.gemm_wait %dk_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":713:5 to 713:28))
        %acc_dq = cuir.gemm_wait %dq_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":713:5 to 713:28))
        cuir.barrier.arrive %q_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":637:3 to 637:41 at "flash_bwd.cu":713:5 to 713:28))

        // ---- dQ to shared memory for the dQ writer, once it has read the previous step's ----
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":713:5 to 713:28))
        scf.if %has_prev {
          cuir.barrier.named %dq_empty_id threads 160 loc(callsite("flash_bwd.cu":640:14 to 640:85 at "flash_bwd.cu":713:5 to 713:28))
          scf.yield loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":713:5 to 713:28))
        } loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":713:5 to 713:28))
        cuir.store %acc_dq -> %sdQ_wg : tensor<64x64xf32, #WACC> -> memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":569:5 to 569:103) at "flash_bwd.cu":641:3 to 641:27))
        cuir.barrier.named %dq_full_id threads 160 arrive loc(callsite("flash_bwd.cu":643:3 to 643:75 at "flash_bwd.cu":713:5 to 713:28))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":712:3 to 712:33)
        scf.yield %dk_n, %dv_n, %i_next : tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index loc("flash_bwd.cu":714:5 to 714:53)
      } loc("head_q"("flash_bwd.cu":714:5 to 714:53))
      scf.yield %h_dk, %h_dv, %h_i : tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index loc("flash_bwd.cu":712:3 to 712:33)
    } loc("v"("flash_bwd.cu":712:3 to 712:33))

    // =============================== unmasked steps ===============================
    %dk_acc, %dv_acc, %i_c = scf.for %vb = %m_unmasked to %m_max step %c1
        iter_args(%dk_v = %m_dk, %dv_v = %m_dv, %i_v = %m_i)
        -> (tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":717:59 to 717:82))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":717:59 to 717:82))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":717:59 to 717:82))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":717:59 to 717:82))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":717:59 to 717:82))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":717:59 to 717:82))
      %h_dk, %h_dv, %h_i = scf.for %head_q = %head_q0 to %head_end step %c1
          iter_args(%acc_dk = %dk_v, %acc_dv = %dv_v, %i = %i_v)
          -> (tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index) {
        %q_row0 = arith.muli %m, %c64 : index loc(callsite("q_row0"("flash_bwd.cu":581:3 to 581:42) at "flash_bwd.cu":717:5 to 717:29))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_bwd.cu":580:3 to 580:35) at "flash_bwd.cu":717:5 to 717:29))
        %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":717:5 to 717:29))
        %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":717:5 to 717:29))
        %sQ_stage = memref.subview %sQ[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sq"("flash_bwd.cu":588:3 to 588:74) at "flash_bwd.cu":717:5 to 717:29))
        %sdO_stage = memref.subview %sdO[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdo"("flash_bwd.cu":589:3 to 589:76) at "flash_bwd.cu":717:5 to 717:29))
        %sLSE_stage = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("lse_log2"("flash_bwd.cu":590:59 to 590:107) at "flash_bwd.cu":717:5 to 717:29))
        %sdPsum_stage = memref.subview %sdPsum[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dpsum"("flash_bwd.cu":591:56 to 591:106) at "flash_bwd.cu":717:5 to 717:29))

        // ---- S = Q K^T and dP = dO V^T (the hardware's K Q^T and V dO^T), [queries x keys] ----
        cuir.barrier.wait %q_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":595:3 to 595:45 at "flash_bwd.cu":717:5 to 717:29))
        %s_issued = cuir.gemm_async %sQ_stage, %sK_wg transpose_b, %zero_s acc_transposed
            : memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":596:3 to 596:67) at "flash_bwd.cu":717:5 to 717:29))
        cuir.barrier.wait %do_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":597:3 to 597:46 at "flash_bwd.cu":717:5 to 717:29))
        %dp_issued = cuir.gemm_async %sdO_stage, %sV_wg transpose_b, %zero_s acc_transposed
            : memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":598:3 to 598:69) at "flash_bwd.cu":717:5 to 717:29))
        // S has landed once at most dP, issued after it, is pending.
        %acc_s = cuir.gemm_wait %s_issued pending 1 : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":600:3 to 600:25) at "flash_bwd.cu":717:5 to 717:29))

        // ------- score tile complete: acc_s = Q K^T (unscaled) of query tile m_tile; no mask -------

        // ---- P = exp2(S * scale * log2 e - LSE * log2 e) (scores_to_probs) ----
        %lse_log2 = cuir.load %sLSE_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("lse"("flash_bwd.cu":516:5 to 516:93) at "flash_bwd.cu":604:3 to 604:64))
        %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %neg_lse = arith.negf %lse_b : tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %logits = math.fma %acc_s, %scale_tile, %neg_lse : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:36 to 519:96) at "flash_bwd.cu":604:3 to 604:64))
        %p = math.exp2 %logits : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:7 to 519:97) at "flash_bwd.cu":604:3 to 604:64))

        // ---- dS = P * (dP - D) (probs_to_dscores), once dP has landed ----
        %acc_dp = cuir.gemm_wait %dp_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":605:3 to 605:25) at "flash_bwd.cu":717:5 to 717:29))
        %dpsum = cuir.load %sdPsum_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("d"("flash_bwd.cu":529:5 to 529:88) at "flash_bwd.cu":607:3 to 607:54))
        %d_b = cuir.broadcast_rows %dpsum : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":531:93 to 531:112 at "flash_bwd.cu":607:3 to 607:54))
        %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:72 to 531:113) at "flash_bwd.cu":607:3 to 607:54))
        %ds = arith.mulf %p, %dp_minus_d : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:33 to 531:113) at "flash_bwd.cu":607:3 to 607:54))

        // ---- dV += P^T dO, dK += dS^T Q: the 16-bit P and dS as the A fragments P^T and dS^T (the same registers in the source) ----
        %p16 = arith.truncf %p : tensor<64x64xf32, #WACC> to tensor<64x64xf16, #WACC> loc(callsite("p_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":611:3 to 611:28))
        %p_t = cuir.convert_layout %p16 transpose : tensor<64x64xf16, #WACC> -> tensor<64x64xf16, #WA> loc("p_frag"("flash_bwd.cu":611:3 to 611:28))
        %ds16 = arith.truncf %ds : tensor<64x64xf32, #WACC> to tensor<64x64xf16, #WACC> loc(callsite("ds_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":612:3 to 612:30))
        %ds_t = cuir.convert_layout %ds16 transpose : tensor<64x64xf16, #WACC> -> tensor<64x64xf16, #WA> loc("ds_frag"("flash_bwd.cu":612:3 to 612:30))
        %dv_issued = cuir.gemm_async %p_t, %sdO_stage, %acc_dv
            : tensor<64x64xf16, #WA>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":614:3 to 614:39) at "flash_bwd.cu":717:5 to 717:29))
        %dk_issued = cuir.gemm_async %ds_t, %sQ_stage, %acc_dk
            : tensor<64x64xf16, #WA>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x128xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":615:3 to 615:39) at "flash_bwd.cu":717:5 to 717:29))

        // ---- dS^T to shared memory (buffer i % 2, this warpgroup's 64 key rows), then dQ = dS K ----
        %ds_buf = arith.remui %i, %c2 : index loc(callsite("ds"("flash_bwd.cu":617:3 to 617:77) at "flash_bwd.cu":717:5 to 717:29))
        %sdS_wg = memref.subview %sdS[%ds_buf, %kv_rows, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x128x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("rows"("flash_bwd.cu":551:3 to 551:58) at "flash_bwd.cu":618:3 to 618:37))
        cuir.store %ds_t -> %sdS_wg : tensor<64x64xf16, #WA> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":556:7 to 556:114 at "flash_bwd.cu":618:3 to 618:37))
        cuir.barrier.named %ds_bar threads 256 loc(callsite("flash_bwd.cu":620:3 to 620:37 at "flash_bwd.cu":717:5 to 717:29))
        %sdS_dq = memref.subview %sdS[%ds_buf, %dq_key0, 0] [1, 128, 64] [1, 1, 1]
            : memref<2x128x64xf16, #S> to memref<128x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":629:22 to 629:54 at "flash_bwd.cu":717:5 to 717:29))
        %ds_a = cuir.load %sdS_dq transpose : memref<128x64xf16, strided<[64, 1], offset: ?>, #S> -> tensor<64x128xf16, #WA> loc(callsite("flash_bwd.cu":466:20 to 466:85 at "flash_bwd.cu":717:5 to 717:29))
        %dq_issued = cuir.gemm_async %ds_a, %sK_dq, %zero_dq
            : tensor<64x128xf16, #WA>, memref<128x64xf16, strided<[128, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":629:3 to 629:55) at "flash_bwd.cu":717:5 to 717:29))
        // wgmma_wait_group<0>: dV, dK and dQ have landed; Q, dO and dS^T are read.
        %dv_n = cuir.gemm_wait %dv_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":717:5 to 717:29))
        %dk_n = cuir.gemm_wait %dk_issued pending 0 : tensor<64x128xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":717:5 to 717:29))
        %acc_dq = cuir.gemm_wait %dq_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":717:5 to 717:29))
        cuir.barrier.arrive %q_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":637:3 to 637:41 at "flash_bwd.cu":717:5 to 717:29))

        // ---- dQ to shared memory for the dQ writer, once it has read the previous step's ----
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":717:5 to 717:29))
        scf.if %has_prev {
          cuir.barrier.named %dq_empty_id threads 160 loc(callsite("flash_bwd.cu":640:14 to 640:85 at "flash_bwd.cu":717:5 to 717:29))
          scf.yield loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":717:5 to 717:29))
        } loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":717:5 to 717:29))
        cuir.store %acc_dq -> %sdQ_wg : tensor<64x64xf32, #WACC> -> memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":569:5 to 569:103) at "flash_bwd.cu":641:3 to 641:27))
        cuir.barrier.named %dq_full_id threads 160 arrive loc(callsite("flash_bwd.cu":643:3 to 643:75 at "flash_bwd.cu":717:5 to 717:29))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":716:3 to 716:25)
        scf.yield %dk_n, %dv_n, %i_next : tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index loc("flash_bwd.cu":718:5 to 718:53)
      } loc("head_q"("flash_bwd.cu":718:5 to 718:53))
      scf.yield %h_dk, %h_dv, %h_i : tensor<64x128xf32, #WACC>, tensor<64x128xf32, #WACC>, index loc("flash_bwd.cu":716:3 to 716:25)
    } loc("v"("flash_bwd.cu":716:3 to 716:25))

    // =============================== write_dkv: dK * softmax_scale and dV through the Q and dO stages ===============================
    cuir.barrier.named %c1 threads 256 loc("flash_bwd.cu":685:3 to 685:58)
    %scale_b = tensor.splat %softmax_scale : tensor<64x128xf32, #WACC> loc("flash_bwd.cu":689:51 to 689:77)
    %dk_scaled = arith.mulf %dk_acc, %scale_b : tensor<64x128xf32, #WACC> loc(callsite("flash_bwd.cu":665:35 to 665:64 at "flash_bwd.cu":687:3 to 687:45))
    %dk16 = arith.truncf %dk_scaled : tensor<64x128xf32, #WACC> to tensor<64x128xf16, #WACC> loc(callsite("flash_bwd.cu":665:11 to 665:100 at "flash_bwd.cu":687:3 to 687:45))
    %dv16 = arith.truncf %dv_acc : tensor<64x128xf32, #WACC> to tensor<64x128xf16, #WACC> loc(callsite("flash_bwd.cu":665:11 to 665:100 at "flash_bwd.cu":690:3 to 690:46))
    %sQ_out = memref.subview %sQ[%consumer, 0, 0] [1, 64, 128] [1, 1, 1]
        : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc("flash_bwd.cu":687:3 to 687:45)
    %sdO_out = memref.subview %sdO[%consumer, 0, 0] [1, 64, 128] [1, 1, 1]
        : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc("flash_bwd.cu":690:3 to 690:46)
    %dk_head = memref.subview %dk[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
        : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":688:21 to 688:122)
    %dv_head = memref.subview %dv[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
        : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":691:21 to 691:122)
    cuir.store %dk16 -> %sQ_out : tensor<64x128xf16, #WACC> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":664:7 to 664:89 at "flash_bwd.cu":687:3 to 687:45))
    cuir.barrier.warp loc(callsite("flash_bwd.cu":668:3 to 668:16 at "flash_bwd.cu":687:3 to 687:45))
    cuir.copy %sQ_out -> %dk_head[%kv0, %c0] : memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("flash_bwd.cu":675:5 to 675:117 at "flash_bwd.cu":687:3 to 687:45))
    cuir.store %dv16 -> %sdO_out : tensor<64x128xf16, #WACC> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":664:7 to 664:89 at "flash_bwd.cu":690:3 to 690:46))
    cuir.barrier.warp loc(callsite("flash_bwd.cu":668:3 to 668:16 at "flash_bwd.cu":690:3 to 690:46))
    cuir.copy %sdO_out -> %dv_head[%kv0, %c0] : memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("flash_bwd.cu":675:5 to 675:117 at "flash_bwd.cu":690:3 to 690:46))
    cuir.yield loc("flash_bwd.cu":835:11 to 835:95)
  } loc("flash_bwd.cu":814:5 to 814:40)
  cuir.return loc("flash_bwd.cu":759:5 to 759:104)
} loc("flash_bwd_sm90_kernel"("flash_bwd.cu":759:5 to 759:104))

// =============================== convert: dQ = softmax_scale * accumulator ===============================
cuir.kernel @flash_bwd_sm90_f16_d128_convert_dq(
    %ws_dq_accum: memref<?x?x?x128xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":237:91 to 237:109)),
    %dq: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dq"} loc("params.dq"("flash_bwd.cu":237:33 to 237:89)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":237:33 to 237:89)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":237:33 to 237:89)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":237:33 to 237:89)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":237:33 to 237:89)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":237:33 to 237:89)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":237:33 to 237:89)))
    grid (b, hq, hkv, nq, nkv) -> (((nq ceildiv 64) * 64) ceildiv 16, hq, b)
    threads 256 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %cRPB = arith.constant 16 : index loc("kRowKernelThreads / THREADS_PER_ROW")
  %blk = cuir.block_id x loc("row"("flash_bwd.cu":240:3 to 240:102))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":239:3 to 239:53))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":239:3 to 239:53))
  %row0 = arith.muli %blk, %cRPB : index loc("row"("flash_bwd.cu":240:3 to 240:102))
  %zero = arith.constant dense<0.0> : tensor<16x128xf32, #RACC> loc("flash_bwd.cu":245:3 to 245:22)
  // The accumulator's rows of the block (row-major here; the fragment order in the source).
  %acc = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<16x128xf32, #RACC>) -> tensor<16x128xf32, #RACC> {
  ^bb0(%x: f32 loc("a"("flash_bwd.cu":248:5 to 248:21)), %bi: index loc("batch"("flash_bwd.cu":239:3 to 239:53)), %hi: index loc("head_q"("flash_bwd.cu":239:3 to 239:53)), %qi: index loc("row"("flash_bwd.cu":240:3 to 240:102)), %ci: index loc("chunk"("flash_bwd.cu":241:3 to 241:51))):
    %a = memref.load %ws_dq_accum[%bi, %hi, %qi, %ci] : memref<?x?x?x128xf32, #G> loc("a"("flash_bwd.cu":249:9 to 249:114))
    cuir.yield %a : f32 loc("a"("flash_bwd.cu":249:9 to 249:114))
  } loc("block"("flash_bwd.cu":243:3 to 243:104))
  %s = tensor.splat %softmax_scale : tensor<16x128xf32, #RACC> loc("s"("flash_bwd.cu":244:3 to 244:40))
  %dq_f = arith.mulf %acc, %s : tensor<16x128xf32, #RACC> loc("flash_bwd.cu":250:38 to 250:45)
  %dq16 = arith.truncf %dq_f : tensor<16x128xf32, #RACC> to tensor<16x128xf16, #RACC> loc("packed"("flash_bwd.cu":250:5 to 250:56))
  %dq_head = memref.subview %dq[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":253:30 to 253:97)
  // Rows past Nq are not written (if (row >= params.seqlen_q) return): the store skips them.
  cuir.store %dq16 -> %dq_head[%row0, %c0] : tensor<16x128xf16, #RACC> -> memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":253:3 to 253:128)
  cuir.return loc("flash_bwd.cu":242:3 to 242:38)
} loc("flash_bwd_convert_dq_kernel"("flash_bwd.cu":237:5 to 237:110))
cuir.launch_sequence @flash_bwd_sm90_f16_d64 [@flash_bwd_sm90_f16_d64_preprocess, @flash_bwd_sm90_f16_d64_main, @flash_bwd_sm90_f16_d64_convert_dq] loc("flash_bwd.cu":876:20 to 876:94)

// =============================== preprocess: D, LSE * log2 e, dQ accumulator zeroed ===============================
cuir.kernel @flash_bwd_sm90_f16_d64_preprocess(
    %o: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_bwd.cu":190:33 to 190:89)),
    %d_o: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":190:33 to 190:89)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_bwd.cu":190:33 to 190:89)),
    %ws_dq_accum: memref<?x?x?x64xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":190:91 to 190:109)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":190:91 to 190:109)),
    %ws_dpsum: memref<?x?x?xf32, #G> {cuir.arg = "workspace:dpsum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.dpsum"("flash_bwd.cu":190:91 to 190:109)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":190:33 to 190:89)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":190:33 to 190:89)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":190:33 to 190:89)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":190:33 to 190:89)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":190:33 to 190:89)))
    grid (b, hq, hkv, nq, nkv) -> (((nq ceildiv 64) * 64) ceildiv 32, hq, b)
    threads 256 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %cRPB = arith.constant 32 : index loc("kRowKernelThreads / THREADS_PER_ROW")
  %fzero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %log2e = arith.constant 1.44269502 : f32
  %blk = cuir.block_id x loc("row"("flash_bwd.cu":193:3 to 193:102))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":192:3 to 192:53))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":192:3 to 192:53))
  %row0 = arith.muli %blk, %cRPB : index loc("row"("flash_bwd.cu":193:3 to 193:102))
  %zero = arith.constant dense<0.0> : tensor<32x64xf32, #RACC> loc("dot"("flash_bwd.cu":195:3 to 195:19))

  // ---- O and dO of the block's rows (a row past Nq reads nothing: 0) ----
  %o16 = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<32x64xf32, #RACC>) -> tensor<32x64xf16, #RACC> {
  ^bb0(%x: f32 loc("o"("flash_bwd.cu":199:5 to 199:102)), %bi: index loc("batch"("flash_bwd.cu":192:3 to 192:53)), %hi: index loc("head_q"("flash_bwd.cu":192:3 to 192:53)), %qi: index loc("row"("flash_bwd.cu":193:3 to 193:102)), %ci: index loc("chunk"("flash_bwd.cu":194:3 to 194:51))):
    %in = arith.cmpi slt, %qi, %seqlen_q : index loc("flash_bwd.cu":196:3 to 196:29)
    %qc = arith.select %in, %qi, %c0 : index loc("flash_bwd.cu":196:3 to 196:29)
    %v = memref.load %o[%bi, %qc, %hi, %ci] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> loc("o"("flash_bwd.cu":199:5 to 199:102))
    %z = arith.constant 0.0 : f16
    %r = arith.select %in, %v, %z : f16 loc("flash_bwd.cu":196:3 to 196:29)
    cuir.yield %r : f16 loc("o"("flash_bwd.cu":199:5 to 199:102))
  } loc("o"("flash_bwd.cu":199:5 to 199:102))
  %do16 = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<32x64xf32, #RACC>) -> tensor<32x64xf16, #RACC> {
  ^bb0(%x: f32 loc("d_o"("flash_bwd.cu":200:5 to 200:107)), %bi: index loc("batch"("flash_bwd.cu":192:3 to 192:53)), %hi: index loc("head_q"("flash_bwd.cu":192:3 to 192:53)), %qi: index loc("row"("flash_bwd.cu":193:3 to 193:102)), %ci: index loc("chunk"("flash_bwd.cu":194:3 to 194:51))):
    %in = arith.cmpi slt, %qi, %seqlen_q : index loc("flash_bwd.cu":196:3 to 196:29)
    %qc = arith.select %in, %qi, %c0 : index loc("flash_bwd.cu":196:3 to 196:29)
    %v = memref.load %d_o[%bi, %qc, %hi, %ci] : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> loc("d_o"("flash_bwd.cu":200:5 to 200:107))
    %z = arith.constant 0.0 : f16
    %r = arith.select %in, %v, %z : f16 loc("flash_bwd.cu":196:3 to 196:29)
    cuir.yield %r : f16 loc("d_o"("flash_bwd.cu":200:5 to 200:107))
  } loc("d_o"("flash_bwd.cu":200:5 to 200:107))

  // ---- D = rowsum(dO * O) in fp32 ----
  %of = arith.extf %o16 : tensor<32x64xf16, #RACC> to tensor<32x64xf32, #RACC> loc("a"("flash_bwd.cu":204:7 to 204:67))
  %dof = arith.extf %do16 : tensor<32x64xf16, #RACC> to tensor<32x64xf32, #RACC> loc("b"("flash_bwd.cu":204:69 to 204:116))
  %prod = arith.mulf %of, %dof : tensor<32x64xf32, #RACC> loc("dot"("flash_bwd.cu":205:7 to 205:49))
  %d_rows = cuir.reduce_rows sum %prod : tensor<32x64xf32, #RACC> -> tensor<32xf32, #RROW> loc("dot"("flash_bwd.cu":209:67 to 209:115))

  // ---- LSE * log2 e; +inf for a row that sees no key and for padded rows (their P is then 0) ----
  %lse_tile = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<32x64xf32, #RACC>) -> tensor<32x64xf32, #RACC> {
  ^bb0(%x: f32 loc("lse"("flash_bwd.cu":215:5 to 215:22)), %bi: index loc("batch"("flash_bwd.cu":192:3 to 192:53)), %hi: index loc("head_q"("flash_bwd.cu":192:3 to 192:53)), %qi: index loc("row"("flash_bwd.cu":193:3 to 193:102)), %ci: index loc("chunk"("flash_bwd.cu":194:3 to 194:51))):
    %in = arith.cmpi slt, %qi, %seqlen_q : index loc("lse"("flash_bwd.cu":216:9 to 216:32))
    %qc = arith.select %in, %qi, %c0 : index loc("lse"("flash_bwd.cu":216:9 to 216:32))
    %l = memref.load %lse[%bi, %hi, %qc] : memref<?x?x?xf32, #G> loc("lse"("flash_bwd.cu":216:33 to 216:128))
    %lv = arith.select %in, %l, %ninf : f32 loc("lse"("flash_bwd.cu":216:9 to 216:136))
    %none = arith.cmpf oeq, %lv, %ninf : f32 loc("flash_bwd.cu":218:23 to 218:35)
    %scaled = arith.mulf %lv, %log2e : f32 loc("flash_bwd.cu":218:45 to 218:57)
    %r = arith.select %none, %pinf, %scaled : f32 loc("flash_bwd.cu":218:5 to 218:58)
    cuir.yield %r : f32 loc("flash_bwd.cu":218:5 to 218:58)
  } loc("flash_bwd.cu":218:5 to 218:58)
  // One value per row (the row's chunk-0 thread writes it): the row vector.
  %lse_rows = cuir.reduce_rows max %lse_tile : tensor<32x64xf32, #RACC> -> tensor<32xf32, #RROW> loc("flash_bwd.cu":214:3 to 214:18)

  // ---- the workspace rows of (batch, head_q) ----
  %rows_pad = memref.dim %ws_dpsum, %c2 : memref<?x?x?xf32, #G> loc("ws.rows_pad"("flash_bwd.cu":177:70 to 177:89))
  %dpsum_head = memref.subview %ws_dpsum[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":211:3 to 211:61))
  %lse_head = memref.subview %ws_lse_log2[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":211:3 to 211:61))
  %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows_pad, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf32, #G> to memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":212:3 to 212:84))
  cuir.store %zero -> %dq_head[%row0, %c0] : tensor<32x64xf32, #RACC> -> memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":213:3 to 213:51))
  cuir.store %d_rows -> %dpsum_head[%row0] : tensor<32xf32, #RROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.dpsum"("flash_bwd.cu":217:5 to 217:24))
  cuir.store %lse_rows -> %lse_head[%row0] : tensor<32xf32, #RROW> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.lse_log2"("flash_bwd.cu":218:5 to 218:58))
  cuir.return loc("flash_bwd.cu":210:3 to 210:34)
} loc("flash_bwd_preprocess_kernel"("flash_bwd.cu":190:5 to 190:110))

// =============================== main: one block per (KV tile, KV head, batch) ===============================
cuir.kernel @flash_bwd_sm90_f16_d64_main(
    %q: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_bwd.cu":759:27 to 759:83)),
    %k: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_bwd.cu":759:27 to 759:83)),
    %v: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_bwd.cu":759:27 to 759:83)),
    %d_o: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":759:27 to 759:83)),
    %dk: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dk"} loc("params.dk"("flash_bwd.cu":759:27 to 759:83)),
    %dv: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dv"} loc("params.dv"("flash_bwd.cu":759:27 to 759:83)),
    %ws_dq_accum: memref<?x?x?x64xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":759:85 to 759:103)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":759:85 to 759:103)),
    %ws_dpsum: memref<?x?x?xf32, #G> {cuir.arg = "workspace:dpsum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.dpsum"("flash_bwd.cu":759:85 to 759:103)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":759:27 to 759:83)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_bwd.cu":757:1 to 757:77)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":759:27 to 759:83)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":759:27 to 759:83)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":759:27 to 759:83)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":759:27 to 759:83)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":759:27 to 759:83)))
    grid (b, hq, hkv, nq, nkv) -> (nkv ceildiv 128, hkv, b)
    threads 384 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index loc("DQ_EMPTY_BARRIER")
  %c6 = arith.constant 6 : index loc("DQ_FULL_BARRIER")
  %c63 = arith.constant 63 : index loc("T::BLOCK_M - 1")
  %c64 = arith.constant 64 : index loc("T::BLOCK_M")
  %c128 = arith.constant 128 : index loc("T::BLOCK_N")
  %cST = arith.constant 2 : index loc("T::STAGES")
  %cDQKS = arith.constant 64 : index loc("T::DQ_SPLIT_COLUMNS ? 0 : T::WG_KEYS")
  %cDQCS = arith.constant 0 : index loc("T::DQ_SPLIT_COLUMNS ? T::DQ_COLS : 0")
  %cDSB = arith.constant 2 : index loc("T::DQ_SPLIT_COLUMNS ? DS_BARRIER : DS_WG_BARRIER")
  %cDSBS = arith.constant 1 : index loc("T::DQ_SPLIT_COLUMNS ? 0 : 1")

  // ---- block coordinates ----
  %n_block = cuir.block_id x loc("n_block"("flash_bwd.cu":785:7 to 785:41))
  %head_kv = cuir.block_id y loc("head_kv"("flash_bwd.cu":766:3 to 766:58))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":766:3 to 766:58))

  // ---- query_blocks<T, IS_CAUSAL>: virtual query blocks [m_min, m_max) see a key of the tile, [m_min, m_unmasked) need the mask ----
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc(callsite("m_blocks"("flash_bwd.cu":293:3 to 293:72) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key0 = arith.muli %n_block, %c128 : index loc(callsite("key0"("flash_bwd.cu":294:3 to 294:41) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key_end = arith.addi %key0, %c128 : index loc(callsite("key_last"("flash_bwd.cu":295:3 to 295:69) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key_end_c = arith.minsi %key_end, %seqlen_kv : index loc(callsite("key_last"("flash_bwd.cu":295:3 to 295:69) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %key_last = arith.subi %key_end_c, %c1 : index loc(callsite("key_last"("flash_bwd.cu":295:3 to 295:69) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %ragged = arith.cmpi sgt, %key_end, %seqlen_kv : index loc(callsite("ragged"("flash_bwd.cu":296:3 to 296:60) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %full_unmasked = arith.select %ragged, %m_blocks, %c0 : index loc(callsite("flash_bwd.cu":297:3 to 297:47 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %offset = arith.subi %seqlen_kv, %seqlen_q : index loc(callsite("offset"("flash_bwd.cu":298:3 to 298:57) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %first_row = arith.subi %key0, %offset : index loc(callsite("first_row"("flash_bwd.cu":299:3 to 299:39) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %last_q = arith.subi %seqlen_q, %c1 : index loc(callsite("flash_bwd.cu":300:7 to 300:38 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %no_rows = arith.cmpi sgt, %first_row, %last_q : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %first_row_c = arith.maxsi %first_row, %c0 : index loc(callsite("m_min"("flash_bwd.cu":301:3 to 301:52) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_min = arith.divsi %first_row_c, %c64 : index loc(callsite("m_min"("flash_bwd.cu":301:3 to 301:52) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr = arith.subi %key_last, %offset : index loc(callsite("all_keys_row"("flash_bwd.cu":302:3 to 302:54) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %all_keys_row = arith.maxsi %akr, %c0 : index loc(callsite("all_keys_row"("flash_bwd.cu":302:3 to 302:54) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_up = arith.addi %all_keys_row, %c63 : index loc(callsite("m_unmasked"("flash_bwd.cu":303:54 to 303:98) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_blk = arith.divsi %akr_up, %c64 : index loc(callsite("m_unmasked"("flash_bwd.cu":303:54 to 303:98) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_min = arith.maxsi %akr_blk, %c_min : index loc(callsite("m_unmasked"("flash_bwd.cu":303:50 to 303:106) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %akr_max = arith.minsi %akr_min, %m_blocks : index loc(callsite("m_unmasked"("flash_bwd.cu":303:46 to 303:117) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_unmasked = arith.select %ragged, %m_blocks, %akr_max : index loc(callsite("m_unmasked"("flash_bwd.cu":303:3 to 303:118) at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_min2 = arith.select %no_rows, %c0, %c_min : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_unmasked2 = arith.select %no_rows, %c0, %c_unmasked : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %c_max2 = arith.select %no_rows, %c0, %m_blocks : index loc(callsite("flash_bwd.cu":300:3 to 300:46 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %m_min = arith.select %causal, %c_min2, %c0 : index loc(callsite("flash_bwd.cu":297:3 to 297:28 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %m_unmasked = arith.select %causal, %c_unmasked2, %full_unmasked : index loc(callsite("flash_bwd.cu":297:3 to 297:28 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %m_max = arith.select %causal, %c_max2, %m_blocks : index loc(callsite("flash_bwd.cu":297:3 to 297:28 at "range"("flash_bwd.cu":789:41 to 789:84)))
  %num_steps = arith.subi %m_max, %m_min : index loc("flash_bwd.cu":281:30 to 281:51)

  // ---- block_index: causal GQA tiles are dealt in pairs (u, T - 1 - u); the second visits its unmasked query blocks ascending ----
  %kv_tiles = arith.ceildivui %seqlen_kv, %c128 : index loc("kv_tiles"("flash_bwd.cu":751:28 to 751:88))
  %last_tile = arith.subi %kv_tiles, %c1 : index loc("flash_bwd.cu":753:33 to 753:49)
  %mirror = arith.subi %last_tile, %n_block : index loc("flash_bwd.cu":753:33 to 753:49)
  %after_mirror = arith.cmpi sgt, %n_block, %mirror : index loc("partner"("flash_bwd.cu":753:3 to 753:79))
  %gqa = arith.cmpi ne, %num_heads_q, %num_heads_kv : index loc(callsite("flash_bwd.cu":745:41 to 745:82 at "paired"("flash_bwd.cu":752:3 to 752:70)))
  %paired = arith.andi %causal, %gqa : i1 loc("paired"("flash_bwd.cu":752:3 to 752:70))
  %second_of_pair = arith.andi %paired, %after_mirror : i1 loc("partner"("flash_bwd.cu":753:3 to 753:79))
  %true = arith.constant true loc("flash_bwd.cu":790:7 to 790:33)
  %descending = arith.xori %second_of_pair, %true : i1 loc("range.descending"("flash_bwd.cu":790:7 to 790:33))

  // ---- the GQA group, the sequence views ----
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("group"("flash_bwd.cu":707:3 to 707:62))
  %head_q0 = arith.muli %head_kv, %group : index loc("head_q0"("flash_bwd.cu":708:3 to 708:38))
  %head_end = arith.addi %head_q0, %group : index loc("head_end"("flash_bwd.cu":708:40 to 708:66))
  %last_key_offset = arith.select %causal, %offset, %seqlen_kv : index loc("ctx.last_key_offset"("flash_bwd.cu":823:5 to 823:93))
  %rows_pad = memref.dim %ws_dpsum, %c2 : memref<?x?x?xf32, #G> loc("ws.rows_pad"("flash_bwd.cu":177:70 to 177:89))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("maps.k"("flash_bwd.cu":859:11 to 859:42))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("maps.v"("flash_bwd.cu":862:11 to 862:42))

  // ---- shared memory: K, V [BLOCK_N][d]; Q, dO [STAGES][BLOCK_M][d]; dS^T [2][BLOCK_N][BLOCK_M]; dQ [2][64][64] fp32; LSE, D [STAGES][BLOCK_M]; the mbarriers ----
  %sK = cuir.alloc {swizzle = 128} : memref<128x64xf16, #S> loc("sK"("flash_bwd.cu":109:24 to 109:37))
  %sV = cuir.alloc {swizzle = 128} : memref<128x64xf16, #S> loc("sV"("flash_bwd.cu":110:24 to 110:61))
  %sQ = cuir.alloc {swizzle = 128} : memref<2x64x64xf16, #S> loc("sQ"("flash_bwd.cu":111:24 to 111:61))
  %sdO = cuir.alloc {swizzle = 128} : memref<2x64x64xf16, #S> loc("sdO"("flash_bwd.cu":112:24 to 112:70))
  %sdS = cuir.alloc {swizzle = 128} : memref<2x128x64xf16, #S> loc("sdS"("flash_bwd.cu":113:24 to 113:71))
  %sdQ = cuir.alloc : memref<2x64x64xf32, #S> loc("sdQ"("flash_bwd.cu":114:24 to 114:67))
  %sLSE = cuir.alloc : memref<2x64xf32, #S> loc("sLSE"("flash_bwd.cu":115:24 to 115:78))
  %sdPsum = cuir.alloc : memref<2x64xf32, #S> loc("sdPsum"("flash_bwd.cu":116:24 to 116:72))
  %kv_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<1> loc("bars->kv_full"("flash_bwd.cu":769:5 to 769:37))
  %q_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->q_full"("flash_bwd.cu":773:7 to 773:41))
  %do_full = cuir.barrier.init arrivals 1 : !cuir.mbarrier<2> loc("bars->do_full"("flash_bwd.cu":774:7 to 774:42))
  %q_empty = cuir.barrier.init arrivals 2 : !cuir.mbarrier<2> loc("bars->q_empty"("flash_bwd.cu":775:7 to 775:64))

  // =============================== producer: warp 0, one elected thread ===============================
  cuir.bind warp [0] role producer {
    cuir.barrier.arrive %kv_full[%c0] expect_tx 32768 : !cuir.mbarrier<1> loc("flash_bwd.cu":346:3 to 346:66)
    cuir.copy_async tma %k_head[%key0, %c0] -> %sK barrier %kv_full[%c0]
        : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, #S>, !cuir.mbarrier<1> loc("sK"("flash_bwd.cu":349:5 to 349:71))
    cuir.copy_async tma %v_head[%key0, %c0] -> %sV barrier %kv_full[%c0]
        : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, #S>, !cuir.mbarrier<1> loc("sV"("flash_bwd.cu":351:5 to 351:71))
    %i_p = scf.for %vb = %m_min to %m_max step %c1 iter_args(%i_v = %c0) -> (index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":358:70 to 358:93))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":358:70 to 358:93))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":358:70 to 358:93))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":358:70 to 358:93))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":358:70 to 358:93))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":358:70 to 358:93))
      %i_k = scf.for %head_q = %head_q0 to %head_end step %c1 iter_args(%i = %i_v) -> (index) {
      %q_head = memref.subview %q[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
          : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("maps.q"("flash_bwd.cu":853:21 to 853:52))
      %do_head = memref.subview %d_o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
          : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("maps.d_o"("flash_bwd.cu":856:11 to 856:46))
      %lse_head = memref.subview %ws_lse_log2[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
          : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":325:3 to 325:61))
      %dpsum_head = memref.subview %ws_dpsum[%b, %head_q, 0] [1, 1, %rows_pad] [1, 1, 1]
          : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("at"("flash_bwd.cu":325:3 to 325:61))
        // producer_load_step: Q + LSE and dO + D of step i into stage i % STAGES, once both consumers released it.
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_bwd.cu":322:3 to 322:35) at "flash_bwd.cu":358:7 to 358:60))
        %round = arith.divui %i, %cST : index loc(callsite("flash_bwd.cu":323:40 to 323:65 at "flash_bwd.cu":358:7 to 358:60))
        %phase = arith.remui %round, %c2 : index loc(callsite("flash_bwd.cu":323:40 to 323:65 at "flash_bwd.cu":358:7 to 358:60))
        %free = arith.xori %phase, %c1 : index loc(callsite("flash_bwd.cu":323:40 to 323:65 at "flash_bwd.cu":358:7 to 358:60))
        cuir.barrier.wait %q_empty[%stage], %free : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":323:3 to 323:66 at "flash_bwd.cu":358:7 to 358:60))
        %row = arith.muli %m, %c64 : index loc(callsite("row"("flash_bwd.cu":324:3 to 324:39) at "flash_bwd.cu":358:7 to 358:60))
        %sQ_stage = memref.subview %sQ[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":329:17 to 329:87) at "flash_bwd.cu":358:7 to 358:60))
        %sLSE_stage = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("sLSE"("flash_bwd.cu":331:13 to 331:57) at "flash_bwd.cu":358:7 to 358:60))
        cuir.barrier.arrive %q_full[%stage] expect_tx 8448 : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":326:3 to 326:82 at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %q_head[%row, %c0] -> %sQ_stage barrier %q_full[%stage]
            : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sQ"("flash_bwd.cu":329:5 to 329:96) at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %lse_head[%row] -> %sLSE_stage barrier %q_full[%stage]
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sLSE"("flash_bwd.cu":331:3 to 331:112) at "flash_bwd.cu":358:7 to 358:60))
        %sdO_stage = memref.subview %sdO[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":335:17 to 335:88) at "flash_bwd.cu":358:7 to 358:60))
        %sdPsum_stage = memref.subview %sdPsum[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("sdPsum"("flash_bwd.cu":337:13 to 337:59) at "flash_bwd.cu":358:7 to 358:60))
        cuir.barrier.arrive %do_full[%stage] expect_tx 8448 : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":332:3 to 332:83 at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %do_head[%row, %c0] -> %sdO_stage barrier %do_full[%stage]
            : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sdO"("flash_bwd.cu":335:5 to 335:99) at "flash_bwd.cu":358:7 to 358:60))
        cuir.copy_async tma %dpsum_head[%row] -> %sdPsum_stage barrier %do_full[%stage]
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S>, !cuir.mbarrier<2> loc(callsite("sdPsum"("flash_bwd.cu":337:3 to 337:112) at "flash_bwd.cu":358:7 to 358:60))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":357:72 to 357:86)
        scf.yield %i_next : index loc("flash_bwd.cu":357:5 to 357:86)
      } loc("head_q"("flash_bwd.cu":357:5 to 357:86))
      scf.yield %i_k : index loc("flash_bwd.cu":356:3 to 356:52)
    } loc("v"("flash_bwd.cu":356:3 to 356:52))
    cuir.yield loc("flash_bwd.cu":802:16 to 802:117)
  } loc("flash_bwd.cu":798:5 to 798:51)

  // =============================== dQ writer: warp 1 ===============================
  cuir.bind warp [1] role producer {
    %steps = arith.muli %group, %num_steps : index loc("steps"("flash_bwd.cu":389:3 to 389:52))
    %i_w = scf.for %vb = %m_min to %m_max step %c1 iter_args(%i_v = %c0) -> (index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":393:72 to 393:102))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":393:72 to 393:102))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":393:72 to 393:102))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":393:72 to 393:102))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":393:72 to 393:102))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":393:72 to 393:102))
      %i_k = scf.for %head_q = %head_q0 to %head_end step %c1 iter_args(%i = %i_v) -> (index) {
      %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows_pad, 64] [1, 1, 1, 1]
          : memref<?x?x?x64xf32, #G> to memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("dq_block"("flash_bwd.cu":394:7 to 394:60))
        %row_at = arith.muli %m, %c64 : index loc("row_at"("flash_bwd.cu":393:64 to 393:116))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":392:72 to 392:86)
        %more = arith.cmpi slt, %i_next, %steps : index loc("flash_bwd.cu":411:9 to 411:26)
        scf.for %c = %c0 to %c2 step %c1 {
          %full_id = arith.addi %c6, %c : index loc("flash_bwd.cu":399:9 to 399:68)
          cuir.barrier.named %full_id threads 160 loc("flash_bwd.cu":399:9 to 399:68)
          %sdQ_c = memref.subview %sdQ[%c, 0, 0] [1, 64, 64] [1, 1, 1]
              : memref<2x64x64xf32, #S> to memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":402:31 to 402:105)
          // The bulk reduction: the tile read from shared memory, added into the workspace.
          %dq_tile = cuir.load %sdQ_c : memref<64x64xf32, strided<[64, 1], offset: ?>, #S> -> tensor<64x64xf32, #WACC> loc("flash_bwd.cu":401:11 to 401:90)
          %col = arith.muli %c, %cDQCS : index loc("flash_bwd.cu":401:43 to 401:88)
          cuir.atomic_add %dq_tile -> %dq_head[%row_at, %col] : tensor<64x64xf32, #WACC> -> memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("flash_bwd.cu":401:11 to 401:90)
          scf.if %more {
            %empty_id = arith.addi %c4, %c : index loc("flash_bwd.cu":411:42 to 411:104)
            cuir.barrier.named %empty_id threads 160 arrive loc("flash_bwd.cu":411:42 to 411:104)
            scf.yield loc("flash_bwd.cu":411:9 to 411:26)
          } loc("flash_bwd.cu":411:9 to 411:26)
          scf.yield loc("flash_bwd.cu":398:7 to 398:49)
        } loc("flash_bwd.cu":398:7 to 398:49)
        scf.yield %i_next : index loc("flash_bwd.cu":392:5 to 392:86)
      } loc("head_q"("flash_bwd.cu":392:5 to 392:86))
      scf.yield %i_k : index loc("flash_bwd.cu":391:3 to 391:52)
    } loc("v"("flash_bwd.cu":391:3 to 391:52))
    cuir.yield loc("flash_bwd.cu":808:16 to 808:113)
  } loc("flash_bwd.cu":804:7 to 804:38)

  // =============================== consumer warpgroups 1 and 2 ===============================
  cuir.bind warpgroup [1, 2] role consumer regs 232 {
    %consumer = cuir.worker_id loc("ctx.consumer"("flash_bwd.cu":819:5 to 819:30))
    %kv_rows = arith.muli %consumer, %c64 : index loc("kv_rows"("flash_bwd.cu":587:3 to 587:60))
    // The first key of this warpgroup's 64: a column of the score tile here (a row in the source).
    %kv0 = arith.addi %key0, %kv_rows : index loc("ctx.wg_key0"("flash_bwd.cu":832:7 to 832:70))
    %sK_wg = memref.subview %sK[%kv_rows, 0] [64, 64] [1, 1]
        : memref<128x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":596:28 to 596:62)
    %sV_wg = memref.subview %sV[%kv_rows, 0] [64, 64] [1, 1]
        : memref<128x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":598:29 to 598:63)
    // dQ = dS K of this warpgroup: keys [dq_key0, dq_key0 + DQ_KEYS), columns [dq_slab * 64, + 64).
    %dq_key0 = arith.muli %consumer, %cDQKS : index loc("dq_key0"("flash_bwd.cu":627:3 to 627:75))
    %dq_col0 = arith.muli %consumer, %cDQCS : index loc("dq_slab"("flash_bwd.cu":628:3 to 628:62))
    %sK_dq = memref.subview %sK[%dq_key0, %dq_col0] [64, 64] [1, 1]
        : memref<128x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":630:14 to 630:83)
    %ds_bar_c = arith.muli %consumer, %cDSBS : index loc("flash_bwd.cu":623:5 to 623:58)
    %ds_bar = arith.addi %cDSB, %ds_bar_c : index loc("flash_bwd.cu":623:5 to 623:58)
    %dq_empty_id = arith.addi %c4, %consumer : index loc("flash_bwd.cu":640:14 to 640:85)
    %dq_full_id = arith.addi %c6, %consumer : index loc("flash_bwd.cu":643:3 to 643:75)
    %sdQ_wg = memref.subview %sdQ[%consumer, 0, 0] [1, 64, 64] [1, 1, 1]
        : memref<2x64x64xf32, #S> to memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc("dst"("flash_bwd.cu":566:44 to 566:100))

    // ---- constants of the steps; dK, dV in registers over all of them ----
    %log2e = arith.constant 1.44269502 : f32 loc("ctx.scale_log2"("flash_bwd.cu":824:5 to 824:52))
    %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("ctx.scale_log2"("flash_bwd.cu":824:5 to 824:52))
    %scale_tile = tensor.splat %scale_log2 : tensor<64x64xf32, #WACC> loc("ctx.scale_log2"("flash_bwd.cu":824:5 to 824:52))
    %ninf = arith.constant 0xFF800000 : f32 loc("flash_bwd.cu":504:87 to 504:92)
    %zero_s = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("acc_s"("flash_bwd.cu":594:3 to 594:45))
    %zero_dq = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("acc_dq"("flash_bwd.cu":626:3 to 626:28))
    %acc_init = arith.constant dense<0.0> : tensor<64x64xf32, #WACC> loc("flash_bwd.cu":705:41 to 705:68)
    cuir.barrier.wait %kv_full[%c0], %c0 : !cuir.mbarrier<1> loc("flash_bwd.cu":706:3 to 706:42)

    // The source runs each kind of step as one loop over i, counting the head
    // and the query block along; here a loop over the query blocks, each over
    // the group's heads.
    // =============================== masking steps ===============================
    %m_dk, %m_dv, %m_i = scf.for %vb = %m_min to %m_unmasked step %c1
        iter_args(%dk_v = %acc_init, %dv_v = %acc_init, %i_v = %c0)
        -> (tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":713:58 to 713:81))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":713:58 to 713:81))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":713:58 to 713:81))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":713:58 to 713:81))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":713:58 to 713:81))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":713:58 to 713:81))
      %h_dk, %h_dv, %h_i = scf.for %head_q = %head_q0 to %head_end step %c1
          iter_args(%acc_dk = %dk_v, %acc_dv = %dv_v, %i = %i_v)
          -> (tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index) {
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_bwd.cu":580:3 to 580:35) at "flash_bwd.cu":713:5 to 713:28))
        %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":713:5 to 713:28))
        %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":713:5 to 713:28))
        %q_row0 = arith.muli %m, %c64 : index loc(callsite("q_row0"("flash_bwd.cu":581:3 to 581:42) at "flash_bwd.cu":713:5 to 713:28))
        %sQ_stage = memref.subview %sQ[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sq"("flash_bwd.cu":588:3 to 588:74) at "flash_bwd.cu":713:5 to 713:28))
        %sdO_stage = memref.subview %sdO[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdo"("flash_bwd.cu":589:3 to 589:76) at "flash_bwd.cu":713:5 to 713:28))
        %sLSE_stage = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("lse_log2"("flash_bwd.cu":590:59 to 590:107) at "flash_bwd.cu":713:5 to 713:28))
        %sdPsum_stage = memref.subview %sdPsum[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dpsum"("flash_bwd.cu":591:56 to 591:106) at "flash_bwd.cu":713:5 to 713:28))

        // ---- S = Q K^T and dP = dO V^T (the hardware's K Q^T and V dO^T), [queries x keys] ----
        cuir.barrier.wait %q_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":595:3 to 595:45 at "flash_bwd.cu":713:5 to 713:28))
        %s_issued = cuir.gemm_async %sQ_stage, %sK_wg transpose_b, %zero_s acc_transposed
            : memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":596:3 to 596:67) at "flash_bwd.cu":713:5 to 713:28))
        cuir.barrier.wait %do_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":597:3 to 597:46 at "flash_bwd.cu":713:5 to 713:28))
        %dp_issued = cuir.gemm_async %sdO_stage, %sV_wg transpose_b, %zero_s acc_transposed
            : memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":598:3 to 598:69) at "flash_bwd.cu":713:5 to 713:28))
        // S has landed once at most dP, issued after it, is pending.
        %acc_s = cuir.gemm_wait %s_issued pending 1 : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":600:3 to 600:25) at "flash_bwd.cu":713:5 to 713:28))

        // ------- score tile complete: acc_s = Q K^T (unscaled) of query tile m_tile; the mask of a masking step -------
        %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_row0, %kv0]
            : (tensor<64x64xf32, #WACC>) -> tensor<64x64xf32, #WACC> {
        ^bb0(%x: f32 loc("acc_s"("flash_bwd.cu":504:68 to 504:92)), %bi: index loc("batch"("flash_bwd.cu":766:3 to 766:58)), %hi: index loc("head_q"("flash_bwd.cu":711:3 to 711:51)), %qi: index loc("row"("flash_bwd.cu":503:7 to 503:46)), %ki: index loc("key"("flash_bwd.cu":502:7 to 502:50))):
          %past_end = arith.cmpi sge, %ki, %seqlen_kv : index loc(callsite("flash_bwd.cu":504:11 to 504:31 at "flash_bwd.cu":603:28 to 603:61))
          %row_last = arith.addi %qi, %last_key_offset : index loc(callsite("flash_bwd.cu":504:41 to 504:66 at "flash_bwd.cu":603:28 to 603:61))
          %past_diag = arith.cmpi sgt, %ki, %row_last : index loc(callsite("flash_bwd.cu":504:35 to 504:66 at "flash_bwd.cu":603:28 to 603:61))
          %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_bwd.cu":504:7 to 504:31 at "flash_bwd.cu":603:28 to 603:61))
          %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_bwd.cu":504:68 to 504:92) at "flash_bwd.cu":603:28 to 603:61))
          cuir.yield %r : f32 loc("flash_bwd.cu":603:28 to 603:61)
        } loc("acc_s"("flash_bwd.cu":603:28 to 603:61))

        // ---- P = exp2(S * scale * log2 e - LSE * log2 e) (scores_to_probs) ----
        %lse_log2 = cuir.load %sLSE_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("lse"("flash_bwd.cu":516:5 to 516:93) at "flash_bwd.cu":604:3 to 604:64))
        %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %neg_lse = arith.negf %lse_b : tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %logits = math.fma %acc_s_masked, %scale_tile, %neg_lse : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:36 to 519:96) at "flash_bwd.cu":604:3 to 604:64))
        %p = math.exp2 %logits : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:7 to 519:97) at "flash_bwd.cu":604:3 to 604:64))

        // ---- dS = P * (dP - D) (probs_to_dscores), once dP has landed ----
        %acc_dp = cuir.gemm_wait %dp_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":605:3 to 605:25) at "flash_bwd.cu":713:5 to 713:28))
        %dpsum = cuir.load %sdPsum_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("d"("flash_bwd.cu":529:5 to 529:88) at "flash_bwd.cu":607:3 to 607:54))
        %d_b = cuir.broadcast_rows %dpsum : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":531:93 to 531:112 at "flash_bwd.cu":607:3 to 607:54))
        %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:72 to 531:113) at "flash_bwd.cu":607:3 to 607:54))
        %ds = arith.mulf %p, %dp_minus_d : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:33 to 531:113) at "flash_bwd.cu":607:3 to 607:54))

        // ---- dV += P^T dO, dK += dS^T Q: the 16-bit P and dS as the A fragments P^T and dS^T (the same registers in the source) ----
        %p16 = arith.truncf %p : tensor<64x64xf32, #WACC> to tensor<64x64xf16, #WACC> loc(callsite("p_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":611:3 to 611:28))
        %p_t = cuir.convert_layout %p16 transpose : tensor<64x64xf16, #WACC> -> tensor<64x64xf16, #WA> loc("p_frag"("flash_bwd.cu":611:3 to 611:28))
        %ds16 = arith.truncf %ds : tensor<64x64xf32, #WACC> to tensor<64x64xf16, #WACC> loc(callsite("ds_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":612:3 to 612:30))
        %ds_t = cuir.convert_layout %ds16 transpose : tensor<64x64xf16, #WACC> -> tensor<64x64xf16, #WA> loc("ds_frag"("flash_bwd.cu":612:3 to 612:30))
        %dv_issued = cuir.gemm_async %p_t, %sdO_stage, %acc_dv
            : tensor<64x64xf16, #WA>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":614:3 to 614:39) at "flash_bwd.cu":713:5 to 713:28))
        %dk_issued = cuir.gemm_async %ds_t, %sQ_stage, %acc_dk
            : tensor<64x64xf16, #WA>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":615:3 to 615:39) at "flash_bwd.cu":713:5 to 713:28))

        // ---- dS^T to shared memory (buffer i % 2, this warpgroup's 64 key rows), then dQ = dS K ----
        %ds_buf = arith.remui %i, %c2 : index loc(callsite("ds"("flash_bwd.cu":617:3 to 617:77) at "flash_bwd.cu":713:5 to 713:28))
        %sdS_wg = memref.subview %sdS[%ds_buf, %kv_rows, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x128x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("rows"("flash_bwd.cu":551:3 to 551:58) at "flash_bwd.cu":618:3 to 618:37))
        cuir.store %ds_t -> %sdS_wg : tensor<64x64xf16, #WA> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":556:7 to 556:114 at "flash_bwd.cu":618:3 to 618:37))
        cuir.barrier.named %ds_bar threads 128 loc(callsite("flash_bwd.cu":620:3 to 620:37 at "flash_bwd.cu":713:5 to 713:28))
        %sdS_dq = memref.subview %sdS[%ds_buf, %dq_key0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x128x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":629:22 to 629:54 at "flash_bwd.cu":713:5 to 713:28))
        %ds_a = cuir.load %sdS_dq transpose : memref<64x64xf16, strided<[64, 1], offset: ?>, #S> -> tensor<64x64xf16, #WA> loc(callsite("flash_bwd.cu":466:20 to 466:85 at "flash_bwd.cu":713:5 to 713:28))
        %dq_issued = cuir.gemm_async %ds_a, %sK_dq, %zero_dq
            : tensor<64x64xf16, #WA>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":629:3 to 629:55) at "flash_bwd.cu":713:5 to 713:28))
        // wgmma_wait_group<0>: dV, dK and dQ have landed; Q, dO and dS^T are read.
        %dv_n = cuir.gemm_wait %dv_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":713:5 to 713:28))
        %dk_n = cuir.gemm_wait %dk_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":713:5 to 713:28))
        %acc_dq = cuir.gemm_wait %dq_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":713:5 to 713:28))
        cuir.barrier.arrive %q_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":637:3 to 637:41 at "flash_bwd.cu":713:5 to 713:28))

        // ---- dQ to shared memory for the dQ writer, once it has read the previous step's ----
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":713:5 to 713:28))
        scf.if %has_prev {
          cuir.barrier.named %dq_empty_id threads 160 loc(callsite("flash_bwd.cu":640:14 to 640:85 at "flash_bwd.cu":713:5 to 713:28))
          scf.yield loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":713:5 to 713:28))
        } loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":713:5 to 713:28))
        cuir.store %acc_dq -> %sdQ_wg : tensor<64x64xf32, #WACC> -> memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":569:5 to 569:103) at "flash_bwd.cu":641:3 to 641:27))
        cuir.barrier.named %dq_full_id threads 160 arrive loc(callsite("flash_bwd.cu":643:3 to 643:75 at "flash_bwd.cu":713:5 to 713:28))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":712:3 to 712:33)
        scf.yield %dk_n, %dv_n, %i_next : tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index loc("flash_bwd.cu":714:5 to 714:53)
      } loc("head_q"("flash_bwd.cu":714:5 to 714:53))
      scf.yield %h_dk, %h_dv, %h_i : tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index loc("flash_bwd.cu":712:3 to 712:33)
    } loc("v"("flash_bwd.cu":712:3 to 712:33))

    // =============================== unmasked steps ===============================
    %dk_acc, %dv_acc, %i_c = scf.for %vb = %m_unmasked to %m_max step %c1
        iter_args(%dk_v = %m_dk, %dv_v = %m_dv, %i_v = %m_i)
        -> (tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index) {
      // range.visit: the masking blocks in order, then the unmasked ones from the last down.
      %unmasked_visit = arith.cmpi sge, %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:37 to 286:58 at "flash_bwd.cu":717:59 to 717:82))
      %down_visit = arith.andi %unmasked_visit, %descending : i1 loc(callsite("flash_bwd.cu":286:12 to 286:58 at "flash_bwd.cu":717:59 to 717:82))
      %last_block = arith.subi %m_max, %c1 : index loc(callsite("flash_bwd.cu":286:61 to 286:70 at "flash_bwd.cu":717:59 to 717:82))
      %past = arith.subi %vb, %m_unmasked : index loc(callsite("flash_bwd.cu":286:73 to 286:95 at "flash_bwd.cu":717:59 to 717:82))
      %down = arith.subi %last_block, %past : index loc(callsite("flash_bwd.cu":286:61 to 286:95 at "flash_bwd.cu":717:59 to 717:82))
      %m = arith.select %down_visit, %down, %vb : index loc(callsite("flash_bwd.cu":286:12 to 286:99 at "flash_bwd.cu":717:59 to 717:82))
      %h_dk, %h_dv, %h_i = scf.for %head_q = %head_q0 to %head_end step %c1
          iter_args(%acc_dk = %dk_v, %acc_dv = %dv_v, %i = %i_v)
          -> (tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index) {
        %q_row0 = arith.muli %m, %c64 : index loc(callsite("q_row0"("flash_bwd.cu":581:3 to 581:42) at "flash_bwd.cu":717:5 to 717:29))
        %stage = arith.remui %i, %cST : index loc(callsite("stage"("flash_bwd.cu":580:3 to 580:35) at "flash_bwd.cu":717:5 to 717:29))
        %round = arith.divui %i, %cST : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":717:5 to 717:29))
        %phase = arith.remui %round, %c2 : index loc(callsite("phase"("flash_bwd.cu":582:3 to 582:46) at "flash_bwd.cu":717:5 to 717:29))
        %sQ_stage = memref.subview %sQ[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sq"("flash_bwd.cu":588:3 to 588:74) at "flash_bwd.cu":717:5 to 717:29))
        %sdO_stage = memref.subview %sdO[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdo"("flash_bwd.cu":589:3 to 589:76) at "flash_bwd.cu":717:5 to 717:29))
        %sLSE_stage = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("lse_log2"("flash_bwd.cu":590:59 to 590:107) at "flash_bwd.cu":717:5 to 717:29))
        %sdPsum_stage = memref.subview %sdPsum[%stage, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dpsum"("flash_bwd.cu":591:56 to 591:106) at "flash_bwd.cu":717:5 to 717:29))

        // ---- S = Q K^T and dP = dO V^T (the hardware's K Q^T and V dO^T), [queries x keys] ----
        cuir.barrier.wait %q_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":595:3 to 595:45 at "flash_bwd.cu":717:5 to 717:29))
        %s_issued = cuir.gemm_async %sQ_stage, %sK_wg transpose_b, %zero_s acc_transposed
            : memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":596:3 to 596:67) at "flash_bwd.cu":717:5 to 717:29))
        cuir.barrier.wait %do_full[%stage], %phase : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":597:3 to 597:46 at "flash_bwd.cu":717:5 to 717:29))
        %dp_issued = cuir.gemm_async %sdO_stage, %sV_wg transpose_b, %zero_s acc_transposed
            : memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":598:3 to 598:69) at "flash_bwd.cu":717:5 to 717:29))
        // S has landed once at most dP, issued after it, is pending.
        %acc_s = cuir.gemm_wait %s_issued pending 1 : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":600:3 to 600:25) at "flash_bwd.cu":717:5 to 717:29))

        // ------- score tile complete: acc_s = Q K^T (unscaled) of query tile m_tile; no mask -------

        // ---- P = exp2(S * scale * log2 e - LSE * log2 e) (scores_to_probs) ----
        %lse_log2 = cuir.load %sLSE_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("lse"("flash_bwd.cu":516:5 to 516:93) at "flash_bwd.cu":604:3 to 604:64))
        %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %neg_lse = arith.negf %lse_b : tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":519:71 to 519:95 at "flash_bwd.cu":604:3 to 604:64))
        %logits = math.fma %acc_s, %scale_tile, %neg_lse : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:36 to 519:96) at "flash_bwd.cu":604:3 to 604:64))
        %p = math.exp2 %logits : tensor<64x64xf32, #WACC> loc(callsite("acc_s"("flash_bwd.cu":519:7 to 519:97) at "flash_bwd.cu":604:3 to 604:64))

        // ---- dS = P * (dP - D) (probs_to_dscores), once dP has landed ----
        %acc_dp = cuir.gemm_wait %dp_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":605:3 to 605:25) at "flash_bwd.cu":717:5 to 717:29))
        %dpsum = cuir.load %sdPsum_stage : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #WROW> loc(callsite("d"("flash_bwd.cu":529:5 to 529:88) at "flash_bwd.cu":607:3 to 607:54))
        %d_b = cuir.broadcast_rows %dpsum : tensor<64xf32, #WROW> -> tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":531:93 to 531:112 at "flash_bwd.cu":607:3 to 607:54))
        %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:72 to 531:113) at "flash_bwd.cu":607:3 to 607:54))
        %ds = arith.mulf %p, %dp_minus_d : tensor<64x64xf32, #WACC> loc(callsite("acc_dp"("flash_bwd.cu":531:33 to 531:113) at "flash_bwd.cu":607:3 to 607:54))

        // ---- dV += P^T dO, dK += dS^T Q: the 16-bit P and dS as the A fragments P^T and dS^T (the same registers in the source) ----
        %p16 = arith.truncf %p : tensor<64x64xf32, #WACC> to tensor<64x64xf16, #WACC> loc(callsite("p_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":611:3 to 611:28))
        %p_t = cuir.convert_layout %p16 transpose : tensor<64x64xf16, #WACC> -> tensor<64x64xf16, #WA> loc("p_frag"("flash_bwd.cu":611:3 to 611:28))
        %ds16 = arith.truncf %ds : tensor<64x64xf32, #WACC> to tensor<64x64xf16, #WACC> loc(callsite("ds_frag"("flash_bwd.cu":540:39 to 540:100) at "flash_bwd.cu":612:3 to 612:30))
        %ds_t = cuir.convert_layout %ds16 transpose : tensor<64x64xf16, #WACC> -> tensor<64x64xf16, #WA> loc("ds_frag"("flash_bwd.cu":612:3 to 612:30))
        %dv_issued = cuir.gemm_async %p_t, %sdO_stage, %acc_dv
            : tensor<64x64xf16, #WA>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":614:3 to 614:39) at "flash_bwd.cu":717:5 to 717:29))
        %dk_issued = cuir.gemm_async %ds_t, %sQ_stage, %acc_dk
            : tensor<64x64xf16, #WA>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":615:3 to 615:39) at "flash_bwd.cu":717:5 to 717:29))

        // ---- dS^T to shared memory (buffer i % 2, this warpgroup's 64 key rows), then dQ = dS K ----
        %ds_buf = arith.remui %i, %c2 : index loc(callsite("ds"("flash_bwd.cu":617:3 to 617:77) at "flash_bwd.cu":717:5 to 717:29))
        %sdS_wg = memref.subview %sdS[%ds_buf, %kv_rows, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x128x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("rows"("flash_bwd.cu":551:3 to 551:58) at "flash_bwd.cu":618:3 to 618:37))
        cuir.store %ds_t -> %sdS_wg : tensor<64x64xf16, #WA> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":556:7 to 556:114 at "flash_bwd.cu":618:3 to 618:37))
        cuir.barrier.named %ds_bar threads 128 loc(callsite("flash_bwd.cu":620:3 to 620:37 at "flash_bwd.cu":717:5 to 717:29))
        %sdS_dq = memref.subview %sdS[%ds_buf, %dq_key0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x128x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":629:22 to 629:54 at "flash_bwd.cu":717:5 to 717:29))
        %ds_a = cuir.load %sdS_dq transpose : memref<64x64xf16, strided<[64, 1], offset: ?>, #S> -> tensor<64x64xf16, #WA> loc(callsite("flash_bwd.cu":466:20 to 466:85 at "flash_bwd.cu":717:5 to 717:29))
        %dq_issued = cuir.gemm_async %ds_a, %sK_dq, %zero_dq
            : tensor<64x64xf16, #WA>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":629:3 to 629:55) at "flash_bwd.cu":717:5 to 717:29))
        // wgmma_wait_group<0>: dV, dK and dQ have landed; Q, dO and dS^T are read.
        %dv_n = cuir.gemm_wait %dv_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dv"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":717:5 to 717:29))
        %dk_n = cuir.gemm_wait %dk_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dk"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":717:5 to 717:29))
        %acc_dq = cuir.gemm_wait %dq_issued pending 0 : tensor<64x64xf32, #WACC> loc(callsite("acc_dq"("flash_bwd.cu":631:3 to 631:25) at "flash_bwd.cu":717:5 to 717:29))
        cuir.barrier.arrive %q_empty[%stage] : !cuir.mbarrier<2> loc(callsite("flash_bwd.cu":637:3 to 637:41 at "flash_bwd.cu":717:5 to 717:29))

        // ---- dQ to shared memory for the dQ writer, once it has read the previous step's ----
        %has_prev = arith.cmpi sgt, %i, %c0 : index loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":717:5 to 717:29))
        scf.if %has_prev {
          cuir.barrier.named %dq_empty_id threads 160 loc(callsite("flash_bwd.cu":640:14 to 640:85 at "flash_bwd.cu":717:5 to 717:29))
          scf.yield loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":717:5 to 717:29))
        } loc(callsite("flash_bwd.cu":640:3 to 640:32 at "flash_bwd.cu":717:5 to 717:29))
        cuir.store %acc_dq -> %sdQ_wg : tensor<64x64xf32, #WACC> -> memref<64x64xf32, strided<[64, 1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":569:5 to 569:103) at "flash_bwd.cu":641:3 to 641:27))
        cuir.barrier.named %dq_full_id threads 160 arrive loc(callsite("flash_bwd.cu":643:3 to 643:75 at "flash_bwd.cu":717:5 to 717:29))
        %i_next = arith.addi %i, %c1 : index loc("flash_bwd.cu":716:3 to 716:25)
        scf.yield %dk_n, %dv_n, %i_next : tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index loc("flash_bwd.cu":718:5 to 718:53)
      } loc("head_q"("flash_bwd.cu":718:5 to 718:53))
      scf.yield %h_dk, %h_dv, %h_i : tensor<64x64xf32, #WACC>, tensor<64x64xf32, #WACC>, index loc("flash_bwd.cu":716:3 to 716:25)
    } loc("v"("flash_bwd.cu":716:3 to 716:25))

    // =============================== write_dkv: dK * softmax_scale and dV through the Q and dO stages ===============================
    cuir.barrier.named %c1 threads 256 loc("flash_bwd.cu":685:3 to 685:58)
    %scale_b = tensor.splat %softmax_scale : tensor<64x64xf32, #WACC> loc("flash_bwd.cu":689:51 to 689:77)
    %dk_scaled = arith.mulf %dk_acc, %scale_b : tensor<64x64xf32, #WACC> loc(callsite("flash_bwd.cu":665:35 to 665:64 at "flash_bwd.cu":687:3 to 687:45))
    %dk16 = arith.truncf %dk_scaled : tensor<64x64xf32, #WACC> to tensor<64x64xf16, #WACC> loc(callsite("flash_bwd.cu":665:11 to 665:100 at "flash_bwd.cu":687:3 to 687:45))
    %dv16 = arith.truncf %dv_acc : tensor<64x64xf32, #WACC> to tensor<64x64xf16, #WACC> loc(callsite("flash_bwd.cu":665:11 to 665:100 at "flash_bwd.cu":690:3 to 690:46))
    %sQ_out = memref.subview %sQ[%consumer, 0, 0] [1, 64, 64] [1, 1, 1]
        : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":687:3 to 687:45)
    %sdO_out = memref.subview %sdO[%consumer, 0, 0] [1, 64, 64] [1, 1, 1]
        : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc("flash_bwd.cu":690:3 to 690:46)
    %dk_head = memref.subview %dk[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
        : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":688:21 to 688:122)
    %dv_head = memref.subview %dv[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
        : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":691:21 to 691:122)
    cuir.store %dk16 -> %sQ_out : tensor<64x64xf16, #WACC> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":664:7 to 664:89 at "flash_bwd.cu":687:3 to 687:45))
    cuir.barrier.warp loc(callsite("flash_bwd.cu":668:3 to 668:16 at "flash_bwd.cu":687:3 to 687:45))
    cuir.copy %sQ_out -> %dk_head[%kv0, %c0] : memref<64x64xf16, strided<[64, 1], offset: ?>, #S> -> memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("flash_bwd.cu":675:5 to 675:117 at "flash_bwd.cu":687:3 to 687:45))
    cuir.store %dv16 -> %sdO_out : tensor<64x64xf16, #WACC> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("flash_bwd.cu":664:7 to 664:89 at "flash_bwd.cu":690:3 to 690:46))
    cuir.barrier.warp loc(callsite("flash_bwd.cu":668:3 to 668:16 at "flash_bwd.cu":690:3 to 690:46))
    cuir.copy %sdO_out -> %dv_head[%kv0, %c0] : memref<64x64xf16, strided<[64, 1], offset: ?>, #S> -> memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("flash_bwd.cu":675:5 to 675:117 at "flash_bwd.cu":690:3 to 690:46))
    cuir.yield loc("flash_bwd.cu":835:11 to 835:95)
  } loc("flash_bwd.cu":814:5 to 814:40)
  cuir.return loc("flash_bwd.cu":759:5 to 759:104)
} loc("flash_bwd_sm90_kernel"("flash_bwd.cu":759:5 to 759:104))

// =============================== convert: dQ = softmax_scale * accumulator ===============================
cuir.kernel @flash_bwd_sm90_f16_d64_convert_dq(
    %ws_dq_accum: memref<?x?x?x64xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":237:91 to 237:109)),
    %dq: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dq"} loc("params.dq"("flash_bwd.cu":237:33 to 237:89)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":237:33 to 237:89)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":237:33 to 237:89)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":237:33 to 237:89)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":237:33 to 237:89)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":237:33 to 237:89)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":237:33 to 237:89)))
    grid (b, hq, hkv, nq, nkv) -> (((nq ceildiv 64) * 64) ceildiv 32, hq, b)
    threads 256 arch "sm_90a" {
  %c0 = arith.constant 0 : index
  %cRPB = arith.constant 32 : index loc("kRowKernelThreads / THREADS_PER_ROW")
  %blk = cuir.block_id x loc("row"("flash_bwd.cu":240:3 to 240:102))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":239:3 to 239:53))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":239:3 to 239:53))
  %row0 = arith.muli %blk, %cRPB : index loc("row"("flash_bwd.cu":240:3 to 240:102))
  %zero = arith.constant dense<0.0> : tensor<32x64xf32, #RACC> loc("flash_bwd.cu":245:3 to 245:22)
  // The accumulator's rows of the block (row-major here; the fragment order in the source).
  %acc = cuir.elementwise (%zero) at [%b, %head_q, %row0, %c0]
      : (tensor<32x64xf32, #RACC>) -> tensor<32x64xf32, #RACC> {
  ^bb0(%x: f32 loc("a"("flash_bwd.cu":248:5 to 248:21)), %bi: index loc("batch"("flash_bwd.cu":239:3 to 239:53)), %hi: index loc("head_q"("flash_bwd.cu":239:3 to 239:53)), %qi: index loc("row"("flash_bwd.cu":240:3 to 240:102)), %ci: index loc("chunk"("flash_bwd.cu":241:3 to 241:51))):
    %a = memref.load %ws_dq_accum[%bi, %hi, %qi, %ci] : memref<?x?x?x64xf32, #G> loc("a"("flash_bwd.cu":249:9 to 249:114))
    cuir.yield %a : f32 loc("a"("flash_bwd.cu":249:9 to 249:114))
  } loc("block"("flash_bwd.cu":243:3 to 243:104))
  %s = tensor.splat %softmax_scale : tensor<32x64xf32, #RACC> loc("s"("flash_bwd.cu":244:3 to 244:40))
  %dq_f = arith.mulf %acc, %s : tensor<32x64xf32, #RACC> loc("flash_bwd.cu":250:38 to 250:45)
  %dq16 = arith.truncf %dq_f : tensor<32x64xf32, #RACC> to tensor<32x64xf16, #RACC> loc("packed"("flash_bwd.cu":250:5 to 250:56))
  %dq_head = memref.subview %dq[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":253:30 to 253:97)
  // Rows past Nq are not written (if (row >= params.seqlen_q) return): the store skips them.
  cuir.store %dq16 -> %dq_head[%row0, %c0] : tensor<32x64xf16, #RACC> -> memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("flash_bwd.cu":253:3 to 253:128)
  cuir.return loc("flash_bwd.cu":242:3 to 242:38)
} loc("flash_bwd_convert_dq_kernel"("flash_bwd.cu":237:5 to 237:110))
