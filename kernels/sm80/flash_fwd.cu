// flash_fwd.cu: CuIR's FA2-class attention forward kernel for sm_80 (runs on sm_80 ... sm_90).
//
// One thread block computes BLOCK_M = 128 query rows of one (batch, query head) against all the keys that
// those rows may see, streaming K and V through shared memory in tiles of BLOCK_N keys:
//
//   for each KV tile (from the last one to the first):
//     acc_s  = Q K^T                      (mma.sync m16n8k16, fp32 accumulation, K via ldmatrix)
//     ---- the score tile is complete here; masking steps mask it ----
//     online softmax: row_max, row_sum, rescale acc_o, acc_s <- exp2(acc_s * scale*log2e - row_max*...)
//     acc_o += P V                        (P = acc_s rounded to 16 bits, kept in registers; V via ldmatrix.trans)
//   O = acc_o / row_sum, LSE = row_max * scale + ln(row_sum)
//
// Warps: 4 warps; warp w owns query rows [32w, 32w+32) of the block as two m16 slices (M_TILES = 2).
// Each thread holds, per m16 slice, two rows: g = lane/4 and g + 8, and per n8 tile two columns 2t, 2t+1
// (t = lane%4); the 4 threads of a quad (same g) share a row, so row reductions use __shfl_xor_sync 1, 2.
//
// Shared memory: Q [BLOCK_M][d], K [2 stages][BLOCK_N][d], V [2 stages][BLOCK_N][d], every row
// XOR-swizzled at 16-byte-chunk granularity (chunk c of row r is stored at chunk c ^ (r % 8)) so that both
// the cp.async writes and the ldmatrix reads of 8 rows hit 8 distinct groups of 4 banks.
//
// Pipeline (cp.async groups, two stages for K and for V; block n lives in stage n % 2). The KV loop runs
// n_block from the last block down to 0; while it computes on K[n], V[n], the tiles V[n-1] and K[n-1], K[n-2]
// are in flight:
//   top of the step:    wait K[n]; __syncthreads; issue V[n-1] into the other V stage
//   middle of the step: wait V[n]; __syncthreads; issue K[n-2] into the K stage just read
// Every step commits exactly two groups (an empty group when there is no tile left), so
// cp.async.wait_group 2 always means "the oldest outstanding tile has landed".
//
// KV steps: the tiles that need a mask (the ragged last tile, and for causal the tiles that cross the
// diagonal) are the highest-numbered ones, so the KV loop runs them first as "masking steps", then the
// remaining full tiles as "unmasked steps" with no mask arithmetic at all.
//
// The block numbers n that the loops, stages and prefetch conditions count are virtual: the block-iteration
// point kv_tiles (cuir/kv_tiles.cuh) maps each to the KV tile it loads and masks, the identity here. A runtime
// block mask lists its partial tiles there (the masking steps, in any order, so that virtual n - 1 need not be
// the tile next to n), then its full ones.
//
// Grid: (Hq, query blocks, B), the heaviest query blocks of every head first (see block_index). ptxas -v: 255
// registers, no spills, for every instantiation (the build checks).
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuir/attention_params.h"
#include "cuir/attention_params_check.h"
#include "cuir/kv_tiles.cuh"
#include "sm80_primitives.cuh"

namespace cuir_sm80 {

constexpr float kNegInf = -__builtin_huge_valf();
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// Tile shapes, chosen per head dimension (FA2's choice for sm_80: 128 x 64 at d = 128, 128 x 128 at d = 64).
template <Element ELEMENT_, int HEAD_DIM_>
struct FlashFwdTraits {
  static constexpr Element ELEMENT = ELEMENT_;
  static constexpr int HEAD_DIM = HEAD_DIM_;
  static constexpr int BLOCK_M = 128;                          // query rows per thread block
  static constexpr int BLOCK_N = HEAD_DIM == 128 ? 64 : 128;   // keys per KV tile
  static constexpr int NUM_WARPS = 4;
  static constexpr int NUM_THREADS = NUM_WARPS * 32;
  static constexpr int KV_STAGES = 2;                          // shared-memory buffers for K and for V
  static constexpr int ROWS_PER_WARP = BLOCK_M / NUM_WARPS;    // 32
  static constexpr int M_TILES = ROWS_PER_WARP / 16;           // m16 slices per warp
  static constexpr int S_N_TILES = BLOCK_N / 8;                // n8 tiles of the score tile
  static constexpr int O_N_TILES = HEAD_DIM / 8;               // n8 tiles of the output tile
  static constexpr int QK_K_STEPS = HEAD_DIM / 16;             // k16 steps of S = Q K^T
  static constexpr int PV_K_STEPS = BLOCK_N / 16;              // k16 steps of O += P V
  static constexpr int CHUNKS_PER_ROW = HEAD_DIM / 8;          // 16-byte chunks per row of a tile
  static constexpr int Q_TILE_ELEMS = BLOCK_M * HEAD_DIM;
  static constexpr int KV_TILE_ELEMS = BLOCK_N * HEAD_DIM;
  static constexpr int Q_TILE_BYTES = Q_TILE_ELEMS * 2;
  static constexpr int KV_TILE_BYTES = KV_TILE_ELEMS * 2;
  // Shared memory, in bytes from its 1024-aligned base: Q, then the K stages, then the V stages.
  static constexpr uint32_t SQ_OFFSET = 0;
  static constexpr uint32_t SK_OFFSET = SQ_OFFSET + Q_TILE_BYTES;
  static constexpr uint32_t SV_OFFSET = SK_OFFSET + KV_STAGES * KV_TILE_BYTES;
  // Q, K and V tiles, plus 1 KB so that the tiles can start 1024-byte aligned.
  static constexpr int SMEM_BYTES = Q_TILE_BYTES + 2 * KV_STAGES * KV_TILE_BYTES + 1024;
  static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "head dim 64 or 128");
  static_assert(M_TILES * 16 == ROWS_PER_WARP, "warp rows are whole m16 slices");
};

// Byte offset of 16-byte chunk `chunk` (columns 8*chunk .. 8*chunk+7) of row `row` in a swizzled
// [rows][HEAD_DIM] tile: chunk c of row r is stored at chunk position c ^ (r % 8).
template <int HEAD_DIM>
__device__ __forceinline__ uint32_t swizzled_chunk_offset(int row, int chunk) {
  return row * (HEAD_DIM * 2) + ((chunk ^ (row % 8)) << 4);
}
// The ldmatrix addresses below are formed as (tile base + this lane's offset for k-step 0) ^ (2*step << 4):
// every row a lane addresses has row % 8 == lane % 8, its chunk index is 2*step + (0 or 1), and
// (2*step + b) ^ r == (2*step) ^ (b ^ r), so moving to another k-step XORs bits 5..7 of the byte address
// (tile bases are 1024-byte aligned, so those bits belong to the lane offset alone). Row offsets that are
// multiples of 8 rows are then plain additions, which ldmatrix takes as immediate offsets.

// Hides x's value from LLVM's loop-invariant code motion (an empty asm). Used on the bases that the
// address arithmetic of a KV step starts from, so that arithmetic stays inside the step instead of being
// hoisted out of the KV loop into dozens of long-lived registers (which makes ptxas spill).
__device__ __forceinline__ uint32_t opaque_u32(uint32_t x) {
  asm volatile("" : "+r"(x));
  return x;
}
__device__ __forceinline__ int64_t opaque_i64(int64_t x) {
  asm volatile("" : "+l"(x));
  return x;
}

// Thread and block indices, read from their special registers afresh at every use (volatile asm): values
// derived from them are then recomputed where they are needed instead of being computed once before the KV
// loop and held in registers across it (see the register budget in the kernel).
__device__ __forceinline__ int thread_index() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(r));
  return static_cast<int>(r);
}

struct BlockIndex {
  int m_block;  // query block: rows [m_block * BLOCK_M, +BLOCK_M)
  int head_q;   // query head
  int batch;
};

// Grid: (query heads, query blocks, batch) for full attention and causal alike: x = query head (fastest), y =
// query block taken from the last one (the heaviest under a causal-like mask: it sees the most keys) down, z =
// batch, so that the heavy blocks of every head go first and the light ones fill the tail of the grid, also for
// variants, which launch as full attention. (On the H200, against running a head's query blocks side by side:
// variants +1.6% at N = 2k, full attention -1.8% at 8k; docs/benchmarks/sm80.md.) The indices are read with mov
// from the special registers each time, so that no register holds them.
__device__ __forceinline__ BlockIndex block_index(const cuir_attention_params &params) {
  // A runtime block mask replaces this statement by its heavy-first order (cuir/kv_tiles.cuh).
  const cuir_kernels::ExpertQueryOrder query_order{};  // query-order point
  if (BlockIndex listed; query_order.block(listed, params.num_heads_q, static_cast<int>(gridDim.y))) return listed;
  uint32_t x, y, ny, z;
  asm volatile("mov.u32 %0, %%ctaid.x;\n" : "=r"(x));
  asm volatile("mov.u32 %0, %%ctaid.y;\n" : "=r"(y));
  asm volatile("mov.u32 %0, %%nctaid.y;\n" : "=r"(ny));
  asm volatile("mov.u32 %0, %%ctaid.z;\n" : "=r"(z));
  return BlockIndex{static_cast<int>(ny - 1 - y), static_cast<int>(x), static_cast<int>(z)};
}

// Issue the cp.async copies of one [ROWS][HEAD_DIM] tile (row 0 at gmem_tile) into swizzled shared memory at
// smem_tile. RAGGED: rows >= valid_rows are zero-filled (ragged tails): their copies have source size 0 and read
// nothing (the predicated LDGSTS of SASS), so their source address is never dereferenced; without RAGGED
// every row is copied (full tiles).
template <class T, int ROWS, bool RAGGED>
__device__ __forceinline__ void load_tile_async(uint32_t smem_tile, const uint16_t *gmem_tile, int64_t row_stride,
                                                int valid_rows, int tid) {
  constexpr int ROWS_PER_PASS = T::NUM_THREADS / T::CHUNKS_PER_ROW;  // a multiple of 8: row % 8 is fixed
  static_assert(ROWS % ROWS_PER_PASS == 0 && ROWS_PER_PASS % 8 == 0, "whole passes");
  const int row = tid / T::CHUNKS_PER_ROW;
  const int chunk = tid % T::CHUNKS_PER_ROW;
  const uint32_t dst = smem_tile + swizzled_chunk_offset<T::HEAD_DIM>(row, chunk);
  const int64_t pass_stride = opaque_i64(row_stride) * ROWS_PER_PASS;
  const uint16_t *src = gmem_tile + row * row_stride + chunk * 8;
  const int rows_left = valid_rows - row;
#pragma unroll
  for (int pass = 0; pass < ROWS / ROWS_PER_PASS; ++pass) {
    const bool in_bounds = !RAGGED || pass * ROWS_PER_PASS < rows_left;
    cp_async_16B_zfill(dst + pass * ROWS_PER_PASS * (T::HEAD_DIM * 2), src, in_bounds);
    src += pass_stride;
  }
}

// This lane's ldmatrix byte offsets within a tile for k-step 0 (fragment shapes: see gemm_qk and gemm_pv).
template <class T>
__device__ __forceinline__ uint32_t q_lane_offset(int warp_row_in_block, int lane) {
  return swizzled_chunk_offset<T::HEAD_DIM>(warp_row_in_block + lane % 16, lane / 16);
}
template <class T>
__device__ __forceinline__ uint32_t k_lane_offset(int lane) {
  return swizzled_chunk_offset<T::HEAD_DIM>((lane / 16) * 8 + lane % 8, (lane / 8) % 2);
}
template <class T>
__device__ __forceinline__ uint32_t v_lane_offset(int lane) {
  return swizzled_chunk_offset<T::HEAD_DIM>(((lane / 8) % 2) * 8 + lane % 8, lane / 16);
}

// acc_s += Q K^T for this warp's rows: Q [warp rows][d] and K [BLOCK_N][d] from shared memory.
// q_lane_addr / k_lane_addr: this lane's ldmatrix address for k-step 0 (see above).
template <class T>
__device__ __forceinline__ void gemm_qk(float (&acc_s)[T::M_TILES][T::S_N_TILES][4], uint32_t q_lane_addr,
                                        uint32_t k_lane_addr) {
  constexpr int ROW_BYTES = T::HEAD_DIM * 2;
#pragma unroll
  for (int k_step = 0; k_step < T::QK_K_STEPS; ++k_step) {
    // A fragments (Q): lanes 0-15 address rows 0-15 at column 16*k_step, lanes 16-31 the same rows at +8.
    uint32_t q_frag[T::M_TILES][4];
#pragma unroll
    for (int mi = 0; mi < T::M_TILES; ++mi)
      ldmatrix_x4(q_frag[mi], (q_lane_addr ^ (k_step << 5)) + mi * 16 * ROW_BYTES);
    // B fragments (K rows are the n index): one ldmatrix.x4 covers two n8 tiles x k16:
    // matrix j = lane/8 holds keys 16*nj + 8*(j/2) + 0..7 at columns 16*k_step + 8*(j%2).
#pragma unroll
    for (int nj = 0; nj < T::S_N_TILES / 2; ++nj) {
      uint32_t k_frag[4];
      ldmatrix_x4(k_frag, (k_lane_addr ^ (k_step << 5)) + nj * 16 * ROW_BYTES);
#pragma unroll
      for (int mi = 0; mi < T::M_TILES; ++mi) {
        mma_m16n8k16<T::ELEMENT>(acc_s[mi][2 * nj], q_frag[mi], k_frag[0], k_frag[1]);
        mma_m16n8k16<T::ELEMENT>(acc_s[mi][2 * nj + 1], q_frag[mi], k_frag[2], k_frag[3]);
      }
    }
  }
}

// P = acc_s (probabilities) rounded to 16 bits, as the A fragments of the P V product: the accumulator layout
// of n8 tiles 2kk and 2kk+1 is exactly the A-fragment layout of k16 step kk (half the registers of acc_s).
template <class T>
__device__ __forceinline__ void convert_p(uint32_t (&p_frag)[T::PV_K_STEPS][T::M_TILES][4],
                                          const float (&acc_s)[T::M_TILES][T::S_N_TILES][4]) {
#pragma unroll
  for (int k_step = 0; k_step < T::PV_K_STEPS; ++k_step) {
#pragma unroll
    for (int mi = 0; mi < T::M_TILES; ++mi) {
      p_frag[k_step][mi][0] = pack_float2<T::ELEMENT>(acc_s[mi][2 * k_step][0], acc_s[mi][2 * k_step][1]);
      p_frag[k_step][mi][1] = pack_float2<T::ELEMENT>(acc_s[mi][2 * k_step][2], acc_s[mi][2 * k_step][3]);
      p_frag[k_step][mi][2] = pack_float2<T::ELEMENT>(acc_s[mi][2 * k_step + 1][0], acc_s[mi][2 * k_step + 1][1]);
      p_frag[k_step][mi][3] = pack_float2<T::ELEMENT>(acc_s[mi][2 * k_step + 1][2], acc_s[mi][2 * k_step + 1][3]);
    }
  }
}

// acc_o += P V: P from registers (convert_p), V [BLOCK_N][d] from shared memory.
template <class T>
__device__ __forceinline__ void gemm_pv(float (&acc_o)[T::M_TILES][T::O_N_TILES][4],
                                        const uint32_t (&p_frag)[T::PV_K_STEPS][T::M_TILES][4], uint32_t v_lane_addr) {
  constexpr int ROW_BYTES = T::HEAD_DIM * 2;
#pragma unroll
  for (int k_step = 0; k_step < T::PV_K_STEPS; ++k_step) {
    // B fragments (V rows are the k index): ldmatrix.trans, matrix j = lane/8 holds keys
    // 16*k_step + 8*(j%2) + 0..7 at head-dim columns 16*nj + 8*(j/2).
#pragma unroll
    for (int nj = 0; nj < T::O_N_TILES / 2; ++nj) {
      uint32_t v_frag[4];
      ldmatrix_x4_trans(v_frag, (v_lane_addr ^ (nj << 5)) + k_step * 16 * ROW_BYTES);
#pragma unroll
      for (int mi = 0; mi < T::M_TILES; ++mi) {
        mma_m16n8k16<T::ELEMENT>(acc_o[mi][2 * nj], p_frag[k_step][mi], v_frag[0], v_frag[1]);
        mma_m16n8k16<T::ELEMENT>(acc_o[mi][2 * nj + 1], p_frag[k_step][mi], v_frag[2], v_frag[3]);
      }
    }
  }
}

// The mask of the masking steps: score (row, col) becomes -inf unless key col exists (col < seqlen_kv) and
// row may see it (col <= row + last_key_offset). row and col are absolute query and key indices.
template <class T>
__device__ __forceinline__ void apply_mask(float (&acc_s)[T::M_TILES][T::S_N_TILES][4], int warp_row0, int n_block,
                                           int lane, int seqlen_kv, int last_key_offset) {
  const int row_base = warp_row0 + lane / 4;                  // row of this lane's element 0 of m16 slice 0
  const int col_base = n_block * T::BLOCK_N + (lane % 4) * 2;  // col of this lane's element 0 of n8 tile 0
#pragma unroll
  for (int mi = 0; mi < T::M_TILES; ++mi) {
#pragma unroll
    for (int ni = 0; ni < T::S_N_TILES; ++ni) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row_base + mi * 16 + (e / 2) * 8;
        const int col = col_base + ni * 8 + (e % 2);
        if (col >= seqlen_kv || col > row + last_key_offset) acc_s[mi][ni][e] = kNegInf;
      }
    }
  }
}

// Online softmax over one complete (masked) score tile. For each row:
//   row_max' = max(row_max, max_j s_j);  rescale = exp2((row_max - row_max') * scale_log2)
//   p_j = exp2(s_j * scale_log2 - row_max' * scale_log2)      (one FFMA + one EX2 per score)
//   row_sum = row_sum * rescale + sum_j p_j  (this thread's columns only; the quad is summed at the end)
//   acc_o  *= rescale
// The reference point row_max' * scale_log2 is rounded on its own (__fmul_rn: never contracted into an
// FMA), the same in P, the rescale and the log-sum-exp, so that its rounding cancels (contracted, the rescale
// of a row at -1e9 was 2^(1e9 log2 e - its rounding), up to 2^64, not 1). It is exact while |reference| <
// 2^20; the transfer refuses a score_mod constant of magnitude 2^16 or more, and fp16's P would overflow
// past ~2^26.
// A row with no visible key so far keeps row_max = -inf; its reference point is then 0 so that every
// p_j and the rescale are exp2(-inf) = 0 and no NaN appears.
template <class T>
__device__ __forceinline__ void online_softmax_rescale(float (&acc_s)[T::M_TILES][T::S_N_TILES][4],
                                                       float (&acc_o)[T::M_TILES][T::O_N_TILES][4],
                                                       float (&row_max)[T::M_TILES][2], float (&row_sum)[T::M_TILES][2],
                                                       float scale_log2) {
#pragma unroll
  for (int mi = 0; mi < T::M_TILES; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {  // half 0: row lane/4, half 1: row lane/4 + 8 (elements 2*half, +1)
      float new_max = row_max[mi][half];
#pragma unroll
      for (int ni = 0; ni < T::S_N_TILES; ++ni)
        new_max = fmaxf(new_max, fmaxf(acc_s[mi][ni][2 * half], acc_s[mi][ni][2 * half + 1]));
      new_max = fmaxf(new_max, __shfl_xor_sync(0xffffffffu, new_max, 1));
      new_max = fmaxf(new_max, __shfl_xor_sync(0xffffffffu, new_max, 2));

      const float max_scaled = new_max == kNegInf ? 0.f : __fmul_rn(new_max, scale_log2);
      const float rescale = fast_exp2(__fmul_rn(row_max[mi][half], scale_log2) - max_scaled);
      row_max[mi][half] = new_max;

      float tile_sum = 0.f;
#pragma unroll
      for (int ni = 0; ni < T::S_N_TILES; ++ni) {
#pragma unroll
        for (int e = 2 * half; e < 2 * half + 2; ++e) {
          const float p = fast_exp2(fmaf(acc_s[mi][ni][e], scale_log2, -max_scaled));
          acc_s[mi][ni][e] = p;
          tile_sum += p;
        }
      }
      row_sum[mi][half] = row_sum[mi][half] * rescale + tile_sum;

#pragma unroll
      for (int nd = 0; nd < T::O_N_TILES; ++nd) {
        acc_o[mi][nd][2 * half] *= rescale;
        acc_o[mi][nd][2 * half + 1] *= rescale;
      }
    }
  }
}

// One KV step of the block: virtual block n_block (KV tile kv_tiles(n_block)), in stage n_block % 2 of the K and
// V buffers. Once acc_s holds the complete score tile, score_hook(acc_s, kv_tile) runs (score code before the
// mask, as FlashAttention-3's score_mod; none in this kernel), then the mask of a masking step (IS_MASKED). Tiles
// prefetched by a masking step may be the ragged last one (row bound checks); by an unmasked step, always full
// ones.
template <class T, bool IS_MASKED, class KHead, class VHead, class KvTiles, class ScoreHook>
__device__ __forceinline__ void fwd_step(const cuir_attention_params &params, uint32_t smem_base, int n_block,
                                         const KHead &k_head, const VHead &v_head, const KvTiles &kv_tiles,
                                         float (&acc_o)[T::M_TILES][T::O_N_TILES][4], float (&row_max)[T::M_TILES][2],
                                         float (&row_sum)[T::M_TILES][2], float scale_log2, int last_key_offset,
                                         const ScoreHook &score_hook) {
  constexpr int BLOCK_N = T::BLOCK_N;
  const int seqlen_kv = params.seqlen_kv;
  const uint32_t stage_offset = (n_block % T::KV_STAGES) * T::KV_TILE_BYTES;  // this tile's stage
  const uint32_t next_stage_offset = T::KV_TILE_BYTES - stage_offset;          // the other stage
  // Per-step addressing (see the register budget in the kernel).
  const uint32_t step_tid = thread_index();
  const int lane = static_cast<int>(step_tid % 32);
  const int warp_row_in_block = static_cast<int>(step_tid / 32) * T::ROWS_PER_WARP;  // warp's first row
  const uint32_t step_smem = opaque_u32(smem_base);
  const uint32_t sK_stage = step_smem + T::SK_OFFSET + stage_offset;
  const uint32_t sV_stage = step_smem + T::SV_OFFSET + stage_offset;

  cp_async_wait_group<2>();  // K[n_block] (and Q) landed
  __syncthreads();           // ... for every thread; and every warp is done with the previous step's V stage
  if (n_block >= 1) {        // prefetch V[n_block - 1] into the other V stage
    const int v_tile = kv_tiles(n_block - 1);
    load_tile_async<T, BLOCK_N, IS_MASKED>(step_smem + T::SV_OFFSET + next_stage_offset,
                                           v_head() + v_tile * BLOCK_N * params.v_row_stride,
                                           params.v_row_stride, seqlen_kv - v_tile * BLOCK_N, step_tid);
  }
  cp_async_commit_group();

  float acc_s[T::M_TILES][T::S_N_TILES][4];
#pragma unroll
  for (int mi = 0; mi < T::M_TILES; ++mi)
#pragma unroll
    for (int ni = 0; ni < T::S_N_TILES; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_s[mi][ni][e] = 0.f;
  gemm_qk<T>(acc_s, step_smem + T::SQ_OFFSET + q_lane_offset<T>(warp_row_in_block, lane),
             sK_stage + k_lane_offset<T>(lane));

  // ------- score tile complete: acc_s = Q K^T (unscaled) of rows m_start + warp_row_in_block + ...,
  //         keys kv_tile * BLOCK_N + ...; the variant's scores, then the mask of a masking step -------
  const int kv_tile = kv_tiles(n_block);
  score_hook(acc_s, kv_tile);
  if constexpr (IS_MASKED)
    apply_mask<T>(acc_s, block_index(params).m_block * T::BLOCK_M + warp_row_in_block, kv_tile, lane, seqlen_kv,
                  last_key_offset);

  // ------- online softmax: update row_max / row_sum, rescale acc_o, acc_s <- probabilities -------
  online_softmax_rescale<T>(acc_s, acc_o, row_max, row_sum, scale_log2);
  uint32_t p_frag[T::PV_K_STEPS][T::M_TILES][4];  // P = acc_s in 16 bits, the A operand of P V
  convert_p<T>(p_frag, acc_s);

  cp_async_wait_group<2>();  // V[n_block] landed
  __syncthreads();           // ... for every thread; and every warp is done reading K[n_block]'s stage
  if (n_block >= 2) {        // prefetch K[n_block - 2] into the K stage just read
    const int k_tile = kv_tiles(n_block - 2);
    load_tile_async<T, BLOCK_N, IS_MASKED>(sK_stage, k_head() + k_tile * BLOCK_N * params.k_row_stride,
                                           params.k_row_stride, seqlen_kv - k_tile * BLOCK_N, step_tid);
  }
  cp_async_commit_group();

  gemm_pv<T>(acc_o, p_frag, sV_stage + v_lane_offset<T>(lane));
}

template <Element ELEMENT, int HEAD_DIM, bool IS_CAUSAL>
__global__ void __launch_bounds__(FlashFwdTraits<ELEMENT, HEAD_DIM>::NUM_THREADS, 2)
    flash_fwd_sm80_kernel(const cuir_attention_params params) {
  using T = FlashFwdTraits<ELEMENT, HEAD_DIM>;
  constexpr int BLOCK_M = T::BLOCK_M;
  constexpr int BLOCK_N = T::BLOCK_N;
  // Register budget: acc_o and acc_s take 192 of the 255 registers (d = 128), so few values live across the KV
  // loop: each step rederives its addresses from smem_base (opaque_u32) and from the thread and block indices
  // (read afresh, thread_index / block_index), and the epilogue forms the output pointers itself. (ptxas -v
  // reports no spills; the build fails if it does.)

  // ---- shared memory: Q [BLOCK_M][d] (O in the epilogue), K [KV_STAGES][BLOCK_N][d], V [KV_STAGES][BLOCK_N][d];
  //      1024-byte aligned (the ldmatrix address XOR relies on it) ----
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const uint32_t smem_base = (smem_u32addr(smem_raw) + 1023u) & ~1023u;

  const int tid = thread_index();
  const BlockIndex block = block_index(params);
  const int seqlen_q = params.seqlen_q;
  const int seqlen_kv = params.seqlen_kv;
  const int causal_offset = seqlen_kv - seqlen_q;  // causal: row i sees key j iff j <= i + causal_offset
  // The mask: row i sees key j < seqlen_kv iff j <= i + last_key_offset; full attention sets it past every key.
  const int last_key_offset = IS_CAUSAL ? causal_offset : seqlen_kv;
  const int m_start = block.m_block * BLOCK_M;
  const int head_kv = block.head_q / (params.num_heads_q / params.num_heads_kv);  // GQA / MQA
  // Row 0 of this block's K or V sequence, formed where it is used (with the batch index read afresh, see
  // thread_index), so that no 64-bit pointer is held across the KV loop.
  auto k_head = [&]() {
    return static_cast<const uint16_t *>(params.k) + block_index(params).batch * params.k_batch_stride +
           head_kv * params.k_head_stride;
  };
  auto v_head = [&]() {
    return static_cast<const uint16_t *>(params.v) + block_index(params).batch * params.v_batch_stride +
           head_kv * params.v_head_stride;
  };

  // ---- KV tiles this block visits: [0, n_block_max), of which [0, n_unmasked_blocks) need no mask ----
  int n_block_max = (seqlen_kv + BLOCK_N - 1) / BLOCK_N;
  int n_unmasked_blocks = seqlen_kv / BLOCK_N;
  if constexpr (IS_CAUSAL) {
    const int last_row = min(m_start + BLOCK_M, seqlen_q) - 1;
    const int last_key_of_last_row = last_row + causal_offset;  // the last key any row of the block sees
    const int last_key_of_first_row = m_start + causal_offset;  // the last key every row of the block sees
    n_block_max = min(n_block_max, last_key_of_last_row < 0 ? 0 : last_key_of_last_row / BLOCK_N + 1);
    n_unmasked_blocks = min(n_unmasked_blocks, last_key_of_first_row < 0 ? 0 : (last_key_of_first_row + 1) / BLOCK_N);
  }
  // Virtual block n of those is KV tile kv_tiles(n) (cuir/kv_tiles.cuh); a runtime block mask replaces this
  // statement by its listed tiles and takes the bounds from them.
  const cuir_kernels::DenseKvTiles kv_tiles{};  // block-iteration point
  if (n_block_max <= 0) {
    // No row of this block sees any key: O = 0, LSE = -inf.
    uint16_t *o_head =
        static_cast<uint16_t *>(params.o) + block.batch * params.o_batch_stride + block.head_q * params.o_head_stride;
    for (int chunk_id = tid; chunk_id < BLOCK_M * T::CHUNKS_PER_ROW; chunk_id += T::NUM_THREADS) {
      const int row = m_start + chunk_id / T::CHUNKS_PER_ROW;
      const int col = (chunk_id % T::CHUNKS_PER_ROW) * 8;
      if (row < seqlen_q) *reinterpret_cast<uint4 *>(o_head + row * params.o_row_stride + col) = make_uint4(0, 0, 0, 0);
    }
    if (params.lse != nullptr) {
      float *lse_head = params.lse + (static_cast<int64_t>(block.batch) * params.num_heads_q + block.head_q) * seqlen_q;
      for (int row = m_start + tid; row < min(m_start + BLOCK_M, seqlen_q); row += T::NUM_THREADS) lse_head[row] = kNegInf;
    }
    return;
  }

  // ---- prologue: Q and the first K tile (one group), the first V tile, the second K tile ----
  // Virtual block n_block lives in stage n_block % 2 of the K and V buffers.
  {
    const uint16_t *q_head = static_cast<const uint16_t *>(params.q) + block.batch * params.q_batch_stride +
                             block.head_q * params.q_head_stride;
    load_tile_async<T, BLOCK_M, true>(smem_base + T::SQ_OFFSET, q_head + m_start * params.q_row_stride, params.q_row_stride,
                                seqlen_q - m_start, tid);
    const int n_block = n_block_max - 1;
    const int kv_tile = kv_tiles(n_block);
    const uint32_t stage_offset = (n_block % T::KV_STAGES) * T::KV_TILE_BYTES;
    load_tile_async<T, BLOCK_N, true>(smem_base + T::SK_OFFSET + stage_offset, k_head() + kv_tile * BLOCK_N * params.k_row_stride,
                                params.k_row_stride, seqlen_kv - kv_tile * BLOCK_N, tid);
    cp_async_commit_group();
    load_tile_async<T, BLOCK_N, true>(smem_base + T::SV_OFFSET + stage_offset, v_head() + kv_tile * BLOCK_N * params.v_row_stride,
                                params.v_row_stride, seqlen_kv - kv_tile * BLOCK_N, tid);
    cp_async_commit_group();
  }
  if (n_block_max >= 2) {
    const int n_block = n_block_max - 2;
    const int kv_tile = kv_tiles(n_block);
    load_tile_async<T, BLOCK_N, true>(smem_base + T::SK_OFFSET + (n_block % T::KV_STAGES) * T::KV_TILE_BYTES,
                                k_head() + kv_tile * BLOCK_N * params.k_row_stride, params.k_row_stride,
                                seqlen_kv - kv_tile * BLOCK_N, tid);
  }
  cp_async_commit_group();

  // ---- accumulators and softmax state, all in registers ----
  float acc_o[T::M_TILES][T::O_N_TILES][4];
  float row_max[T::M_TILES][2];
  float row_sum[T::M_TILES][2];
#pragma unroll
  for (int mi = 0; mi < T::M_TILES; ++mi) {
#pragma unroll
    for (int nd = 0; nd < T::O_N_TILES; ++nd)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_o[mi][nd][e] = 0.f;
    row_max[mi][0] = row_max[mi][1] = kNegInf;
    row_sum[mi][0] = row_sum[mi][1] = 0.f;
  }
  const float scale_log2 = params.softmax_scale * kLog2e;

  // The score hooks of the masking and the unmasked steps: code over the complete score tile of KV tile n_block
  // (acc_s), before the step's mask. The plain softmax has none.
  auto masking_scores = [&](float (&acc_s)[T::M_TILES][T::S_N_TILES][4], int n_block) __attribute__((always_inline)) {
    (void)acc_s, (void)n_block;
  };
  auto unmasked_scores = [&](float (&acc_s)[T::M_TILES][T::S_N_TILES][4], int n_block) __attribute__((always_inline)) {
    (void)acc_s, (void)n_block;
  };

  // =============================== masking steps ===============================
  // Virtual blocks n_block_max-1 down to n_unmasked_blocks: the ragged last tile and, for causal, the diagonal
  // (a block mask's partial tiles, in any order).
  int n_block = n_block_max - 1;
  for (; n_block >= n_unmasked_blocks; --n_block)
    fwd_step<T, true>(params, smem_base, n_block, k_head, v_head, kv_tiles, acc_o, row_max, row_sum, scale_log2,
                      last_key_offset, masking_scores);

  // =============================== unmasked steps ===============================
  // Virtual blocks n_unmasked_blocks-1 down to 0: full tiles, every score visible, no mask arithmetic; every tile
  // prefetched from here on is a full one (no row bound checks).
  for (; n_block >= 0; --n_block)
    fwd_step<T, false>(params, smem_base, n_block, k_head, v_head, kv_tiles, acc_o, row_max, row_sum, scale_log2,
                       last_key_offset, unmasked_scores);
  cp_async_wait_group<0>();

  // =============================== epilogue ===============================
  // Finish the row sums across the quad, normalise, write LSE, and stage O (16-bit) through this warp's
  // own rows of the Q tile (only this warp ever read them) for 16-byte coalesced stores.
  const BlockIndex block_e = block_index(params);
  const int lane = thread_index() % 32;
  const int warp_row_in_block = (thread_index() / 32) * T::ROWS_PER_WARP;
  const int m_start_e = block_e.m_block * BLOCK_M;
  float *lse_head = params.lse == nullptr
                        ? nullptr
                        : params.lse + (static_cast<int64_t>(block_e.batch) * params.num_heads_q + block_e.head_q) * params.seqlen_q;
  float row_inv_sum[T::M_TILES][2];
#pragma unroll
  for (int mi = 0; mi < T::M_TILES; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float sum = row_sum[mi][half];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const bool row_sees_nothing = sum == 0.f;  // every score of the row was masked
      row_inv_sum[mi][half] = row_sees_nothing ? 0.f : 1.f / sum;
      const float lse = row_sees_nothing ? kNegInf : (__fmul_rn(row_max[mi][half], scale_log2) + fast_log2(sum)) * kLn2;
      const int row = m_start_e + warp_row_in_block + mi * 16 + half * 8 + lane / 4;
      if (lse_head != nullptr && lane % 4 == 0 && row < params.seqlen_q) lse_head[row] = lse;
    }
  }

  unsigned char *sO = smem_raw + (smem_base - smem_u32addr(smem_raw));  // generic pointer to the Q/O tile
  __syncwarp();
#pragma unroll
  for (int mi = 0; mi < T::M_TILES; ++mi) {
#pragma unroll
    for (int nd = 0; nd < T::O_N_TILES; ++nd) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = warp_row_in_block + mi * 16 + half * 8 + lane / 4;
        const uint32_t packed = pack_float2<ELEMENT>(acc_o[mi][nd][2 * half] * row_inv_sum[mi][half],
                                                     acc_o[mi][nd][2 * half + 1] * row_inv_sum[mi][half]);
        *reinterpret_cast<uint32_t *>(sO + swizzled_chunk_offset<HEAD_DIM>(row, nd) + (lane % 4) * 4) = packed;
      }
    }
  }
  __syncwarp();
  uint16_t *o_head = static_cast<uint16_t *>(params.o) + block_e.batch * params.o_batch_stride + block_e.head_q * params.o_head_stride;
  constexpr int WARP_CHUNKS = T::ROWS_PER_WARP * T::CHUNKS_PER_ROW;
#pragma unroll
  for (int pass = 0; pass < WARP_CHUNKS / 32; ++pass) {
    const int chunk_id = pass * 32 + lane;
    const int row = warp_row_in_block + chunk_id / T::CHUNKS_PER_ROW;  // row within the block
    const int chunk = chunk_id % T::CHUNKS_PER_ROW;
    const uint4 data = *reinterpret_cast<const uint4 *>(sO + swizzled_chunk_offset<HEAD_DIM>(row, chunk));
    if (m_start_e + row < params.seqlen_q)
      *reinterpret_cast<uint4 *>(o_head + (m_start_e + row) * params.o_row_stride + chunk * 8) = data;
  }
}

// ---------------------------------------------------------------------------------------------------
// Host side: argument checks and dispatch over (element type, head dim, causal).
// ---------------------------------------------------------------------------------------------------
template <Element ELEMENT, int HEAD_DIM, bool IS_CAUSAL>
static cudaError_t launch_flash_fwd(const cuir_attention_params &params, cudaStream_t stream) {
  using T = FlashFwdTraits<ELEMENT, HEAD_DIM>;
  auto kernel = flash_fwd_sm80_kernel<ELEMENT, HEAD_DIM, IS_CAUSAL>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM_BYTES);
  if (err != cudaSuccess) return err;
  err = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
  if (err != cudaSuccess) return err;
  const unsigned num_m_blocks = (params.seqlen_q + T::BLOCK_M - 1) / T::BLOCK_M;
  const dim3 grid(params.num_heads_q, num_m_blocks, params.batch);  // see block_index
  kernel<<<grid, T::NUM_THREADS, T::SMEM_BYTES, stream>>>(params);
  return cudaGetLastError();
}

template <Element ELEMENT, int HEAD_DIM>
static cudaError_t dispatch_causal(const cuir_attention_params &params, cudaStream_t stream) {
  return params.is_causal ? launch_flash_fwd<ELEMENT, HEAD_DIM, true>(params, stream)
                          : launch_flash_fwd<ELEMENT, HEAD_DIM, false>(params, stream);
}

template <Element ELEMENT>
static cudaError_t dispatch_head_dim(const cuir_attention_params &params, cudaStream_t stream) {
  return params.head_dim == 128 ? dispatch_causal<ELEMENT, 128>(params, stream)
                                : dispatch_causal<ELEMENT, 64>(params, stream);
}

}  // namespace cuir_sm80

extern "C" int cuir_attention_params_sizeof(void) { return static_cast<int>(sizeof(cuir_attention_params)); }

extern "C" int cuir_flash_fwd_sm80(const cuir_attention_params *params, void *stream) {
  using namespace cuir_sm80;
  bool nothing_to_do;
  if (const cudaError_t err = cuir_kernels::check_attention_params(params, &nothing_to_do);
      err != cudaSuccess || nothing_to_do)
    return err;
  const cuir_attention_params &p = *params;
  cudaStream_t cu_stream = static_cast<cudaStream_t>(stream);
  return p.dtype == CUIR_DTYPE_BF16 ? dispatch_head_dim<Element::kBF16>(p, cu_stream)
                                    : dispatch_head_dim<Element::kFP16>(p, cu_stream);
}
