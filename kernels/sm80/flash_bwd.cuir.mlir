// Source CuIR of kernels/sm80/flash_bwd.cu: the template from which
// flash_bwd.cuir.mlir is rendered (tools/lift/render_source_cuir.py), one
// cuir.launch_sequence of the source's three kernels (preprocess, main
// kernel, dQ conversion) per instantiation of (element type, head dim).
// Every op names the source text it comes from; the renderer turns those
// names into file:line:col ranges, and a test keeps the rendered file
// current (test/Integration/Kernels/sm80-bwd-source-cuir.test).
//
// Modelling notes:
// - IS_CAUSAL, a template parameter of the main kernel, is its kernel
//   parameter `causal` here, selecting the same step ranges and mask.
// - The workspace is three `workspace:` buffers in their logical layout:
//   lse_log2 and d [B][Hq][rows] and dq_accum [B][Hq][rows][d], where rows
//   is Nq rounded up to BLOCK_M = 64 (ws.rows). The source keeps each
//   64 x d query tile of dq_accum in fragment order (dq_fragment_index), a
//   permutation within the tile that add_dq and flash_bwd_convert_dq share;
//   the IR adds and reads the tile in row-major order, which computes the
//   same sums. The deterministic mode's counters (dq_semaphore: zeroed by
//   the preprocess, spun on by the main kernel) are not modelled: the IR is
//   the params.deterministic == 0 path, whose dQ sums commute.
// - The preprocess and the conversion read global memory into registers
//   with plain loads, which CuIR has as memref.load in a cuir.elementwise
//   body over the 64 x d row tile (a gather at the element's row and
//   column). The preprocess's per-row values come out of row tiles:
//   D = rowsum(O * dO) is a row sum (the source's fmaf chain and quad
//   shuffles), and LSE is read into every column of its row and taken out
//   with a row max of equal values (one read per row in the source).
// - The main kernel's cp.async pipeline is the source's: K and V and the
//   first step's Q, dO, LSE * log2e and D in one group; each step waits for
//   its group (wait_group 0), synchronises, and issues the next step's
//   tiles into the other stage as one group (an empty group when there is
//   no next step), the loops carrying the stage and that group. LSE * log2e
//   and D are read per row from their shared stage (cuir.load of a row
//   vector, `s_lse_log2[16 * mi + 8 * half + lane / 4]`).
// - Steps: for every query head of the KV head's GQA group, the masking
//   steps [m_begin, m_unmasked_begin) then the unmasked steps
//   [m_unmasked_begin, m_end) of q_block_range. Both loops run the source's
//   one step function, bwd_step<T, IS_MASKED>: their ops are located in it,
//   reached from the loop's call; ops of the helpers it calls are located
//   in the helper, reached from the call in bwd_step.
// - The source maps every virtual query block that becomes a Q / dO / LSE /
//   D coordinate through its block-iteration point q_tiles
//   (`const cuir_kernels::DenseQTiles q_tiles{}`, cuir/kv_tiles.cuh), and
//   the step range through its q_tiles.range(...): the identity here, no op
//   stands for either, the ops read the virtual block and q_block_range's.
// - The GEMMs read their shared operands as warp_gemm does with ldmatrix:
//   Q K^T and dO V^T with transpose_b; P^T and dS^T (stored [rows][keys],
//   read column-major) as transposed loads into A fragments; dS K directly.
//
// The modelling convention of the step, which the variant transfer of the
// backward relies on (masking and unmasked steps alike):
// Names that lowering writes into bwd_step (the batch, the first key, the
// first query row, the head loop's variable) are expressions valid there.
//
//   %acc_s      = cuir.gemm %sQ_st, %sK transpose_b, ...   unscaled S = Q K^T
//                 (rows = queries, columns = keys), at warp_gemm<...>(acc_s
//   %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_row0, %kv0]
//                 masking steps only: -inf where key >= seqlen_kv or
//                 key > row + last_key_offset, in apply_mask
//   %p          = math.exp2 %logits, %logits = math.fma %acc_s(_masked),
//                 %scale_tile, %neg_lse with %scale_tile = tensor.splat
//                 %scale_log2, %scale_log2 = arith.mulf %softmax_scale,
//                 %log2e, %log2e = arith.constant 1.44269502 : f32 and
//                 %neg_lse = arith.negf (cuir.broadcast_rows %lse_log2),
//                 in scores_to_probs
//   %acc_dp     = cuir.gemm %sdO_st, %sV transpose_b, ...  dP = dO V^T
//   %ds         = arith.mulf %p, %dp_minus_d, %dp_minus_d = arith.subf
//                 %acc_dp, %d_b, %d_b = cuir.broadcast_rows %d_rows,
//                 in probs_to_dscores
//   then %p16, %ds16 (arith.truncf) stored to %sP, %sdS, and the dV, dK
//   and dQ GEMMs (%acc_dv_new, %acc_dk_new, %acc_dq), dQ by cuir.atomic_add.

#ACC_P = #cuir.frag<acc, mma_m16n8k16, warps = [4, 2]>
#ROW_P = #cuir.frag<row, mma_m16n8k16, warps = [4, 2]>
#ACC_S = #cuir.frag<acc, mma_m16n8k16, warps = [2, 4]>
#ROW_S = #cuir.frag<row, mma_m16n8k16, warps = [2, 4]>
#A_KV  = #cuir.frag<a, mma_m16n8k16, warps = [4, 2]>
#ACC_KV = #cuir.frag<acc, mma_m16n8k16, warps = [4, 2]>
#ACC_DQ = #cuir.frag<acc, mma_m16n8k16, warps = [2, 4]>
#G   = #cuir.mem<global>
#S   = #cuir.mem<shared>

cuir.launch_sequence @flash_bwd_bf16_d128 [@flash_bwd_bf16_d128_preprocess, @flash_bwd_bf16_d128_kernel, @flash_bwd_bf16_d128_convert_dq] loc("launch_flash_bwd"("flash_bwd.cu":554:20 to 554:98))

// =============================== preprocess ===============================
cuir.kernel @flash_bwd_bf16_d128_preprocess(
    %o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_bwd.cu":141:61 to 141:99)),
    %d_o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":141:61 to 141:99)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_bwd.cu":141:61 to 141:99)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":141:101 to 141:116)),
    %ws_d: memref<?x?x?xf32, #G> {cuir.arg = "workspace:d", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.d_rows"("flash_bwd.cu":141:101 to 141:116)),
    %ws_dq_accum: memref<?x?x?x128xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":141:101 to 141:116)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":141:61 to 141:99)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":141:61 to 141:99)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":141:61 to 141:99)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":141:61 to 141:99)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":141:61 to 141:99)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 64, hq, b)
    threads 256 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index loc("BLOCK_M")
  %ninf = arith.constant 0xFF800000 : f32 loc("kInf"("flash_bwd.cu":172:64 to 172:69))
  %m_block = cuir.block_id x loc("m_block"("flash_bwd.cu":146:13 to 146:33))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":146:35 to 146:54))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":146:56 to 146:74))
  %row0 = arith.muli %m_block, %c64 : index loc("row"("flash_bwd.cu":155:21 to 155:38))
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %rows = arith.muli %m_blocks, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("o"("flash_bwd.cu":148:3 to 148:22))
  %d_o_head = memref.subview %d_o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("d_o"("flash_bwd.cu":150:3 to 150:24))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse"("flash_bwd.cu":152:3 to 152:32))
  %lse_log2_head = memref.subview %ws_lse_log2[%b, %head_q, 0] [1, 1, %rows] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("head_rows"("flash_bwd.cu":147:3 to 147:65))
  %d_head = memref.subview %ws_d[%b, %head_q, 0] [1, 1, %rows] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("head_rows"("flash_bwd.cu":147:3 to 147:65))
  %dq_accum_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf32, #G> to memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("dq_accum"("flash_bwd.cu":177:3 to 177:48))

  // ---- D = rowsum(dO * O): rows past seqlen_q give 0 ----
  %zero_tile = arith.constant dense<0.0> : tensor<64x128xf32, #ACC_P> loc("dot"("flash_bwd.cu":157:5 to 157:21))
  %prod = cuir.elementwise (%zero_tile) at [%b, %head_q, %row0, %c0]
      : (tensor<64x128xf32, #ACC_P>) -> tensor<64x128xf32, #ACC_P> {
  ^bb0(%x: f32 loc("dot"("flash_bwd.cu":157:5 to 157:21)), %bi: index loc("batch"("flash_bwd.cu":146:56 to 146:74)), %hi: index loc("head_q"("flash_bwd.cu":146:35 to 146:54)), %row: index loc("row"("flash_bwd.cu":155:5 to 155:85)), %col: index loc("chunk"("flash_bwd.cu":156:5 to 156:44))):
    %in = arith.cmpi slt, %row, %seqlen_q : index loc("flash_bwd.cu":158:5 to 158:31)
    %row_c = arith.select %in, %row, %c0 : index loc("flash_bwd.cu":158:5 to 158:31)
    %ov = memref.load %o_head[%row_c, %col] : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("o8"("flash_bwd.cu":159:7 to 159:100))
    %dov = memref.load %d_o_head[%row_c, %col] : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("do8"("flash_bwd.cu":160:7 to 160:104))
    %of = arith.extf %ov : bf16 to f32 loc("of"("flash_bwd.cu":164:22 to 164:61))
    %df = arith.extf %dov : bf16 to f32 loc("df"("flash_bwd.cu":164:63 to 164:103))
    %p = arith.mulf %of, %df : f32 loc("dot"("flash_bwd.cu":165:9 to 165:55))
    %r = arith.select %in, %p, %x : f32 loc("flash_bwd.cu":158:5 to 158:31)
    cuir.yield %r : f32 loc("dot"("flash_bwd.cu":165:9 to 165:55))
  } loc("dot"("flash_bwd.cu":165:9 to 165:55))
  %dot = cuir.reduce_rows sum %prod : tensor<64x128xf32, #ACC_P> -> tensor<64xf32, #ROW_P> loc("dot"("flash_bwd.cu":169:68 to 169:117))

  // ---- LSE * log2e: a row that sees no key (LSE = -inf) and a padded row get +inf ----
  %lse_tile = cuir.elementwise (%zero_tile) at [%b, %head_q, %row0, %c0]
      : (tensor<64x128xf32, #ACC_P>) -> tensor<64x128xf32, #ACC_P> {
  ^bb0(%x: f32 loc("row_lse"("flash_bwd.cu":172:7 to 172:26)), %bi: index loc("batch"("flash_bwd.cu":146:56 to 146:74)), %hi: index loc("head_q"("flash_bwd.cu":146:35 to 146:54)), %row: index loc("row"("flash_bwd.cu":155:5 to 155:85)), %col: index loc("chunk"("flash_bwd.cu":156:5 to 156:44))):
    %in = arith.cmpi slt, %row, %seqlen_q : index loc("row_lse"("flash_bwd.cu":172:29 to 172:69))
    %row_c = arith.select %in, %row, %c0 : index loc("row_lse"("flash_bwd.cu":172:29 to 172:69))
    %l = memref.load %lse_head[%row_c] : memref<?xf32, strided<[1], offset: ?>, #G> loc("row_lse"("flash_bwd.cu":172:53 to 172:61))
    %r = arith.select %in, %l, %ninf : f32 loc("row_lse"("flash_bwd.cu":172:7 to 172:70))
    cuir.yield %r : f32 loc("row_lse"("flash_bwd.cu":172:7 to 172:70))
  } loc("row_lse"("flash_bwd.cu":172:7 to 172:70))
  %row_lse = cuir.reduce_rows max %lse_tile : tensor<64x128xf32, #ACC_P> -> tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":172:7 to 172:26))
  %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:54))
  %pinf_row = arith.constant dense<0x7F800000> : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:80))
  %log2e_row = arith.constant dense<1.44269502> : tensor<64xf32, #ROW_P> loc("kLog2e"("flash_bwd.cu":173:64 to 173:80))
  %sees_none = arith.cmpf oeq, %row_lse, %ninf_row : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:54))
  %lse_scaled = arith.mulf %row_lse, %log2e_row : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:64 to 173:80))
  %lse_log2 = arith.select %sees_none, %pinf_row, %lse_scaled : tensor<64xi1, #ROW_P>, tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:80))
  cuir.store %lse_log2 -> %lse_log2_head[%row0] : tensor<64xf32, #ROW_P> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.lse_log2"("flash_bwd.cu":173:7 to 173:81))
  cuir.store %dot -> %d_head[%row0] : tensor<64xf32, #ROW_P> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.d_rows"("flash_bwd.cu":174:7 to 174:40))

  // ---- the dQ accumulator of this query tile, zeroed ----
  cuir.store %zero_tile -> %dq_accum_head[%row0, %c0] : tensor<64x128xf32, #ACC_P> -> memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("dq_accum"("flash_bwd.cu":178:59 to 178:105))
  cuir.return loc("flash_bwd.cu":141:40 to 141:117)
} loc("flash_bwd_preprocess"("flash_bwd.cu":141:40 to 141:117))

// =============================== main kernel ===============================
cuir.kernel @flash_bwd_bf16_d128_kernel(
    %q: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_bwd.cu":437:27 to 437:88)),
    %k: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_bwd.cu":437:27 to 437:88)),
    %v: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_bwd.cu":437:27 to 437:88)),
    %d_o: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":437:27 to 437:88)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":437:67 to 437:88)),
    %ws_d: memref<?x?x?xf32, #G> {cuir.arg = "workspace:d", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.d_rows"("flash_bwd.cu":437:67 to 437:88)),
    %ws_dq_accum: memref<?x?x?x128xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":437:67 to 437:88)),
    %dk: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dk"} loc("params.dk"("flash_bwd.cu":437:27 to 437:88)),
    %dv: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dv"} loc("params.dv"("flash_bwd.cu":437:27 to 437:88)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":437:27 to 437:88)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_bwd.cu":435:1 to 435:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":437:27 to 437:88)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":437:27 to 437:88)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":437:27 to 437:88)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":437:27 to 437:88)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":437:27 to 437:88)))
    grid (b, hq, hkv, nq, nkv) -> (nkv ceildiv 128, hkv, b)
    threads 256 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index loc("BLOCK_M")
  %c128 = arith.constant 128 : index loc("BLOCK_N")
  %ninf = arith.constant 0xFF800000 : f32 loc("kInf"("flash_bwd.cu":279:81 to 279:86))

  // ---- block coordinates, GQA group, sequence views ----
  // The block ids are the block's (KV block, KV head, batch); the order the
  // launch deals them in (the KV block slowest under the causal mask with GQA:
  // kv_block_slowest) computes the same outputs.
  %n_block = cuir.block_id x loc("block.n_block"("flash_bwd.cu":443:3 to 443:58))
  %head_kv = cuir.block_id y loc("block.head_kv"("flash_bwd.cu":443:3 to 443:58))
  %b = cuir.block_id z loc("bwd_block_index<T>(params).batch"("flash_bwd.cu":443:3 to 443:58))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("last_key_offset"("flash_bwd.cu":447:43 to 447:70))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("last_key_offset"("flash_bwd.cu":447:13 to 447:82))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("group"("flash_bwd.cu":448:13 to 448:61))
  %first_head_q = arith.muli %head_kv, %group : index loc("first_head_q"("flash_bwd.cu":449:13 to 449:49))
  %head_q_end = arith.addi %first_head_q, %group : index loc("last_head_q"("flash_bwd.cu":449:51 to 449:89))
  %last_head_q = arith.subi %head_q_end, %c1 : index loc("last_head_q"("flash_bwd.cu":449:51 to 449:89))
  %key_begin = arith.muli %n_block, %c128 : index loc("(bwd_block_index<T>(params).n_block * T::BLOCK_N)"("flash_bwd.cu":450:13 to 450:51))
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %rows = arith.muli %m_blocks, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("k"("flash_bwd.cu":457:3 to 457:62))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("v"("flash_bwd.cu":459:3 to 459:62))

  // ---- q_block_range: the query blocks [m_begin, m_end) this KV block visits, [m_begin, m_unmasked_begin) masked ----
  %m_end = arith.ceildivui %seqlen_q, %c64 : index loc(callsite("m_end"("flash_bwd.cu":224:3 to 224:56) at "flash_bwd.cu":454:43 to 454:84))
  %key_end = arith.addi %key_begin, %c128 : index loc(callsite("ragged"("flash_bwd.cu":226:23 to 226:57) at "flash_bwd.cu":454:43 to 454:84))
  %ragged = arith.cmpi sgt, %key_end, %seqlen_kv : index loc(callsite("ragged"("flash_bwd.cu":226:3 to 226:58) at "flash_bwd.cu":454:43 to 454:84))
  %unm_full = arith.select %ragged, %m_end, %c0 : index loc(callsite("r"("flash_bwd.cu":227:20 to 227:38) at "flash_bwd.cu":454:43 to 454:84))
  %first_row = arith.subi %key_begin, %causal_offset : index loc(callsite("first_row"("flash_bwd.cu":230:5 to 230:53) at "flash_bwd.cu":454:43 to 454:84))
  %key_end_c = arith.minsi %key_end, %seqlen_kv : index loc(callsite("last_key"("flash_bwd.cu":231:26 to 231:64) at "flash_bwd.cu":454:43 to 454:84))
  %last_key = arith.subi %key_end_c, %c1 : index loc(callsite("last_key"("flash_bwd.cu":231:5 to 231:69) at "flash_bwd.cu":454:43 to 454:84))
  %full_row = arith.subi %last_key, %causal_offset : index loc(callsite("full_row"("flash_bwd.cu":232:5 to 232:51) at "flash_bwd.cu":454:43 to 454:84))
  %fr_none = arith.cmpi sle, %first_row, %c0 : index loc(callsite("r.m_begin"("flash_bwd.cu":233:17 to 233:31) at "flash_bwd.cu":454:43 to 454:84))
  %fr_blk = arith.divsi %first_row, %c64 : index loc(callsite("r.m_begin"("flash_bwd.cu":233:49 to 233:68) at "flash_bwd.cu":454:43 to 454:84))
  %fr_min = arith.minsi %m_end, %fr_blk : index loc(callsite("r.m_begin"("flash_bwd.cu":233:38 to 233:69) at "flash_bwd.cu":454:43 to 454:84))
  %m_begin_c = arith.select %fr_none, %c0, %fr_min : index loc(callsite("r.m_begin"("flash_bwd.cu":233:5 to 233:70) at "flash_bwd.cu":454:43 to 454:84))
  %fu_none = arith.cmpi sle, %full_row, %c0 : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:50 to 234:63) at "flash_bwd.cu":454:43 to 454:84))
  %fu_blk = arith.ceildivsi %full_row, %c64 : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:81 to 234:115) at "flash_bwd.cu":454:43 to 454:84))
  %fu_min = arith.minsi %m_end, %fu_blk : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:70 to 234:116) at "flash_bwd.cu":454:43 to 454:84))
  %fu_sel = arith.select %fu_none, %c0, %fu_min : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:50 to 234:116) at "flash_bwd.cu":454:43 to 454:84))
  %unm_c = arith.maxsi %unm_full, %fu_sel : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:5 to 234:63) at "flash_bwd.cu":454:43 to 454:84))
  %m_begin = arith.select %causal, %m_begin_c, %c0 : index loc(callsite("r.m_begin"("flash_bwd.cu":228:3 to 228:27) at "flash_bwd.cu":454:43 to 454:84))
  %unm_sel = arith.select %causal, %unm_c, %unm_full : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":228:3 to 228:27) at "flash_bwd.cu":454:43 to 454:84))
  %m_unmasked_begin = arith.maxsi %unm_sel, %m_begin : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":236:3 to 236:59) at "flash_bwd.cu":454:43 to 454:84))

  // ---- shared memory (FlashBwdTraits), 16-bit tiles swizzled ----
  %sK = cuir.alloc {swizzle = 128} : memref<128x128xbf16, #S> loc("sK"("flash_bwd.cu":78:29 to 78:42))
  %sV = cuir.alloc {swizzle = 128} : memref<128x128xbf16, #S> loc("sV"("flash_bwd.cu":79:29 to 79:66))
  %sQ = cuir.alloc {swizzle = 128} : memref<2x64x128xbf16, #S> loc("sQ"("flash_bwd.cu":80:29 to 80:66))
  %sdO = cuir.alloc {swizzle = 128} : memref<2x64x128xbf16, #S> loc("sdO"("flash_bwd.cu":81:29 to 81:77))
  %sP = cuir.alloc {swizzle = 128} : memref<64x128xbf16, #S> loc("sP"("flash_bwd.cu":82:29 to 82:77))
  %sdS = cuir.alloc {swizzle = 128} : memref<64x128xbf16, #S> loc("sdS"("flash_bwd.cu":83:29 to 83:68))
  %sLSE = cuir.alloc : memref<2x64xf32, #S> loc("sLSE"("flash_bwd.cu":84:29 to 84:70))
  %sD = cuir.alloc : memref<2x64xf32, #S> loc("sD"("flash_bwd.cu":85:29 to 85:80))

  // ---- prologue: K, V and the first step's tiles, one group ----
  %has_steps = arith.cmpi slt, %m_begin, %m_end : index loc("flash_bwd.cu":465:3 to 465:35)
  // K and V are issued before the branch in the source; both branches issue them here (one group each).
  %g_first = scf.if %has_steps -> (!cuir.group) {
    %tk = cuir.copy_async cp_async %k_head[%key_begin, %c0] -> %sK
        : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xbf16, #S> -> !cuir.token loc("sK"("flash_bwd.cu":461:3 to 461:81))
    %tv = cuir.copy_async cp_async %v_head[%key_begin, %c0] -> %sV
        : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xbf16, #S> -> !cuir.token loc("sV"("flash_bwd.cu":463:3 to 463:81))
    %row0 = arith.muli %m_begin, %c64 : index loc(callsite("row0"("flash_bwd.cu":246:3 to 246:40) at "flash_bwd.cu":466:5 to 466:65))
    %q_head = memref.subview %q[%b, 0, %first_head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
        : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("q"("flash_bwd.cu":247:3 to 247:62) at "flash_bwd.cu":466:5 to 466:65))
    %d_o_head = memref.subview %d_o[%b, 0, %first_head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
        : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("d_o"("flash_bwd.cu":249:3 to 249:66) at "flash_bwd.cu":466:5 to 466:65))
    %lse_head = memref.subview %ws_lse_log2[%b, %first_head_q, 0] [1, 1, %rows] [1, 1, 1]
        : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:44 to 259:94) at "flash_bwd.cu":466:5 to 466:65))
    %d_head = memref.subview %ws_d[%b, %first_head_q, 0] [1, 1, %rows] [1, 1, 1]
        : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:24 to 259:41) at "flash_bwd.cu":466:5 to 466:65))
    %sQ0 = memref.subview %sQ[0, 0, 0] [1, 64, 128] [1, 1, 1]
        : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1]>, #S> loc(callsite("sQ"("flash_bwd.cu":251:60 to 251:110) at "flash_bwd.cu":466:5 to 466:65))
    %sdO0 = memref.subview %sdO[0, 0, 0] [1, 64, 128] [1, 1, 1]
        : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1]>, #S> loc(callsite("sdO"("flash_bwd.cu":253:60 to 253:111) at "flash_bwd.cu":466:5 to 466:65))
    %sLSE0 = memref.subview %sLSE[0, 0] [1, 64] [1, 1]
        : memref<2x64xf32, #S> to memref<64xf32, strided<[1]>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":466:5 to 466:65))
    %sD0 = memref.subview %sD[0, 0] [1, 64] [1, 1]
        : memref<2x64xf32, #S> to memref<64xf32, strided<[1]>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":466:5 to 466:65))
    %tq = cuir.copy_async cp_async %q_head[%row0, %c0] -> %sQ0
        : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1]>, #S> -> !cuir.token loc(callsite("sQ"("flash_bwd.cu":251:3 to 251:84) at "flash_bwd.cu":466:5 to 466:65))
    %tdo = cuir.copy_async cp_async %d_o_head[%row0, %c0] -> %sdO0
        : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1]>, #S> -> !cuir.token loc(callsite("sdO"("flash_bwd.cu":253:3 to 253:85) at "flash_bwd.cu":466:5 to 466:65))
    %tl = cuir.copy_async cp_async %lse_head[%row0] -> %sLSE0
        : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1]>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":466:5 to 466:65))
    %td = cuir.copy_async cp_async %d_head[%row0] -> %sD0
        : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1]>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":466:5 to 466:65))
    %g = cuir.commit %tk, %tv, %tq, %tdo, %tl, %td loc("flash_bwd.cu":467:3 to 467:27)
    scf.yield %g : !cuir.group loc("flash_bwd.cu":465:3 to 465:35)
  } else {
    %tk = cuir.copy_async cp_async %k_head[%key_begin, %c0] -> %sK
        : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xbf16, #S> -> !cuir.token loc("sK"("flash_bwd.cu":461:3 to 461:81))
    %tv = cuir.copy_async cp_async %v_head[%key_begin, %c0] -> %sV
        : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xbf16, #S> -> !cuir.token loc("sV"("flash_bwd.cu":463:3 to 463:81))
    %g = cuir.commit %tk, %tv loc("flash_bwd.cu":467:3 to 467:27)
    scf.yield %g : !cuir.group loc("flash_bwd.cu":465:3 to 465:35)
  } loc("flash_bwd.cu":465:3 to 465:35)

  // ---- dK, dV accumulators (registers), the probability scale ----
  %acc_kv_init = arith.constant dense<0.0> : tensor<128x128xf32, #ACC_KV> loc("acc_dk"("flash_bwd.cu":471:3 to 471:20))
  %acc_sdp_init = arith.constant dense<0.0> : tensor<64x128xf32, #ACC_S> loc("acc_s"("flash_bwd.cu":394:3 to 394:19))
  %acc_dq_init = arith.constant dense<0.0> : tensor<64x128xf32, #ACC_DQ> loc("acc_dq"("flash_bwd.cu":424:3 to 424:20))
  %log2e = arith.constant 1.44269502 : f32 loc("scale_log2"("flash_bwd.cu":473:15 to 473:57))
  %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("scale_log2"("flash_bwd.cu":473:15 to 473:57))
  %scale_tile = tensor.splat %scale_log2 : tensor<64x128xf32, #ACC_S> loc("scale_log2"("flash_bwd.cu":473:15 to 473:57))

  // =============================== the query heads of the group ===============================
  %h_dk, %h_dv, %h_stage, %h_g = scf.for %head_q = %first_head_q to %head_q_end step %c1
      iter_args(%dk_h = %acc_kv_init, %dv_h = %acc_kv_init, %stage_h = %c0, %g_h = %g_first)
      -> (tensor<128x128xf32, #ACC_KV>, tensor<128x128xf32, #ACC_KV>, index, !cuir.group) {

    // =============================== masking steps ===============================
    %m_dk, %m_dv, %m_stage, %m_g = scf.for %m_block = %m_begin to %m_unmasked_begin step %c1
        iter_args(%acc_dk = %dk_h, %acc_dv = %dv_h, %stage = %stage_h, %g_cur = %g_h)
        -> (tensor<128x128xf32, #ACC_KV>, tensor<128x128xf32, #ACC_KV>, index, !cuir.group) {
      %other = arith.xori %stage, %c1 : index loc(callsite("stage"("flash_bwd.cu":388:59 to 388:68) at "flash_bwd.cu":480:7 to 480:25))
      %sQ_st = memref.subview %sQ[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":382:3 to 382:69) at "flash_bwd.cu":480:7 to 480:25))
      %sdO_st = memref.subview %sdO[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":383:3 to 383:71) at "flash_bwd.cu":480:7 to 480:25))
      %sLSE_st = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_lse"("flash_bwd.cu":400:56 to 400:105) at "flash_bwd.cu":480:7 to 480:25))
      %sD_st = memref.subview %sD[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_d"("flash_bwd.cu":408:54 to 408:101) at "flash_bwd.cu":480:7 to 480:25))

      cuir.wait_group %g_cur pending 0 loc(callsite("flash_bwd.cu":386:3 to 386:28 at "flash_bwd.cu":480:7 to 480:25))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":387:3 to 387:19 at "flash_bwd.cu":480:7 to 480:25))
      // next_q_step: the next query block of the head, else the first one of the next head
      %m_next = arith.addi %m_block, %c1 : index loc(callsite("flash_bwd.cu":359:7 to 359:18 at "flash_bwd.cu":480:72 to 480:120))
      %same_head = arith.cmpi slt, %m_next, %m_end : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":480:72 to 480:120))
      %head_next = arith.addi %head_q, %c1 : index loc(callsite("flash_bwd.cu":360:16 to 360:26 at "flash_bwd.cu":480:72 to 480:120))
      %next_head_q = arith.select %same_head, %head_q, %head_next : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":480:72 to 480:120))
      %next_m_block = arith.select %same_head, %m_next, %m_begin : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":480:72 to 480:120))
      %more_heads = arith.cmpi slt, %head_q, %last_head_q : index loc(callsite("flash_bwd.cu":360:43 to 360:63 at "flash_bwd.cu":480:72 to 480:120))
      %next_valid = arith.ori %same_head, %more_heads : i1 loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))
      %g_next = scf.if %next_valid -> (!cuir.group) {
        %row0 = arith.muli %next_m_block, %c64 : index loc(callsite("row0"("flash_bwd.cu":246:3 to 246:40) at "flash_bwd.cu":388:19 to 388:68))
        %q_head = memref.subview %q[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
            : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("q"("flash_bwd.cu":247:3 to 247:62) at "flash_bwd.cu":388:19 to 388:68))
        %d_o_head = memref.subview %d_o[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
            : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("d_o"("flash_bwd.cu":249:3 to 249:66) at "flash_bwd.cu":388:19 to 388:68))
        %lse_head = memref.subview %ws_lse_log2[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:44 to 259:94) at "flash_bwd.cu":388:19 to 388:68))
        %d_head = memref.subview %ws_d[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:24 to 259:41) at "flash_bwd.cu":388:19 to 388:68))
        %sQ_o = memref.subview %sQ[%other, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":251:60 to 251:110) at "flash_bwd.cu":388:19 to 388:68))
        %sdO_o = memref.subview %sdO[%other, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":253:60 to 253:111) at "flash_bwd.cu":388:19 to 388:68))
        %sLSE_o = memref.subview %sLSE[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %sD_o = memref.subview %sD[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %tq = cuir.copy_async cp_async %q_head[%row0, %c0] -> %sQ_o
            : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sQ"("flash_bwd.cu":251:3 to 251:84) at "flash_bwd.cu":388:19 to 388:68))
        %tdo = cuir.copy_async cp_async %d_o_head[%row0, %c0] -> %sdO_o
            : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sdO"("flash_bwd.cu":253:3 to 253:85) at "flash_bwd.cu":388:19 to 388:68))
        %tl = cuir.copy_async cp_async %lse_head[%row0] -> %sLSE_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %td = cuir.copy_async cp_async %d_head[%row0] -> %sD_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %g = cuir.commit %tq, %tdo, %tl, %td loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":480:7 to 480:25))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))
      } else {
        %g = cuir.commit loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":480:7 to 480:25))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))
      } loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))

      // ------- S = Q K^T (unscaled) -------
      %q_row0 = arith.muli %m_block, %c64 : index loc(callsite("(q_tile * T::BLOCK_M)"("flash_bwd.cu":431:40 to 431:74) at "flash_bwd.cu":480:7 to 480:25))
      %acc_s = cuir.gemm %sQ_st, %sK transpose_b, %acc_sdp_init
          : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xbf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":395:3 to 395:71) at "flash_bwd.cu":480:7 to 480:25))

      // ------- the mask of a masking step: -inf where key >= seqlen_kv or key > row + last_key_offset -------
      %kv0 = arith.muli %n_block, %c128 : index loc(callsite("key_base"("flash_bwd.cu":398:58 to 398:105) at "flash_bwd.cu":480:7 to 480:25))
      %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_row0, %kv0]
          : (tensor<64x128xf32, #ACC_S>) -> tensor<64x128xf32, #ACC_S> {
      ^bb0(%x: f32 loc("acc_s"("flash_bwd.cu":279:62 to 279:86)), %bi: index loc(callsite("block.batch"("flash_bwd.cu":398:5 to 398:24) at "flash_bwd.cu":480:7 to 480:25)), %hi: index loc(callsite("head_q"("flash_bwd.cu":398:5 to 398:24) at "flash_bwd.cu":480:7 to 480:25)), %row: index loc("row"("flash_bwd.cu":277:9 to 277:69)), %key: index loc("key"("flash_bwd.cu":278:9 to 278:68))):
        %past_end = arith.cmpi sge, %key, %seqlen_kv : index loc(callsite("flash_bwd.cu":279:13 to 279:29 at "flash_bwd.cu":398:5 to 398:24))
        %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_bwd.cu":279:39 to 279:60 at "flash_bwd.cu":398:5 to 398:24))
        %past_diag = arith.cmpi sgt, %key, %row_last : index loc(callsite("flash_bwd.cu":279:33 to 279:60 at "flash_bwd.cu":398:5 to 398:24))
        %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_bwd.cu":279:9 to 279:29 at "flash_bwd.cu":398:5 to 398:24))
        %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_bwd.cu":279:62 to 279:86) at "flash_bwd.cu":398:5 to 398:24))
        cuir.yield %r : f32 loc(callsite("flash_bwd.cu":398:5 to 398:24 at "flash_bwd.cu":480:7 to 480:25))
      } loc(callsite("acc_s"("flash_bwd.cu":398:5 to 398:24) at "flash_bwd.cu":480:7 to 480:25))

      // ------- scores_to_probs: P = exp2(S * scale * log2e - LSE * log2e) -------
      %lse_log2 = cuir.load %sLSE_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("lse_log2"("flash_bwd.cu":292:7 to 292:72) at "flash_bwd.cu":401:3 to 401:64))
      %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %neg_lse = arith.negf %lse_b : tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %logits = math.fma %acc_s_masked, %scale_tile, %neg_lse : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:40 to 297:85) at "flash_bwd.cu":401:3 to 401:64))
      %p = math.exp2 %logits : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:11 to 297:87) at "flash_bwd.cu":401:3 to 401:64))

      // ------- dP = dO V^T; probs_to_dscores: dS = P * (dP - D) -------
      %acc_dp = cuir.gemm %sdO_st, %sV transpose_b, %acc_sdp_init
          : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xbf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":406:3 to 406:72) at "flash_bwd.cu":480:7 to 480:25))
      %d_rows = cuir.load %sD_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("d"("flash_bwd.cu":310:7 to 310:58) at "flash_bwd.cu":409:3 to 409:59))
      %d_b = cuir.broadcast_rows %d_rows : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("d"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %ds = arith.mulf %p, %dp_minus_d : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:55 to 314:118) at "flash_bwd.cu":409:3 to 409:59))

      // ------- P and dS to shared memory (16-bit): the other warps' GEMMs read them whole -------
      %p16 = arith.truncf %p : tensor<64x128xf32, #ACC_S> to tensor<64x128xbf16, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":412:3 to 412:55) at "flash_bwd.cu":480:7 to 480:25))
      cuir.store %p16 -> %sP : tensor<64x128xbf16, #ACC_S> -> memref<64x128xbf16, #S> loc(callsite("sP"("flash_bwd.cu":412:3 to 412:48) at "flash_bwd.cu":480:7 to 480:25))
      %ds16 = arith.truncf %ds : tensor<64x128xf32, #ACC_S> to tensor<64x128xbf16, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":413:3 to 413:57) at "flash_bwd.cu":480:7 to 480:25))
      cuir.store %ds16 -> %sdS : tensor<64x128xbf16, #ACC_S> -> memref<64x128xbf16, #S> loc(callsite("sdS"("flash_bwd.cu":413:3 to 413:49) at "flash_bwd.cu":480:7 to 480:25))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":414:3 to 414:19 at "flash_bwd.cu":480:7 to 480:25))

      // ------- dV += P^T dO, dK += dS^T Q -------
      %pt = cuir.load %sP transpose : memref<64x128xbf16, #S> -> tensor<128x64xbf16, #A_KV> loc(callsite("sP"("flash_bwd.cu":417:73 to 417:114) at "flash_bwd.cu":480:7 to 480:25))
      %acc_dv_new = cuir.gemm %pt, %sdO_st, %acc_dv
          : tensor<128x64xbf16, #A_KV>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC_KV> loc(callsite("acc_dv"("flash_bwd.cu":417:3 to 417:71) at "flash_bwd.cu":480:7 to 480:25))
      %dst = cuir.load %sdS transpose : memref<64x128xbf16, #S> -> tensor<128x64xbf16, #A_KV> loc(callsite("sdS"("flash_bwd.cu":419:73 to 419:115) at "flash_bwd.cu":480:7 to 480:25))
      %acc_dk_new = cuir.gemm %dst, %sQ_st, %acc_dk
          : tensor<128x64xbf16, #A_KV>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC_KV> loc(callsite("acc_dk"("flash_bwd.cu":419:3 to 419:71) at "flash_bwd.cu":480:7 to 480:25))

      // ------- dQ += dS K: fp32 reductions into the workspace -------
      %acc_dq = cuir.gemm %sdS, %sK, %acc_dq_init
          : memref<64x128xbf16, #S>, memref<128x128xbf16, #S>, tensor<64x128xf32, #ACC_DQ> loc(callsite("acc_dq"("flash_bwd.cu":425:3 to 425:69) at "flash_bwd.cu":480:7 to 480:25))
      %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 128] [1, 1, 1, 1]
          : memref<?x?x?x128xf32, #G> to memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc(callsite("head_rows"("flash_bwd.cu":428:3 to 428:71) at "flash_bwd.cu":480:7 to 480:25))
      cuir.atomic_add %acc_dq -> %dq_head[%q_row0, %c0] : tensor<64x128xf32, #ACC_DQ> -> memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc(callsite("dq_tile"("flash_bwd.cu":336:7 to 336:21) at "flash_bwd.cu":431:3 to 431:95))
      scf.yield %acc_dk_new, %acc_dv_new, %other, %g_next
          : tensor<128x128xf32, #ACC_KV>, tensor<128x128xf32, #ACC_KV>, index, !cuir.group loc("flash_bwd.cu":479:5 to 479:68)
    } loc("flash_bwd.cu":479:5 to 479:68)

    // =============================== unmasked steps ===============================
    %u_dk, %u_dv, %u_stage, %u_g = scf.for %m_block = %m_unmasked_begin to %m_end step %c1
        iter_args(%acc_dk = %m_dk, %acc_dv = %m_dv, %stage = %m_stage, %g_cur = %m_g)
        -> (tensor<128x128xf32, #ACC_KV>, tensor<128x128xf32, #ACC_KV>, index, !cuir.group) {
      %other = arith.xori %stage, %c1 : index loc(callsite("stage"("flash_bwd.cu":388:59 to 388:68) at "flash_bwd.cu":484:7 to 484:26))
      %sQ_st = memref.subview %sQ[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":382:3 to 382:69) at "flash_bwd.cu":484:7 to 484:26))
      %sdO_st = memref.subview %sdO[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":383:3 to 383:71) at "flash_bwd.cu":484:7 to 484:26))
      %sLSE_st = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_lse"("flash_bwd.cu":400:56 to 400:105) at "flash_bwd.cu":484:7 to 484:26))
      %sD_st = memref.subview %sD[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_d"("flash_bwd.cu":408:54 to 408:101) at "flash_bwd.cu":484:7 to 484:26))

      cuir.wait_group %g_cur pending 0 loc(callsite("flash_bwd.cu":386:3 to 386:28 at "flash_bwd.cu":484:7 to 484:26))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":387:3 to 387:19 at "flash_bwd.cu":484:7 to 484:26))
      // next_q_step: the next query block of the head, else the first one of the next head
      %m_next = arith.addi %m_block, %c1 : index loc(callsite("flash_bwd.cu":359:7 to 359:18 at "flash_bwd.cu":485:26 to 485:74))
      %same_head = arith.cmpi slt, %m_next, %m_end : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":485:26 to 485:74))
      %head_next = arith.addi %head_q, %c1 : index loc(callsite("flash_bwd.cu":360:16 to 360:26 at "flash_bwd.cu":485:26 to 485:74))
      %next_head_q = arith.select %same_head, %head_q, %head_next : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":485:26 to 485:74))
      %next_m_block = arith.select %same_head, %m_next, %m_begin : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":485:26 to 485:74))
      %more_heads = arith.cmpi slt, %head_q, %last_head_q : index loc(callsite("flash_bwd.cu":360:43 to 360:63 at "flash_bwd.cu":485:26 to 485:74))
      %next_valid = arith.ori %same_head, %more_heads : i1 loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))
      %g_next = scf.if %next_valid -> (!cuir.group) {
        %row0 = arith.muli %next_m_block, %c64 : index loc(callsite("row0"("flash_bwd.cu":246:3 to 246:40) at "flash_bwd.cu":388:19 to 388:68))
        %q_head = memref.subview %q[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
            : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("q"("flash_bwd.cu":247:3 to 247:62) at "flash_bwd.cu":388:19 to 388:68))
        %d_o_head = memref.subview %d_o[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
            : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("d_o"("flash_bwd.cu":249:3 to 249:66) at "flash_bwd.cu":388:19 to 388:68))
        %lse_head = memref.subview %ws_lse_log2[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:44 to 259:94) at "flash_bwd.cu":388:19 to 388:68))
        %d_head = memref.subview %ws_d[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:24 to 259:41) at "flash_bwd.cu":388:19 to 388:68))
        %sQ_o = memref.subview %sQ[%other, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":251:60 to 251:110) at "flash_bwd.cu":388:19 to 388:68))
        %sdO_o = memref.subview %sdO[%other, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xbf16, #S> to memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":253:60 to 253:111) at "flash_bwd.cu":388:19 to 388:68))
        %sLSE_o = memref.subview %sLSE[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %sD_o = memref.subview %sD[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %tq = cuir.copy_async cp_async %q_head[%row0, %c0] -> %sQ_o
            : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sQ"("flash_bwd.cu":251:3 to 251:84) at "flash_bwd.cu":388:19 to 388:68))
        %tdo = cuir.copy_async cp_async %d_o_head[%row0, %c0] -> %sdO_o
            : memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xbf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sdO"("flash_bwd.cu":253:3 to 253:85) at "flash_bwd.cu":388:19 to 388:68))
        %tl = cuir.copy_async cp_async %lse_head[%row0] -> %sLSE_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %td = cuir.copy_async cp_async %d_head[%row0] -> %sD_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %g = cuir.commit %tq, %tdo, %tl, %td loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":484:7 to 484:26))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))
      } else {
        %g = cuir.commit loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":484:7 to 484:26))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))
      } loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))

      // ------- S = Q K^T (unscaled) -------
      %q_row0 = arith.muli %m_block, %c64 : index loc(callsite("(q_tile * T::BLOCK_M)"("flash_bwd.cu":431:40 to 431:74) at "flash_bwd.cu":484:7 to 484:26))
      %acc_s = cuir.gemm %sQ_st, %sK transpose_b, %acc_sdp_init
          : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xbf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":395:3 to 395:71) at "flash_bwd.cu":484:7 to 484:26))

      // ------- scores_to_probs: P = exp2(S * scale * log2e - LSE * log2e) -------
      %lse_log2 = cuir.load %sLSE_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("lse_log2"("flash_bwd.cu":292:7 to 292:72) at "flash_bwd.cu":401:3 to 401:64))
      %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %neg_lse = arith.negf %lse_b : tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %logits = math.fma %acc_s, %scale_tile, %neg_lse : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:40 to 297:85) at "flash_bwd.cu":401:3 to 401:64))
      %p = math.exp2 %logits : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:11 to 297:87) at "flash_bwd.cu":401:3 to 401:64))

      // ------- dP = dO V^T; probs_to_dscores: dS = P * (dP - D) -------
      %acc_dp = cuir.gemm %sdO_st, %sV transpose_b, %acc_sdp_init
          : memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xbf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":406:3 to 406:72) at "flash_bwd.cu":484:7 to 484:26))
      %d_rows = cuir.load %sD_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("d"("flash_bwd.cu":310:7 to 310:58) at "flash_bwd.cu":409:3 to 409:59))
      %d_b = cuir.broadcast_rows %d_rows : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("d"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %ds = arith.mulf %p, %dp_minus_d : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:55 to 314:118) at "flash_bwd.cu":409:3 to 409:59))

      // ------- P and dS to shared memory (16-bit): the other warps' GEMMs read them whole -------
      %p16 = arith.truncf %p : tensor<64x128xf32, #ACC_S> to tensor<64x128xbf16, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":412:3 to 412:55) at "flash_bwd.cu":484:7 to 484:26))
      cuir.store %p16 -> %sP : tensor<64x128xbf16, #ACC_S> -> memref<64x128xbf16, #S> loc(callsite("sP"("flash_bwd.cu":412:3 to 412:48) at "flash_bwd.cu":484:7 to 484:26))
      %ds16 = arith.truncf %ds : tensor<64x128xf32, #ACC_S> to tensor<64x128xbf16, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":413:3 to 413:57) at "flash_bwd.cu":484:7 to 484:26))
      cuir.store %ds16 -> %sdS : tensor<64x128xbf16, #ACC_S> -> memref<64x128xbf16, #S> loc(callsite("sdS"("flash_bwd.cu":413:3 to 413:49) at "flash_bwd.cu":484:7 to 484:26))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":414:3 to 414:19 at "flash_bwd.cu":484:7 to 484:26))

      // ------- dV += P^T dO, dK += dS^T Q -------
      %pt = cuir.load %sP transpose : memref<64x128xbf16, #S> -> tensor<128x64xbf16, #A_KV> loc(callsite("sP"("flash_bwd.cu":417:73 to 417:114) at "flash_bwd.cu":484:7 to 484:26))
      %acc_dv_new = cuir.gemm %pt, %sdO_st, %acc_dv
          : tensor<128x64xbf16, #A_KV>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC_KV> loc(callsite("acc_dv"("flash_bwd.cu":417:3 to 417:71) at "flash_bwd.cu":484:7 to 484:26))
      %dst = cuir.load %sdS transpose : memref<64x128xbf16, #S> -> tensor<128x64xbf16, #A_KV> loc(callsite("sdS"("flash_bwd.cu":419:73 to 419:115) at "flash_bwd.cu":484:7 to 484:26))
      %acc_dk_new = cuir.gemm %dst, %sQ_st, %acc_dk
          : tensor<128x64xbf16, #A_KV>, memref<64x128xbf16, strided<[128, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC_KV> loc(callsite("acc_dk"("flash_bwd.cu":419:3 to 419:71) at "flash_bwd.cu":484:7 to 484:26))

      // ------- dQ += dS K: fp32 reductions into the workspace -------
      %acc_dq = cuir.gemm %sdS, %sK, %acc_dq_init
          : memref<64x128xbf16, #S>, memref<128x128xbf16, #S>, tensor<64x128xf32, #ACC_DQ> loc(callsite("acc_dq"("flash_bwd.cu":425:3 to 425:69) at "flash_bwd.cu":484:7 to 484:26))
      %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 128] [1, 1, 1, 1]
          : memref<?x?x?x128xf32, #G> to memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc(callsite("head_rows"("flash_bwd.cu":428:3 to 428:71) at "flash_bwd.cu":484:7 to 484:26))
      cuir.atomic_add %acc_dq -> %dq_head[%q_row0, %c0] : tensor<64x128xf32, #ACC_DQ> -> memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc(callsite("dq_tile"("flash_bwd.cu":336:7 to 336:21) at "flash_bwd.cu":431:3 to 431:95))
      scf.yield %acc_dk_new, %acc_dv_new, %other, %g_next
          : tensor<128x128xf32, #ACC_KV>, tensor<128x128xf32, #ACC_KV>, index, !cuir.group loc("flash_bwd.cu":483:5 to 483:57)
    } loc("flash_bwd.cu":483:5 to 483:57)
    scf.yield %u_dk, %u_dv, %u_stage, %u_g
        : tensor<128x128xf32, #ACC_KV>, tensor<128x128xf32, #ACC_KV>, index, !cuir.group loc("flash_bwd.cu":476:3 to 476:67)
  } loc("head_q"("flash_bwd.cu":476:3 to 476:67))
  cuir.wait_group %h_g pending 0 loc("flash_bwd.cu":488:3 to 488:28)

  // =============================== epilogue: dK * scale and dV through the K and V tiles ===============================
  cuir.barrier.sync loc("flash_bwd.cu":491:3 to 491:19)
  %scale_kv = tensor.splat %softmax_scale : tensor<128x128xf32, #ACC_KV> loc("acc_dk"("flash_bwd.cu":495:3 to 495:93))
  %dk_scaled = arith.mulf %h_dk, %scale_kv : tensor<128x128xf32, #ACC_KV> loc("acc_dk"("flash_bwd.cu":495:3 to 495:93))
  %dk16 = arith.truncf %dk_scaled : tensor<128x128xf32, #ACC_KV> to tensor<128x128xbf16, #ACC_KV> loc("acc_dk"("flash_bwd.cu":495:3 to 495:93))
  cuir.store %dk16 -> %sK : tensor<128x128xbf16, #ACC_KV> -> memref<128x128xbf16, #S> loc("sK"("flash_bwd.cu":495:3 to 495:63))
  %dv16 = arith.truncf %h_dv : tensor<128x128xf32, #ACC_KV> to tensor<128x128xbf16, #ACC_KV> loc("acc_dv"("flash_bwd.cu":497:3 to 497:76))
  cuir.store %dv16 -> %sV : tensor<128x128xbf16, #ACC_KV> -> memref<128x128xbf16, #S> loc("sV"("flash_bwd.cu":497:3 to 497:63))
  cuir.barrier.sync loc("flash_bwd.cu":498:3 to 498:19)
  %dk_head = memref.subview %dk[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("dk"("flash_bwd.cu":501:3 to 501:52))
  %dv_head = memref.subview %dv[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("dv"("flash_bwd.cu":503:3 to 503:52))
  cuir.copy %sK -> %dk_head[%key_begin, %c0] : memref<128x128xbf16, #S> -> memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("dk"("flash_bwd.cu":505:3 to 505:97))
  cuir.copy %sV -> %dv_head[%key_begin, %c0] : memref<128x128xbf16, #S> -> memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("dv"("flash_bwd.cu":507:3 to 507:97))
  cuir.return loc("flash_bwd.cu":437:5 to 437:89)
} loc("flash_bwd_sm80_kernel"("flash_bwd.cu":437:5 to 437:89))

// =============================== dQ conversion ===============================
cuir.kernel @flash_bwd_bf16_d128_convert_dq(
    %ws_dq_accum: memref<?x?x?x128xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":517:101 to 517:116)),
    %dq: memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dq"} loc("params.dq"("flash_bwd.cu":517:61 to 517:99)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":517:61 to 517:99)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":517:61 to 517:99)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":517:61 to 517:99)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":517:61 to 517:99)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":517:61 to 517:99)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":517:61 to 517:99)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 64, hq, b)
    threads 256 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index loc("BLOCK_M")
  %staged = cuir.alloc : memref<64x128xbf16, #S> loc("staged"("flash_bwd.cu":522:3 to 522:69))
  %m_block = cuir.block_id x loc("m_block"("flash_bwd.cu":523:13 to 523:33))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":523:35 to 523:54))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":523:56 to 523:74))
  %row0 = arith.muli %m_block, %c64 : index loc("row"("flash_bwd.cu":525:60 to 525:80))
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %rows = arith.muli %m_blocks, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %tile = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf32, #G> to memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("tile"("flash_bwd.cu":524:3 to 524:56))
  %dq_head = memref.subview %dq[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":540:3 to 540:52))
  %zero_tile = arith.constant dense<0.0> : tensor<64x128xf32, #ACC_P> loc("acc"("flash_bwd.cu":535:5 to 535:33))
  %acc = cuir.elementwise (%zero_tile) at [%b, %head_q, %row0, %c0]
      : (tensor<64x128xf32, #ACC_P>) -> tensor<64x128xf32, #ACC_P> {
  ^bb0(%x: f32 loc("acc"("flash_bwd.cu":535:5 to 535:33)), %bi: index loc("batch"("flash_bwd.cu":523:56 to 523:74)), %hi: index loc("head_q"("flash_bwd.cu":523:35 to 523:54)), %row: index loc("row"("flash_bwd.cu":533:5 to 533:58)), %col: index loc("col"("flash_bwd.cu":534:5 to 534:73))):
    %a = memref.load %tile[%row, %col] : memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("acc"("flash_bwd.cu":535:24 to 535:32))
    cuir.yield %a : f32 loc("acc"("flash_bwd.cu":535:5 to 535:33))
  } loc("acc"("flash_bwd.cu":535:5 to 535:33))
  %s_tile = tensor.splat %softmax_scale : tensor<64x128xf32, #ACC_P> loc("s"("flash_bwd.cu":526:3 to 526:40))
  %dq_f = arith.mulf %acc, %s_tile : tensor<64x128xf32, #ACC_P> loc("dq"("flash_bwd.cu":536:91 to 536:100))
  %dq16 = arith.truncf %dq_f : tensor<64x128xf32, #ACC_P> to tensor<64x128xbf16, #ACC_P> loc("dq"("flash_bwd.cu":536:70 to 536:112))
  cuir.store %dq16 -> %staged[%c0, %c0] : tensor<64x128xbf16, #ACC_P> -> memref<64x128xbf16, #S> loc("staged"("flash_bwd.cu":536:70 to 536:112))
  cuir.barrier.sync loc("flash_bwd.cu":539:3 to 539:19)
  cuir.copy %staged -> %dq_head[%row0, %c0] : memref<64x128xbf16, #S> -> memref<?x128xbf16, strided<[?, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":545:7 to 545:103))
  cuir.return loc("flash_bwd.cu":517:40 to 517:117)
} loc("flash_bwd_convert_dq"("flash_bwd.cu":517:40 to 517:117))
cuir.launch_sequence @flash_bwd_bf16_d64 [@flash_bwd_bf16_d64_preprocess, @flash_bwd_bf16_d64_kernel, @flash_bwd_bf16_d64_convert_dq] loc("launch_flash_bwd"("flash_bwd.cu":554:20 to 554:98))

// =============================== preprocess ===============================
cuir.kernel @flash_bwd_bf16_d64_preprocess(
    %o: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_bwd.cu":141:61 to 141:99)),
    %d_o: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":141:61 to 141:99)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_bwd.cu":141:61 to 141:99)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":141:101 to 141:116)),
    %ws_d: memref<?x?x?xf32, #G> {cuir.arg = "workspace:d", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.d_rows"("flash_bwd.cu":141:101 to 141:116)),
    %ws_dq_accum: memref<?x?x?x64xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":141:101 to 141:116)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":141:61 to 141:99)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":141:61 to 141:99)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":141:61 to 141:99)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":141:61 to 141:99)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":141:61 to 141:99)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 64, hq, b)
    threads 256 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index loc("BLOCK_M")
  %ninf = arith.constant 0xFF800000 : f32 loc("kInf"("flash_bwd.cu":172:64 to 172:69))
  %m_block = cuir.block_id x loc("m_block"("flash_bwd.cu":146:13 to 146:33))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":146:35 to 146:54))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":146:56 to 146:74))
  %row0 = arith.muli %m_block, %c64 : index loc("row"("flash_bwd.cu":155:21 to 155:38))
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %rows = arith.muli %m_blocks, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("o"("flash_bwd.cu":148:3 to 148:22))
  %d_o_head = memref.subview %d_o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("d_o"("flash_bwd.cu":150:3 to 150:24))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse"("flash_bwd.cu":152:3 to 152:32))
  %lse_log2_head = memref.subview %ws_lse_log2[%b, %head_q, 0] [1, 1, %rows] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("head_rows"("flash_bwd.cu":147:3 to 147:65))
  %d_head = memref.subview %ws_d[%b, %head_q, 0] [1, 1, %rows] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("head_rows"("flash_bwd.cu":147:3 to 147:65))
  %dq_accum_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf32, #G> to memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("dq_accum"("flash_bwd.cu":177:3 to 177:48))

  // ---- D = rowsum(dO * O): rows past seqlen_q give 0 ----
  %zero_tile = arith.constant dense<0.0> : tensor<64x64xf32, #ACC_P> loc("dot"("flash_bwd.cu":157:5 to 157:21))
  %prod = cuir.elementwise (%zero_tile) at [%b, %head_q, %row0, %c0]
      : (tensor<64x64xf32, #ACC_P>) -> tensor<64x64xf32, #ACC_P> {
  ^bb0(%x: f32 loc("dot"("flash_bwd.cu":157:5 to 157:21)), %bi: index loc("batch"("flash_bwd.cu":146:56 to 146:74)), %hi: index loc("head_q"("flash_bwd.cu":146:35 to 146:54)), %row: index loc("row"("flash_bwd.cu":155:5 to 155:85)), %col: index loc("chunk"("flash_bwd.cu":156:5 to 156:44))):
    %in = arith.cmpi slt, %row, %seqlen_q : index loc("flash_bwd.cu":158:5 to 158:31)
    %row_c = arith.select %in, %row, %c0 : index loc("flash_bwd.cu":158:5 to 158:31)
    %ov = memref.load %o_head[%row_c, %col] : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("o8"("flash_bwd.cu":159:7 to 159:100))
    %dov = memref.load %d_o_head[%row_c, %col] : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("do8"("flash_bwd.cu":160:7 to 160:104))
    %of = arith.extf %ov : bf16 to f32 loc("of"("flash_bwd.cu":164:22 to 164:61))
    %df = arith.extf %dov : bf16 to f32 loc("df"("flash_bwd.cu":164:63 to 164:103))
    %p = arith.mulf %of, %df : f32 loc("dot"("flash_bwd.cu":165:9 to 165:55))
    %r = arith.select %in, %p, %x : f32 loc("flash_bwd.cu":158:5 to 158:31)
    cuir.yield %r : f32 loc("dot"("flash_bwd.cu":165:9 to 165:55))
  } loc("dot"("flash_bwd.cu":165:9 to 165:55))
  %dot = cuir.reduce_rows sum %prod : tensor<64x64xf32, #ACC_P> -> tensor<64xf32, #ROW_P> loc("dot"("flash_bwd.cu":169:68 to 169:117))

  // ---- LSE * log2e: a row that sees no key (LSE = -inf) and a padded row get +inf ----
  %lse_tile = cuir.elementwise (%zero_tile) at [%b, %head_q, %row0, %c0]
      : (tensor<64x64xf32, #ACC_P>) -> tensor<64x64xf32, #ACC_P> {
  ^bb0(%x: f32 loc("row_lse"("flash_bwd.cu":172:7 to 172:26)), %bi: index loc("batch"("flash_bwd.cu":146:56 to 146:74)), %hi: index loc("head_q"("flash_bwd.cu":146:35 to 146:54)), %row: index loc("row"("flash_bwd.cu":155:5 to 155:85)), %col: index loc("chunk"("flash_bwd.cu":156:5 to 156:44))):
    %in = arith.cmpi slt, %row, %seqlen_q : index loc("row_lse"("flash_bwd.cu":172:29 to 172:69))
    %row_c = arith.select %in, %row, %c0 : index loc("row_lse"("flash_bwd.cu":172:29 to 172:69))
    %l = memref.load %lse_head[%row_c] : memref<?xf32, strided<[1], offset: ?>, #G> loc("row_lse"("flash_bwd.cu":172:53 to 172:61))
    %r = arith.select %in, %l, %ninf : f32 loc("row_lse"("flash_bwd.cu":172:7 to 172:70))
    cuir.yield %r : f32 loc("row_lse"("flash_bwd.cu":172:7 to 172:70))
  } loc("row_lse"("flash_bwd.cu":172:7 to 172:70))
  %row_lse = cuir.reduce_rows max %lse_tile : tensor<64x64xf32, #ACC_P> -> tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":172:7 to 172:26))
  %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:54))
  %pinf_row = arith.constant dense<0x7F800000> : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:80))
  %log2e_row = arith.constant dense<1.44269502> : tensor<64xf32, #ROW_P> loc("kLog2e"("flash_bwd.cu":173:64 to 173:80))
  %sees_none = arith.cmpf oeq, %row_lse, %ninf_row : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:54))
  %lse_scaled = arith.mulf %row_lse, %log2e_row : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:64 to 173:80))
  %lse_log2 = arith.select %sees_none, %pinf_row, %lse_scaled : tensor<64xi1, #ROW_P>, tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:80))
  cuir.store %lse_log2 -> %lse_log2_head[%row0] : tensor<64xf32, #ROW_P> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.lse_log2"("flash_bwd.cu":173:7 to 173:81))
  cuir.store %dot -> %d_head[%row0] : tensor<64xf32, #ROW_P> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.d_rows"("flash_bwd.cu":174:7 to 174:40))

  // ---- the dQ accumulator of this query tile, zeroed ----
  cuir.store %zero_tile -> %dq_accum_head[%row0, %c0] : tensor<64x64xf32, #ACC_P> -> memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("dq_accum"("flash_bwd.cu":178:59 to 178:105))
  cuir.return loc("flash_bwd.cu":141:40 to 141:117)
} loc("flash_bwd_preprocess"("flash_bwd.cu":141:40 to 141:117))

// =============================== main kernel ===============================
cuir.kernel @flash_bwd_bf16_d64_kernel(
    %q: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_bwd.cu":437:27 to 437:88)),
    %k: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_bwd.cu":437:27 to 437:88)),
    %v: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_bwd.cu":437:27 to 437:88)),
    %d_o: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":437:27 to 437:88)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":437:67 to 437:88)),
    %ws_d: memref<?x?x?xf32, #G> {cuir.arg = "workspace:d", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.d_rows"("flash_bwd.cu":437:67 to 437:88)),
    %ws_dq_accum: memref<?x?x?x64xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":437:67 to 437:88)),
    %dk: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dk"} loc("params.dk"("flash_bwd.cu":437:27 to 437:88)),
    %dv: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dv"} loc("params.dv"("flash_bwd.cu":437:27 to 437:88)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":437:27 to 437:88)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_bwd.cu":435:1 to 435:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":437:27 to 437:88)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":437:27 to 437:88)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":437:27 to 437:88)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":437:27 to 437:88)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":437:27 to 437:88)))
    grid (b, hq, hkv, nq, nkv) -> (nkv ceildiv 128, hkv, b)
    threads 256 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index loc("BLOCK_M")
  %c128 = arith.constant 128 : index loc("BLOCK_N")
  %ninf = arith.constant 0xFF800000 : f32 loc("kInf"("flash_bwd.cu":279:81 to 279:86))

  // ---- block coordinates, GQA group, sequence views ----
  // The block ids are the block's (KV block, KV head, batch); the order the
  // launch deals them in (the KV block slowest under the causal mask with GQA:
  // kv_block_slowest) computes the same outputs.
  %n_block = cuir.block_id x loc("block.n_block"("flash_bwd.cu":443:3 to 443:58))
  %head_kv = cuir.block_id y loc("block.head_kv"("flash_bwd.cu":443:3 to 443:58))
  %b = cuir.block_id z loc("bwd_block_index<T>(params).batch"("flash_bwd.cu":443:3 to 443:58))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("last_key_offset"("flash_bwd.cu":447:43 to 447:70))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("last_key_offset"("flash_bwd.cu":447:13 to 447:82))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("group"("flash_bwd.cu":448:13 to 448:61))
  %first_head_q = arith.muli %head_kv, %group : index loc("first_head_q"("flash_bwd.cu":449:13 to 449:49))
  %head_q_end = arith.addi %first_head_q, %group : index loc("last_head_q"("flash_bwd.cu":449:51 to 449:89))
  %last_head_q = arith.subi %head_q_end, %c1 : index loc("last_head_q"("flash_bwd.cu":449:51 to 449:89))
  %key_begin = arith.muli %n_block, %c128 : index loc("(bwd_block_index<T>(params).n_block * T::BLOCK_N)"("flash_bwd.cu":450:13 to 450:51))
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %rows = arith.muli %m_blocks, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("k"("flash_bwd.cu":457:3 to 457:62))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("v"("flash_bwd.cu":459:3 to 459:62))

  // ---- q_block_range: the query blocks [m_begin, m_end) this KV block visits, [m_begin, m_unmasked_begin) masked ----
  %m_end = arith.ceildivui %seqlen_q, %c64 : index loc(callsite("m_end"("flash_bwd.cu":224:3 to 224:56) at "flash_bwd.cu":454:43 to 454:84))
  %key_end = arith.addi %key_begin, %c128 : index loc(callsite("ragged"("flash_bwd.cu":226:23 to 226:57) at "flash_bwd.cu":454:43 to 454:84))
  %ragged = arith.cmpi sgt, %key_end, %seqlen_kv : index loc(callsite("ragged"("flash_bwd.cu":226:3 to 226:58) at "flash_bwd.cu":454:43 to 454:84))
  %unm_full = arith.select %ragged, %m_end, %c0 : index loc(callsite("r"("flash_bwd.cu":227:20 to 227:38) at "flash_bwd.cu":454:43 to 454:84))
  %first_row = arith.subi %key_begin, %causal_offset : index loc(callsite("first_row"("flash_bwd.cu":230:5 to 230:53) at "flash_bwd.cu":454:43 to 454:84))
  %key_end_c = arith.minsi %key_end, %seqlen_kv : index loc(callsite("last_key"("flash_bwd.cu":231:26 to 231:64) at "flash_bwd.cu":454:43 to 454:84))
  %last_key = arith.subi %key_end_c, %c1 : index loc(callsite("last_key"("flash_bwd.cu":231:5 to 231:69) at "flash_bwd.cu":454:43 to 454:84))
  %full_row = arith.subi %last_key, %causal_offset : index loc(callsite("full_row"("flash_bwd.cu":232:5 to 232:51) at "flash_bwd.cu":454:43 to 454:84))
  %fr_none = arith.cmpi sle, %first_row, %c0 : index loc(callsite("r.m_begin"("flash_bwd.cu":233:17 to 233:31) at "flash_bwd.cu":454:43 to 454:84))
  %fr_blk = arith.divsi %first_row, %c64 : index loc(callsite("r.m_begin"("flash_bwd.cu":233:49 to 233:68) at "flash_bwd.cu":454:43 to 454:84))
  %fr_min = arith.minsi %m_end, %fr_blk : index loc(callsite("r.m_begin"("flash_bwd.cu":233:38 to 233:69) at "flash_bwd.cu":454:43 to 454:84))
  %m_begin_c = arith.select %fr_none, %c0, %fr_min : index loc(callsite("r.m_begin"("flash_bwd.cu":233:5 to 233:70) at "flash_bwd.cu":454:43 to 454:84))
  %fu_none = arith.cmpi sle, %full_row, %c0 : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:50 to 234:63) at "flash_bwd.cu":454:43 to 454:84))
  %fu_blk = arith.ceildivsi %full_row, %c64 : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:81 to 234:115) at "flash_bwd.cu":454:43 to 454:84))
  %fu_min = arith.minsi %m_end, %fu_blk : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:70 to 234:116) at "flash_bwd.cu":454:43 to 454:84))
  %fu_sel = arith.select %fu_none, %c0, %fu_min : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:50 to 234:116) at "flash_bwd.cu":454:43 to 454:84))
  %unm_c = arith.maxsi %unm_full, %fu_sel : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:5 to 234:63) at "flash_bwd.cu":454:43 to 454:84))
  %m_begin = arith.select %causal, %m_begin_c, %c0 : index loc(callsite("r.m_begin"("flash_bwd.cu":228:3 to 228:27) at "flash_bwd.cu":454:43 to 454:84))
  %unm_sel = arith.select %causal, %unm_c, %unm_full : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":228:3 to 228:27) at "flash_bwd.cu":454:43 to 454:84))
  %m_unmasked_begin = arith.maxsi %unm_sel, %m_begin : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":236:3 to 236:59) at "flash_bwd.cu":454:43 to 454:84))

  // ---- shared memory (FlashBwdTraits), 16-bit tiles swizzled ----
  %sK = cuir.alloc {swizzle = 128} : memref<128x64xbf16, #S> loc("sK"("flash_bwd.cu":78:29 to 78:42))
  %sV = cuir.alloc {swizzle = 128} : memref<128x64xbf16, #S> loc("sV"("flash_bwd.cu":79:29 to 79:66))
  %sQ = cuir.alloc {swizzle = 128} : memref<2x64x64xbf16, #S> loc("sQ"("flash_bwd.cu":80:29 to 80:66))
  %sdO = cuir.alloc {swizzle = 128} : memref<2x64x64xbf16, #S> loc("sdO"("flash_bwd.cu":81:29 to 81:77))
  %sP = cuir.alloc {swizzle = 128} : memref<64x128xbf16, #S> loc("sP"("flash_bwd.cu":82:29 to 82:77))
  %sdS = cuir.alloc {swizzle = 128} : memref<64x128xbf16, #S> loc("sdS"("flash_bwd.cu":83:29 to 83:68))
  %sLSE = cuir.alloc : memref<2x64xf32, #S> loc("sLSE"("flash_bwd.cu":84:29 to 84:70))
  %sD = cuir.alloc : memref<2x64xf32, #S> loc("sD"("flash_bwd.cu":85:29 to 85:80))

  // ---- prologue: K, V and the first step's tiles, one group ----
  %has_steps = arith.cmpi slt, %m_begin, %m_end : index loc("flash_bwd.cu":465:3 to 465:35)
  // K and V are issued before the branch in the source; both branches issue them here (one group each).
  %g_first = scf.if %has_steps -> (!cuir.group) {
    %tk = cuir.copy_async cp_async %k_head[%key_begin, %c0] -> %sK
        : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, #S> -> !cuir.token loc("sK"("flash_bwd.cu":461:3 to 461:81))
    %tv = cuir.copy_async cp_async %v_head[%key_begin, %c0] -> %sV
        : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, #S> -> !cuir.token loc("sV"("flash_bwd.cu":463:3 to 463:81))
    %row0 = arith.muli %m_begin, %c64 : index loc(callsite("row0"("flash_bwd.cu":246:3 to 246:40) at "flash_bwd.cu":466:5 to 466:65))
    %q_head = memref.subview %q[%b, 0, %first_head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
        : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("q"("flash_bwd.cu":247:3 to 247:62) at "flash_bwd.cu":466:5 to 466:65))
    %d_o_head = memref.subview %d_o[%b, 0, %first_head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
        : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("d_o"("flash_bwd.cu":249:3 to 249:66) at "flash_bwd.cu":466:5 to 466:65))
    %lse_head = memref.subview %ws_lse_log2[%b, %first_head_q, 0] [1, 1, %rows] [1, 1, 1]
        : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:44 to 259:94) at "flash_bwd.cu":466:5 to 466:65))
    %d_head = memref.subview %ws_d[%b, %first_head_q, 0] [1, 1, %rows] [1, 1, 1]
        : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:24 to 259:41) at "flash_bwd.cu":466:5 to 466:65))
    %sQ0 = memref.subview %sQ[0, 0, 0] [1, 64, 64] [1, 1, 1]
        : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1]>, #S> loc(callsite("sQ"("flash_bwd.cu":251:60 to 251:110) at "flash_bwd.cu":466:5 to 466:65))
    %sdO0 = memref.subview %sdO[0, 0, 0] [1, 64, 64] [1, 1, 1]
        : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1]>, #S> loc(callsite("sdO"("flash_bwd.cu":253:60 to 253:111) at "flash_bwd.cu":466:5 to 466:65))
    %sLSE0 = memref.subview %sLSE[0, 0] [1, 64] [1, 1]
        : memref<2x64xf32, #S> to memref<64xf32, strided<[1]>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":466:5 to 466:65))
    %sD0 = memref.subview %sD[0, 0] [1, 64] [1, 1]
        : memref<2x64xf32, #S> to memref<64xf32, strided<[1]>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":466:5 to 466:65))
    %tq = cuir.copy_async cp_async %q_head[%row0, %c0] -> %sQ0
        : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xbf16, strided<[64, 1]>, #S> -> !cuir.token loc(callsite("sQ"("flash_bwd.cu":251:3 to 251:84) at "flash_bwd.cu":466:5 to 466:65))
    %tdo = cuir.copy_async cp_async %d_o_head[%row0, %c0] -> %sdO0
        : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xbf16, strided<[64, 1]>, #S> -> !cuir.token loc(callsite("sdO"("flash_bwd.cu":253:3 to 253:85) at "flash_bwd.cu":466:5 to 466:65))
    %tl = cuir.copy_async cp_async %lse_head[%row0] -> %sLSE0
        : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1]>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":466:5 to 466:65))
    %td = cuir.copy_async cp_async %d_head[%row0] -> %sD0
        : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1]>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":466:5 to 466:65))
    %g = cuir.commit %tk, %tv, %tq, %tdo, %tl, %td loc("flash_bwd.cu":467:3 to 467:27)
    scf.yield %g : !cuir.group loc("flash_bwd.cu":465:3 to 465:35)
  } else {
    %tk = cuir.copy_async cp_async %k_head[%key_begin, %c0] -> %sK
        : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, #S> -> !cuir.token loc("sK"("flash_bwd.cu":461:3 to 461:81))
    %tv = cuir.copy_async cp_async %v_head[%key_begin, %c0] -> %sV
        : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xbf16, #S> -> !cuir.token loc("sV"("flash_bwd.cu":463:3 to 463:81))
    %g = cuir.commit %tk, %tv loc("flash_bwd.cu":467:3 to 467:27)
    scf.yield %g : !cuir.group loc("flash_bwd.cu":465:3 to 465:35)
  } loc("flash_bwd.cu":465:3 to 465:35)

  // ---- dK, dV accumulators (registers), the probability scale ----
  %acc_kv_init = arith.constant dense<0.0> : tensor<128x64xf32, #ACC_KV> loc("acc_dk"("flash_bwd.cu":471:3 to 471:20))
  %acc_sdp_init = arith.constant dense<0.0> : tensor<64x128xf32, #ACC_S> loc("acc_s"("flash_bwd.cu":394:3 to 394:19))
  %acc_dq_init = arith.constant dense<0.0> : tensor<64x64xf32, #ACC_DQ> loc("acc_dq"("flash_bwd.cu":424:3 to 424:20))
  %log2e = arith.constant 1.44269502 : f32 loc("scale_log2"("flash_bwd.cu":473:15 to 473:57))
  %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("scale_log2"("flash_bwd.cu":473:15 to 473:57))
  %scale_tile = tensor.splat %scale_log2 : tensor<64x128xf32, #ACC_S> loc("scale_log2"("flash_bwd.cu":473:15 to 473:57))

  // =============================== the query heads of the group ===============================
  %h_dk, %h_dv, %h_stage, %h_g = scf.for %head_q = %first_head_q to %head_q_end step %c1
      iter_args(%dk_h = %acc_kv_init, %dv_h = %acc_kv_init, %stage_h = %c0, %g_h = %g_first)
      -> (tensor<128x64xf32, #ACC_KV>, tensor<128x64xf32, #ACC_KV>, index, !cuir.group) {

    // =============================== masking steps ===============================
    %m_dk, %m_dv, %m_stage, %m_g = scf.for %m_block = %m_begin to %m_unmasked_begin step %c1
        iter_args(%acc_dk = %dk_h, %acc_dv = %dv_h, %stage = %stage_h, %g_cur = %g_h)
        -> (tensor<128x64xf32, #ACC_KV>, tensor<128x64xf32, #ACC_KV>, index, !cuir.group) {
      %other = arith.xori %stage, %c1 : index loc(callsite("stage"("flash_bwd.cu":388:59 to 388:68) at "flash_bwd.cu":480:7 to 480:25))
      %sQ_st = memref.subview %sQ[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
          : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":382:3 to 382:69) at "flash_bwd.cu":480:7 to 480:25))
      %sdO_st = memref.subview %sdO[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
          : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":383:3 to 383:71) at "flash_bwd.cu":480:7 to 480:25))
      %sLSE_st = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_lse"("flash_bwd.cu":400:56 to 400:105) at "flash_bwd.cu":480:7 to 480:25))
      %sD_st = memref.subview %sD[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_d"("flash_bwd.cu":408:54 to 408:101) at "flash_bwd.cu":480:7 to 480:25))

      cuir.wait_group %g_cur pending 0 loc(callsite("flash_bwd.cu":386:3 to 386:28 at "flash_bwd.cu":480:7 to 480:25))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":387:3 to 387:19 at "flash_bwd.cu":480:7 to 480:25))
      // next_q_step: the next query block of the head, else the first one of the next head
      %m_next = arith.addi %m_block, %c1 : index loc(callsite("flash_bwd.cu":359:7 to 359:18 at "flash_bwd.cu":480:72 to 480:120))
      %same_head = arith.cmpi slt, %m_next, %m_end : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":480:72 to 480:120))
      %head_next = arith.addi %head_q, %c1 : index loc(callsite("flash_bwd.cu":360:16 to 360:26 at "flash_bwd.cu":480:72 to 480:120))
      %next_head_q = arith.select %same_head, %head_q, %head_next : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":480:72 to 480:120))
      %next_m_block = arith.select %same_head, %m_next, %m_begin : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":480:72 to 480:120))
      %more_heads = arith.cmpi slt, %head_q, %last_head_q : index loc(callsite("flash_bwd.cu":360:43 to 360:63 at "flash_bwd.cu":480:72 to 480:120))
      %next_valid = arith.ori %same_head, %more_heads : i1 loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))
      %g_next = scf.if %next_valid -> (!cuir.group) {
        %row0 = arith.muli %next_m_block, %c64 : index loc(callsite("row0"("flash_bwd.cu":246:3 to 246:40) at "flash_bwd.cu":388:19 to 388:68))
        %q_head = memref.subview %q[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
            : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("q"("flash_bwd.cu":247:3 to 247:62) at "flash_bwd.cu":388:19 to 388:68))
        %d_o_head = memref.subview %d_o[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
            : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("d_o"("flash_bwd.cu":249:3 to 249:66) at "flash_bwd.cu":388:19 to 388:68))
        %lse_head = memref.subview %ws_lse_log2[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:44 to 259:94) at "flash_bwd.cu":388:19 to 388:68))
        %d_head = memref.subview %ws_d[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:24 to 259:41) at "flash_bwd.cu":388:19 to 388:68))
        %sQ_o = memref.subview %sQ[%other, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":251:60 to 251:110) at "flash_bwd.cu":388:19 to 388:68))
        %sdO_o = memref.subview %sdO[%other, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":253:60 to 253:111) at "flash_bwd.cu":388:19 to 388:68))
        %sLSE_o = memref.subview %sLSE[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %sD_o = memref.subview %sD[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %tq = cuir.copy_async cp_async %q_head[%row0, %c0] -> %sQ_o
            : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sQ"("flash_bwd.cu":251:3 to 251:84) at "flash_bwd.cu":388:19 to 388:68))
        %tdo = cuir.copy_async cp_async %d_o_head[%row0, %c0] -> %sdO_o
            : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sdO"("flash_bwd.cu":253:3 to 253:85) at "flash_bwd.cu":388:19 to 388:68))
        %tl = cuir.copy_async cp_async %lse_head[%row0] -> %sLSE_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %td = cuir.copy_async cp_async %d_head[%row0] -> %sD_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %g = cuir.commit %tq, %tdo, %tl, %td loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":480:7 to 480:25))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))
      } else {
        %g = cuir.commit loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":480:7 to 480:25))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))
      } loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))

      // ------- S = Q K^T (unscaled) -------
      %q_row0 = arith.muli %m_block, %c64 : index loc(callsite("(q_tile * T::BLOCK_M)"("flash_bwd.cu":431:40 to 431:74) at "flash_bwd.cu":480:7 to 480:25))
      %acc_s = cuir.gemm %sQ_st, %sK transpose_b, %acc_sdp_init
          : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xbf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":395:3 to 395:71) at "flash_bwd.cu":480:7 to 480:25))

      // ------- the mask of a masking step: -inf where key >= seqlen_kv or key > row + last_key_offset -------
      %kv0 = arith.muli %n_block, %c128 : index loc(callsite("key_base"("flash_bwd.cu":398:58 to 398:105) at "flash_bwd.cu":480:7 to 480:25))
      %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_row0, %kv0]
          : (tensor<64x128xf32, #ACC_S>) -> tensor<64x128xf32, #ACC_S> {
      ^bb0(%x: f32 loc("acc_s"("flash_bwd.cu":279:62 to 279:86)), %bi: index loc(callsite("block.batch"("flash_bwd.cu":398:5 to 398:24) at "flash_bwd.cu":480:7 to 480:25)), %hi: index loc(callsite("head_q"("flash_bwd.cu":398:5 to 398:24) at "flash_bwd.cu":480:7 to 480:25)), %row: index loc("row"("flash_bwd.cu":277:9 to 277:69)), %key: index loc("key"("flash_bwd.cu":278:9 to 278:68))):
        %past_end = arith.cmpi sge, %key, %seqlen_kv : index loc(callsite("flash_bwd.cu":279:13 to 279:29 at "flash_bwd.cu":398:5 to 398:24))
        %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_bwd.cu":279:39 to 279:60 at "flash_bwd.cu":398:5 to 398:24))
        %past_diag = arith.cmpi sgt, %key, %row_last : index loc(callsite("flash_bwd.cu":279:33 to 279:60 at "flash_bwd.cu":398:5 to 398:24))
        %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_bwd.cu":279:9 to 279:29 at "flash_bwd.cu":398:5 to 398:24))
        %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_bwd.cu":279:62 to 279:86) at "flash_bwd.cu":398:5 to 398:24))
        cuir.yield %r : f32 loc(callsite("flash_bwd.cu":398:5 to 398:24 at "flash_bwd.cu":480:7 to 480:25))
      } loc(callsite("acc_s"("flash_bwd.cu":398:5 to 398:24) at "flash_bwd.cu":480:7 to 480:25))

      // ------- scores_to_probs: P = exp2(S * scale * log2e - LSE * log2e) -------
      %lse_log2 = cuir.load %sLSE_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("lse_log2"("flash_bwd.cu":292:7 to 292:72) at "flash_bwd.cu":401:3 to 401:64))
      %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %neg_lse = arith.negf %lse_b : tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %logits = math.fma %acc_s_masked, %scale_tile, %neg_lse : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:40 to 297:85) at "flash_bwd.cu":401:3 to 401:64))
      %p = math.exp2 %logits : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:11 to 297:87) at "flash_bwd.cu":401:3 to 401:64))

      // ------- dP = dO V^T; probs_to_dscores: dS = P * (dP - D) -------
      %acc_dp = cuir.gemm %sdO_st, %sV transpose_b, %acc_sdp_init
          : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xbf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":406:3 to 406:72) at "flash_bwd.cu":480:7 to 480:25))
      %d_rows = cuir.load %sD_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("d"("flash_bwd.cu":310:7 to 310:58) at "flash_bwd.cu":409:3 to 409:59))
      %d_b = cuir.broadcast_rows %d_rows : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("d"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %ds = arith.mulf %p, %dp_minus_d : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:55 to 314:118) at "flash_bwd.cu":409:3 to 409:59))

      // ------- P and dS to shared memory (16-bit): the other warps' GEMMs read them whole -------
      %p16 = arith.truncf %p : tensor<64x128xf32, #ACC_S> to tensor<64x128xbf16, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":412:3 to 412:55) at "flash_bwd.cu":480:7 to 480:25))
      cuir.store %p16 -> %sP : tensor<64x128xbf16, #ACC_S> -> memref<64x128xbf16, #S> loc(callsite("sP"("flash_bwd.cu":412:3 to 412:48) at "flash_bwd.cu":480:7 to 480:25))
      %ds16 = arith.truncf %ds : tensor<64x128xf32, #ACC_S> to tensor<64x128xbf16, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":413:3 to 413:57) at "flash_bwd.cu":480:7 to 480:25))
      cuir.store %ds16 -> %sdS : tensor<64x128xbf16, #ACC_S> -> memref<64x128xbf16, #S> loc(callsite("sdS"("flash_bwd.cu":413:3 to 413:49) at "flash_bwd.cu":480:7 to 480:25))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":414:3 to 414:19 at "flash_bwd.cu":480:7 to 480:25))

      // ------- dV += P^T dO, dK += dS^T Q -------
      %pt = cuir.load %sP transpose : memref<64x128xbf16, #S> -> tensor<128x64xbf16, #A_KV> loc(callsite("sP"("flash_bwd.cu":417:73 to 417:114) at "flash_bwd.cu":480:7 to 480:25))
      %acc_dv_new = cuir.gemm %pt, %sdO_st, %acc_dv
          : tensor<128x64xbf16, #A_KV>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC_KV> loc(callsite("acc_dv"("flash_bwd.cu":417:3 to 417:71) at "flash_bwd.cu":480:7 to 480:25))
      %dst = cuir.load %sdS transpose : memref<64x128xbf16, #S> -> tensor<128x64xbf16, #A_KV> loc(callsite("sdS"("flash_bwd.cu":419:73 to 419:115) at "flash_bwd.cu":480:7 to 480:25))
      %acc_dk_new = cuir.gemm %dst, %sQ_st, %acc_dk
          : tensor<128x64xbf16, #A_KV>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC_KV> loc(callsite("acc_dk"("flash_bwd.cu":419:3 to 419:71) at "flash_bwd.cu":480:7 to 480:25))

      // ------- dQ += dS K: fp32 reductions into the workspace -------
      %acc_dq = cuir.gemm %sdS, %sK, %acc_dq_init
          : memref<64x128xbf16, #S>, memref<128x64xbf16, #S>, tensor<64x64xf32, #ACC_DQ> loc(callsite("acc_dq"("flash_bwd.cu":425:3 to 425:69) at "flash_bwd.cu":480:7 to 480:25))
      %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 64] [1, 1, 1, 1]
          : memref<?x?x?x64xf32, #G> to memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc(callsite("head_rows"("flash_bwd.cu":428:3 to 428:71) at "flash_bwd.cu":480:7 to 480:25))
      cuir.atomic_add %acc_dq -> %dq_head[%q_row0, %c0] : tensor<64x64xf32, #ACC_DQ> -> memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc(callsite("dq_tile"("flash_bwd.cu":336:7 to 336:21) at "flash_bwd.cu":431:3 to 431:95))
      scf.yield %acc_dk_new, %acc_dv_new, %other, %g_next
          : tensor<128x64xf32, #ACC_KV>, tensor<128x64xf32, #ACC_KV>, index, !cuir.group loc("flash_bwd.cu":479:5 to 479:68)
    } loc("flash_bwd.cu":479:5 to 479:68)

    // =============================== unmasked steps ===============================
    %u_dk, %u_dv, %u_stage, %u_g = scf.for %m_block = %m_unmasked_begin to %m_end step %c1
        iter_args(%acc_dk = %m_dk, %acc_dv = %m_dv, %stage = %m_stage, %g_cur = %m_g)
        -> (tensor<128x64xf32, #ACC_KV>, tensor<128x64xf32, #ACC_KV>, index, !cuir.group) {
      %other = arith.xori %stage, %c1 : index loc(callsite("stage"("flash_bwd.cu":388:59 to 388:68) at "flash_bwd.cu":484:7 to 484:26))
      %sQ_st = memref.subview %sQ[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
          : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":382:3 to 382:69) at "flash_bwd.cu":484:7 to 484:26))
      %sdO_st = memref.subview %sdO[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
          : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":383:3 to 383:71) at "flash_bwd.cu":484:7 to 484:26))
      %sLSE_st = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_lse"("flash_bwd.cu":400:56 to 400:105) at "flash_bwd.cu":484:7 to 484:26))
      %sD_st = memref.subview %sD[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_d"("flash_bwd.cu":408:54 to 408:101) at "flash_bwd.cu":484:7 to 484:26))

      cuir.wait_group %g_cur pending 0 loc(callsite("flash_bwd.cu":386:3 to 386:28 at "flash_bwd.cu":484:7 to 484:26))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":387:3 to 387:19 at "flash_bwd.cu":484:7 to 484:26))
      // next_q_step: the next query block of the head, else the first one of the next head
      %m_next = arith.addi %m_block, %c1 : index loc(callsite("flash_bwd.cu":359:7 to 359:18 at "flash_bwd.cu":485:26 to 485:74))
      %same_head = arith.cmpi slt, %m_next, %m_end : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":485:26 to 485:74))
      %head_next = arith.addi %head_q, %c1 : index loc(callsite("flash_bwd.cu":360:16 to 360:26 at "flash_bwd.cu":485:26 to 485:74))
      %next_head_q = arith.select %same_head, %head_q, %head_next : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":485:26 to 485:74))
      %next_m_block = arith.select %same_head, %m_next, %m_begin : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":485:26 to 485:74))
      %more_heads = arith.cmpi slt, %head_q, %last_head_q : index loc(callsite("flash_bwd.cu":360:43 to 360:63 at "flash_bwd.cu":485:26 to 485:74))
      %next_valid = arith.ori %same_head, %more_heads : i1 loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))
      %g_next = scf.if %next_valid -> (!cuir.group) {
        %row0 = arith.muli %next_m_block, %c64 : index loc(callsite("row0"("flash_bwd.cu":246:3 to 246:40) at "flash_bwd.cu":388:19 to 388:68))
        %q_head = memref.subview %q[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
            : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("q"("flash_bwd.cu":247:3 to 247:62) at "flash_bwd.cu":388:19 to 388:68))
        %d_o_head = memref.subview %d_o[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
            : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc(callsite("d_o"("flash_bwd.cu":249:3 to 249:66) at "flash_bwd.cu":388:19 to 388:68))
        %lse_head = memref.subview %ws_lse_log2[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:44 to 259:94) at "flash_bwd.cu":388:19 to 388:68))
        %d_head = memref.subview %ws_d[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:24 to 259:41) at "flash_bwd.cu":388:19 to 388:68))
        %sQ_o = memref.subview %sQ[%other, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":251:60 to 251:110) at "flash_bwd.cu":388:19 to 388:68))
        %sdO_o = memref.subview %sdO[%other, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xbf16, #S> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":253:60 to 253:111) at "flash_bwd.cu":388:19 to 388:68))
        %sLSE_o = memref.subview %sLSE[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %sD_o = memref.subview %sD[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %tq = cuir.copy_async cp_async %q_head[%row0, %c0] -> %sQ_o
            : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sQ"("flash_bwd.cu":251:3 to 251:84) at "flash_bwd.cu":388:19 to 388:68))
        %tdo = cuir.copy_async cp_async %d_o_head[%row0, %c0] -> %sdO_o
            : memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xbf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sdO"("flash_bwd.cu":253:3 to 253:85) at "flash_bwd.cu":388:19 to 388:68))
        %tl = cuir.copy_async cp_async %lse_head[%row0] -> %sLSE_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %td = cuir.copy_async cp_async %d_head[%row0] -> %sD_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %g = cuir.commit %tq, %tdo, %tl, %td loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":484:7 to 484:26))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))
      } else {
        %g = cuir.commit loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":484:7 to 484:26))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))
      } loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))

      // ------- S = Q K^T (unscaled) -------
      %q_row0 = arith.muli %m_block, %c64 : index loc(callsite("(q_tile * T::BLOCK_M)"("flash_bwd.cu":431:40 to 431:74) at "flash_bwd.cu":484:7 to 484:26))
      %acc_s = cuir.gemm %sQ_st, %sK transpose_b, %acc_sdp_init
          : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xbf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":395:3 to 395:71) at "flash_bwd.cu":484:7 to 484:26))

      // ------- scores_to_probs: P = exp2(S * scale * log2e - LSE * log2e) -------
      %lse_log2 = cuir.load %sLSE_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("lse_log2"("flash_bwd.cu":292:7 to 292:72) at "flash_bwd.cu":401:3 to 401:64))
      %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %neg_lse = arith.negf %lse_b : tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %logits = math.fma %acc_s, %scale_tile, %neg_lse : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:40 to 297:85) at "flash_bwd.cu":401:3 to 401:64))
      %p = math.exp2 %logits : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:11 to 297:87) at "flash_bwd.cu":401:3 to 401:64))

      // ------- dP = dO V^T; probs_to_dscores: dS = P * (dP - D) -------
      %acc_dp = cuir.gemm %sdO_st, %sV transpose_b, %acc_sdp_init
          : memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xbf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":406:3 to 406:72) at "flash_bwd.cu":484:7 to 484:26))
      %d_rows = cuir.load %sD_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("d"("flash_bwd.cu":310:7 to 310:58) at "flash_bwd.cu":409:3 to 409:59))
      %d_b = cuir.broadcast_rows %d_rows : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("d"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %ds = arith.mulf %p, %dp_minus_d : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:55 to 314:118) at "flash_bwd.cu":409:3 to 409:59))

      // ------- P and dS to shared memory (16-bit): the other warps' GEMMs read them whole -------
      %p16 = arith.truncf %p : tensor<64x128xf32, #ACC_S> to tensor<64x128xbf16, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":412:3 to 412:55) at "flash_bwd.cu":484:7 to 484:26))
      cuir.store %p16 -> %sP : tensor<64x128xbf16, #ACC_S> -> memref<64x128xbf16, #S> loc(callsite("sP"("flash_bwd.cu":412:3 to 412:48) at "flash_bwd.cu":484:7 to 484:26))
      %ds16 = arith.truncf %ds : tensor<64x128xf32, #ACC_S> to tensor<64x128xbf16, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":413:3 to 413:57) at "flash_bwd.cu":484:7 to 484:26))
      cuir.store %ds16 -> %sdS : tensor<64x128xbf16, #ACC_S> -> memref<64x128xbf16, #S> loc(callsite("sdS"("flash_bwd.cu":413:3 to 413:49) at "flash_bwd.cu":484:7 to 484:26))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":414:3 to 414:19 at "flash_bwd.cu":484:7 to 484:26))

      // ------- dV += P^T dO, dK += dS^T Q -------
      %pt = cuir.load %sP transpose : memref<64x128xbf16, #S> -> tensor<128x64xbf16, #A_KV> loc(callsite("sP"("flash_bwd.cu":417:73 to 417:114) at "flash_bwd.cu":484:7 to 484:26))
      %acc_dv_new = cuir.gemm %pt, %sdO_st, %acc_dv
          : tensor<128x64xbf16, #A_KV>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC_KV> loc(callsite("acc_dv"("flash_bwd.cu":417:3 to 417:71) at "flash_bwd.cu":484:7 to 484:26))
      %dst = cuir.load %sdS transpose : memref<64x128xbf16, #S> -> tensor<128x64xbf16, #A_KV> loc(callsite("sdS"("flash_bwd.cu":419:73 to 419:115) at "flash_bwd.cu":484:7 to 484:26))
      %acc_dk_new = cuir.gemm %dst, %sQ_st, %acc_dk
          : tensor<128x64xbf16, #A_KV>, memref<64x64xbf16, strided<[64, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC_KV> loc(callsite("acc_dk"("flash_bwd.cu":419:3 to 419:71) at "flash_bwd.cu":484:7 to 484:26))

      // ------- dQ += dS K: fp32 reductions into the workspace -------
      %acc_dq = cuir.gemm %sdS, %sK, %acc_dq_init
          : memref<64x128xbf16, #S>, memref<128x64xbf16, #S>, tensor<64x64xf32, #ACC_DQ> loc(callsite("acc_dq"("flash_bwd.cu":425:3 to 425:69) at "flash_bwd.cu":484:7 to 484:26))
      %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 64] [1, 1, 1, 1]
          : memref<?x?x?x64xf32, #G> to memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc(callsite("head_rows"("flash_bwd.cu":428:3 to 428:71) at "flash_bwd.cu":484:7 to 484:26))
      cuir.atomic_add %acc_dq -> %dq_head[%q_row0, %c0] : tensor<64x64xf32, #ACC_DQ> -> memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc(callsite("dq_tile"("flash_bwd.cu":336:7 to 336:21) at "flash_bwd.cu":431:3 to 431:95))
      scf.yield %acc_dk_new, %acc_dv_new, %other, %g_next
          : tensor<128x64xf32, #ACC_KV>, tensor<128x64xf32, #ACC_KV>, index, !cuir.group loc("flash_bwd.cu":483:5 to 483:57)
    } loc("flash_bwd.cu":483:5 to 483:57)
    scf.yield %u_dk, %u_dv, %u_stage, %u_g
        : tensor<128x64xf32, #ACC_KV>, tensor<128x64xf32, #ACC_KV>, index, !cuir.group loc("flash_bwd.cu":476:3 to 476:67)
  } loc("head_q"("flash_bwd.cu":476:3 to 476:67))
  cuir.wait_group %h_g pending 0 loc("flash_bwd.cu":488:3 to 488:28)

  // =============================== epilogue: dK * scale and dV through the K and V tiles ===============================
  cuir.barrier.sync loc("flash_bwd.cu":491:3 to 491:19)
  %scale_kv = tensor.splat %softmax_scale : tensor<128x64xf32, #ACC_KV> loc("acc_dk"("flash_bwd.cu":495:3 to 495:93))
  %dk_scaled = arith.mulf %h_dk, %scale_kv : tensor<128x64xf32, #ACC_KV> loc("acc_dk"("flash_bwd.cu":495:3 to 495:93))
  %dk16 = arith.truncf %dk_scaled : tensor<128x64xf32, #ACC_KV> to tensor<128x64xbf16, #ACC_KV> loc("acc_dk"("flash_bwd.cu":495:3 to 495:93))
  cuir.store %dk16 -> %sK : tensor<128x64xbf16, #ACC_KV> -> memref<128x64xbf16, #S> loc("sK"("flash_bwd.cu":495:3 to 495:63))
  %dv16 = arith.truncf %h_dv : tensor<128x64xf32, #ACC_KV> to tensor<128x64xbf16, #ACC_KV> loc("acc_dv"("flash_bwd.cu":497:3 to 497:76))
  cuir.store %dv16 -> %sV : tensor<128x64xbf16, #ACC_KV> -> memref<128x64xbf16, #S> loc("sV"("flash_bwd.cu":497:3 to 497:63))
  cuir.barrier.sync loc("flash_bwd.cu":498:3 to 498:19)
  %dk_head = memref.subview %dk[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("dk"("flash_bwd.cu":501:3 to 501:52))
  %dv_head = memref.subview %dv[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("dv"("flash_bwd.cu":503:3 to 503:52))
  cuir.copy %sK -> %dk_head[%key_begin, %c0] : memref<128x64xbf16, #S> -> memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("dk"("flash_bwd.cu":505:3 to 505:97))
  cuir.copy %sV -> %dv_head[%key_begin, %c0] : memref<128x64xbf16, #S> -> memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("dv"("flash_bwd.cu":507:3 to 507:97))
  cuir.return loc("flash_bwd.cu":437:5 to 437:89)
} loc("flash_bwd_sm80_kernel"("flash_bwd.cu":437:5 to 437:89))

// =============================== dQ conversion ===============================
cuir.kernel @flash_bwd_bf16_d64_convert_dq(
    %ws_dq_accum: memref<?x?x?x64xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":517:101 to 517:116)),
    %dq: memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dq"} loc("params.dq"("flash_bwd.cu":517:61 to 517:99)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":517:61 to 517:99)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":517:61 to 517:99)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":517:61 to 517:99)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":517:61 to 517:99)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":517:61 to 517:99)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":517:61 to 517:99)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 64, hq, b)
    threads 256 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index loc("BLOCK_M")
  %staged = cuir.alloc : memref<64x64xbf16, #S> loc("staged"("flash_bwd.cu":522:3 to 522:69))
  %m_block = cuir.block_id x loc("m_block"("flash_bwd.cu":523:13 to 523:33))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":523:35 to 523:54))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":523:56 to 523:74))
  %row0 = arith.muli %m_block, %c64 : index loc("row"("flash_bwd.cu":525:60 to 525:80))
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %rows = arith.muli %m_blocks, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %tile = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf32, #G> to memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("tile"("flash_bwd.cu":524:3 to 524:56))
  %dq_head = memref.subview %dq[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xbf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":540:3 to 540:52))
  %zero_tile = arith.constant dense<0.0> : tensor<64x64xf32, #ACC_P> loc("acc"("flash_bwd.cu":535:5 to 535:33))
  %acc = cuir.elementwise (%zero_tile) at [%b, %head_q, %row0, %c0]
      : (tensor<64x64xf32, #ACC_P>) -> tensor<64x64xf32, #ACC_P> {
  ^bb0(%x: f32 loc("acc"("flash_bwd.cu":535:5 to 535:33)), %bi: index loc("batch"("flash_bwd.cu":523:56 to 523:74)), %hi: index loc("head_q"("flash_bwd.cu":523:35 to 523:54)), %row: index loc("row"("flash_bwd.cu":533:5 to 533:58)), %col: index loc("col"("flash_bwd.cu":534:5 to 534:73))):
    %a = memref.load %tile[%row, %col] : memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("acc"("flash_bwd.cu":535:24 to 535:32))
    cuir.yield %a : f32 loc("acc"("flash_bwd.cu":535:5 to 535:33))
  } loc("acc"("flash_bwd.cu":535:5 to 535:33))
  %s_tile = tensor.splat %softmax_scale : tensor<64x64xf32, #ACC_P> loc("s"("flash_bwd.cu":526:3 to 526:40))
  %dq_f = arith.mulf %acc, %s_tile : tensor<64x64xf32, #ACC_P> loc("dq"("flash_bwd.cu":536:91 to 536:100))
  %dq16 = arith.truncf %dq_f : tensor<64x64xf32, #ACC_P> to tensor<64x64xbf16, #ACC_P> loc("dq"("flash_bwd.cu":536:70 to 536:112))
  cuir.store %dq16 -> %staged[%c0, %c0] : tensor<64x64xbf16, #ACC_P> -> memref<64x64xbf16, #S> loc("staged"("flash_bwd.cu":536:70 to 536:112))
  cuir.barrier.sync loc("flash_bwd.cu":539:3 to 539:19)
  cuir.copy %staged -> %dq_head[%row0, %c0] : memref<64x64xbf16, #S> -> memref<?x64xbf16, strided<[?, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":545:7 to 545:103))
  cuir.return loc("flash_bwd.cu":517:40 to 517:117)
} loc("flash_bwd_convert_dq"("flash_bwd.cu":517:40 to 517:117))
cuir.launch_sequence @flash_bwd_f16_d128 [@flash_bwd_f16_d128_preprocess, @flash_bwd_f16_d128_kernel, @flash_bwd_f16_d128_convert_dq] loc("launch_flash_bwd"("flash_bwd.cu":554:20 to 554:98))

// =============================== preprocess ===============================
cuir.kernel @flash_bwd_f16_d128_preprocess(
    %o: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_bwd.cu":141:61 to 141:99)),
    %d_o: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":141:61 to 141:99)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_bwd.cu":141:61 to 141:99)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":141:101 to 141:116)),
    %ws_d: memref<?x?x?xf32, #G> {cuir.arg = "workspace:d", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.d_rows"("flash_bwd.cu":141:101 to 141:116)),
    %ws_dq_accum: memref<?x?x?x128xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":141:101 to 141:116)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":141:61 to 141:99)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":141:61 to 141:99)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":141:61 to 141:99)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":141:61 to 141:99)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":141:61 to 141:99)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 64, hq, b)
    threads 256 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index loc("BLOCK_M")
  %ninf = arith.constant 0xFF800000 : f32 loc("kInf"("flash_bwd.cu":172:64 to 172:69))
  %m_block = cuir.block_id x loc("m_block"("flash_bwd.cu":146:13 to 146:33))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":146:35 to 146:54))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":146:56 to 146:74))
  %row0 = arith.muli %m_block, %c64 : index loc("row"("flash_bwd.cu":155:21 to 155:38))
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %rows = arith.muli %m_blocks, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("o"("flash_bwd.cu":148:3 to 148:22))
  %d_o_head = memref.subview %d_o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("d_o"("flash_bwd.cu":150:3 to 150:24))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse"("flash_bwd.cu":152:3 to 152:32))
  %lse_log2_head = memref.subview %ws_lse_log2[%b, %head_q, 0] [1, 1, %rows] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("head_rows"("flash_bwd.cu":147:3 to 147:65))
  %d_head = memref.subview %ws_d[%b, %head_q, 0] [1, 1, %rows] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("head_rows"("flash_bwd.cu":147:3 to 147:65))
  %dq_accum_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf32, #G> to memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("dq_accum"("flash_bwd.cu":177:3 to 177:48))

  // ---- D = rowsum(dO * O): rows past seqlen_q give 0 ----
  %zero_tile = arith.constant dense<0.0> : tensor<64x128xf32, #ACC_P> loc("dot"("flash_bwd.cu":157:5 to 157:21))
  %prod = cuir.elementwise (%zero_tile) at [%b, %head_q, %row0, %c0]
      : (tensor<64x128xf32, #ACC_P>) -> tensor<64x128xf32, #ACC_P> {
  ^bb0(%x: f32 loc("dot"("flash_bwd.cu":157:5 to 157:21)), %bi: index loc("batch"("flash_bwd.cu":146:56 to 146:74)), %hi: index loc("head_q"("flash_bwd.cu":146:35 to 146:54)), %row: index loc("row"("flash_bwd.cu":155:5 to 155:85)), %col: index loc("chunk"("flash_bwd.cu":156:5 to 156:44))):
    %in = arith.cmpi slt, %row, %seqlen_q : index loc("flash_bwd.cu":158:5 to 158:31)
    %row_c = arith.select %in, %row, %c0 : index loc("flash_bwd.cu":158:5 to 158:31)
    %ov = memref.load %o_head[%row_c, %col] : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("o8"("flash_bwd.cu":159:7 to 159:100))
    %dov = memref.load %d_o_head[%row_c, %col] : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("do8"("flash_bwd.cu":160:7 to 160:104))
    %of = arith.extf %ov : f16 to f32 loc("of"("flash_bwd.cu":164:22 to 164:61))
    %df = arith.extf %dov : f16 to f32 loc("df"("flash_bwd.cu":164:63 to 164:103))
    %p = arith.mulf %of, %df : f32 loc("dot"("flash_bwd.cu":165:9 to 165:55))
    %r = arith.select %in, %p, %x : f32 loc("flash_bwd.cu":158:5 to 158:31)
    cuir.yield %r : f32 loc("dot"("flash_bwd.cu":165:9 to 165:55))
  } loc("dot"("flash_bwd.cu":165:9 to 165:55))
  %dot = cuir.reduce_rows sum %prod : tensor<64x128xf32, #ACC_P> -> tensor<64xf32, #ROW_P> loc("dot"("flash_bwd.cu":169:68 to 169:117))

  // ---- LSE * log2e: a row that sees no key (LSE = -inf) and a padded row get +inf ----
  %lse_tile = cuir.elementwise (%zero_tile) at [%b, %head_q, %row0, %c0]
      : (tensor<64x128xf32, #ACC_P>) -> tensor<64x128xf32, #ACC_P> {
  ^bb0(%x: f32 loc("row_lse"("flash_bwd.cu":172:7 to 172:26)), %bi: index loc("batch"("flash_bwd.cu":146:56 to 146:74)), %hi: index loc("head_q"("flash_bwd.cu":146:35 to 146:54)), %row: index loc("row"("flash_bwd.cu":155:5 to 155:85)), %col: index loc("chunk"("flash_bwd.cu":156:5 to 156:44))):
    %in = arith.cmpi slt, %row, %seqlen_q : index loc("row_lse"("flash_bwd.cu":172:29 to 172:69))
    %row_c = arith.select %in, %row, %c0 : index loc("row_lse"("flash_bwd.cu":172:29 to 172:69))
    %l = memref.load %lse_head[%row_c] : memref<?xf32, strided<[1], offset: ?>, #G> loc("row_lse"("flash_bwd.cu":172:53 to 172:61))
    %r = arith.select %in, %l, %ninf : f32 loc("row_lse"("flash_bwd.cu":172:7 to 172:70))
    cuir.yield %r : f32 loc("row_lse"("flash_bwd.cu":172:7 to 172:70))
  } loc("row_lse"("flash_bwd.cu":172:7 to 172:70))
  %row_lse = cuir.reduce_rows max %lse_tile : tensor<64x128xf32, #ACC_P> -> tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":172:7 to 172:26))
  %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:54))
  %pinf_row = arith.constant dense<0x7F800000> : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:80))
  %log2e_row = arith.constant dense<1.44269502> : tensor<64xf32, #ROW_P> loc("kLog2e"("flash_bwd.cu":173:64 to 173:80))
  %sees_none = arith.cmpf oeq, %row_lse, %ninf_row : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:54))
  %lse_scaled = arith.mulf %row_lse, %log2e_row : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:64 to 173:80))
  %lse_log2 = arith.select %sees_none, %pinf_row, %lse_scaled : tensor<64xi1, #ROW_P>, tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:80))
  cuir.store %lse_log2 -> %lse_log2_head[%row0] : tensor<64xf32, #ROW_P> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.lse_log2"("flash_bwd.cu":173:7 to 173:81))
  cuir.store %dot -> %d_head[%row0] : tensor<64xf32, #ROW_P> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.d_rows"("flash_bwd.cu":174:7 to 174:40))

  // ---- the dQ accumulator of this query tile, zeroed ----
  cuir.store %zero_tile -> %dq_accum_head[%row0, %c0] : tensor<64x128xf32, #ACC_P> -> memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("dq_accum"("flash_bwd.cu":178:59 to 178:105))
  cuir.return loc("flash_bwd.cu":141:40 to 141:117)
} loc("flash_bwd_preprocess"("flash_bwd.cu":141:40 to 141:117))

// =============================== main kernel ===============================
cuir.kernel @flash_bwd_f16_d128_kernel(
    %q: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_bwd.cu":437:27 to 437:88)),
    %k: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_bwd.cu":437:27 to 437:88)),
    %v: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_bwd.cu":437:27 to 437:88)),
    %d_o: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":437:27 to 437:88)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":437:67 to 437:88)),
    %ws_d: memref<?x?x?xf32, #G> {cuir.arg = "workspace:d", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.d_rows"("flash_bwd.cu":437:67 to 437:88)),
    %ws_dq_accum: memref<?x?x?x128xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":437:67 to 437:88)),
    %dk: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dk"} loc("params.dk"("flash_bwd.cu":437:27 to 437:88)),
    %dv: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dv"} loc("params.dv"("flash_bwd.cu":437:27 to 437:88)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":437:27 to 437:88)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_bwd.cu":435:1 to 435:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":437:27 to 437:88)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":437:27 to 437:88)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":437:27 to 437:88)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":437:27 to 437:88)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":437:27 to 437:88)))
    grid (b, hq, hkv, nq, nkv) -> (nkv ceildiv 128, hkv, b)
    threads 256 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index loc("BLOCK_M")
  %c128 = arith.constant 128 : index loc("BLOCK_N")
  %ninf = arith.constant 0xFF800000 : f32 loc("kInf"("flash_bwd.cu":279:81 to 279:86))

  // ---- block coordinates, GQA group, sequence views ----
  // The block ids are the block's (KV block, KV head, batch); the order the
  // launch deals them in (the KV block slowest under the causal mask with GQA:
  // kv_block_slowest) computes the same outputs.
  %n_block = cuir.block_id x loc("block.n_block"("flash_bwd.cu":443:3 to 443:58))
  %head_kv = cuir.block_id y loc("block.head_kv"("flash_bwd.cu":443:3 to 443:58))
  %b = cuir.block_id z loc("bwd_block_index<T>(params).batch"("flash_bwd.cu":443:3 to 443:58))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("last_key_offset"("flash_bwd.cu":447:43 to 447:70))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("last_key_offset"("flash_bwd.cu":447:13 to 447:82))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("group"("flash_bwd.cu":448:13 to 448:61))
  %first_head_q = arith.muli %head_kv, %group : index loc("first_head_q"("flash_bwd.cu":449:13 to 449:49))
  %head_q_end = arith.addi %first_head_q, %group : index loc("last_head_q"("flash_bwd.cu":449:51 to 449:89))
  %last_head_q = arith.subi %head_q_end, %c1 : index loc("last_head_q"("flash_bwd.cu":449:51 to 449:89))
  %key_begin = arith.muli %n_block, %c128 : index loc("(bwd_block_index<T>(params).n_block * T::BLOCK_N)"("flash_bwd.cu":450:13 to 450:51))
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %rows = arith.muli %m_blocks, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("k"("flash_bwd.cu":457:3 to 457:62))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("v"("flash_bwd.cu":459:3 to 459:62))

  // ---- q_block_range: the query blocks [m_begin, m_end) this KV block visits, [m_begin, m_unmasked_begin) masked ----
  %m_end = arith.ceildivui %seqlen_q, %c64 : index loc(callsite("m_end"("flash_bwd.cu":224:3 to 224:56) at "flash_bwd.cu":454:43 to 454:84))
  %key_end = arith.addi %key_begin, %c128 : index loc(callsite("ragged"("flash_bwd.cu":226:23 to 226:57) at "flash_bwd.cu":454:43 to 454:84))
  %ragged = arith.cmpi sgt, %key_end, %seqlen_kv : index loc(callsite("ragged"("flash_bwd.cu":226:3 to 226:58) at "flash_bwd.cu":454:43 to 454:84))
  %unm_full = arith.select %ragged, %m_end, %c0 : index loc(callsite("r"("flash_bwd.cu":227:20 to 227:38) at "flash_bwd.cu":454:43 to 454:84))
  %first_row = arith.subi %key_begin, %causal_offset : index loc(callsite("first_row"("flash_bwd.cu":230:5 to 230:53) at "flash_bwd.cu":454:43 to 454:84))
  %key_end_c = arith.minsi %key_end, %seqlen_kv : index loc(callsite("last_key"("flash_bwd.cu":231:26 to 231:64) at "flash_bwd.cu":454:43 to 454:84))
  %last_key = arith.subi %key_end_c, %c1 : index loc(callsite("last_key"("flash_bwd.cu":231:5 to 231:69) at "flash_bwd.cu":454:43 to 454:84))
  %full_row = arith.subi %last_key, %causal_offset : index loc(callsite("full_row"("flash_bwd.cu":232:5 to 232:51) at "flash_bwd.cu":454:43 to 454:84))
  %fr_none = arith.cmpi sle, %first_row, %c0 : index loc(callsite("r.m_begin"("flash_bwd.cu":233:17 to 233:31) at "flash_bwd.cu":454:43 to 454:84))
  %fr_blk = arith.divsi %first_row, %c64 : index loc(callsite("r.m_begin"("flash_bwd.cu":233:49 to 233:68) at "flash_bwd.cu":454:43 to 454:84))
  %fr_min = arith.minsi %m_end, %fr_blk : index loc(callsite("r.m_begin"("flash_bwd.cu":233:38 to 233:69) at "flash_bwd.cu":454:43 to 454:84))
  %m_begin_c = arith.select %fr_none, %c0, %fr_min : index loc(callsite("r.m_begin"("flash_bwd.cu":233:5 to 233:70) at "flash_bwd.cu":454:43 to 454:84))
  %fu_none = arith.cmpi sle, %full_row, %c0 : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:50 to 234:63) at "flash_bwd.cu":454:43 to 454:84))
  %fu_blk = arith.ceildivsi %full_row, %c64 : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:81 to 234:115) at "flash_bwd.cu":454:43 to 454:84))
  %fu_min = arith.minsi %m_end, %fu_blk : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:70 to 234:116) at "flash_bwd.cu":454:43 to 454:84))
  %fu_sel = arith.select %fu_none, %c0, %fu_min : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:50 to 234:116) at "flash_bwd.cu":454:43 to 454:84))
  %unm_c = arith.maxsi %unm_full, %fu_sel : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:5 to 234:63) at "flash_bwd.cu":454:43 to 454:84))
  %m_begin = arith.select %causal, %m_begin_c, %c0 : index loc(callsite("r.m_begin"("flash_bwd.cu":228:3 to 228:27) at "flash_bwd.cu":454:43 to 454:84))
  %unm_sel = arith.select %causal, %unm_c, %unm_full : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":228:3 to 228:27) at "flash_bwd.cu":454:43 to 454:84))
  %m_unmasked_begin = arith.maxsi %unm_sel, %m_begin : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":236:3 to 236:59) at "flash_bwd.cu":454:43 to 454:84))

  // ---- shared memory (FlashBwdTraits), 16-bit tiles swizzled ----
  %sK = cuir.alloc {swizzle = 128} : memref<128x128xf16, #S> loc("sK"("flash_bwd.cu":78:29 to 78:42))
  %sV = cuir.alloc {swizzle = 128} : memref<128x128xf16, #S> loc("sV"("flash_bwd.cu":79:29 to 79:66))
  %sQ = cuir.alloc {swizzle = 128} : memref<2x64x128xf16, #S> loc("sQ"("flash_bwd.cu":80:29 to 80:66))
  %sdO = cuir.alloc {swizzle = 128} : memref<2x64x128xf16, #S> loc("sdO"("flash_bwd.cu":81:29 to 81:77))
  %sP = cuir.alloc {swizzle = 128} : memref<64x128xf16, #S> loc("sP"("flash_bwd.cu":82:29 to 82:77))
  %sdS = cuir.alloc {swizzle = 128} : memref<64x128xf16, #S> loc("sdS"("flash_bwd.cu":83:29 to 83:68))
  %sLSE = cuir.alloc : memref<2x64xf32, #S> loc("sLSE"("flash_bwd.cu":84:29 to 84:70))
  %sD = cuir.alloc : memref<2x64xf32, #S> loc("sD"("flash_bwd.cu":85:29 to 85:80))

  // ---- prologue: K, V and the first step's tiles, one group ----
  %has_steps = arith.cmpi slt, %m_begin, %m_end : index loc("flash_bwd.cu":465:3 to 465:35)
  // K and V are issued before the branch in the source; both branches issue them here (one group each).
  %g_first = scf.if %has_steps -> (!cuir.group) {
    %tk = cuir.copy_async cp_async %k_head[%key_begin, %c0] -> %sK
        : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xf16, #S> -> !cuir.token loc("sK"("flash_bwd.cu":461:3 to 461:81))
    %tv = cuir.copy_async cp_async %v_head[%key_begin, %c0] -> %sV
        : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xf16, #S> -> !cuir.token loc("sV"("flash_bwd.cu":463:3 to 463:81))
    %row0 = arith.muli %m_begin, %c64 : index loc(callsite("row0"("flash_bwd.cu":246:3 to 246:40) at "flash_bwd.cu":466:5 to 466:65))
    %q_head = memref.subview %q[%b, 0, %first_head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
        : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("q"("flash_bwd.cu":247:3 to 247:62) at "flash_bwd.cu":466:5 to 466:65))
    %d_o_head = memref.subview %d_o[%b, 0, %first_head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
        : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("d_o"("flash_bwd.cu":249:3 to 249:66) at "flash_bwd.cu":466:5 to 466:65))
    %lse_head = memref.subview %ws_lse_log2[%b, %first_head_q, 0] [1, 1, %rows] [1, 1, 1]
        : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:44 to 259:94) at "flash_bwd.cu":466:5 to 466:65))
    %d_head = memref.subview %ws_d[%b, %first_head_q, 0] [1, 1, %rows] [1, 1, 1]
        : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:24 to 259:41) at "flash_bwd.cu":466:5 to 466:65))
    %sQ0 = memref.subview %sQ[0, 0, 0] [1, 64, 128] [1, 1, 1]
        : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1]>, #S> loc(callsite("sQ"("flash_bwd.cu":251:60 to 251:110) at "flash_bwd.cu":466:5 to 466:65))
    %sdO0 = memref.subview %sdO[0, 0, 0] [1, 64, 128] [1, 1, 1]
        : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1]>, #S> loc(callsite("sdO"("flash_bwd.cu":253:60 to 253:111) at "flash_bwd.cu":466:5 to 466:65))
    %sLSE0 = memref.subview %sLSE[0, 0] [1, 64] [1, 1]
        : memref<2x64xf32, #S> to memref<64xf32, strided<[1]>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":466:5 to 466:65))
    %sD0 = memref.subview %sD[0, 0] [1, 64] [1, 1]
        : memref<2x64xf32, #S> to memref<64xf32, strided<[1]>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":466:5 to 466:65))
    %tq = cuir.copy_async cp_async %q_head[%row0, %c0] -> %sQ0
        : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1]>, #S> -> !cuir.token loc(callsite("sQ"("flash_bwd.cu":251:3 to 251:84) at "flash_bwd.cu":466:5 to 466:65))
    %tdo = cuir.copy_async cp_async %d_o_head[%row0, %c0] -> %sdO0
        : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1]>, #S> -> !cuir.token loc(callsite("sdO"("flash_bwd.cu":253:3 to 253:85) at "flash_bwd.cu":466:5 to 466:65))
    %tl = cuir.copy_async cp_async %lse_head[%row0] -> %sLSE0
        : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1]>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":466:5 to 466:65))
    %td = cuir.copy_async cp_async %d_head[%row0] -> %sD0
        : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1]>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":466:5 to 466:65))
    %g = cuir.commit %tk, %tv, %tq, %tdo, %tl, %td loc("flash_bwd.cu":467:3 to 467:27)
    scf.yield %g : !cuir.group loc("flash_bwd.cu":465:3 to 465:35)
  } else {
    %tk = cuir.copy_async cp_async %k_head[%key_begin, %c0] -> %sK
        : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xf16, #S> -> !cuir.token loc("sK"("flash_bwd.cu":461:3 to 461:81))
    %tv = cuir.copy_async cp_async %v_head[%key_begin, %c0] -> %sV
        : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x128xf16, #S> -> !cuir.token loc("sV"("flash_bwd.cu":463:3 to 463:81))
    %g = cuir.commit %tk, %tv loc("flash_bwd.cu":467:3 to 467:27)
    scf.yield %g : !cuir.group loc("flash_bwd.cu":465:3 to 465:35)
  } loc("flash_bwd.cu":465:3 to 465:35)

  // ---- dK, dV accumulators (registers), the probability scale ----
  %acc_kv_init = arith.constant dense<0.0> : tensor<128x128xf32, #ACC_KV> loc("acc_dk"("flash_bwd.cu":471:3 to 471:20))
  %acc_sdp_init = arith.constant dense<0.0> : tensor<64x128xf32, #ACC_S> loc("acc_s"("flash_bwd.cu":394:3 to 394:19))
  %acc_dq_init = arith.constant dense<0.0> : tensor<64x128xf32, #ACC_DQ> loc("acc_dq"("flash_bwd.cu":424:3 to 424:20))
  %log2e = arith.constant 1.44269502 : f32 loc("scale_log2"("flash_bwd.cu":473:15 to 473:57))
  %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("scale_log2"("flash_bwd.cu":473:15 to 473:57))
  %scale_tile = tensor.splat %scale_log2 : tensor<64x128xf32, #ACC_S> loc("scale_log2"("flash_bwd.cu":473:15 to 473:57))

  // =============================== the query heads of the group ===============================
  %h_dk, %h_dv, %h_stage, %h_g = scf.for %head_q = %first_head_q to %head_q_end step %c1
      iter_args(%dk_h = %acc_kv_init, %dv_h = %acc_kv_init, %stage_h = %c0, %g_h = %g_first)
      -> (tensor<128x128xf32, #ACC_KV>, tensor<128x128xf32, #ACC_KV>, index, !cuir.group) {

    // =============================== masking steps ===============================
    %m_dk, %m_dv, %m_stage, %m_g = scf.for %m_block = %m_begin to %m_unmasked_begin step %c1
        iter_args(%acc_dk = %dk_h, %acc_dv = %dv_h, %stage = %stage_h, %g_cur = %g_h)
        -> (tensor<128x128xf32, #ACC_KV>, tensor<128x128xf32, #ACC_KV>, index, !cuir.group) {
      %other = arith.xori %stage, %c1 : index loc(callsite("stage"("flash_bwd.cu":388:59 to 388:68) at "flash_bwd.cu":480:7 to 480:25))
      %sQ_st = memref.subview %sQ[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":382:3 to 382:69) at "flash_bwd.cu":480:7 to 480:25))
      %sdO_st = memref.subview %sdO[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":383:3 to 383:71) at "flash_bwd.cu":480:7 to 480:25))
      %sLSE_st = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_lse"("flash_bwd.cu":400:56 to 400:105) at "flash_bwd.cu":480:7 to 480:25))
      %sD_st = memref.subview %sD[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_d"("flash_bwd.cu":408:54 to 408:101) at "flash_bwd.cu":480:7 to 480:25))

      cuir.wait_group %g_cur pending 0 loc(callsite("flash_bwd.cu":386:3 to 386:28 at "flash_bwd.cu":480:7 to 480:25))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":387:3 to 387:19 at "flash_bwd.cu":480:7 to 480:25))
      // next_q_step: the next query block of the head, else the first one of the next head
      %m_next = arith.addi %m_block, %c1 : index loc(callsite("flash_bwd.cu":359:7 to 359:18 at "flash_bwd.cu":480:72 to 480:120))
      %same_head = arith.cmpi slt, %m_next, %m_end : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":480:72 to 480:120))
      %head_next = arith.addi %head_q, %c1 : index loc(callsite("flash_bwd.cu":360:16 to 360:26 at "flash_bwd.cu":480:72 to 480:120))
      %next_head_q = arith.select %same_head, %head_q, %head_next : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":480:72 to 480:120))
      %next_m_block = arith.select %same_head, %m_next, %m_begin : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":480:72 to 480:120))
      %more_heads = arith.cmpi slt, %head_q, %last_head_q : index loc(callsite("flash_bwd.cu":360:43 to 360:63 at "flash_bwd.cu":480:72 to 480:120))
      %next_valid = arith.ori %same_head, %more_heads : i1 loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))
      %g_next = scf.if %next_valid -> (!cuir.group) {
        %row0 = arith.muli %next_m_block, %c64 : index loc(callsite("row0"("flash_bwd.cu":246:3 to 246:40) at "flash_bwd.cu":388:19 to 388:68))
        %q_head = memref.subview %q[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
            : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("q"("flash_bwd.cu":247:3 to 247:62) at "flash_bwd.cu":388:19 to 388:68))
        %d_o_head = memref.subview %d_o[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
            : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("d_o"("flash_bwd.cu":249:3 to 249:66) at "flash_bwd.cu":388:19 to 388:68))
        %lse_head = memref.subview %ws_lse_log2[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:44 to 259:94) at "flash_bwd.cu":388:19 to 388:68))
        %d_head = memref.subview %ws_d[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:24 to 259:41) at "flash_bwd.cu":388:19 to 388:68))
        %sQ_o = memref.subview %sQ[%other, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":251:60 to 251:110) at "flash_bwd.cu":388:19 to 388:68))
        %sdO_o = memref.subview %sdO[%other, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":253:60 to 253:111) at "flash_bwd.cu":388:19 to 388:68))
        %sLSE_o = memref.subview %sLSE[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %sD_o = memref.subview %sD[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %tq = cuir.copy_async cp_async %q_head[%row0, %c0] -> %sQ_o
            : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sQ"("flash_bwd.cu":251:3 to 251:84) at "flash_bwd.cu":388:19 to 388:68))
        %tdo = cuir.copy_async cp_async %d_o_head[%row0, %c0] -> %sdO_o
            : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sdO"("flash_bwd.cu":253:3 to 253:85) at "flash_bwd.cu":388:19 to 388:68))
        %tl = cuir.copy_async cp_async %lse_head[%row0] -> %sLSE_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %td = cuir.copy_async cp_async %d_head[%row0] -> %sD_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %g = cuir.commit %tq, %tdo, %tl, %td loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":480:7 to 480:25))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))
      } else {
        %g = cuir.commit loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":480:7 to 480:25))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))
      } loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))

      // ------- S = Q K^T (unscaled) -------
      %q_row0 = arith.muli %m_block, %c64 : index loc(callsite("(q_tile * T::BLOCK_M)"("flash_bwd.cu":431:40 to 431:74) at "flash_bwd.cu":480:7 to 480:25))
      %acc_s = cuir.gemm %sQ_st, %sK transpose_b, %acc_sdp_init
          : memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":395:3 to 395:71) at "flash_bwd.cu":480:7 to 480:25))

      // ------- the mask of a masking step: -inf where key >= seqlen_kv or key > row + last_key_offset -------
      %kv0 = arith.muli %n_block, %c128 : index loc(callsite("key_base"("flash_bwd.cu":398:58 to 398:105) at "flash_bwd.cu":480:7 to 480:25))
      %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_row0, %kv0]
          : (tensor<64x128xf32, #ACC_S>) -> tensor<64x128xf32, #ACC_S> {
      ^bb0(%x: f32 loc("acc_s"("flash_bwd.cu":279:62 to 279:86)), %bi: index loc(callsite("block.batch"("flash_bwd.cu":398:5 to 398:24) at "flash_bwd.cu":480:7 to 480:25)), %hi: index loc(callsite("head_q"("flash_bwd.cu":398:5 to 398:24) at "flash_bwd.cu":480:7 to 480:25)), %row: index loc("row"("flash_bwd.cu":277:9 to 277:69)), %key: index loc("key"("flash_bwd.cu":278:9 to 278:68))):
        %past_end = arith.cmpi sge, %key, %seqlen_kv : index loc(callsite("flash_bwd.cu":279:13 to 279:29 at "flash_bwd.cu":398:5 to 398:24))
        %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_bwd.cu":279:39 to 279:60 at "flash_bwd.cu":398:5 to 398:24))
        %past_diag = arith.cmpi sgt, %key, %row_last : index loc(callsite("flash_bwd.cu":279:33 to 279:60 at "flash_bwd.cu":398:5 to 398:24))
        %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_bwd.cu":279:9 to 279:29 at "flash_bwd.cu":398:5 to 398:24))
        %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_bwd.cu":279:62 to 279:86) at "flash_bwd.cu":398:5 to 398:24))
        cuir.yield %r : f32 loc(callsite("flash_bwd.cu":398:5 to 398:24 at "flash_bwd.cu":480:7 to 480:25))
      } loc(callsite("acc_s"("flash_bwd.cu":398:5 to 398:24) at "flash_bwd.cu":480:7 to 480:25))

      // ------- scores_to_probs: P = exp2(S * scale * log2e - LSE * log2e) -------
      %lse_log2 = cuir.load %sLSE_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("lse_log2"("flash_bwd.cu":292:7 to 292:72) at "flash_bwd.cu":401:3 to 401:64))
      %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %neg_lse = arith.negf %lse_b : tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %logits = math.fma %acc_s_masked, %scale_tile, %neg_lse : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:40 to 297:85) at "flash_bwd.cu":401:3 to 401:64))
      %p = math.exp2 %logits : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:11 to 297:87) at "flash_bwd.cu":401:3 to 401:64))

      // ------- dP = dO V^T; probs_to_dscores: dS = P * (dP - D) -------
      %acc_dp = cuir.gemm %sdO_st, %sV transpose_b, %acc_sdp_init
          : memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":406:3 to 406:72) at "flash_bwd.cu":480:7 to 480:25))
      %d_rows = cuir.load %sD_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("d"("flash_bwd.cu":310:7 to 310:58) at "flash_bwd.cu":409:3 to 409:59))
      %d_b = cuir.broadcast_rows %d_rows : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("d"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %ds = arith.mulf %p, %dp_minus_d : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:55 to 314:118) at "flash_bwd.cu":409:3 to 409:59))

      // ------- P and dS to shared memory (16-bit): the other warps' GEMMs read them whole -------
      %p16 = arith.truncf %p : tensor<64x128xf32, #ACC_S> to tensor<64x128xf16, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":412:3 to 412:55) at "flash_bwd.cu":480:7 to 480:25))
      cuir.store %p16 -> %sP : tensor<64x128xf16, #ACC_S> -> memref<64x128xf16, #S> loc(callsite("sP"("flash_bwd.cu":412:3 to 412:48) at "flash_bwd.cu":480:7 to 480:25))
      %ds16 = arith.truncf %ds : tensor<64x128xf32, #ACC_S> to tensor<64x128xf16, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":413:3 to 413:57) at "flash_bwd.cu":480:7 to 480:25))
      cuir.store %ds16 -> %sdS : tensor<64x128xf16, #ACC_S> -> memref<64x128xf16, #S> loc(callsite("sdS"("flash_bwd.cu":413:3 to 413:49) at "flash_bwd.cu":480:7 to 480:25))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":414:3 to 414:19 at "flash_bwd.cu":480:7 to 480:25))

      // ------- dV += P^T dO, dK += dS^T Q -------
      %pt = cuir.load %sP transpose : memref<64x128xf16, #S> -> tensor<128x64xf16, #A_KV> loc(callsite("sP"("flash_bwd.cu":417:73 to 417:114) at "flash_bwd.cu":480:7 to 480:25))
      %acc_dv_new = cuir.gemm %pt, %sdO_st, %acc_dv
          : tensor<128x64xf16, #A_KV>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC_KV> loc(callsite("acc_dv"("flash_bwd.cu":417:3 to 417:71) at "flash_bwd.cu":480:7 to 480:25))
      %dst = cuir.load %sdS transpose : memref<64x128xf16, #S> -> tensor<128x64xf16, #A_KV> loc(callsite("sdS"("flash_bwd.cu":419:73 to 419:115) at "flash_bwd.cu":480:7 to 480:25))
      %acc_dk_new = cuir.gemm %dst, %sQ_st, %acc_dk
          : tensor<128x64xf16, #A_KV>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC_KV> loc(callsite("acc_dk"("flash_bwd.cu":419:3 to 419:71) at "flash_bwd.cu":480:7 to 480:25))

      // ------- dQ += dS K: fp32 reductions into the workspace -------
      %acc_dq = cuir.gemm %sdS, %sK, %acc_dq_init
          : memref<64x128xf16, #S>, memref<128x128xf16, #S>, tensor<64x128xf32, #ACC_DQ> loc(callsite("acc_dq"("flash_bwd.cu":425:3 to 425:69) at "flash_bwd.cu":480:7 to 480:25))
      %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 128] [1, 1, 1, 1]
          : memref<?x?x?x128xf32, #G> to memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc(callsite("head_rows"("flash_bwd.cu":428:3 to 428:71) at "flash_bwd.cu":480:7 to 480:25))
      cuir.atomic_add %acc_dq -> %dq_head[%q_row0, %c0] : tensor<64x128xf32, #ACC_DQ> -> memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc(callsite("dq_tile"("flash_bwd.cu":336:7 to 336:21) at "flash_bwd.cu":431:3 to 431:95))
      scf.yield %acc_dk_new, %acc_dv_new, %other, %g_next
          : tensor<128x128xf32, #ACC_KV>, tensor<128x128xf32, #ACC_KV>, index, !cuir.group loc("flash_bwd.cu":479:5 to 479:68)
    } loc("flash_bwd.cu":479:5 to 479:68)

    // =============================== unmasked steps ===============================
    %u_dk, %u_dv, %u_stage, %u_g = scf.for %m_block = %m_unmasked_begin to %m_end step %c1
        iter_args(%acc_dk = %m_dk, %acc_dv = %m_dv, %stage = %m_stage, %g_cur = %m_g)
        -> (tensor<128x128xf32, #ACC_KV>, tensor<128x128xf32, #ACC_KV>, index, !cuir.group) {
      %other = arith.xori %stage, %c1 : index loc(callsite("stage"("flash_bwd.cu":388:59 to 388:68) at "flash_bwd.cu":484:7 to 484:26))
      %sQ_st = memref.subview %sQ[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":382:3 to 382:69) at "flash_bwd.cu":484:7 to 484:26))
      %sdO_st = memref.subview %sdO[%stage, 0, 0] [1, 64, 128] [1, 1, 1]
          : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":383:3 to 383:71) at "flash_bwd.cu":484:7 to 484:26))
      %sLSE_st = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_lse"("flash_bwd.cu":400:56 to 400:105) at "flash_bwd.cu":484:7 to 484:26))
      %sD_st = memref.subview %sD[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_d"("flash_bwd.cu":408:54 to 408:101) at "flash_bwd.cu":484:7 to 484:26))

      cuir.wait_group %g_cur pending 0 loc(callsite("flash_bwd.cu":386:3 to 386:28 at "flash_bwd.cu":484:7 to 484:26))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":387:3 to 387:19 at "flash_bwd.cu":484:7 to 484:26))
      // next_q_step: the next query block of the head, else the first one of the next head
      %m_next = arith.addi %m_block, %c1 : index loc(callsite("flash_bwd.cu":359:7 to 359:18 at "flash_bwd.cu":485:26 to 485:74))
      %same_head = arith.cmpi slt, %m_next, %m_end : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":485:26 to 485:74))
      %head_next = arith.addi %head_q, %c1 : index loc(callsite("flash_bwd.cu":360:16 to 360:26 at "flash_bwd.cu":485:26 to 485:74))
      %next_head_q = arith.select %same_head, %head_q, %head_next : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":485:26 to 485:74))
      %next_m_block = arith.select %same_head, %m_next, %m_begin : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":485:26 to 485:74))
      %more_heads = arith.cmpi slt, %head_q, %last_head_q : index loc(callsite("flash_bwd.cu":360:43 to 360:63 at "flash_bwd.cu":485:26 to 485:74))
      %next_valid = arith.ori %same_head, %more_heads : i1 loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))
      %g_next = scf.if %next_valid -> (!cuir.group) {
        %row0 = arith.muli %next_m_block, %c64 : index loc(callsite("row0"("flash_bwd.cu":246:3 to 246:40) at "flash_bwd.cu":388:19 to 388:68))
        %q_head = memref.subview %q[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
            : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("q"("flash_bwd.cu":247:3 to 247:62) at "flash_bwd.cu":388:19 to 388:68))
        %d_o_head = memref.subview %d_o[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
            : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("d_o"("flash_bwd.cu":249:3 to 249:66) at "flash_bwd.cu":388:19 to 388:68))
        %lse_head = memref.subview %ws_lse_log2[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:44 to 259:94) at "flash_bwd.cu":388:19 to 388:68))
        %d_head = memref.subview %ws_d[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:24 to 259:41) at "flash_bwd.cu":388:19 to 388:68))
        %sQ_o = memref.subview %sQ[%other, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":251:60 to 251:110) at "flash_bwd.cu":388:19 to 388:68))
        %sdO_o = memref.subview %sdO[%other, 0, 0] [1, 64, 128] [1, 1, 1]
            : memref<2x64x128xf16, #S> to memref<64x128xf16, strided<[128, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":253:60 to 253:111) at "flash_bwd.cu":388:19 to 388:68))
        %sLSE_o = memref.subview %sLSE[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %sD_o = memref.subview %sD[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %tq = cuir.copy_async cp_async %q_head[%row0, %c0] -> %sQ_o
            : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sQ"("flash_bwd.cu":251:3 to 251:84) at "flash_bwd.cu":388:19 to 388:68))
        %tdo = cuir.copy_async cp_async %d_o_head[%row0, %c0] -> %sdO_o
            : memref<?x128xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x128xf16, strided<[128, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sdO"("flash_bwd.cu":253:3 to 253:85) at "flash_bwd.cu":388:19 to 388:68))
        %tl = cuir.copy_async cp_async %lse_head[%row0] -> %sLSE_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %td = cuir.copy_async cp_async %d_head[%row0] -> %sD_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %g = cuir.commit %tq, %tdo, %tl, %td loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":484:7 to 484:26))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))
      } else {
        %g = cuir.commit loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":484:7 to 484:26))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))
      } loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))

      // ------- S = Q K^T (unscaled) -------
      %q_row0 = arith.muli %m_block, %c64 : index loc(callsite("(q_tile * T::BLOCK_M)"("flash_bwd.cu":431:40 to 431:74) at "flash_bwd.cu":484:7 to 484:26))
      %acc_s = cuir.gemm %sQ_st, %sK transpose_b, %acc_sdp_init
          : memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":395:3 to 395:71) at "flash_bwd.cu":484:7 to 484:26))

      // ------- scores_to_probs: P = exp2(S * scale * log2e - LSE * log2e) -------
      %lse_log2 = cuir.load %sLSE_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("lse_log2"("flash_bwd.cu":292:7 to 292:72) at "flash_bwd.cu":401:3 to 401:64))
      %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %neg_lse = arith.negf %lse_b : tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %logits = math.fma %acc_s, %scale_tile, %neg_lse : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:40 to 297:85) at "flash_bwd.cu":401:3 to 401:64))
      %p = math.exp2 %logits : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:11 to 297:87) at "flash_bwd.cu":401:3 to 401:64))

      // ------- dP = dO V^T; probs_to_dscores: dS = P * (dP - D) -------
      %acc_dp = cuir.gemm %sdO_st, %sV transpose_b, %acc_sdp_init
          : memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, memref<128x128xf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":406:3 to 406:72) at "flash_bwd.cu":484:7 to 484:26))
      %d_rows = cuir.load %sD_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("d"("flash_bwd.cu":310:7 to 310:58) at "flash_bwd.cu":409:3 to 409:59))
      %d_b = cuir.broadcast_rows %d_rows : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("d"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %ds = arith.mulf %p, %dp_minus_d : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:55 to 314:118) at "flash_bwd.cu":409:3 to 409:59))

      // ------- P and dS to shared memory (16-bit): the other warps' GEMMs read them whole -------
      %p16 = arith.truncf %p : tensor<64x128xf32, #ACC_S> to tensor<64x128xf16, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":412:3 to 412:55) at "flash_bwd.cu":484:7 to 484:26))
      cuir.store %p16 -> %sP : tensor<64x128xf16, #ACC_S> -> memref<64x128xf16, #S> loc(callsite("sP"("flash_bwd.cu":412:3 to 412:48) at "flash_bwd.cu":484:7 to 484:26))
      %ds16 = arith.truncf %ds : tensor<64x128xf32, #ACC_S> to tensor<64x128xf16, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":413:3 to 413:57) at "flash_bwd.cu":484:7 to 484:26))
      cuir.store %ds16 -> %sdS : tensor<64x128xf16, #ACC_S> -> memref<64x128xf16, #S> loc(callsite("sdS"("flash_bwd.cu":413:3 to 413:49) at "flash_bwd.cu":484:7 to 484:26))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":414:3 to 414:19 at "flash_bwd.cu":484:7 to 484:26))

      // ------- dV += P^T dO, dK += dS^T Q -------
      %pt = cuir.load %sP transpose : memref<64x128xf16, #S> -> tensor<128x64xf16, #A_KV> loc(callsite("sP"("flash_bwd.cu":417:73 to 417:114) at "flash_bwd.cu":484:7 to 484:26))
      %acc_dv_new = cuir.gemm %pt, %sdO_st, %acc_dv
          : tensor<128x64xf16, #A_KV>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC_KV> loc(callsite("acc_dv"("flash_bwd.cu":417:3 to 417:71) at "flash_bwd.cu":484:7 to 484:26))
      %dst = cuir.load %sdS transpose : memref<64x128xf16, #S> -> tensor<128x64xf16, #A_KV> loc(callsite("sdS"("flash_bwd.cu":419:73 to 419:115) at "flash_bwd.cu":484:7 to 484:26))
      %acc_dk_new = cuir.gemm %dst, %sQ_st, %acc_dk
          : tensor<128x64xf16, #A_KV>, memref<64x128xf16, strided<[128, 1], offset: ?>, #S>, tensor<128x128xf32, #ACC_KV> loc(callsite("acc_dk"("flash_bwd.cu":419:3 to 419:71) at "flash_bwd.cu":484:7 to 484:26))

      // ------- dQ += dS K: fp32 reductions into the workspace -------
      %acc_dq = cuir.gemm %sdS, %sK, %acc_dq_init
          : memref<64x128xf16, #S>, memref<128x128xf16, #S>, tensor<64x128xf32, #ACC_DQ> loc(callsite("acc_dq"("flash_bwd.cu":425:3 to 425:69) at "flash_bwd.cu":484:7 to 484:26))
      %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 128] [1, 1, 1, 1]
          : memref<?x?x?x128xf32, #G> to memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc(callsite("head_rows"("flash_bwd.cu":428:3 to 428:71) at "flash_bwd.cu":484:7 to 484:26))
      cuir.atomic_add %acc_dq -> %dq_head[%q_row0, %c0] : tensor<64x128xf32, #ACC_DQ> -> memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc(callsite("dq_tile"("flash_bwd.cu":336:7 to 336:21) at "flash_bwd.cu":431:3 to 431:95))
      scf.yield %acc_dk_new, %acc_dv_new, %other, %g_next
          : tensor<128x128xf32, #ACC_KV>, tensor<128x128xf32, #ACC_KV>, index, !cuir.group loc("flash_bwd.cu":483:5 to 483:57)
    } loc("flash_bwd.cu":483:5 to 483:57)
    scf.yield %u_dk, %u_dv, %u_stage, %u_g
        : tensor<128x128xf32, #ACC_KV>, tensor<128x128xf32, #ACC_KV>, index, !cuir.group loc("flash_bwd.cu":476:3 to 476:67)
  } loc("head_q"("flash_bwd.cu":476:3 to 476:67))
  cuir.wait_group %h_g pending 0 loc("flash_bwd.cu":488:3 to 488:28)

  // =============================== epilogue: dK * scale and dV through the K and V tiles ===============================
  cuir.barrier.sync loc("flash_bwd.cu":491:3 to 491:19)
  %scale_kv = tensor.splat %softmax_scale : tensor<128x128xf32, #ACC_KV> loc("acc_dk"("flash_bwd.cu":495:3 to 495:93))
  %dk_scaled = arith.mulf %h_dk, %scale_kv : tensor<128x128xf32, #ACC_KV> loc("acc_dk"("flash_bwd.cu":495:3 to 495:93))
  %dk16 = arith.truncf %dk_scaled : tensor<128x128xf32, #ACC_KV> to tensor<128x128xf16, #ACC_KV> loc("acc_dk"("flash_bwd.cu":495:3 to 495:93))
  cuir.store %dk16 -> %sK : tensor<128x128xf16, #ACC_KV> -> memref<128x128xf16, #S> loc("sK"("flash_bwd.cu":495:3 to 495:63))
  %dv16 = arith.truncf %h_dv : tensor<128x128xf32, #ACC_KV> to tensor<128x128xf16, #ACC_KV> loc("acc_dv"("flash_bwd.cu":497:3 to 497:76))
  cuir.store %dv16 -> %sV : tensor<128x128xf16, #ACC_KV> -> memref<128x128xf16, #S> loc("sV"("flash_bwd.cu":497:3 to 497:63))
  cuir.barrier.sync loc("flash_bwd.cu":498:3 to 498:19)
  %dk_head = memref.subview %dk[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("dk"("flash_bwd.cu":501:3 to 501:52))
  %dv_head = memref.subview %dv[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("dv"("flash_bwd.cu":503:3 to 503:52))
  cuir.copy %sK -> %dk_head[%key_begin, %c0] : memref<128x128xf16, #S> -> memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("dk"("flash_bwd.cu":505:3 to 505:97))
  cuir.copy %sV -> %dv_head[%key_begin, %c0] : memref<128x128xf16, #S> -> memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("dv"("flash_bwd.cu":507:3 to 507:97))
  cuir.return loc("flash_bwd.cu":437:5 to 437:89)
} loc("flash_bwd_sm80_kernel"("flash_bwd.cu":437:5 to 437:89))

// =============================== dQ conversion ===============================
cuir.kernel @flash_bwd_f16_d128_convert_dq(
    %ws_dq_accum: memref<?x?x?x128xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":517:101 to 517:116)),
    %dq: memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dq"} loc("params.dq"("flash_bwd.cu":517:61 to 517:99)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":517:61 to 517:99)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":517:61 to 517:99)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":517:61 to 517:99)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":517:61 to 517:99)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":517:61 to 517:99)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":517:61 to 517:99)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 64, hq, b)
    threads 256 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index loc("BLOCK_M")
  %staged = cuir.alloc : memref<64x128xf16, #S> loc("staged"("flash_bwd.cu":522:3 to 522:69))
  %m_block = cuir.block_id x loc("m_block"("flash_bwd.cu":523:13 to 523:33))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":523:35 to 523:54))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":523:56 to 523:74))
  %row0 = arith.muli %m_block, %c64 : index loc("row"("flash_bwd.cu":525:60 to 525:80))
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %rows = arith.muli %m_blocks, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %tile = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf32, #G> to memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("tile"("flash_bwd.cu":524:3 to 524:56))
  %dq_head = memref.subview %dq[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 128] [1, 1, 1, 1]
      : memref<?x?x?x128xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":540:3 to 540:52))
  %zero_tile = arith.constant dense<0.0> : tensor<64x128xf32, #ACC_P> loc("acc"("flash_bwd.cu":535:5 to 535:33))
  %acc = cuir.elementwise (%zero_tile) at [%b, %head_q, %row0, %c0]
      : (tensor<64x128xf32, #ACC_P>) -> tensor<64x128xf32, #ACC_P> {
  ^bb0(%x: f32 loc("acc"("flash_bwd.cu":535:5 to 535:33)), %bi: index loc("batch"("flash_bwd.cu":523:56 to 523:74)), %hi: index loc("head_q"("flash_bwd.cu":523:35 to 523:54)), %row: index loc("row"("flash_bwd.cu":533:5 to 533:58)), %col: index loc("col"("flash_bwd.cu":534:5 to 534:73))):
    %a = memref.load %tile[%row, %col] : memref<?x128xf32, strided<[128, 1], offset: ?>, #G> loc("acc"("flash_bwd.cu":535:24 to 535:32))
    cuir.yield %a : f32 loc("acc"("flash_bwd.cu":535:5 to 535:33))
  } loc("acc"("flash_bwd.cu":535:5 to 535:33))
  %s_tile = tensor.splat %softmax_scale : tensor<64x128xf32, #ACC_P> loc("s"("flash_bwd.cu":526:3 to 526:40))
  %dq_f = arith.mulf %acc, %s_tile : tensor<64x128xf32, #ACC_P> loc("dq"("flash_bwd.cu":536:91 to 536:100))
  %dq16 = arith.truncf %dq_f : tensor<64x128xf32, #ACC_P> to tensor<64x128xf16, #ACC_P> loc("dq"("flash_bwd.cu":536:70 to 536:112))
  cuir.store %dq16 -> %staged[%c0, %c0] : tensor<64x128xf16, #ACC_P> -> memref<64x128xf16, #S> loc("staged"("flash_bwd.cu":536:70 to 536:112))
  cuir.barrier.sync loc("flash_bwd.cu":539:3 to 539:19)
  cuir.copy %staged -> %dq_head[%row0, %c0] : memref<64x128xf16, #S> -> memref<?x128xf16, strided<[?, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":545:7 to 545:103))
  cuir.return loc("flash_bwd.cu":517:40 to 517:117)
} loc("flash_bwd_convert_dq"("flash_bwd.cu":517:40 to 517:117))
cuir.launch_sequence @flash_bwd_f16_d64 [@flash_bwd_f16_d64_preprocess, @flash_bwd_f16_d64_kernel, @flash_bwd_f16_d64_convert_dq] loc("launch_flash_bwd"("flash_bwd.cu":554:20 to 554:98))

// =============================== preprocess ===============================
cuir.kernel @flash_bwd_f16_d64_preprocess(
    %o: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "o"} loc("params.o"("flash_bwd.cu":141:61 to 141:99)),
    %d_o: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":141:61 to 141:99)),
    %lse: memref<?x?x?xf32, #G> {cuir.arg = "lse"} loc("params.lse"("flash_bwd.cu":141:61 to 141:99)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":141:101 to 141:116)),
    %ws_d: memref<?x?x?xf32, #G> {cuir.arg = "workspace:d", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.d_rows"("flash_bwd.cu":141:101 to 141:116)),
    %ws_dq_accum: memref<?x?x?x64xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":141:101 to 141:116)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":141:61 to 141:99)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":141:61 to 141:99)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":141:61 to 141:99)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":141:61 to 141:99)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":141:61 to 141:99)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 64, hq, b)
    threads 256 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index loc("BLOCK_M")
  %ninf = arith.constant 0xFF800000 : f32 loc("kInf"("flash_bwd.cu":172:64 to 172:69))
  %m_block = cuir.block_id x loc("m_block"("flash_bwd.cu":146:13 to 146:33))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":146:35 to 146:54))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":146:56 to 146:74))
  %row0 = arith.muli %m_block, %c64 : index loc("row"("flash_bwd.cu":155:21 to 155:38))
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %rows = arith.muli %m_blocks, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %o_head = memref.subview %o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("o"("flash_bwd.cu":148:3 to 148:22))
  %d_o_head = memref.subview %d_o[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("d_o"("flash_bwd.cu":150:3 to 150:24))
  %lse_head = memref.subview %lse[%b, %head_q, 0] [1, 1, %seqlen_q] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("lse"("flash_bwd.cu":152:3 to 152:32))
  %lse_log2_head = memref.subview %ws_lse_log2[%b, %head_q, 0] [1, 1, %rows] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("head_rows"("flash_bwd.cu":147:3 to 147:65))
  %d_head = memref.subview %ws_d[%b, %head_q, 0] [1, 1, %rows] [1, 1, 1]
      : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc("head_rows"("flash_bwd.cu":147:3 to 147:65))
  %dq_accum_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf32, #G> to memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("dq_accum"("flash_bwd.cu":177:3 to 177:48))

  // ---- D = rowsum(dO * O): rows past seqlen_q give 0 ----
  %zero_tile = arith.constant dense<0.0> : tensor<64x64xf32, #ACC_P> loc("dot"("flash_bwd.cu":157:5 to 157:21))
  %prod = cuir.elementwise (%zero_tile) at [%b, %head_q, %row0, %c0]
      : (tensor<64x64xf32, #ACC_P>) -> tensor<64x64xf32, #ACC_P> {
  ^bb0(%x: f32 loc("dot"("flash_bwd.cu":157:5 to 157:21)), %bi: index loc("batch"("flash_bwd.cu":146:56 to 146:74)), %hi: index loc("head_q"("flash_bwd.cu":146:35 to 146:54)), %row: index loc("row"("flash_bwd.cu":155:5 to 155:85)), %col: index loc("chunk"("flash_bwd.cu":156:5 to 156:44))):
    %in = arith.cmpi slt, %row, %seqlen_q : index loc("flash_bwd.cu":158:5 to 158:31)
    %row_c = arith.select %in, %row, %c0 : index loc("flash_bwd.cu":158:5 to 158:31)
    %ov = memref.load %o_head[%row_c, %col] : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("o8"("flash_bwd.cu":159:7 to 159:100))
    %dov = memref.load %d_o_head[%row_c, %col] : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("do8"("flash_bwd.cu":160:7 to 160:104))
    %of = arith.extf %ov : f16 to f32 loc("of"("flash_bwd.cu":164:22 to 164:61))
    %df = arith.extf %dov : f16 to f32 loc("df"("flash_bwd.cu":164:63 to 164:103))
    %p = arith.mulf %of, %df : f32 loc("dot"("flash_bwd.cu":165:9 to 165:55))
    %r = arith.select %in, %p, %x : f32 loc("flash_bwd.cu":158:5 to 158:31)
    cuir.yield %r : f32 loc("dot"("flash_bwd.cu":165:9 to 165:55))
  } loc("dot"("flash_bwd.cu":165:9 to 165:55))
  %dot = cuir.reduce_rows sum %prod : tensor<64x64xf32, #ACC_P> -> tensor<64xf32, #ROW_P> loc("dot"("flash_bwd.cu":169:68 to 169:117))

  // ---- LSE * log2e: a row that sees no key (LSE = -inf) and a padded row get +inf ----
  %lse_tile = cuir.elementwise (%zero_tile) at [%b, %head_q, %row0, %c0]
      : (tensor<64x64xf32, #ACC_P>) -> tensor<64x64xf32, #ACC_P> {
  ^bb0(%x: f32 loc("row_lse"("flash_bwd.cu":172:7 to 172:26)), %bi: index loc("batch"("flash_bwd.cu":146:56 to 146:74)), %hi: index loc("head_q"("flash_bwd.cu":146:35 to 146:54)), %row: index loc("row"("flash_bwd.cu":155:5 to 155:85)), %col: index loc("chunk"("flash_bwd.cu":156:5 to 156:44))):
    %in = arith.cmpi slt, %row, %seqlen_q : index loc("row_lse"("flash_bwd.cu":172:29 to 172:69))
    %row_c = arith.select %in, %row, %c0 : index loc("row_lse"("flash_bwd.cu":172:29 to 172:69))
    %l = memref.load %lse_head[%row_c] : memref<?xf32, strided<[1], offset: ?>, #G> loc("row_lse"("flash_bwd.cu":172:53 to 172:61))
    %r = arith.select %in, %l, %ninf : f32 loc("row_lse"("flash_bwd.cu":172:7 to 172:70))
    cuir.yield %r : f32 loc("row_lse"("flash_bwd.cu":172:7 to 172:70))
  } loc("row_lse"("flash_bwd.cu":172:7 to 172:70))
  %row_lse = cuir.reduce_rows max %lse_tile : tensor<64x64xf32, #ACC_P> -> tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":172:7 to 172:26))
  %ninf_row = arith.constant dense<0xFF800000> : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:54))
  %pinf_row = arith.constant dense<0x7F800000> : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:80))
  %log2e_row = arith.constant dense<1.44269502> : tensor<64xf32, #ROW_P> loc("kLog2e"("flash_bwd.cu":173:64 to 173:80))
  %sees_none = arith.cmpf oeq, %row_lse, %ninf_row : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:54))
  %lse_scaled = arith.mulf %row_lse, %log2e_row : tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:64 to 173:80))
  %lse_log2 = arith.select %sees_none, %pinf_row, %lse_scaled : tensor<64xi1, #ROW_P>, tensor<64xf32, #ROW_P> loc("row_lse"("flash_bwd.cu":173:38 to 173:80))
  cuir.store %lse_log2 -> %lse_log2_head[%row0] : tensor<64xf32, #ROW_P> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.lse_log2"("flash_bwd.cu":173:7 to 173:81))
  cuir.store %dot -> %d_head[%row0] : tensor<64xf32, #ROW_P> -> memref<?xf32, strided<[1], offset: ?>, #G> loc("ws.d_rows"("flash_bwd.cu":174:7 to 174:40))

  // ---- the dQ accumulator of this query tile, zeroed ----
  cuir.store %zero_tile -> %dq_accum_head[%row0, %c0] : tensor<64x64xf32, #ACC_P> -> memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("dq_accum"("flash_bwd.cu":178:59 to 178:105))
  cuir.return loc("flash_bwd.cu":141:40 to 141:117)
} loc("flash_bwd_preprocess"("flash_bwd.cu":141:40 to 141:117))

// =============================== main kernel ===============================
cuir.kernel @flash_bwd_f16_d64_kernel(
    %q: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "q"} loc("params.q"("flash_bwd.cu":437:27 to 437:88)),
    %k: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "k"} loc("params.k"("flash_bwd.cu":437:27 to 437:88)),
    %v: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "v"} loc("params.v"("flash_bwd.cu":437:27 to 437:88)),
    %d_o: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "d_o"} loc("params.d_o"("flash_bwd.cu":437:27 to 437:88)),
    %ws_lse_log2: memref<?x?x?xf32, #G> {cuir.arg = "workspace:lse_log2", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.lse_log2"("flash_bwd.cu":437:67 to 437:88)),
    %ws_d: memref<?x?x?xf32, #G> {cuir.arg = "workspace:d", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64)>} loc("ws.d_rows"("flash_bwd.cu":437:67 to 437:88)),
    %ws_dq_accum: memref<?x?x?x64xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":437:67 to 437:88)),
    %dk: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dk"} loc("params.dk"("flash_bwd.cu":437:27 to 437:88)),
    %dv: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dv"} loc("params.dv"("flash_bwd.cu":437:27 to 437:88)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":437:27 to 437:88)),
    %causal: i1 {cuir.arg = "causal"} loc("IS_CAUSAL"("flash_bwd.cu":435:1 to 435:57)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":437:27 to 437:88)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":437:27 to 437:88)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":437:27 to 437:88)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":437:27 to 437:88)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":437:27 to 437:88)))
    grid (b, hq, hkv, nq, nkv) -> (nkv ceildiv 128, hkv, b)
    threads 256 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index loc("BLOCK_M")
  %c128 = arith.constant 128 : index loc("BLOCK_N")
  %ninf = arith.constant 0xFF800000 : f32 loc("kInf"("flash_bwd.cu":279:81 to 279:86))

  // ---- block coordinates, GQA group, sequence views ----
  // The block ids are the block's (KV block, KV head, batch); the order the
  // launch deals them in (the KV block slowest under the causal mask with GQA:
  // kv_block_slowest) computes the same outputs.
  %n_block = cuir.block_id x loc("block.n_block"("flash_bwd.cu":443:3 to 443:58))
  %head_kv = cuir.block_id y loc("block.head_kv"("flash_bwd.cu":443:3 to 443:58))
  %b = cuir.block_id z loc("bwd_block_index<T>(params).batch"("flash_bwd.cu":443:3 to 443:58))
  %causal_offset = arith.subi %seqlen_kv, %seqlen_q : index loc("last_key_offset"("flash_bwd.cu":447:43 to 447:70))
  %last_key_offset = arith.select %causal, %causal_offset, %seqlen_kv : index loc("last_key_offset"("flash_bwd.cu":447:13 to 447:82))
  %group = arith.divui %num_heads_q, %num_heads_kv : index loc("group"("flash_bwd.cu":448:13 to 448:61))
  %first_head_q = arith.muli %head_kv, %group : index loc("first_head_q"("flash_bwd.cu":449:13 to 449:49))
  %head_q_end = arith.addi %first_head_q, %group : index loc("last_head_q"("flash_bwd.cu":449:51 to 449:89))
  %last_head_q = arith.subi %head_q_end, %c1 : index loc("last_head_q"("flash_bwd.cu":449:51 to 449:89))
  %key_begin = arith.muli %n_block, %c128 : index loc("(bwd_block_index<T>(params).n_block * T::BLOCK_N)"("flash_bwd.cu":450:13 to 450:51))
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %rows = arith.muli %m_blocks, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %k_head = memref.subview %k[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("k"("flash_bwd.cu":457:3 to 457:62))
  %v_head = memref.subview %v[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("v"("flash_bwd.cu":459:3 to 459:62))

  // ---- q_block_range: the query blocks [m_begin, m_end) this KV block visits, [m_begin, m_unmasked_begin) masked ----
  %m_end = arith.ceildivui %seqlen_q, %c64 : index loc(callsite("m_end"("flash_bwd.cu":224:3 to 224:56) at "flash_bwd.cu":454:43 to 454:84))
  %key_end = arith.addi %key_begin, %c128 : index loc(callsite("ragged"("flash_bwd.cu":226:23 to 226:57) at "flash_bwd.cu":454:43 to 454:84))
  %ragged = arith.cmpi sgt, %key_end, %seqlen_kv : index loc(callsite("ragged"("flash_bwd.cu":226:3 to 226:58) at "flash_bwd.cu":454:43 to 454:84))
  %unm_full = arith.select %ragged, %m_end, %c0 : index loc(callsite("r"("flash_bwd.cu":227:20 to 227:38) at "flash_bwd.cu":454:43 to 454:84))
  %first_row = arith.subi %key_begin, %causal_offset : index loc(callsite("first_row"("flash_bwd.cu":230:5 to 230:53) at "flash_bwd.cu":454:43 to 454:84))
  %key_end_c = arith.minsi %key_end, %seqlen_kv : index loc(callsite("last_key"("flash_bwd.cu":231:26 to 231:64) at "flash_bwd.cu":454:43 to 454:84))
  %last_key = arith.subi %key_end_c, %c1 : index loc(callsite("last_key"("flash_bwd.cu":231:5 to 231:69) at "flash_bwd.cu":454:43 to 454:84))
  %full_row = arith.subi %last_key, %causal_offset : index loc(callsite("full_row"("flash_bwd.cu":232:5 to 232:51) at "flash_bwd.cu":454:43 to 454:84))
  %fr_none = arith.cmpi sle, %first_row, %c0 : index loc(callsite("r.m_begin"("flash_bwd.cu":233:17 to 233:31) at "flash_bwd.cu":454:43 to 454:84))
  %fr_blk = arith.divsi %first_row, %c64 : index loc(callsite("r.m_begin"("flash_bwd.cu":233:49 to 233:68) at "flash_bwd.cu":454:43 to 454:84))
  %fr_min = arith.minsi %m_end, %fr_blk : index loc(callsite("r.m_begin"("flash_bwd.cu":233:38 to 233:69) at "flash_bwd.cu":454:43 to 454:84))
  %m_begin_c = arith.select %fr_none, %c0, %fr_min : index loc(callsite("r.m_begin"("flash_bwd.cu":233:5 to 233:70) at "flash_bwd.cu":454:43 to 454:84))
  %fu_none = arith.cmpi sle, %full_row, %c0 : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:50 to 234:63) at "flash_bwd.cu":454:43 to 454:84))
  %fu_blk = arith.ceildivsi %full_row, %c64 : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:81 to 234:115) at "flash_bwd.cu":454:43 to 454:84))
  %fu_min = arith.minsi %m_end, %fu_blk : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:70 to 234:116) at "flash_bwd.cu":454:43 to 454:84))
  %fu_sel = arith.select %fu_none, %c0, %fu_min : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:50 to 234:116) at "flash_bwd.cu":454:43 to 454:84))
  %unm_c = arith.maxsi %unm_full, %fu_sel : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":234:5 to 234:63) at "flash_bwd.cu":454:43 to 454:84))
  %m_begin = arith.select %causal, %m_begin_c, %c0 : index loc(callsite("r.m_begin"("flash_bwd.cu":228:3 to 228:27) at "flash_bwd.cu":454:43 to 454:84))
  %unm_sel = arith.select %causal, %unm_c, %unm_full : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":228:3 to 228:27) at "flash_bwd.cu":454:43 to 454:84))
  %m_unmasked_begin = arith.maxsi %unm_sel, %m_begin : index loc(callsite("r.m_unmasked_begin"("flash_bwd.cu":236:3 to 236:59) at "flash_bwd.cu":454:43 to 454:84))

  // ---- shared memory (FlashBwdTraits), 16-bit tiles swizzled ----
  %sK = cuir.alloc {swizzle = 128} : memref<128x64xf16, #S> loc("sK"("flash_bwd.cu":78:29 to 78:42))
  %sV = cuir.alloc {swizzle = 128} : memref<128x64xf16, #S> loc("sV"("flash_bwd.cu":79:29 to 79:66))
  %sQ = cuir.alloc {swizzle = 128} : memref<2x64x64xf16, #S> loc("sQ"("flash_bwd.cu":80:29 to 80:66))
  %sdO = cuir.alloc {swizzle = 128} : memref<2x64x64xf16, #S> loc("sdO"("flash_bwd.cu":81:29 to 81:77))
  %sP = cuir.alloc {swizzle = 128} : memref<64x128xf16, #S> loc("sP"("flash_bwd.cu":82:29 to 82:77))
  %sdS = cuir.alloc {swizzle = 128} : memref<64x128xf16, #S> loc("sdS"("flash_bwd.cu":83:29 to 83:68))
  %sLSE = cuir.alloc : memref<2x64xf32, #S> loc("sLSE"("flash_bwd.cu":84:29 to 84:70))
  %sD = cuir.alloc : memref<2x64xf32, #S> loc("sD"("flash_bwd.cu":85:29 to 85:80))

  // ---- prologue: K, V and the first step's tiles, one group ----
  %has_steps = arith.cmpi slt, %m_begin, %m_end : index loc("flash_bwd.cu":465:3 to 465:35)
  // K and V are issued before the branch in the source; both branches issue them here (one group each).
  %g_first = scf.if %has_steps -> (!cuir.group) {
    %tk = cuir.copy_async cp_async %k_head[%key_begin, %c0] -> %sK
        : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, #S> -> !cuir.token loc("sK"("flash_bwd.cu":461:3 to 461:81))
    %tv = cuir.copy_async cp_async %v_head[%key_begin, %c0] -> %sV
        : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, #S> -> !cuir.token loc("sV"("flash_bwd.cu":463:3 to 463:81))
    %row0 = arith.muli %m_begin, %c64 : index loc(callsite("row0"("flash_bwd.cu":246:3 to 246:40) at "flash_bwd.cu":466:5 to 466:65))
    %q_head = memref.subview %q[%b, 0, %first_head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
        : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("q"("flash_bwd.cu":247:3 to 247:62) at "flash_bwd.cu":466:5 to 466:65))
    %d_o_head = memref.subview %d_o[%b, 0, %first_head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
        : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("d_o"("flash_bwd.cu":249:3 to 249:66) at "flash_bwd.cu":466:5 to 466:65))
    %lse_head = memref.subview %ws_lse_log2[%b, %first_head_q, 0] [1, 1, %rows] [1, 1, 1]
        : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:44 to 259:94) at "flash_bwd.cu":466:5 to 466:65))
    %d_head = memref.subview %ws_d[%b, %first_head_q, 0] [1, 1, %rows] [1, 1, 1]
        : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:24 to 259:41) at "flash_bwd.cu":466:5 to 466:65))
    %sQ0 = memref.subview %sQ[0, 0, 0] [1, 64, 64] [1, 1, 1]
        : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1]>, #S> loc(callsite("sQ"("flash_bwd.cu":251:60 to 251:110) at "flash_bwd.cu":466:5 to 466:65))
    %sdO0 = memref.subview %sdO[0, 0, 0] [1, 64, 64] [1, 1, 1]
        : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1]>, #S> loc(callsite("sdO"("flash_bwd.cu":253:60 to 253:111) at "flash_bwd.cu":466:5 to 466:65))
    %sLSE0 = memref.subview %sLSE[0, 0] [1, 64] [1, 1]
        : memref<2x64xf32, #S> to memref<64xf32, strided<[1]>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":466:5 to 466:65))
    %sD0 = memref.subview %sD[0, 0] [1, 64] [1, 1]
        : memref<2x64xf32, #S> to memref<64xf32, strided<[1]>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":466:5 to 466:65))
    %tq = cuir.copy_async cp_async %q_head[%row0, %c0] -> %sQ0
        : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xf16, strided<[64, 1]>, #S> -> !cuir.token loc(callsite("sQ"("flash_bwd.cu":251:3 to 251:84) at "flash_bwd.cu":466:5 to 466:65))
    %tdo = cuir.copy_async cp_async %d_o_head[%row0, %c0] -> %sdO0
        : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xf16, strided<[64, 1]>, #S> -> !cuir.token loc(callsite("sdO"("flash_bwd.cu":253:3 to 253:85) at "flash_bwd.cu":466:5 to 466:65))
    %tl = cuir.copy_async cp_async %lse_head[%row0] -> %sLSE0
        : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1]>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":466:5 to 466:65))
    %td = cuir.copy_async cp_async %d_head[%row0] -> %sD0
        : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1]>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":466:5 to 466:65))
    %g = cuir.commit %tk, %tv, %tq, %tdo, %tl, %td loc("flash_bwd.cu":467:3 to 467:27)
    scf.yield %g : !cuir.group loc("flash_bwd.cu":465:3 to 465:35)
  } else {
    %tk = cuir.copy_async cp_async %k_head[%key_begin, %c0] -> %sK
        : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, #S> -> !cuir.token loc("sK"("flash_bwd.cu":461:3 to 461:81))
    %tv = cuir.copy_async cp_async %v_head[%key_begin, %c0] -> %sV
        : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<128x64xf16, #S> -> !cuir.token loc("sV"("flash_bwd.cu":463:3 to 463:81))
    %g = cuir.commit %tk, %tv loc("flash_bwd.cu":467:3 to 467:27)
    scf.yield %g : !cuir.group loc("flash_bwd.cu":465:3 to 465:35)
  } loc("flash_bwd.cu":465:3 to 465:35)

  // ---- dK, dV accumulators (registers), the probability scale ----
  %acc_kv_init = arith.constant dense<0.0> : tensor<128x64xf32, #ACC_KV> loc("acc_dk"("flash_bwd.cu":471:3 to 471:20))
  %acc_sdp_init = arith.constant dense<0.0> : tensor<64x128xf32, #ACC_S> loc("acc_s"("flash_bwd.cu":394:3 to 394:19))
  %acc_dq_init = arith.constant dense<0.0> : tensor<64x64xf32, #ACC_DQ> loc("acc_dq"("flash_bwd.cu":424:3 to 424:20))
  %log2e = arith.constant 1.44269502 : f32 loc("scale_log2"("flash_bwd.cu":473:15 to 473:57))
  %scale_log2 = arith.mulf %softmax_scale, %log2e : f32 loc("scale_log2"("flash_bwd.cu":473:15 to 473:57))
  %scale_tile = tensor.splat %scale_log2 : tensor<64x128xf32, #ACC_S> loc("scale_log2"("flash_bwd.cu":473:15 to 473:57))

  // =============================== the query heads of the group ===============================
  %h_dk, %h_dv, %h_stage, %h_g = scf.for %head_q = %first_head_q to %head_q_end step %c1
      iter_args(%dk_h = %acc_kv_init, %dv_h = %acc_kv_init, %stage_h = %c0, %g_h = %g_first)
      -> (tensor<128x64xf32, #ACC_KV>, tensor<128x64xf32, #ACC_KV>, index, !cuir.group) {

    // =============================== masking steps ===============================
    %m_dk, %m_dv, %m_stage, %m_g = scf.for %m_block = %m_begin to %m_unmasked_begin step %c1
        iter_args(%acc_dk = %dk_h, %acc_dv = %dv_h, %stage = %stage_h, %g_cur = %g_h)
        -> (tensor<128x64xf32, #ACC_KV>, tensor<128x64xf32, #ACC_KV>, index, !cuir.group) {
      %other = arith.xori %stage, %c1 : index loc(callsite("stage"("flash_bwd.cu":388:59 to 388:68) at "flash_bwd.cu":480:7 to 480:25))
      %sQ_st = memref.subview %sQ[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
          : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":382:3 to 382:69) at "flash_bwd.cu":480:7 to 480:25))
      %sdO_st = memref.subview %sdO[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
          : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":383:3 to 383:71) at "flash_bwd.cu":480:7 to 480:25))
      %sLSE_st = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_lse"("flash_bwd.cu":400:56 to 400:105) at "flash_bwd.cu":480:7 to 480:25))
      %sD_st = memref.subview %sD[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_d"("flash_bwd.cu":408:54 to 408:101) at "flash_bwd.cu":480:7 to 480:25))

      cuir.wait_group %g_cur pending 0 loc(callsite("flash_bwd.cu":386:3 to 386:28 at "flash_bwd.cu":480:7 to 480:25))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":387:3 to 387:19 at "flash_bwd.cu":480:7 to 480:25))
      // next_q_step: the next query block of the head, else the first one of the next head
      %m_next = arith.addi %m_block, %c1 : index loc(callsite("flash_bwd.cu":359:7 to 359:18 at "flash_bwd.cu":480:72 to 480:120))
      %same_head = arith.cmpi slt, %m_next, %m_end : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":480:72 to 480:120))
      %head_next = arith.addi %head_q, %c1 : index loc(callsite("flash_bwd.cu":360:16 to 360:26 at "flash_bwd.cu":480:72 to 480:120))
      %next_head_q = arith.select %same_head, %head_q, %head_next : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":480:72 to 480:120))
      %next_m_block = arith.select %same_head, %m_next, %m_begin : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":480:72 to 480:120))
      %more_heads = arith.cmpi slt, %head_q, %last_head_q : index loc(callsite("flash_bwd.cu":360:43 to 360:63 at "flash_bwd.cu":480:72 to 480:120))
      %next_valid = arith.ori %same_head, %more_heads : i1 loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))
      %g_next = scf.if %next_valid -> (!cuir.group) {
        %row0 = arith.muli %next_m_block, %c64 : index loc(callsite("row0"("flash_bwd.cu":246:3 to 246:40) at "flash_bwd.cu":388:19 to 388:68))
        %q_head = memref.subview %q[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
            : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("q"("flash_bwd.cu":247:3 to 247:62) at "flash_bwd.cu":388:19 to 388:68))
        %d_o_head = memref.subview %d_o[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
            : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("d_o"("flash_bwd.cu":249:3 to 249:66) at "flash_bwd.cu":388:19 to 388:68))
        %lse_head = memref.subview %ws_lse_log2[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:44 to 259:94) at "flash_bwd.cu":388:19 to 388:68))
        %d_head = memref.subview %ws_d[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:24 to 259:41) at "flash_bwd.cu":388:19 to 388:68))
        %sQ_o = memref.subview %sQ[%other, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":251:60 to 251:110) at "flash_bwd.cu":388:19 to 388:68))
        %sdO_o = memref.subview %sdO[%other, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":253:60 to 253:111) at "flash_bwd.cu":388:19 to 388:68))
        %sLSE_o = memref.subview %sLSE[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %sD_o = memref.subview %sD[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %tq = cuir.copy_async cp_async %q_head[%row0, %c0] -> %sQ_o
            : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sQ"("flash_bwd.cu":251:3 to 251:84) at "flash_bwd.cu":388:19 to 388:68))
        %tdo = cuir.copy_async cp_async %d_o_head[%row0, %c0] -> %sdO_o
            : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sdO"("flash_bwd.cu":253:3 to 253:85) at "flash_bwd.cu":388:19 to 388:68))
        %tl = cuir.copy_async cp_async %lse_head[%row0] -> %sLSE_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %td = cuir.copy_async cp_async %d_head[%row0] -> %sD_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %g = cuir.commit %tq, %tdo, %tl, %td loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":480:7 to 480:25))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))
      } else {
        %g = cuir.commit loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":480:7 to 480:25))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))
      } loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":480:7 to 480:25))

      // ------- S = Q K^T (unscaled) -------
      %q_row0 = arith.muli %m_block, %c64 : index loc(callsite("(q_tile * T::BLOCK_M)"("flash_bwd.cu":431:40 to 431:74) at "flash_bwd.cu":480:7 to 480:25))
      %acc_s = cuir.gemm %sQ_st, %sK transpose_b, %acc_sdp_init
          : memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":395:3 to 395:71) at "flash_bwd.cu":480:7 to 480:25))

      // ------- the mask of a masking step: -inf where key >= seqlen_kv or key > row + last_key_offset -------
      %kv0 = arith.muli %n_block, %c128 : index loc(callsite("key_base"("flash_bwd.cu":398:58 to 398:105) at "flash_bwd.cu":480:7 to 480:25))
      %acc_s_masked = cuir.elementwise (%acc_s) at [%b, %head_q, %q_row0, %kv0]
          : (tensor<64x128xf32, #ACC_S>) -> tensor<64x128xf32, #ACC_S> {
      ^bb0(%x: f32 loc("acc_s"("flash_bwd.cu":279:62 to 279:86)), %bi: index loc(callsite("block.batch"("flash_bwd.cu":398:5 to 398:24) at "flash_bwd.cu":480:7 to 480:25)), %hi: index loc(callsite("head_q"("flash_bwd.cu":398:5 to 398:24) at "flash_bwd.cu":480:7 to 480:25)), %row: index loc("row"("flash_bwd.cu":277:9 to 277:69)), %key: index loc("key"("flash_bwd.cu":278:9 to 278:68))):
        %past_end = arith.cmpi sge, %key, %seqlen_kv : index loc(callsite("flash_bwd.cu":279:13 to 279:29 at "flash_bwd.cu":398:5 to 398:24))
        %row_last = arith.addi %row, %last_key_offset : index loc(callsite("flash_bwd.cu":279:39 to 279:60 at "flash_bwd.cu":398:5 to 398:24))
        %past_diag = arith.cmpi sgt, %key, %row_last : index loc(callsite("flash_bwd.cu":279:33 to 279:60 at "flash_bwd.cu":398:5 to 398:24))
        %hidden = arith.ori %past_end, %past_diag : i1 loc(callsite("flash_bwd.cu":279:9 to 279:29 at "flash_bwd.cu":398:5 to 398:24))
        %r = arith.select %hidden, %ninf, %x : f32 loc(callsite("acc_s"("flash_bwd.cu":279:62 to 279:86) at "flash_bwd.cu":398:5 to 398:24))
        cuir.yield %r : f32 loc(callsite("flash_bwd.cu":398:5 to 398:24 at "flash_bwd.cu":480:7 to 480:25))
      } loc(callsite("acc_s"("flash_bwd.cu":398:5 to 398:24) at "flash_bwd.cu":480:7 to 480:25))

      // ------- scores_to_probs: P = exp2(S * scale * log2e - LSE * log2e) -------
      %lse_log2 = cuir.load %sLSE_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("lse_log2"("flash_bwd.cu":292:7 to 292:72) at "flash_bwd.cu":401:3 to 401:64))
      %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %neg_lse = arith.negf %lse_b : tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %logits = math.fma %acc_s_masked, %scale_tile, %neg_lse : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:40 to 297:85) at "flash_bwd.cu":401:3 to 401:64))
      %p = math.exp2 %logits : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:11 to 297:87) at "flash_bwd.cu":401:3 to 401:64))

      // ------- dP = dO V^T; probs_to_dscores: dS = P * (dP - D) -------
      %acc_dp = cuir.gemm %sdO_st, %sV transpose_b, %acc_sdp_init
          : memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":406:3 to 406:72) at "flash_bwd.cu":480:7 to 480:25))
      %d_rows = cuir.load %sD_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("d"("flash_bwd.cu":310:7 to 310:58) at "flash_bwd.cu":409:3 to 409:59))
      %d_b = cuir.broadcast_rows %d_rows : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("d"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %ds = arith.mulf %p, %dp_minus_d : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:55 to 314:118) at "flash_bwd.cu":409:3 to 409:59))

      // ------- P and dS to shared memory (16-bit): the other warps' GEMMs read them whole -------
      %p16 = arith.truncf %p : tensor<64x128xf32, #ACC_S> to tensor<64x128xf16, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":412:3 to 412:55) at "flash_bwd.cu":480:7 to 480:25))
      cuir.store %p16 -> %sP : tensor<64x128xf16, #ACC_S> -> memref<64x128xf16, #S> loc(callsite("sP"("flash_bwd.cu":412:3 to 412:48) at "flash_bwd.cu":480:7 to 480:25))
      %ds16 = arith.truncf %ds : tensor<64x128xf32, #ACC_S> to tensor<64x128xf16, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":413:3 to 413:57) at "flash_bwd.cu":480:7 to 480:25))
      cuir.store %ds16 -> %sdS : tensor<64x128xf16, #ACC_S> -> memref<64x128xf16, #S> loc(callsite("sdS"("flash_bwd.cu":413:3 to 413:49) at "flash_bwd.cu":480:7 to 480:25))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":414:3 to 414:19 at "flash_bwd.cu":480:7 to 480:25))

      // ------- dV += P^T dO, dK += dS^T Q -------
      %pt = cuir.load %sP transpose : memref<64x128xf16, #S> -> tensor<128x64xf16, #A_KV> loc(callsite("sP"("flash_bwd.cu":417:73 to 417:114) at "flash_bwd.cu":480:7 to 480:25))
      %acc_dv_new = cuir.gemm %pt, %sdO_st, %acc_dv
          : tensor<128x64xf16, #A_KV>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC_KV> loc(callsite("acc_dv"("flash_bwd.cu":417:3 to 417:71) at "flash_bwd.cu":480:7 to 480:25))
      %dst = cuir.load %sdS transpose : memref<64x128xf16, #S> -> tensor<128x64xf16, #A_KV> loc(callsite("sdS"("flash_bwd.cu":419:73 to 419:115) at "flash_bwd.cu":480:7 to 480:25))
      %acc_dk_new = cuir.gemm %dst, %sQ_st, %acc_dk
          : tensor<128x64xf16, #A_KV>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC_KV> loc(callsite("acc_dk"("flash_bwd.cu":419:3 to 419:71) at "flash_bwd.cu":480:7 to 480:25))

      // ------- dQ += dS K: fp32 reductions into the workspace -------
      %acc_dq = cuir.gemm %sdS, %sK, %acc_dq_init
          : memref<64x128xf16, #S>, memref<128x64xf16, #S>, tensor<64x64xf32, #ACC_DQ> loc(callsite("acc_dq"("flash_bwd.cu":425:3 to 425:69) at "flash_bwd.cu":480:7 to 480:25))
      %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 64] [1, 1, 1, 1]
          : memref<?x?x?x64xf32, #G> to memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc(callsite("head_rows"("flash_bwd.cu":428:3 to 428:71) at "flash_bwd.cu":480:7 to 480:25))
      cuir.atomic_add %acc_dq -> %dq_head[%q_row0, %c0] : tensor<64x64xf32, #ACC_DQ> -> memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc(callsite("dq_tile"("flash_bwd.cu":336:7 to 336:21) at "flash_bwd.cu":431:3 to 431:95))
      scf.yield %acc_dk_new, %acc_dv_new, %other, %g_next
          : tensor<128x64xf32, #ACC_KV>, tensor<128x64xf32, #ACC_KV>, index, !cuir.group loc("flash_bwd.cu":479:5 to 479:68)
    } loc("flash_bwd.cu":479:5 to 479:68)

    // =============================== unmasked steps ===============================
    %u_dk, %u_dv, %u_stage, %u_g = scf.for %m_block = %m_unmasked_begin to %m_end step %c1
        iter_args(%acc_dk = %m_dk, %acc_dv = %m_dv, %stage = %m_stage, %g_cur = %m_g)
        -> (tensor<128x64xf32, #ACC_KV>, tensor<128x64xf32, #ACC_KV>, index, !cuir.group) {
      %other = arith.xori %stage, %c1 : index loc(callsite("stage"("flash_bwd.cu":388:59 to 388:68) at "flash_bwd.cu":484:7 to 484:26))
      %sQ_st = memref.subview %sQ[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
          : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":382:3 to 382:69) at "flash_bwd.cu":484:7 to 484:26))
      %sdO_st = memref.subview %sdO[%stage, 0, 0] [1, 64, 64] [1, 1, 1]
          : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":383:3 to 383:71) at "flash_bwd.cu":484:7 to 484:26))
      %sLSE_st = memref.subview %sLSE[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_lse"("flash_bwd.cu":400:56 to 400:105) at "flash_bwd.cu":484:7 to 484:26))
      %sD_st = memref.subview %sD[%stage, 0] [1, 64] [1, 1]
          : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("s_d"("flash_bwd.cu":408:54 to 408:101) at "flash_bwd.cu":484:7 to 484:26))

      cuir.wait_group %g_cur pending 0 loc(callsite("flash_bwd.cu":386:3 to 386:28 at "flash_bwd.cu":484:7 to 484:26))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":387:3 to 387:19 at "flash_bwd.cu":484:7 to 484:26))
      // next_q_step: the next query block of the head, else the first one of the next head
      %m_next = arith.addi %m_block, %c1 : index loc(callsite("flash_bwd.cu":359:7 to 359:18 at "flash_bwd.cu":485:26 to 485:74))
      %same_head = arith.cmpi slt, %m_next, %m_end : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":485:26 to 485:74))
      %head_next = arith.addi %head_q, %c1 : index loc(callsite("flash_bwd.cu":360:16 to 360:26 at "flash_bwd.cu":485:26 to 485:74))
      %next_head_q = arith.select %same_head, %head_q, %head_next : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":485:26 to 485:74))
      %next_m_block = arith.select %same_head, %m_next, %m_begin : index loc(callsite("flash_bwd.cu":359:3 to 359:33 at "flash_bwd.cu":485:26 to 485:74))
      %more_heads = arith.cmpi slt, %head_q, %last_head_q : index loc(callsite("flash_bwd.cu":360:43 to 360:63 at "flash_bwd.cu":485:26 to 485:74))
      %next_valid = arith.ori %same_head, %more_heads : i1 loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))
      %g_next = scf.if %next_valid -> (!cuir.group) {
        %row0 = arith.muli %next_m_block, %c64 : index loc(callsite("row0"("flash_bwd.cu":246:3 to 246:40) at "flash_bwd.cu":388:19 to 388:68))
        %q_head = memref.subview %q[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
            : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("q"("flash_bwd.cu":247:3 to 247:62) at "flash_bwd.cu":388:19 to 388:68))
        %d_o_head = memref.subview %d_o[%b, 0, %next_head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
            : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc(callsite("d_o"("flash_bwd.cu":249:3 to 249:66) at "flash_bwd.cu":388:19 to 388:68))
        %lse_head = memref.subview %ws_lse_log2[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:44 to 259:94) at "flash_bwd.cu":388:19 to 388:68))
        %d_head = memref.subview %ws_d[%b, %next_head_q, 0] [1, 1, %rows] [1, 1, 1]
            : memref<?x?x?xf32, #G> to memref<?xf32, strided<[1], offset: ?>, #G> loc(callsite("src"("flash_bwd.cu":259:24 to 259:41) at "flash_bwd.cu":388:19 to 388:68))
        %sQ_o = memref.subview %sQ[%other, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sQ"("flash_bwd.cu":251:60 to 251:110) at "flash_bwd.cu":388:19 to 388:68))
        %sdO_o = memref.subview %sdO[%other, 0, 0] [1, 64, 64] [1, 1, 1]
            : memref<2x64x64xf16, #S> to memref<64x64xf16, strided<[64, 1], offset: ?>, #S> loc(callsite("sdO"("flash_bwd.cu":253:60 to 253:111) at "flash_bwd.cu":388:19 to 388:68))
        %sLSE_o = memref.subview %sLSE[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %sD_o = memref.subview %sD[%other, 0] [1, 64] [1, 1]
            : memref<2x64xf32, #S> to memref<64xf32, strided<[1], offset: ?>, #S> loc(callsite("dst"("flash_bwd.cu":260:38 to 260:104) at "flash_bwd.cu":388:19 to 388:68))
        %tq = cuir.copy_async cp_async %q_head[%row0, %c0] -> %sQ_o
            : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sQ"("flash_bwd.cu":251:3 to 251:84) at "flash_bwd.cu":388:19 to 388:68))
        %tdo = cuir.copy_async cp_async %d_o_head[%row0, %c0] -> %sdO_o
            : memref<?x64xf16, strided<[?, 1], offset: ?>, #G> -> memref<64x64xf16, strided<[64, 1], offset: ?>, #S> -> !cuir.token loc(callsite("sdO"("flash_bwd.cu":253:3 to 253:85) at "flash_bwd.cu":388:19 to 388:68))
        %tl = cuir.copy_async cp_async %lse_head[%row0] -> %sLSE_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %td = cuir.copy_async cp_async %d_head[%row0] -> %sD_o
            : memref<?xf32, strided<[1], offset: ?>, #G> -> memref<64xf32, strided<[1], offset: ?>, #S> -> !cuir.token loc(callsite("dst"("flash_bwd.cu":261:5 to 261:40) at "flash_bwd.cu":388:19 to 388:68))
        %g = cuir.commit %tq, %tdo, %tl, %td loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":484:7 to 484:26))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))
      } else {
        %g = cuir.commit loc(callsite("flash_bwd.cu":389:3 to 389:27 at "flash_bwd.cu":484:7 to 484:26))
        scf.yield %g : !cuir.group loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))
      } loc(callsite("flash_bwd.cu":388:3 to 388:18 at "flash_bwd.cu":484:7 to 484:26))

      // ------- S = Q K^T (unscaled) -------
      %q_row0 = arith.muli %m_block, %c64 : index loc(callsite("(q_tile * T::BLOCK_M)"("flash_bwd.cu":431:40 to 431:74) at "flash_bwd.cu":484:7 to 484:26))
      %acc_s = cuir.gemm %sQ_st, %sK transpose_b, %acc_sdp_init
          : memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":395:3 to 395:71) at "flash_bwd.cu":484:7 to 484:26))

      // ------- scores_to_probs: P = exp2(S * scale * log2e - LSE * log2e) -------
      %lse_log2 = cuir.load %sLSE_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("lse_log2"("flash_bwd.cu":292:7 to 292:72) at "flash_bwd.cu":401:3 to 401:64))
      %lse_b = cuir.broadcast_rows %lse_log2 : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %neg_lse = arith.negf %lse_b : tensor<64x128xf32, #ACC_S> loc(callsite("lse_log2"("flash_bwd.cu":297:75 to 297:84) at "flash_bwd.cu":401:3 to 401:64))
      %logits = math.fma %acc_s, %scale_tile, %neg_lse : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:40 to 297:85) at "flash_bwd.cu":401:3 to 401:64))
      %p = math.exp2 %logits : tensor<64x128xf32, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":297:11 to 297:87) at "flash_bwd.cu":401:3 to 401:64))

      // ------- dP = dO V^T; probs_to_dscores: dS = P * (dP - D) -------
      %acc_dp = cuir.gemm %sdO_st, %sV transpose_b, %acc_sdp_init
          : memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, memref<128x64xf16, #S>, tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":406:3 to 406:72) at "flash_bwd.cu":484:7 to 484:26))
      %d_rows = cuir.load %sD_st : memref<64xf32, strided<[1], offset: ?>, #S> -> tensor<64xf32, #ROW_S> loc(callsite("d"("flash_bwd.cu":310:7 to 310:58) at "flash_bwd.cu":409:3 to 409:59))
      %d_b = cuir.broadcast_rows %d_rows : tensor<64xf32, #ROW_S> -> tensor<64x128xf32, #ACC_S> loc(callsite("d"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %dp_minus_d = arith.subf %acc_dp, %d_b : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:95 to 314:116) at "flash_bwd.cu":409:3 to 409:59))
      %ds = arith.mulf %p, %dp_minus_d : tensor<64x128xf32, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":314:55 to 314:118) at "flash_bwd.cu":409:3 to 409:59))

      // ------- P and dS to shared memory (16-bit): the other warps' GEMMs read them whole -------
      %p16 = arith.truncf %p : tensor<64x128xf32, #ACC_S> to tensor<64x128xf16, #ACC_S> loc(callsite("acc_s"("flash_bwd.cu":412:3 to 412:55) at "flash_bwd.cu":484:7 to 484:26))
      cuir.store %p16 -> %sP : tensor<64x128xf16, #ACC_S> -> memref<64x128xf16, #S> loc(callsite("sP"("flash_bwd.cu":412:3 to 412:48) at "flash_bwd.cu":484:7 to 484:26))
      %ds16 = arith.truncf %ds : tensor<64x128xf32, #ACC_S> to tensor<64x128xf16, #ACC_S> loc(callsite("acc_dp"("flash_bwd.cu":413:3 to 413:57) at "flash_bwd.cu":484:7 to 484:26))
      cuir.store %ds16 -> %sdS : tensor<64x128xf16, #ACC_S> -> memref<64x128xf16, #S> loc(callsite("sdS"("flash_bwd.cu":413:3 to 413:49) at "flash_bwd.cu":484:7 to 484:26))
      cuir.barrier.sync loc(callsite("flash_bwd.cu":414:3 to 414:19 at "flash_bwd.cu":484:7 to 484:26))

      // ------- dV += P^T dO, dK += dS^T Q -------
      %pt = cuir.load %sP transpose : memref<64x128xf16, #S> -> tensor<128x64xf16, #A_KV> loc(callsite("sP"("flash_bwd.cu":417:73 to 417:114) at "flash_bwd.cu":484:7 to 484:26))
      %acc_dv_new = cuir.gemm %pt, %sdO_st, %acc_dv
          : tensor<128x64xf16, #A_KV>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC_KV> loc(callsite("acc_dv"("flash_bwd.cu":417:3 to 417:71) at "flash_bwd.cu":484:7 to 484:26))
      %dst = cuir.load %sdS transpose : memref<64x128xf16, #S> -> tensor<128x64xf16, #A_KV> loc(callsite("sdS"("flash_bwd.cu":419:73 to 419:115) at "flash_bwd.cu":484:7 to 484:26))
      %acc_dk_new = cuir.gemm %dst, %sQ_st, %acc_dk
          : tensor<128x64xf16, #A_KV>, memref<64x64xf16, strided<[64, 1], offset: ?>, #S>, tensor<128x64xf32, #ACC_KV> loc(callsite("acc_dk"("flash_bwd.cu":419:3 to 419:71) at "flash_bwd.cu":484:7 to 484:26))

      // ------- dQ += dS K: fp32 reductions into the workspace -------
      %acc_dq = cuir.gemm %sdS, %sK, %acc_dq_init
          : memref<64x128xf16, #S>, memref<128x64xf16, #S>, tensor<64x64xf32, #ACC_DQ> loc(callsite("acc_dq"("flash_bwd.cu":425:3 to 425:69) at "flash_bwd.cu":484:7 to 484:26))
      %dq_head = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 64] [1, 1, 1, 1]
          : memref<?x?x?x64xf32, #G> to memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc(callsite("head_rows"("flash_bwd.cu":428:3 to 428:71) at "flash_bwd.cu":484:7 to 484:26))
      cuir.atomic_add %acc_dq -> %dq_head[%q_row0, %c0] : tensor<64x64xf32, #ACC_DQ> -> memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc(callsite("dq_tile"("flash_bwd.cu":336:7 to 336:21) at "flash_bwd.cu":431:3 to 431:95))
      scf.yield %acc_dk_new, %acc_dv_new, %other, %g_next
          : tensor<128x64xf32, #ACC_KV>, tensor<128x64xf32, #ACC_KV>, index, !cuir.group loc("flash_bwd.cu":483:5 to 483:57)
    } loc("flash_bwd.cu":483:5 to 483:57)
    scf.yield %u_dk, %u_dv, %u_stage, %u_g
        : tensor<128x64xf32, #ACC_KV>, tensor<128x64xf32, #ACC_KV>, index, !cuir.group loc("flash_bwd.cu":476:3 to 476:67)
  } loc("head_q"("flash_bwd.cu":476:3 to 476:67))
  cuir.wait_group %h_g pending 0 loc("flash_bwd.cu":488:3 to 488:28)

  // =============================== epilogue: dK * scale and dV through the K and V tiles ===============================
  cuir.barrier.sync loc("flash_bwd.cu":491:3 to 491:19)
  %scale_kv = tensor.splat %softmax_scale : tensor<128x64xf32, #ACC_KV> loc("acc_dk"("flash_bwd.cu":495:3 to 495:93))
  %dk_scaled = arith.mulf %h_dk, %scale_kv : tensor<128x64xf32, #ACC_KV> loc("acc_dk"("flash_bwd.cu":495:3 to 495:93))
  %dk16 = arith.truncf %dk_scaled : tensor<128x64xf32, #ACC_KV> to tensor<128x64xf16, #ACC_KV> loc("acc_dk"("flash_bwd.cu":495:3 to 495:93))
  cuir.store %dk16 -> %sK : tensor<128x64xf16, #ACC_KV> -> memref<128x64xf16, #S> loc("sK"("flash_bwd.cu":495:3 to 495:63))
  %dv16 = arith.truncf %h_dv : tensor<128x64xf32, #ACC_KV> to tensor<128x64xf16, #ACC_KV> loc("acc_dv"("flash_bwd.cu":497:3 to 497:76))
  cuir.store %dv16 -> %sV : tensor<128x64xf16, #ACC_KV> -> memref<128x64xf16, #S> loc("sV"("flash_bwd.cu":497:3 to 497:63))
  cuir.barrier.sync loc("flash_bwd.cu":498:3 to 498:19)
  %dk_head = memref.subview %dk[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("dk"("flash_bwd.cu":501:3 to 501:52))
  %dv_head = memref.subview %dv[%b, 0, %head_kv, 0] [1, %seqlen_kv, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("dv"("flash_bwd.cu":503:3 to 503:52))
  cuir.copy %sK -> %dk_head[%key_begin, %c0] : memref<128x64xf16, #S> -> memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("dk"("flash_bwd.cu":505:3 to 505:97))
  cuir.copy %sV -> %dv_head[%key_begin, %c0] : memref<128x64xf16, #S> -> memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("dv"("flash_bwd.cu":507:3 to 507:97))
  cuir.return loc("flash_bwd.cu":437:5 to 437:89)
} loc("flash_bwd_sm80_kernel"("flash_bwd.cu":437:5 to 437:89))

// =============================== dQ conversion ===============================
cuir.kernel @flash_bwd_f16_d64_convert_dq(
    %ws_dq_accum: memref<?x?x?x64xf32, #G> {cuir.arg = "workspace:dq_accum", cuir.shape = affine_map<(b, hq, hkv, nq, nkv, d) -> (b, hq, (nq ceildiv 64) * 64, d)>} loc("ws.dq_accum"("flash_bwd.cu":517:101 to 517:116)),
    %dq: memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> {cuir.arg = "dq"} loc("params.dq"("flash_bwd.cu":517:61 to 517:99)),
    %softmax_scale: f32 {cuir.arg = "softmax_scale"} loc("params.softmax_scale"("flash_bwd.cu":517:61 to 517:99)),
    %batch: index {cuir.arg = "B"} loc("params.batch"("flash_bwd.cu":517:61 to 517:99)),
    %num_heads_q: index {cuir.arg = "Hq"} loc("params.num_heads_q"("flash_bwd.cu":517:61 to 517:99)),
    %num_heads_kv: index {cuir.arg = "Hkv"} loc("params.num_heads_kv"("flash_bwd.cu":517:61 to 517:99)),
    %seqlen_q: index {cuir.arg = "Nq"} loc("params.seqlen_q"("flash_bwd.cu":517:61 to 517:99)),
    %seqlen_kv: index {cuir.arg = "Nkv"} loc("params.seqlen_kv"("flash_bwd.cu":517:61 to 517:99)))
    grid (b, hq, hkv, nq, nkv) -> (nq ceildiv 64, hq, b)
    threads 256 arch "sm_80" {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index loc("BLOCK_M")
  %staged = cuir.alloc : memref<64x64xf16, #S> loc("staged"("flash_bwd.cu":522:3 to 522:69))
  %m_block = cuir.block_id x loc("m_block"("flash_bwd.cu":523:13 to 523:33))
  %head_q = cuir.block_id y loc("head_q"("flash_bwd.cu":523:35 to 523:54))
  %b = cuir.block_id z loc("batch"("flash_bwd.cu":523:56 to 523:74))
  %row0 = arith.muli %m_block, %c64 : index loc("row"("flash_bwd.cu":525:60 to 525:80))
  %m_blocks = arith.ceildivui %seqlen_q, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %rows = arith.muli %m_blocks, %c64 : index loc("rows"("flash_bwd.cu":128:15 to 128:38))
  %tile = memref.subview %ws_dq_accum[%b, %head_q, 0, 0] [1, 1, %rows, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf32, #G> to memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("tile"("flash_bwd.cu":524:3 to 524:56))
  %dq_head = memref.subview %dq[%b, 0, %head_q, 0] [1, %seqlen_q, 1, 64] [1, 1, 1, 1]
      : memref<?x?x?x64xf16, strided<[?, ?, ?, 1]>, #G> to memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":540:3 to 540:52))
  %zero_tile = arith.constant dense<0.0> : tensor<64x64xf32, #ACC_P> loc("acc"("flash_bwd.cu":535:5 to 535:33))
  %acc = cuir.elementwise (%zero_tile) at [%b, %head_q, %row0, %c0]
      : (tensor<64x64xf32, #ACC_P>) -> tensor<64x64xf32, #ACC_P> {
  ^bb0(%x: f32 loc("acc"("flash_bwd.cu":535:5 to 535:33)), %bi: index loc("batch"("flash_bwd.cu":523:56 to 523:74)), %hi: index loc("head_q"("flash_bwd.cu":523:35 to 523:54)), %row: index loc("row"("flash_bwd.cu":533:5 to 533:58)), %col: index loc("col"("flash_bwd.cu":534:5 to 534:73))):
    %a = memref.load %tile[%row, %col] : memref<?x64xf32, strided<[64, 1], offset: ?>, #G> loc("acc"("flash_bwd.cu":535:24 to 535:32))
    cuir.yield %a : f32 loc("acc"("flash_bwd.cu":535:5 to 535:33))
  } loc("acc"("flash_bwd.cu":535:5 to 535:33))
  %s_tile = tensor.splat %softmax_scale : tensor<64x64xf32, #ACC_P> loc("s"("flash_bwd.cu":526:3 to 526:40))
  %dq_f = arith.mulf %acc, %s_tile : tensor<64x64xf32, #ACC_P> loc("dq"("flash_bwd.cu":536:91 to 536:100))
  %dq16 = arith.truncf %dq_f : tensor<64x64xf32, #ACC_P> to tensor<64x64xf16, #ACC_P> loc("dq"("flash_bwd.cu":536:70 to 536:112))
  cuir.store %dq16 -> %staged[%c0, %c0] : tensor<64x64xf16, #ACC_P> -> memref<64x64xf16, #S> loc("staged"("flash_bwd.cu":536:70 to 536:112))
  cuir.barrier.sync loc("flash_bwd.cu":539:3 to 539:19)
  cuir.copy %staged -> %dq_head[%row0, %c0] : memref<64x64xf16, #S> -> memref<?x64xf16, strided<[?, 1], offset: ?>, #G> loc("dq"("flash_bwd.cu":545:7 to 545:103))
  cuir.return loc("flash_bwd.cu":517:40 to 517:117)
} loc("flash_bwd_convert_dq"("flash_bwd.cu":517:40 to 517:117))
