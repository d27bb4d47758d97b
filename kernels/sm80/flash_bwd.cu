// flash_bwd.cu: CuIR's FA2-class attention backward kernels for sm_80 (runs on sm_80 ... sm_90).
//
// Three kernels (cuir/attention_bwd_params.h gives the semantics):
//   flash_bwd_preprocess   per query row: D = rowsum(dO * O) and LSE * log2(e) into the workspace (padded rows:
//                          D = 0, LSE = +inf, so that they give P = 0), and the fp32 dQ accumulator zeroed;
//   flash_bwd_sm80_kernel  one thread block per KV block of BLOCK_N keys of one KV head; K and V stay in shared
//                          memory while the block visits every query block of every query head of its GQA group
//                          that sees it (the "steps"), streaming Q, dO, LSE and D through two shared-memory stages:
//                            S  = Q K^T;  P = exp2(S * scale * log2e - LSE * log2e)      (registers)
//                            dP = dO V^T; dS = P * (dP - D)                             (registers)
//                            P, dS -> shared memory (16-bit)
//                            dV += P^T dO;  dK += dS^T Q                                (registers, fp32)
//                            dQ += dS K                                                 (fp32 reductions, workspace)
//                          then dK * scale and dV are written;
//   flash_bwd_convert_dq   dQ = softmax_scale * accumulator, in the element type.
//
// Warps (8): S and dP (BLOCK_M x BLOCK_N) are split 2 x 4, warp w taking query rows 32 (w / 4) .. and keys
// 32 (w % 4) .., so P and dS come out of the same accumulator layout and combine elementwise; dK and dV
// (BLOCK_N x d) are split 4 x 2 (keys 32 (w % 4) .., columns d/2 (w / 4) ..); dQ (BLOCK_M x d) 2 x 4 (rows
// 32 (w / 4) .., columns d/4 (w % 4) ..). Shared tiles are swizzled (sm80_tiles.cuh).
//
// Pipeline: one cp.async group per step. At the top of a step the group of this step's Q, dO, LSE, D has landed
// (wait_group 0) and a barrier frees the other stage (the previous step's), into which the next step's tiles are
// issued at once; they load during the whole step.
//
// Steps: the query blocks a KV block sees are [m_begin, m_end); the first ones (up to m_unmasked_begin) need the
// mask (the diagonal of a causal mask, or every step of the ragged last KV block), the others none. Query rows past
// seqlen_q need no mask: their padded LSE gives P = 0. The block numbers m the loops count are virtual: every one
// that becomes a Q / dO / LSE / D coordinate goes through the block-iteration point q_tiles (cuir/kv_tiles.cuh),
// the identity here.
//
// dQ: every KV block adds its dS K into the fp32 accumulator with vector reductions (RED, in fragment order). In
// deterministic mode the KV blocks of a query block add in the order of their index (KV block n waits until a
// per-(query block, head) counter reads n: the KV blocks that see a query block are always 0 .. n_last, under the
// causal mask too), so the sums are bitwise reproducible.
//
// Grid: (KV blocks, Hkv, B), dealt in launch order (x fastest) with the KV block fastest, so that lower blocks start
// first (heavier under a causal mask, and never waiting on a later one in deterministic mode) and the blocks in
// flight share their head's Q and dO in L2; under the causal mask with GQA, launched (Hkv, B, KV blocks), the KV
// block slowest (kv_block_slowest). ptxas -v: 255 registers at d = 128, 216-223 at d = 64, no spills (the build
// checks).
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuir/attention_bwd_params.h"
#include "cuir/attention_bwd_params_check.h"
#include "cuir/kv_tiles.cuh"
#include "sm80_primitives.cuh"
#include "sm80_tiles.cuh"

namespace cuir_sm80 {

constexpr float kInf = __builtin_huge_valf();
constexpr float kLog2e = 1.4426950408889634f;

// Tile shapes (FA2's for sm_80 with enough shared memory: 64 query rows x 128 keys, 8 warps).
template <Element ELEMENT_, int HEAD_DIM_, bool IS_CAUSAL_ = false>
struct FlashBwdTraits {
  static constexpr Element ELEMENT = ELEMENT_;
  static constexpr int HEAD_DIM = HEAD_DIM_;
  static constexpr bool IS_CAUSAL = IS_CAUSAL_;  // the mask (bwd_block_index reads it)
  static constexpr int BLOCK_M = 64;   // query rows per step
  static constexpr int BLOCK_N = 128;  // keys per thread block
  static constexpr int NUM_WARPS = 8;
  static constexpr int NUM_THREADS = NUM_WARPS * 32;
  static constexpr int Q_STAGES = 2;  // shared-memory buffers for Q, dO, LSE, D
  // warp sub-tiles (see the top of the file), in m16 / n8 tiles
  static constexpr int SDP_M_TILES = 2, SDP_N_TILES = 4;                 // S, dP: 32 rows x 32 keys
  static constexpr int DKV_M_TILES = 2, DKV_N_TILES = HEAD_DIM / 2 / 8;  // dK, dV: 32 keys x d/2
  static constexpr int DQ_M_TILES = 2, DQ_N_TILES = HEAD_DIM / 4 / 8;    // dQ: 32 rows x d/4
  static constexpr int ROW_BYTES = HEAD_DIM * 2;                         // rows of Q, dO, K, V
  static constexpr int PDS_ROW_BYTES = BLOCK_N * 2;                      // rows of P, dS
  static constexpr int Q_TILE_BYTES = BLOCK_M * ROW_BYTES;
  static constexpr int KV_TILE_BYTES = BLOCK_N * ROW_BYTES;
  static constexpr int PDS_TILE_BYTES = BLOCK_M * PDS_ROW_BYTES;
  static constexpr int ROW_STAT_BYTES = BLOCK_M * 4;  // LSE or D of a query block (fp32)
  // Shared memory, in bytes from its 1024-aligned base.
  static constexpr uint32_t SK_OFFSET = 0;
  static constexpr uint32_t SV_OFFSET = SK_OFFSET + KV_TILE_BYTES;
  static constexpr uint32_t SQ_OFFSET = SV_OFFSET + KV_TILE_BYTES;             // [Q_STAGES]
  static constexpr uint32_t SDO_OFFSET = SQ_OFFSET + Q_STAGES * Q_TILE_BYTES;  // [Q_STAGES]
  static constexpr uint32_t SP_OFFSET = SDO_OFFSET + Q_STAGES * Q_TILE_BYTES;
  static constexpr uint32_t SDS_OFFSET = SP_OFFSET + PDS_TILE_BYTES;
  static constexpr uint32_t SLSE_OFFSET = SDS_OFFSET + PDS_TILE_BYTES;            // [Q_STAGES]
  static constexpr uint32_t SD_OFFSET = SLSE_OFFSET + Q_STAGES * ROW_STAT_BYTES;  // [Q_STAGES]
  static constexpr int SMEM_BYTES = SD_OFFSET + Q_STAGES * ROW_STAT_BYTES + 1024;
  static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "head dim 64 or 128");
  static_assert(SMEM_BYTES <= 227 * 1024, "one block per SM");
};

// The workspace: fp32 dQ accumulator [B][Hq][rows / BLOCK_M][BLOCK_M * d] (each query tile in fragment order,
// see dq_fragment_index), LSE * log2e and D [B][Hq][rows], and the deterministic
// mode's counters [B][Hq][query blocks], where rows = seqlen_q rounded up to BLOCK_M (each part 256-byte aligned).
struct BwdWorkspace {
  float *dq_accum;
  float *lse_log2;
  float *d_rows;
  int *dq_semaphore;
  int rows;  // padded query rows per head

  static constexpr int BLOCK_M = 64;  // the backward's query block (FlashBwdTraits::BLOCK_M of every instance)
  static size_t align256(size_t bytes) { return (bytes + 255) & ~size_t{255}; }
  static int padded_rows(int seqlen_q) { return (seqlen_q + BLOCK_M - 1) / BLOCK_M * BLOCK_M; }

  // Byte sizes of the four parts for these sizes, in their order.
  static void part_sizes(const cuir_attention_bwd_params &p, size_t (&bytes)[4]) {
    const size_t heads = static_cast<size_t>(p.batch) * p.num_heads_q;
    const size_t rows = padded_rows(p.seqlen_q);
    bytes[0] = align256(heads * rows * p.head_dim * sizeof(float));
    bytes[1] = align256(heads * rows * sizeof(float));
    bytes[2] = bytes[1];
    bytes[3] = align256(heads * (rows / BLOCK_M) * sizeof(int));
  }
  static size_t size(const cuir_attention_bwd_params &p) {
    size_t bytes[4];
    part_sizes(p, bytes);
    return bytes[0] + bytes[1] + bytes[2] + bytes[3];
  }
  static BwdWorkspace carve(const cuir_attention_bwd_params &p) {
    size_t bytes[4];
    part_sizes(p, bytes);
    unsigned char *base = static_cast<unsigned char *>(p.workspace);
    BwdWorkspace ws;
    ws.dq_accum = reinterpret_cast<float *>(base);
    ws.lse_log2 = reinterpret_cast<float *>(base + bytes[0]);
    ws.d_rows = reinterpret_cast<float *>(base + bytes[0] + bytes[1]);
    ws.dq_semaphore = reinterpret_cast<int *>(base + bytes[0] + bytes[1] + bytes[2]);
    ws.rows = padded_rows(p.seqlen_q);
    return ws;
  }
  // Offset of (batch, head_q)'s row 0 in the per-row parts.
  __device__ __forceinline__ int64_t head_rows(const cuir_attention_bwd_params &p, int batch, int head_q) const {
    return (static_cast<int64_t>(batch) * p.num_heads_q + head_q) * rows;
  }
};

// ---------------------------------------------------------------------------------------------------
// Preprocessing: D, LSE * log2e, the zeroed dQ accumulator and counters. Grid (query blocks, Hq, B).
// ---------------------------------------------------------------------------------------------------
template <Element ELEMENT, int HEAD_DIM>
__global__ void __launch_bounds__(256) flash_bwd_preprocess(const cuir_attention_bwd_params params, BwdWorkspace ws) {
  constexpr int BLOCK_M = BwdWorkspace::BLOCK_M;
  constexpr int CHUNKS_PER_ROW = HEAD_DIM / 8;  // 16-byte chunks of a row, one per thread and pass
  constexpr int ROWS_PER_PASS = 256 / CHUNKS_PER_ROW;
  const int tid = threadIdx.x;
  const int m_block = blockIdx.x, head_q = blockIdx.y, batch = blockIdx.z;
  const int64_t head_rows = ws.head_rows(params, batch, head_q);
  const uint16_t *o =
      static_cast<const uint16_t *>(params.o) + batch * params.o_batch_stride + head_q * params.o_head_stride;
  const uint16_t *d_o =
      static_cast<const uint16_t *>(params.d_o) + batch * params.do_batch_stride + head_q * params.do_head_stride;
  const float *lse = params.lse + (static_cast<int64_t>(batch) * params.num_heads_q + head_q) * params.seqlen_q;
#pragma unroll
  for (int pass = 0; pass < BLOCK_M / ROWS_PER_PASS; ++pass) {
    const int row = m_block * BLOCK_M + pass * ROWS_PER_PASS + tid / CHUNKS_PER_ROW;
    const int chunk = tid % CHUNKS_PER_ROW;
    float dot = 0.f;
    if (row < params.seqlen_q) {
      const uint4 o8 = *reinterpret_cast<const uint4 *>(o + row * params.o_row_stride + chunk * 8);
      const uint4 do8 = *reinterpret_cast<const uint4 *>(d_o + row * params.do_row_stride + chunk * 8);
      const uint32_t o_words[4] = {o8.x, o8.y, o8.z, o8.w}, do_words[4] = {do8.x, do8.y, do8.z, do8.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float2 of = unpack_float2<ELEMENT>(o_words[i]), df = unpack_float2<ELEMENT>(do_words[i]);
        dot = fmaf(of.x, df.x, fmaf(of.y, df.y, dot));
      }
    }
#pragma unroll
    for (int offset = CHUNKS_PER_ROW / 2; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
    if (chunk == 0) {
      // A row that sees no key (LSE = -inf) and a padded row get LSE = +inf: exp2(s - inf) = 0 for every score.
      const float row_lse = row < params.seqlen_q ? lse[row] : -kInf;
      ws.lse_log2[head_rows + row] = row_lse == -kInf ? kInf : row_lse * kLog2e;
      ws.d_rows[head_rows + row] = dot;
    }
  }
  float4 *dq_accum = reinterpret_cast<float4 *>(ws.dq_accum + (head_rows + m_block * BLOCK_M) * HEAD_DIM);
  for (int i = tid; i < BLOCK_M * HEAD_DIM / 4; i += 256) dq_accum[i] = make_float4(0.f, 0.f, 0.f, 0.f);
  if (tid == 0) ws.dq_semaphore[head_rows / BLOCK_M + m_block] = 0;
}

// ---------------------------------------------------------------------------------------------------
// The main kernel. Grid (KV blocks, Hkv, B).
// ---------------------------------------------------------------------------------------------------
struct BwdBlockIndex {
  int n_block;  // KV block: keys [n_block * BLOCK_N, +BLOCK_N)
  int head_kv;
  int batch;
};

// Whether the grid is launched (Hkv, B, KV blocks) instead of (KV blocks, Hkv, B): under the causal mask with GQA
// the blocks are dealt with the KV block slowest, so that every (KV head, batch)'s block 0, the heaviest (it visits
// every query block of every head of its group of 8 or 16), starts before any block 1 and the light ones fill the
// tail (+5-8% at 8k on qwen2.5-72b and llama3.1-405b). With MHA or full attention the KV block fastest is 3-8%
// faster: the blocks in flight share their head's Q and dO in L2 (docs/benchmarks/bwd-configs.md).
template <bool IS_CAUSAL>
__host__ __device__ __forceinline__ bool kv_block_slowest(const cuir_attention_bwd_params &params) {
  return IS_CAUSAL && params.num_heads_q != params.num_heads_kv;
}

// The thread block's coordinates, read with mov from the special registers at every use, so that no register holds
// them across the steps.
template <class T>
__device__ __forceinline__ BwdBlockIndex bwd_block_index(const cuir_attention_bwd_params &params) {
  uint32_t x, y, z;
  asm volatile("mov.u32 %0, %%ctaid.x;\n" : "=r"(x));
  asm volatile("mov.u32 %0, %%ctaid.y;\n" : "=r"(y));
  asm volatile("mov.u32 %0, %%ctaid.z;\n" : "=r"(z));
  if (kv_block_slowest<T::IS_CAUSAL>(params))
    return BwdBlockIndex{static_cast<int>(z), static_cast<int>(x), static_cast<int>(y)};
  return BwdBlockIndex{static_cast<int>(x), static_cast<int>(y), static_cast<int>(z)};
}

// The query blocks KV block n_block visits, per query head: [m_begin, m_end), of which [m_begin, m_unmasked_begin)
// need the mask. Under the causal mask (row i sees key j iff j <= i + seqlen_kv - seqlen_q) m_begin never decreases
// with n_block, so the KV blocks that visit a query block are 0 .. some n (the deterministic mode's order).
struct QBlockRange {
  int m_begin, m_unmasked_begin, m_end;
};

template <class T, bool IS_CAUSAL>
__device__ __forceinline__ QBlockRange q_block_range(int n_block, int seqlen_q, int seqlen_kv) {
  constexpr int BLOCK_M = T::BLOCK_M;
  const int m_end = (seqlen_q + BLOCK_M - 1) / BLOCK_M;
  const int key_begin = n_block * T::BLOCK_N;
  const bool ragged = key_begin + T::BLOCK_N > seqlen_kv;  // the last KV block, partial: every step masks it
  QBlockRange r{0, ragged ? m_end : 0, m_end};
  if constexpr (IS_CAUSAL) {
    const int causal_offset = seqlen_kv - seqlen_q;
    const int first_row = key_begin - causal_offset;  // the first row that sees the block's first key
    const int last_key = min(key_begin + T::BLOCK_N, seqlen_kv) - 1;
    const int full_row = last_key - causal_offset;  // from this row on, rows see every key of the block
    r.m_begin = first_row <= 0 ? 0 : min(m_end, first_row / BLOCK_M);
    r.m_unmasked_begin = max(r.m_unmasked_begin, full_row <= 0 ? 0 : min(m_end, (full_row + BLOCK_M - 1) / BLOCK_M));
  }
  r.m_unmasked_begin = max(r.m_unmasked_begin, r.m_begin);
  return r;
}

// Issue the cp.async copies of query tile q_tile of head_q into `stage`: Q and dO (rows past seqlen_q zero-filled),
// LSE * log2e and D (from the workspace, padded).
template <class T>
__device__ __forceinline__ void load_q_tiles_async(const cuir_attention_bwd_params &params, const BwdWorkspace &ws,
                                                   uint32_t smem_base, int stage, int head_q, int q_tile, int tid) {
  const int batch = bwd_block_index<T>(params).batch;
  const int row0 = q_tile * T::BLOCK_M;
  const uint16_t *q = static_cast<const uint16_t *>(params.q) + batch * params.q_batch_stride +
                      head_q * params.q_head_stride + row0 * params.q_row_stride;
  const uint16_t *d_o = static_cast<const uint16_t *>(params.d_o) + batch * params.do_batch_stride +
                        head_q * params.do_head_stride + row0 * params.do_row_stride;
  load_tile_async<T::BLOCK_M, T::HEAD_DIM, T::NUM_THREADS>(smem_base + T::SQ_OFFSET + stage * T::Q_TILE_BYTES, q,
                                                           params.q_row_stride, params.seqlen_q - row0, tid);
  load_tile_async<T::BLOCK_M, T::HEAD_DIM, T::NUM_THREADS>(smem_base + T::SDO_OFFSET + stage * T::Q_TILE_BYTES, d_o,
                                                           params.do_row_stride, params.seqlen_q - row0, tid);
  constexpr int STAT_CHUNKS = T::ROW_STAT_BYTES / 16;
  if (tid < 2 * STAT_CHUNKS) {  // LSE by the first STAT_CHUNKS threads, D by the next
    const bool is_d = tid >= STAT_CHUNKS;
    const int chunk = tid % STAT_CHUNKS;
    const float *src = (is_d ? ws.d_rows : ws.lse_log2) + ws.head_rows(params, batch, head_q) + row0 + chunk * 4;
    const uint32_t dst = smem_base + (is_d ? T::SD_OFFSET : T::SLSE_OFFSET) + stage * T::ROW_STAT_BYTES + chunk * 16;
    cp_async_16B_zfill(dst, src, true);
  }
}

// The mask of the masking steps: score (row, key) becomes -inf unless the key exists (key < seqlen_kv) and the
// row may see it (key <= row + last_key_offset). row_base / key_base: absolute indices of this warp's first
// row and key.
template <class T>
__device__ __forceinline__ void apply_mask(float (&acc_s)[T::SDP_M_TILES][T::SDP_N_TILES][4], int row_base,
                                           int key_base, int lane, int seqlen_kv, int last_key_offset) {
#pragma unroll
  for (int mi = 0; mi < T::SDP_M_TILES; ++mi)
#pragma unroll
    for (int ni = 0; ni < T::SDP_N_TILES; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row_base + 16 * mi + 8 * (e / 2) + lane / 4;
        const int key = key_base + 8 * ni + 2 * (lane % 4) + e % 2;
        if (key >= seqlen_kv || key > row + last_key_offset) acc_s[mi][ni][e] = -kInf;
      }
}

// Scores -> probabilities with the forward's log-sum-exp: p = exp2(s * scale_log2 - LSE * log2e) (one FFMA and
// one EX2 a score). s_lse_log2: LSE * log2e of this warp's first row, in shared memory.
template <class T>
__device__ __forceinline__ void scores_to_probs(float (&acc_s)[T::SDP_M_TILES][T::SDP_N_TILES][4],
                                                const float *s_lse_log2, int lane, float scale_log2) {
#pragma unroll
  for (int mi = 0; mi < T::SDP_M_TILES; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half) {  // rows lane/4 and lane/4 + 8: elements 2 half, 2 half + 1
      const float lse_log2 = s_lse_log2[16 * mi + 8 * half + lane / 4];
#pragma unroll
      for (int ni = 0; ni < T::SDP_N_TILES; ++ni)
#pragma unroll
        for (int e = 2 * half; e < 2 * half + 2; ++e)
          acc_s[mi][ni][e] = fast_exp2(fmaf(acc_s[mi][ni][e], scale_log2, -lse_log2));
    }
}

// dP -> dS = P * (dP - D), in place in acc_dp. s_d: D of this warp's first row, in shared memory.
template <class T>
__device__ __forceinline__ void probs_to_dscores(float (&acc_dp)[T::SDP_M_TILES][T::SDP_N_TILES][4],
                                                 const float (&acc_p)[T::SDP_M_TILES][T::SDP_N_TILES][4],
                                                 const float *s_d, int lane) {
#pragma unroll
  for (int mi = 0; mi < T::SDP_M_TILES; ++mi)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const float d = s_d[16 * mi + 8 * half + lane / 4];
#pragma unroll
      for (int ni = 0; ni < T::SDP_N_TILES; ++ni)
#pragma unroll
        for (int e = 2 * half; e < 2 * half + 2; ++e) acc_dp[mi][ni][e] = acc_p[mi][ni][e] * (acc_dp[mi][ni][e] - d);
    }
}

// The dQ accumulator of a query tile (BLOCK_M x d fp32, contiguous) is stored in fragment order: the float4 of
// (warp, m16 tile mi, n8 tile ni, lane) -- the lane's four accumulator elements -- is float4 number
// ((warp * DQ_M_TILES + mi) * DQ_N_TILES + ni) * 32 + lane, so that each reduction instruction of a warp covers
// 512 contiguous bytes (whole cache lines) instead of 8 rows' scattered 32-byte pieces.
template <class T>
__device__ __forceinline__ int dq_fragment_index(int warp, int mi, int ni, int lane) {
  return ((warp * T::DQ_M_TILES + mi) * T::DQ_N_TILES + ni) * 32 + lane;
}

// dq_tile += acc_dq (fp32 reductions into the workspace, fragment order).
template <class T>
__device__ __forceinline__ void add_dq(float *dq_tile, const float (&acc_dq)[T::DQ_M_TILES][T::DQ_N_TILES][4], int warp,
                                       int lane) {
  float4 *tile = reinterpret_cast<float4 *>(dq_tile);
#pragma unroll
  for (int mi = 0; mi < T::DQ_M_TILES; ++mi)
#pragma unroll
    for (int ni = 0; ni < T::DQ_N_TILES; ++ni)
      red_add_f32x4(reinterpret_cast<float *>(tile + dq_fragment_index<T>(warp, mi, ni, lane)),
                    make_float4(acc_dq[mi][ni][0], acc_dq[mi][ni][1], acc_dq[mi][ni][2], acc_dq[mi][ni][3]));
}

// Deterministic mode: wait until the counter of this (query block, head) reads n_block (every lower KV block has
// added its dQ), and after the additions let the next KV block go.
__device__ __forceinline__ void wait_dq_turn(const int *semaphore, int n_block, int tid) {
  if (tid == 0)
    while (ld_acquire_gpu(semaphore) != n_block) __nanosleep(64);
  __syncthreads();
}
__device__ __forceinline__ void pass_dq_turn(int *semaphore, int tid) {
  __threadfence();  // this thread's additions are visible before the counter moves
  __syncthreads();
  if (tid == 0) atomicAdd(semaphore, 1);
}

// The query step after (head_q, m): the next query block of the head, else the first one of the next head.
struct QStep {
  int head_q, m_block;
  bool valid;
};
__device__ __forceinline__ QStep next_q_step(const QBlockRange &range, int head_q, int m_block, int last_head_q) {
  if (m_block + 1 < range.m_end) return QStep{head_q, m_block + 1, true};
  return QStep{head_q + 1, range.m_begin, head_q < last_head_q};
}

// One step of the KV block: query block m_block (query tile q_tiles(m_block)) of head_q, in `stage` of the Q / dO
// / LSE / D buffers; the next step's tiles are issued into the other stage at the top. IS_MASKED: a masking step.
template <class T, bool IS_MASKED, class QTiles>
__device__ __forceinline__ void bwd_step(const cuir_attention_bwd_params &params, const BwdWorkspace &ws,
                                         uint32_t smem_base, int stage, int head_q, int m_block, QStep next,
                                         const QTiles &q_tiles, float (&acc_dk)[T::DKV_M_TILES][T::DKV_N_TILES][4],
                                         float (&acc_dv)[T::DKV_M_TILES][T::DKV_N_TILES][4], float scale_log2,
                                         int last_key_offset) {
  constexpr Element E = T::ELEMENT;
  constexpr int RB = T::ROW_BYTES;
  constexpr int PRB = T::PDS_ROW_BYTES;
  const int tid = thread_index();
  const int lane = tid % 32, warp = tid / 32;
  const int sdp_row0 = 32 * (warp / 4), sdp_key0 = 32 * (warp % 4);               // S, dP
  const int dkv_key0 = 32 * (warp % 4), dkv_col0 = T::HEAD_DIM / 2 * (warp / 4);  // dK, dV
  const int dq_row0 = 32 * (warp / 4), dq_col0 = T::HEAD_DIM / 4 * (warp % 4);    // dQ
  const uint32_t base = opaque_u32(smem_base);
  unsigned char *smem = reinterpret_cast<unsigned char *>(__cvta_shared_to_generic(base));
  const uint32_t sK = base + T::SK_OFFSET, sV = base + T::SV_OFFSET;
  const uint32_t sQ = base + T::SQ_OFFSET + stage * T::Q_TILE_BYTES;
  const uint32_t sdO = base + T::SDO_OFFSET + stage * T::Q_TILE_BYTES;
  const uint32_t sP = base + T::SP_OFFSET, sdS = base + T::SDS_OFFSET;

  cp_async_wait_group<0>();  // this step's Q, dO, LSE, D landed
  __syncthreads();           // ... for every thread; and every warp is done with the previous step (other stage, P, dS)
  if (next.valid) load_q_tiles_async<T>(params, ws, base, stage ^ 1, next.head_q, q_tiles(next.m_block), tid);
  cp_async_commit_group();

  // ------- S = Q K^T, the mask of a masking step, P -------
  const int q_tile = q_tiles(m_block);
  float acc_s[T::SDP_M_TILES][T::SDP_N_TILES][4];
  zero_acc(acc_s);
  warp_gemm<E, T::SDP_M_TILES, T::SDP_N_TILES, T::HEAD_DIM / 16>(acc_s, RowMajorA<RB>(sQ, sdp_row0, 0, lane),
                                                                 NMajorB<RB>(sK, sdp_key0, 0, lane));
  if constexpr (IS_MASKED)
    apply_mask<T>(acc_s, q_tile * T::BLOCK_M + sdp_row0, bwd_block_index<T>(params).n_block * T::BLOCK_N + sdp_key0,
                  lane, params.seqlen_kv, last_key_offset);
  const float *s_lse = reinterpret_cast<const float *>(smem + T::SLSE_OFFSET + stage * T::ROW_STAT_BYTES);
  scores_to_probs<T>(acc_s, s_lse + sdp_row0, lane, scale_log2);

  // ------- dP = dO V^T, dS -------
  float acc_dp[T::SDP_M_TILES][T::SDP_N_TILES][4];
  zero_acc(acc_dp);
  warp_gemm<E, T::SDP_M_TILES, T::SDP_N_TILES, T::HEAD_DIM / 16>(acc_dp, RowMajorA<RB>(sdO, sdp_row0, 0, lane),
                                                                 NMajorB<RB>(sV, sdp_key0, 0, lane));
  const float *s_d = reinterpret_cast<const float *>(smem + T::SD_OFFSET + stage * T::ROW_STAT_BYTES);
  probs_to_dscores<T>(acc_dp, acc_s, s_d + sdp_row0, lane);

  // ------- P and dS to shared memory: the other warps' GEMMs read them whole -------
  store_acc_to_tile<E, PRB>(smem + T::SP_OFFSET, acc_s, 1.f, sdp_row0, sdp_key0 / 8, lane);
  store_acc_to_tile<E, PRB>(smem + T::SDS_OFFSET, acc_dp, 1.f, sdp_row0, sdp_key0 / 8, lane);
  __syncthreads();

  // ------- dV += P^T dO, dK += dS^T Q (P, dS stored [rows][keys]: column-major A; dO, Q k-major B) -------
  warp_gemm<E, T::DKV_M_TILES, T::DKV_N_TILES, T::BLOCK_M / 16>(acc_dv, ColMajorA<PRB>(sP, 0, dkv_key0 / 8, lane),
                                                                KMajorB<RB>(sdO, 0, dkv_col0 / 8, lane));
  warp_gemm<E, T::DKV_M_TILES, T::DKV_N_TILES, T::BLOCK_M / 16>(acc_dk, ColMajorA<PRB>(sdS, 0, dkv_key0 / 8, lane),
                                                                KMajorB<RB>(sQ, 0, dkv_col0 / 8, lane));

  // ------- dQ += dS K (K stored [keys][d]: k-major B), fp32 reductions into the workspace -------
  float acc_dq[T::DQ_M_TILES][T::DQ_N_TILES][4];
  zero_acc(acc_dq);
  warp_gemm<E, T::DQ_M_TILES, T::DQ_N_TILES, T::BLOCK_N / 16>(acc_dq, RowMajorA<PRB>(sdS, dq_row0, 0, lane),
                                                              KMajorB<RB>(sK, 0, dq_col0 / 8, lane));
  const BwdBlockIndex block = bwd_block_index<T>(params);
  const int64_t head_rows = ws.head_rows(params, block.batch, head_q);
  int *semaphore = ws.dq_semaphore + head_rows / T::BLOCK_M + q_tile;
  if (params.deterministic) wait_dq_turn(semaphore, block.n_block, tid);
  add_dq<T>(ws.dq_accum + (head_rows + q_tile * T::BLOCK_M) * T::HEAD_DIM, acc_dq, warp, lane);
  if (params.deterministic) pass_dq_turn(semaphore, tid);
}

template <Element ELEMENT, int HEAD_DIM, bool IS_CAUSAL>
__global__ void __launch_bounds__(FlashBwdTraits<ELEMENT, HEAD_DIM>::NUM_THREADS, 1)
    flash_bwd_sm80_kernel(const cuir_attention_bwd_params params, const BwdWorkspace ws) {
  using T = FlashBwdTraits<ELEMENT, HEAD_DIM, IS_CAUSAL>;
  // ---- shared memory (see FlashBwdTraits), 1024-byte aligned ----
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const uint32_t smem_base = (smem_u32addr(smem_raw) + 1023u) & ~1023u;

  const BwdBlockIndex block = bwd_block_index<T>(params);
  const int tid = thread_index();
  const int seqlen_kv = params.seqlen_kv;
  // The mask: row i sees key j < seqlen_kv iff j <= i + last_key_offset; full attention sets it past every key.
  const int last_key_offset = IS_CAUSAL ? seqlen_kv - params.seqlen_q : seqlen_kv;
  const int group = params.num_heads_q / params.num_heads_kv;  // GQA / MQA: the query heads reading this KV head
  const int first_head_q = block.head_kv * group, last_head_q = first_head_q + group - 1;
  const int key_begin = block.n_block * T::BLOCK_N;
  // Virtual query block m of the range is query tile q_tiles(m) (cuir/kv_tiles.cuh); a runtime block mask
  // replaces this statement by its transposed lists, and the range is then theirs.
  const cuir_kernels::DenseQTiles q_tiles{};  // block-iteration point
  const QBlockRange range = q_tiles.range(q_block_range<T, IS_CAUSAL>(block.n_block, params.seqlen_q, seqlen_kv));

  // ---- prologue: K, V and the first step's tiles, one group ----
  const uint16_t *k = static_cast<const uint16_t *>(params.k) + block.batch * params.k_batch_stride +
                      block.head_kv * params.k_head_stride + key_begin * params.k_row_stride;
  const uint16_t *v = static_cast<const uint16_t *>(params.v) + block.batch * params.v_batch_stride +
                      block.head_kv * params.v_head_stride + key_begin * params.v_row_stride;
  load_tile_async<T::BLOCK_N, HEAD_DIM, T::NUM_THREADS>(smem_base + T::SK_OFFSET, k, params.k_row_stride,
                                                        seqlen_kv - key_begin, tid);
  load_tile_async<T::BLOCK_N, HEAD_DIM, T::NUM_THREADS>(smem_base + T::SV_OFFSET, v, params.v_row_stride,
                                                        seqlen_kv - key_begin, tid);
  if (range.m_begin < range.m_end)
    load_q_tiles_async<T>(params, ws, smem_base, 0, first_head_q, q_tiles(range.m_begin), tid);
  cp_async_commit_group();

  float acc_dk[T::DKV_M_TILES][T::DKV_N_TILES][4];
  float acc_dv[T::DKV_M_TILES][T::DKV_N_TILES][4];
  zero_acc(acc_dk);
  zero_acc(acc_dv);
  const float scale_log2 = params.softmax_scale * kLog2e;

  int stage = 0;
  for (int head_q = first_head_q; head_q <= last_head_q; ++head_q) {
    // ========== masking steps: the diagonal of a causal mask, every step of the ragged last KV block ==========
    int m_block = range.m_begin;
    for (; m_block < range.m_unmasked_begin; ++m_block, stage ^= 1)
      bwd_step<T, true>(params, ws, smem_base, stage, head_q, m_block, next_q_step(range, head_q, m_block, last_head_q),
                        q_tiles, acc_dk, acc_dv, scale_log2, last_key_offset);
    // ========== unmasked steps: every score visible ==========
    for (; m_block < range.m_end; ++m_block, stage ^= 1)
      bwd_step<T, false>(params, ws, smem_base, stage, head_q, m_block,
                         next_q_step(range, head_q, m_block, last_head_q), q_tiles, acc_dk, acc_dv, scale_log2,
                         last_key_offset);
  }
  cp_async_wait_group<0>();

  // ---- epilogue: dK * scale and dV (16-bit) through the K and V tiles, 16-byte coalesced stores ----
  __syncthreads();  // every warp is done reading K and V
  unsigned char *smem = smem_raw + (smem_base - smem_u32addr(smem_raw));
  const int lane = tid % 32, warp = tid / 32;
  const int dkv_key0 = 32 * (warp % 4), dkv_col0 = HEAD_DIM / 2 * (warp / 4);
  store_acc_to_tile<ELEMENT, T::ROW_BYTES>(smem + T::SK_OFFSET, acc_dk, params.softmax_scale, dkv_key0, dkv_col0 / 8,
                                           lane);
  store_acc_to_tile<ELEMENT, T::ROW_BYTES>(smem + T::SV_OFFSET, acc_dv, 1.f, dkv_key0, dkv_col0 / 8, lane);
  __syncthreads();
  const BwdBlockIndex block_e = bwd_block_index<T>(params);
  const int key_begin_e = block_e.n_block * T::BLOCK_N;
  uint16_t *dk = static_cast<uint16_t *>(params.dk) + block_e.batch * params.dk_batch_stride +
                 block_e.head_kv * params.dk_head_stride + key_begin_e * params.dk_row_stride;
  uint16_t *dv = static_cast<uint16_t *>(params.dv) + block_e.batch * params.dv_batch_stride +
                 block_e.head_kv * params.dv_head_stride + key_begin_e * params.dv_row_stride;
  store_tile<T::BLOCK_N, HEAD_DIM, T::NUM_THREADS>(dk, params.dk_row_stride, smem + T::SK_OFFSET,
                                                   params.seqlen_kv - key_begin_e, tid);
  store_tile<T::BLOCK_N, HEAD_DIM, T::NUM_THREADS>(dv, params.dv_row_stride, smem + T::SV_OFFSET,
                                                   params.seqlen_kv - key_begin_e, tid);
}

// ---------------------------------------------------------------------------------------------------
// dQ = softmax_scale * accumulator, in the element type. Grid (query blocks, Hq, B). The tile is read in its
// fragment order (whole lines), converted into shared memory and written out in rows of 16-byte chunks: stored
// straight from the fragments, every warp store wrote 8 rows' 16-byte pieces, half sectors.
// ---------------------------------------------------------------------------------------------------
template <Element ELEMENT, int HEAD_DIM>
__global__ void __launch_bounds__(256) flash_bwd_convert_dq(const cuir_attention_bwd_params params, BwdWorkspace ws) {
  using T = FlashBwdTraits<ELEMENT, HEAD_DIM>;
  constexpr int FRAGMENTS = T::BLOCK_M * HEAD_DIM / 4;  // float4s of a query tile (see dq_fragment_index)
  constexpr int STAGED_ROW = HEAD_DIM + 8;  // 16 bytes of padding: a fragment store's 8 rows on distinct banks
  constexpr int CHUNKS_PER_ROW = HEAD_DIM / 8;
  __shared__ __align__(16) uint16_t staged[T::BLOCK_M * STAGED_ROW];
  const int m_block = blockIdx.x, head_q = blockIdx.y, batch = blockIdx.z;
  const float4 *tile = reinterpret_cast<const float4 *>(
      ws.dq_accum + (ws.head_rows(params, batch, head_q) + m_block * T::BLOCK_M) * HEAD_DIM);
  const float s = params.softmax_scale;
#pragma unroll
  for (int pass = 0; pass < FRAGMENTS / 256; ++pass) {
    const int id = pass * 256 + threadIdx.x;  // = dq_fragment_index(warp, mi, ni, lane)
    const int lane = id % 32, ni = id / 32 % T::DQ_N_TILES, mi = id / 32 / T::DQ_N_TILES % T::DQ_M_TILES;
    const int warp = id / 32 / T::DQ_N_TILES / T::DQ_M_TILES;
    // the accumulator element layout of mma.m16n8k16 (sm80_primitives.cuh), at the warp's dQ sub-tile
    const int row = 32 * (warp / 4) + 16 * mi + lane / 4;
    const int col = HEAD_DIM / 4 * (warp % 4) + 8 * ni + 2 * (lane % 4);
    const float4 acc = tile[id];
    *reinterpret_cast<uint32_t *>(staged + row * STAGED_ROW + col) = pack_float2<ELEMENT>(acc.x * s, acc.y * s);
    *reinterpret_cast<uint32_t *>(staged + (row + 8) * STAGED_ROW + col) = pack_float2<ELEMENT>(acc.z * s, acc.w * s);
  }
  __syncthreads();
  uint16_t *dq = static_cast<uint16_t *>(params.dq) + batch * params.dq_batch_stride + head_q * params.dq_head_stride;
#pragma unroll
  for (int pass = 0; pass < T::BLOCK_M * CHUNKS_PER_ROW / 256; ++pass) {
    const int id = pass * 256 + threadIdx.x, row = id / CHUNKS_PER_ROW, chunk = id % CHUNKS_PER_ROW;
    if (m_block * T::BLOCK_M + row < params.seqlen_q)
      *reinterpret_cast<uint4 *>(dq + (m_block * T::BLOCK_M + row) * params.dq_row_stride + chunk * 8) =
          *reinterpret_cast<const uint4 *>(staged + row * STAGED_ROW + chunk * 8);
  }
}

// ---------------------------------------------------------------------------------------------------
// Host side: the three launches, dispatched over (element type, head dim, causal).
// ---------------------------------------------------------------------------------------------------
template <Element ELEMENT, int HEAD_DIM, bool IS_CAUSAL>
static cudaError_t launch_flash_bwd(const cuir_attention_bwd_params &params, cudaStream_t stream) {
  using T = FlashBwdTraits<ELEMENT, HEAD_DIM>;
  const BwdWorkspace ws = BwdWorkspace::carve(params);
  const unsigned num_m_blocks = (params.seqlen_q + T::BLOCK_M - 1) / T::BLOCK_M;
  const unsigned num_n_blocks = (params.seqlen_kv + T::BLOCK_N - 1) / T::BLOCK_N;
  const dim3 q_grid(num_m_blocks, params.num_heads_q, params.batch);
  if (num_m_blocks > 0) flash_bwd_preprocess<ELEMENT, HEAD_DIM><<<q_grid, 256, 0, stream>>>(params, ws);
  if (num_n_blocks > 0) {
    auto kernel = flash_bwd_sm80_kernel<ELEMENT, HEAD_DIM, IS_CAUSAL>;
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM_BYTES);
    if (err != cudaSuccess) return err;
    const dim3 grid = kv_block_slowest<IS_CAUSAL>(params) ? dim3(params.num_heads_kv, params.batch, num_n_blocks)
                                                          : dim3(num_n_blocks, params.num_heads_kv, params.batch);
    kernel<<<grid, T::NUM_THREADS, T::SMEM_BYTES, stream>>>(params, ws);
  }
  if (num_m_blocks > 0) flash_bwd_convert_dq<ELEMENT, HEAD_DIM><<<q_grid, 256, 0, stream>>>(params, ws);
  return cudaGetLastError();
}

template <Element ELEMENT, int HEAD_DIM>
static cudaError_t dispatch_causal(const cuir_attention_bwd_params &params, cudaStream_t stream) {
  return params.is_causal ? launch_flash_bwd<ELEMENT, HEAD_DIM, true>(params, stream)
                          : launch_flash_bwd<ELEMENT, HEAD_DIM, false>(params, stream);
}

template <Element ELEMENT>
static cudaError_t dispatch_head_dim(const cuir_attention_bwd_params &params, cudaStream_t stream) {
  return params.head_dim == 128 ? dispatch_causal<ELEMENT, 128>(params, stream)
                                : dispatch_causal<ELEMENT, 64>(params, stream);
}

}  // namespace cuir_sm80

extern "C" int cuir_attention_bwd_params_sizeof(void) { return static_cast<int>(sizeof(cuir_attention_bwd_params)); }

extern "C" size_t cuir_flash_bwd_sm80_workspace_size(const cuir_attention_bwd_params *params) {
  return params == nullptr ? 0 : cuir_sm80::BwdWorkspace::size(*params);
}

extern "C" int cuir_flash_bwd_sm80(const cuir_attention_bwd_params *params, void *stream) {
  using namespace cuir_sm80;
  bool nothing_to_do;
  if (const cudaError_t err = cuir_kernels::check_attention_bwd_params(params, &nothing_to_do);
      err != cudaSuccess || nothing_to_do)
    return err;
  const cuir_attention_bwd_params &p = *params;
  cudaStream_t cu_stream = static_cast<cudaStream_t>(stream);
  return p.dtype == CUIR_DTYPE_BF16 ? dispatch_head_dim<Element::kBF16>(p, cu_stream)
                                    : dispatch_head_dim<Element::kFP16>(p, cu_stream);
}
