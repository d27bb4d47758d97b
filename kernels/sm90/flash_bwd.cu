// flash_bwd.cu: CuIR's FA3-class attention backward kernel for Hopper (sm_90a: TMA, wgmma, setmaxnreg).
//
// Three kernels, in stream order:
//   preprocess  D = rowsum(dO * O) and LSE * log2(e) per query row, into the workspace (fp32, rows padded to
//               whole query blocks: padded rows get D = 0 and LSE = +inf, so that their P is 0); zeroes the
//               fp32 dQ accumulator and the deterministic mode's semaphores;
//   main        one thread block per (KV tile of BLOCK_N = 128 keys, KV head, batch), or under the causal mask with GQA
//               per pair of KV tiles taken one after the other (block_index); for a tile it loops over the query
//               blocks (BLOCK_M = 64 rows) that see its keys and, for each, over the query heads of its GQA
//               group, keeping dK and dV of its keys in registers over all of them:
//                 S^T  = K Q^T                 wgmma, K and Q from shared memory
//                 P^T  = exp2(S^T * scale * log2e - LSE * log2e)     (the forward's probabilities, transposed)
//                 dP^T = V dO^T                wgmma, V and dO from shared memory
//                 dS^T = P^T * (dP^T - D)
//                 dV  += P^T dO,  dK += dS^T Q wgmma, P^T and dS^T from registers (the accumulator layout is
//                                              the A-fragment layout), dO and Q from shared memory
//                 dQ   = dS K                  wgmma, dS^T stored to shared memory and read transposed; the
//                                              fp32 result staged in shared memory and added into the
//                                              workspace's accumulator by bulk reductions (cp.reduce.async.bulk)
//                                              of a writer warp (deterministic mode: in KV-tile order, behind
//                                              a per-query-block semaphore)
//   convert     dQ = softmax_scale * accumulator, rounded to the element type.
//
// Computing the transposed scores (keys as the wgmma M dimension) puts P^T and dS^T in registers in exactly
// the A-operand layout of dV += P^T dO and dK += dS^T Q, so only dS goes through shared memory (for dQ).
//
// Warp specialization: warpgroup 0 is the producer: in warp 0 one elected thread issues every TMA copy (K and V
// once, then Q + LSE and dO + D of each step into a ring of STAGES stages, each half completing on its own "full"
// mbarrier, reused once every consumer thread has arrived on the stage's "empty" mbarrier); warp 1 is the dQ
// writer (named barriers hand it each consumer's dQ tile and hand the buffer back). Warpgroups 1 and 2 are
// consumers, each owning 64 of the block's 128 keys (the M = 64 of wgmma). setmaxnreg moves the producer's
// registers to the consumers. dQ: at head dim 128 consumer c computes dQ columns [64c, 64c + 64) over all 128
// keys (both warpgroups' dS, one named barrier per step); at head dim 64 each computes all columns over its own
// 64 keys (and both tiles are added). dK and dV leave through the Q and dO stages, for coalesced stores.
//
// Block iteration: a step's query block is virtual; `q_tiles(m)` (cuir/kv_tiles.cuh) maps it to the query tile
// it loads and masks, the identity here. The masking steps (a ragged last KV tile, or for causal the query
// blocks that cross the diagonal) come first, then the unmasked ones from the last query block down; each query
// block for every head of the group in turn. So the thread blocks in flight read the same query blocks of the
// same heads at about the same time, and a GQA group's Q, dO and dQ accumulator stay in L2 (heads outer and
// query blocks ascending measured 5-15% slower on causal GQA, docs/benchmarks/bwd-configs.md); the second KV
// tile of a causal GQA pair (block_index) visits its unmasked blocks ascending, which keeps the pairs in step. The
// deterministic mode keeps the query blocks ascending: its KV tiles add into a query block one after another.
//
// Shared memory (128-byte swizzle everywhere, slabs of 64 columns as TMA writes them, see sm90_primitives.cuh):
// K, V [HEAD_DIM/64][BLOCK_N][64]; Q, dO [STAGES][HEAD_DIM/64][BLOCK_M][64]; dS^T [2][BLOCK_N][BLOCK_M] (double
// buffered across steps); dQ [2 consumers][64 x 64] fp32; LSE, D [STAGES][BLOCK_M] fp32; the mbarriers: 194 KB
// at head dim 128.
//
// ptxas -v: 168 registers at launch (setmaxnreg: producer warpgroup 32, consumers 232), no spills, for every
// instantiation (the build checks). Correctness (tools/gpu/check_bwd.py), sanitizers (flash_bwd_sm90_smoke) and
// speed against SDPA cuDNN (tools/gpu/bench_bwd.py) on the H200: docs/benchmarks/sm90-bwd.md.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <cuda/atomic>

#include "cuir/attention_bwd_params.h"
#include "cuir/attention_bwd_params_check.h"
#include "cuir/kv_tiles.cuh"
#include "sm90_primitives.cuh"
#include "sm90_tma_host.h"

#ifndef CUIR_SM90_BWD_STAGES
#define CUIR_SM90_BWD_STAGES 2  // ring stages of Q / dO / LSE / D (3 do not fit at head dim 128)
#endif

namespace cuir_sm90 {

namespace bwd {

constexpr float kInf = __builtin_huge_valf();
constexpr float kLog2e = 1.4426950408889634f;
constexpr int kBlockM = 64;  // query rows per step (and per block of the workspace's padded rows)

template <Element ELEMENT_, int HEAD_DIM_>
struct FlashBwdTraits {
  static constexpr Element ELEMENT = ELEMENT_;
  static constexpr int HEAD_DIM = HEAD_DIM_;
  static constexpr int NUM_CONSUMERS = 2;
  static constexpr int WG_KEYS = 64;                       // keys per consumer warpgroup (wgmma M)
  static constexpr int BLOCK_N = NUM_CONSUMERS * WG_KEYS;  // keys per thread block
  static constexpr int BLOCK_M = kBlockM;
  static constexpr int STAGES = CUIR_SM90_BWD_STAGES;
  static constexpr int NUM_CONSUMER_THREADS = NUM_CONSUMERS * 128;
  static constexpr int NUM_THREADS = 128 + NUM_CONSUMER_THREADS;
  static constexpr int PRODUCER_REGS = 32;   // setmaxnreg: the dQ writer needs 32; the consumers take what the
  static constexpr int CONSUMER_REGS = 232;  // producers give up (168 at launch: 128 x 136 >= 256 x 64)
  static constexpr int REGS_AT_LAUNCH = 65536 / NUM_THREADS / 8 * 8;  // __launch_bounds__(NUM_THREADS, 1)
  static_assert(128 * (REGS_AT_LAUNCH - PRODUCER_REGS) >= NUM_CONSUMER_THREADS * (CONSUMER_REGS - REGS_AT_LAUNCH),
                "setmaxnreg.inc blocks until the producers have released the registers it takes");
  static constexpr int SLABS = HEAD_DIM / 64;
  static constexpr int Q_SLAB_BYTES = BLOCK_M * 128;  // Q and dO
  static constexpr int KV_SLAB_BYTES = BLOCK_N * 128;
  static constexpr int Q_TILE_BYTES = SLABS * Q_SLAB_BYTES;
  static constexpr int KV_TILE_BYTES = SLABS * KV_SLAB_BYTES;
  static constexpr int DS_TILE_BYTES = BLOCK_N * BLOCK_M * 2;  // dS^T: BLOCK_N rows of 64 queries (128 bytes)
  static constexpr int ROW_BYTES = BLOCK_M * 4;                // LSE or D of a step
  static constexpr int S_REGS = BLOCK_M / 2;                   // 64 keys x 64 queries, fp32
  static constexpr int P_REGS = BLOCK_M / 4;                   // the same, 16-bit pairs
  static constexpr int DKV_REGS = HEAD_DIM / 2;                // 64 keys x HEAD_DIM
  static constexpr int DQ_COLS = 64;                           // dQ columns per consumer warpgroup
  static constexpr int DQ_REGS = DQ_COLS / 2;
  static constexpr bool DQ_SPLIT_COLUMNS = HEAD_DIM == 2 * DQ_COLS;  // see the header comment
  static constexpr int DQ_KEYS = DQ_SPLIT_COLUMNS ? BLOCK_N : WG_KEYS;
  static constexpr int DQ_WG_FLOATS = DQ_REGS * 128;  // a warpgroup's dQ tile (64 x 64 fp32)
  static constexpr int DQ_WG_BYTES = DQ_WG_FLOATS * 4;
  // Shared memory, as offsets from a 1024-byte aligned base.
  static constexpr int SK_OFFSET = 0;
  static constexpr int SV_OFFSET = SK_OFFSET + KV_TILE_BYTES;
  static constexpr int SQ_OFFSET = SV_OFFSET + KV_TILE_BYTES;
  static constexpr int SDO_OFFSET = SQ_OFFSET + STAGES * Q_TILE_BYTES;
  static constexpr int SDS_OFFSET = SDO_OFFSET + STAGES * Q_TILE_BYTES;
  static constexpr int SDQ_OFFSET = SDS_OFFSET + 2 * DS_TILE_BYTES;
  static constexpr int SLSE_OFFSET = SDQ_OFFSET + NUM_CONSUMERS * DQ_WG_BYTES;
  static constexpr int SDPSUM_OFFSET = SLSE_OFFSET + STAGES * ROW_BYTES;
  static constexpr int BAR_OFFSET = SDPSUM_OFFSET + STAGES * ROW_BYTES;
  static constexpr int SMEM_BYTES = BAR_OFFSET + 8 * (2 + 3 * STAGES) + 1024;  // + 1 KB for the alignment
  static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "head dim 64 or 128");
  static_assert(BLOCK_M == 64, "dS^T rows are one 128-byte swizzle slab");
  static_assert(SMEM_BYTES <= 227 * 1024, "shared memory");
};

// The mbarriers, in shared memory after the tiles.
template <int STAGES>
struct Barriers {
  uint64_t kv_full;          // K and V landed
  uint64_t kv_empty;         // every consumer thread has written the tile's dK and dV (the pair's next tile)
  uint64_t q_full[STAGES];   // Q and LSE of the stage landed
  uint64_t do_full[STAGES];  // dO and D of the stage landed
  uint64_t q_empty[STAGES];  // every consumer thread is done with the stage
};

// Named barriers (id 0 is __syncthreads).
constexpr int DS_BARRIER = 1;                 // both consumer warpgroups stored dS (head dim 128)
constexpr int DS_WG_BARRIER = 2;              // + consumer: its warpgroup stored dS (head dim 64)
constexpr int DQ_EMPTY_BARRIER = 4;           // + consumer: the dQ writer has read the consumer's dQ tile
constexpr int DQ_FULL_BARRIER = 6;            // + consumer: the consumer stored its dQ tile
constexpr int DQ_BARRIER_THREADS = 128 + 32;  // a consumer warpgroup and the dQ writer warp

// The workspace, as the kernels see it: rows padded to whole query blocks (rows_pad = roundup(Nq, kBlockM)).
// dq_accum holds each 64-row query block as the consumers' accumulator fragments, not row-major: the dQ tile of
// consumer c (or, at head dim 64, the one both add into) at float c * DQ_WG_FLOATS of the block, float4 q of thread
// tid at (q * 128 + tid) * 4 (dq_fragment_index), so that the warpgroups' shared-memory stores and the bulk
// reductions are contiguous; the convert kernel reads it back in rows.
struct Workspace {
  float *dq_accum;  // [B][Hq][rows_pad / 64][64 * d], fragment order
  float *lse_log2;  // [B][Hq][rows_pad]  LSE * log2(e); +inf for rows that see no key and padded rows
  float *dpsum;     // [B][Hq][rows_pad]  D = rowsum(dO * O); 0 for padded rows
  int *semaphore;   // [B][Hq][rows_pad / kBlockM]  deterministic mode: KV tiles done with the query block
  int rows_pad;
};

__host__ __device__ inline size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

// The workspace carved out of `base` (nullptr: only the size), for the sizes of `params`; returns its size in bytes.
inline size_t carve_workspace(const cuir_attention_bwd_params &params, void *base, Workspace *ws) {
  const int rows_pad = (params.seqlen_q + kBlockM - 1) / kBlockM * kBlockM;
  const size_t rows = static_cast<size_t>(params.batch) * params.num_heads_q * rows_pad;
  const size_t dq_bytes = align256(rows * params.head_dim * sizeof(float));
  const size_t row_bytes = align256(rows * sizeof(float));
  const size_t sem_bytes = align256(rows / kBlockM * sizeof(int));
  char *b = static_cast<char *>(base);
  if (ws != nullptr) {
    ws->dq_accum = reinterpret_cast<float *>(b);
    ws->lse_log2 = reinterpret_cast<float *>(b + dq_bytes);
    ws->dpsum = reinterpret_cast<float *>(b + dq_bytes + row_bytes);
    ws->semaphore = reinterpret_cast<int *>(b + dq_bytes + 2 * row_bytes);
    ws->rows_pad = rows_pad;
  }
  return dq_bytes + 2 * row_bytes + sem_bytes;
}

// Row `row` of (batch, head_q) in the workspace's [B][Hq][rows_pad] arrays.
__device__ __forceinline__ int64_t ws_row(const cuir_attention_bwd_params &params, const Workspace &ws, int batch,
                                          int head_q, int row) {
  return (static_cast<int64_t>(batch) * params.num_heads_q + head_q) * ws.rows_pad + row;
}

// ---------------------------------------------------------------------------------------------------
// Preprocessing and conversion: HEAD_DIM / 8 threads per row, one 16-byte chunk each.
// ---------------------------------------------------------------------------------------------------

constexpr int kRowKernelThreads = 256;

// D = rowsum(dO * O) in fp32, LSE * log2(e), and zeros of the dQ accumulator and semaphores, for every padded
// row. Grid: (rows_pad / rows per block, Hq, B).
template <Element ELEMENT, int HEAD_DIM>
__global__ void __launch_bounds__(kRowKernelThreads)
    flash_bwd_preprocess_kernel(const __grid_constant__ cuir_attention_bwd_params params, const Workspace ws) {
  constexpr int THREADS_PER_ROW = HEAD_DIM / 8;
  const int head_q = blockIdx.y, batch = blockIdx.z;
  const int row = blockIdx.x * (kRowKernelThreads / THREADS_PER_ROW) + threadIdx.x / THREADS_PER_ROW;
  const int chunk = threadIdx.x % THREADS_PER_ROW;
  float dot = 0.f;
  if (row < params.seqlen_q) {
    const int64_t o_at = batch * params.o_batch_stride + row * params.o_row_stride + head_q * params.o_head_stride + chunk * 8;
    const int64_t do_at = batch * params.do_batch_stride + row * params.do_row_stride + head_q * params.do_head_stride + chunk * 8;
    const uint4 o = *reinterpret_cast<const uint4 *>(static_cast<const uint16_t *>(params.o) + o_at);
    const uint4 d_o = *reinterpret_cast<const uint4 *>(static_cast<const uint16_t *>(params.d_o) + do_at);
    const uint32_t ow[4] = {o.x, o.y, o.z, o.w}, dw[4] = {d_o.x, d_o.y, d_o.z, d_o.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 a = cuir_kernels::unpack_float2<ELEMENT>(ow[k]), b = cuir_kernels::unpack_float2<ELEMENT>(dw[k]);
      dot = fmaf(a.x, b.x, fmaf(a.y, b.y, dot));
    }
  }
#pragma unroll
  for (int offset = THREADS_PER_ROW / 2; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
  if (row >= ws.rows_pad) return;
  const int64_t at = ws_row(params, ws, batch, head_q, row);
  float4 *dq = reinterpret_cast<float4 *>(ws.dq_accum + at * HEAD_DIM + chunk * 8);
  dq[0] = dq[1] = make_float4(0.f, 0.f, 0.f, 0.f);
  if (chunk == 0) {
    const float lse =
        row < params.seqlen_q ? params.lse[(static_cast<int64_t>(batch) * params.num_heads_q + head_q) * params.seqlen_q + row] : -kInf;
    ws.dpsum[at] = dot;
    ws.lse_log2[at] = lse == -kInf ? kInf : lse * kLog2e;  // exp2(s - inf) = 0: the row contributes nothing
    if (row % kBlockM == 0) ws.semaphore[at / kBlockM] = 0;
  }
}

// Index in a query block of dq_accum (see Workspace) of element (row, col), col even: consumer c = col / 64 (head dim
// 128; 0 at 64), thread tid = 32 w + 4 g + t and register r = 4 j + 2 half + col % 2 of the 64 x 64 accumulator
// layout (see sm90_primitives.cuh) for row = 16 w + 8 half + g, col % 64 = 8 j + 2 t + col % 2.
template <int HEAD_DIM>
__host__ __device__ __forceinline__ int dq_fragment_index(int row, int col) {
  const int c = col / 64, cc = col % 64;
  const int tid = 32 * (row / 16) + 4 * (row % 8) + (cc % 8) / 2;
  const int r = 4 * (cc / 8) + 2 * ((row % 16) / 8) + cc % 2;
  return c * 64 * 64 + ((r / 4) * 128 + tid) * 4 + r % 4;
}

// dQ = softmax_scale * accumulator, in the element type. Grid: (rows / rows per block, Hq, B).
template <Element ELEMENT, int HEAD_DIM>
__global__ void __launch_bounds__(kRowKernelThreads)
    flash_bwd_convert_dq_kernel(const __grid_constant__ cuir_attention_bwd_params params, const Workspace ws) {
  constexpr int THREADS_PER_ROW = HEAD_DIM / 8;
  const int head_q = blockIdx.y, batch = blockIdx.z;
  const int row = blockIdx.x * (kRowKernelThreads / THREADS_PER_ROW) + threadIdx.x / THREADS_PER_ROW;
  const int chunk = threadIdx.x % THREADS_PER_ROW;
  if (row >= params.seqlen_q) return;
  const float *block = ws.dq_accum + ws_row(params, ws, batch, head_q, row - row % kBlockM) * HEAD_DIM;
  const float s = params.softmax_scale;
  uint32_t packed[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {  // columns chunk * 8 + 2k, +1: one float2 of the fragment order
    const float2 a =
        *reinterpret_cast<const float2 *>(block + dq_fragment_index<HEAD_DIM>(row % kBlockM, chunk * 8 + 2 * k));
    packed[k] = pack_float2<ELEMENT>(a.x * s, a.y * s);
  }
  const uint4 out = make_uint4(packed[0], packed[1], packed[2], packed[3]);
  *reinterpret_cast<uint4 *>(static_cast<uint16_t *>(params.dq) + batch * params.dq_batch_stride + row * params.dq_row_stride +
                             head_q * params.dq_head_stride + chunk * 8) = out;
}

// Zeros of a [B, rows, heads, HEAD_DIM] 16-bit tensor (the gradients of an empty problem). Grid: (chunks / 256,
// heads, B).
template <int HEAD_DIM>
__global__ void __launch_bounds__(kRowKernelThreads)
    zero_fill_kernel(uint16_t *base, int rows, int64_t batch_stride, int64_t row_stride, int64_t head_stride) {
  const int chunk_id = blockIdx.x * kRowKernelThreads + threadIdx.x;
  const int row = chunk_id / (HEAD_DIM / 8);
  if (row >= rows) return;
  *reinterpret_cast<uint4 *>(base + blockIdx.z * batch_stride + row * row_stride + blockIdx.y * head_stride +
                             (chunk_id % (HEAD_DIM / 8)) * 8) = make_uint4(0, 0, 0, 0);
}

// ---------------------------------------------------------------------------------------------------
// The query blocks a KV tile's thread block visits.
// ---------------------------------------------------------------------------------------------------

// Virtual query blocks [m_begin, m_end) see some key of the tile; [m_begin, m_unmasked_begin) need the mask. A
// head's steps visit them in order, the masking ones first. (Starting each KV tile's unmasked blocks at its own
// offset, so that the tiles of a head do not add into the same dQ block at once, measured 1-2% slower on the
// H200.)
struct QueryBlocks {
  int m_begin, m_unmasked_begin, m_end;
  bool descending = true;  // false: the unmasked blocks ascending (the second tile of a pair)

  __device__ __forceinline__ int num_steps() const { return m_end - m_begin; }
  // The virtual query block of visit v: the masking ones in order, then the unmasked ones from the last down
  // (ascending if not REVERSE or not descending).
  template <bool REVERSE>
  __device__ __forceinline__ int visit(int v) const {
    return REVERSE && descending && v >= m_unmasked_begin ? m_end - 1 - (v - m_unmasked_begin) : v;
  }
};

// Row i sees key j iff j < Nkv and (causal) j <= i + Nkv - Nq. Padded query rows need no mask (their P is 0).
template <class T, bool IS_CAUSAL>
__device__ __forceinline__ QueryBlocks query_blocks(const cuir_attention_bwd_params &params, int n_block) {
  const int m_blocks = (params.seqlen_q + T::BLOCK_M - 1) / T::BLOCK_M;
  const int key0 = n_block * T::BLOCK_N;
  const int key_last = min(key0 + T::BLOCK_N, params.seqlen_kv) - 1;
  const bool ragged = key0 + T::BLOCK_N > params.seqlen_kv;
  if constexpr (!IS_CAUSAL) return QueryBlocks{0, ragged ? m_blocks : 0, m_blocks};
  const int offset = params.seqlen_kv - params.seqlen_q;
  const int first_row = key0 - offset;  // the first row that sees key0
  if (first_row > params.seqlen_q - 1) return QueryBlocks{0, 0, 0};
  const int m_min = max(first_row, 0) / T::BLOCK_M;
  const int all_keys_row = max(key_last - offset, 0);  // rows from here on see every key of the tile
  const int m_unmasked = ragged ? m_blocks : min(max((all_keys_row + T::BLOCK_M - 1) / T::BLOCK_M, m_min), m_blocks);
  return QueryBlocks{m_min, m_unmasked, m_blocks};
}

// ---------------------------------------------------------------------------------------------------
// Producer: one thread issues every TMA copy of the block.
// ---------------------------------------------------------------------------------------------------

struct TensorMaps {
  CUtensorMap q, k, v, d_o;
};

// Q + LSE and dO + D of step i (query tile m_tile of head_q) into ring stage i % STAGES, once every consumer
// thread has released that stage's previous contents.
template <class T>
__device__ __forceinline__ void producer_load_step(const cuir_attention_bwd_params &params, const Workspace &ws,
                                                   const TensorMaps &maps, unsigned char *smem,
                                                   Barriers<T::STAGES> *bars, int i, int m_tile, int head_q,
                                                   int batch) {
  const int stage = i % T::STAGES;
  mbarrier_wait(&bars->q_empty[stage], ((i / T::STAGES) % 2) ^ 1);  // the first round passes at once
  const int row = m_tile * T::BLOCK_M;
  const int64_t at = ws_row(params, ws, batch, head_q, row);
  mbarrier_arrive_expect_tx(&bars->q_full[stage], T::Q_TILE_BYTES + T::ROW_BYTES);
#pragma unroll
  for (int slab = 0; slab < T::SLABS; ++slab)
    tma_load_4d(smem + T::SQ_OFFSET + stage * T::Q_TILE_BYTES + slab * T::Q_SLAB_BYTES, &maps.q, slab * 64, row, head_q,
                batch, &bars->q_full[stage]);
  bulk_load(smem + T::SLSE_OFFSET + stage * T::ROW_BYTES, ws.lse_log2 + at, T::ROW_BYTES, &bars->q_full[stage]);
  mbarrier_arrive_expect_tx(&bars->do_full[stage], T::Q_TILE_BYTES + T::ROW_BYTES);
#pragma unroll
  for (int slab = 0; slab < T::SLABS; ++slab)
    tma_load_4d(smem + T::SDO_OFFSET + stage * T::Q_TILE_BYTES + slab * T::Q_SLAB_BYTES, &maps.d_o, slab * 64, row,
                head_q, batch, &bars->do_full[stage]);
  bulk_load(smem + T::SDPSUM_OFFSET + stage * T::ROW_BYTES, ws.dpsum + at, T::ROW_BYTES, &bars->do_full[stage]);
}

// The tile's loads, steps i0 onwards of the block's ring; returns the step after its last.
template <class T, bool REVERSE, class QTiles>
__device__ __forceinline__ int producer(const cuir_attention_bwd_params &params, const Workspace &ws,
                                        const TensorMaps &maps, unsigned char *smem, Barriers<T::STAGES> *bars,
                                        int n_block, int head_kv, int batch, const QueryBlocks &range,
                                        const QTiles &q_tiles, int i0) {
  mbarrier_arrive_expect_tx(&bars->kv_full, 2 * T::KV_TILE_BYTES);
#pragma unroll
  for (int slab = 0; slab < T::SLABS; ++slab) {
    tma_load_4d(smem + T::SK_OFFSET + slab * T::KV_SLAB_BYTES, &maps.k, slab * 64, n_block * T::BLOCK_N, head_kv, batch,
                &bars->kv_full);
    tma_load_4d(smem + T::SV_OFFSET + slab * T::KV_SLAB_BYTES, &maps.v, slab * 64, n_block * T::BLOCK_N, head_kv, batch,
                &bars->kv_full);
  }
  const int group = params.num_heads_q / params.num_heads_kv;
  int i = i0;
  for (int v = range.m_begin; v < range.m_end; ++v)
    for (int head_q = head_kv * group; head_q < (head_kv + 1) * group; ++head_q, ++i)
      producer_load_step<T>(params, ws, maps, smem, bars, i, q_tiles(range.visit<REVERSE>(v)), head_q, batch);
  return i;
}

// ---------------------------------------------------------------------------------------------------
// dQ writer: one warp of the producer warpgroup adds each step's dQ tiles (in shared memory) into the workspace
// with bulk reductions, off the consumers' path.
// ---------------------------------------------------------------------------------------------------

// Deterministic mode: the KV tiles add into a query block's dQ in tile order (tile n is the n-th to visit any
// query block it visits: the tiles that see a query block are a prefix), each waiting on the block's semaphore
// for its turn and passing it on once its reductions have completed; at head dim 64 consumer 0's tile is added
// before consumer 1's.
__device__ __forceinline__ void wait_dq_turn(int *semaphore, int n_block) {
  while (cuda::atomic_ref<int, cuda::thread_scope_device>(*semaphore).load(cuda::memory_order_acquire) != n_block) {
  }
  fence_proxy_async_global();  // the bulk reductions that follow, after the acquire
}
__device__ __forceinline__ void pass_dq_turn(int *semaphore, int n_block) {
  bulk_wait_group_all();
  fence_proxy_async_global();
  cuda::atomic_ref<int, cuda::thread_scope_device>(*semaphore).store(n_block + 1, cuda::memory_order_release);
}

// The whole warp runs this (it takes part in the named barriers); `leader` issues the reductions. The tile's
// steps are i0 onwards; the buffers are handed back after each but the block's last (`last_tile`).
template <class T, bool DETERMINISTIC, class QTiles>
__device__ __forceinline__ int dq_writer(const cuir_attention_bwd_params &params, const Workspace &ws, unsigned char *smem,
                                         int n_block, int head_kv, int batch, const QueryBlocks &range,
                                         const QTiles &q_tiles, bool leader, int i0, bool last_tile) {
  const int group = params.num_heads_q / params.num_heads_kv;
  const int steps = i0 + group * range.num_steps();
  int i = i0;
  for (int v = range.m_begin; v < range.m_end; ++v) {
    for (int head_q = head_kv * group; head_q < (head_kv + 1) * group; ++head_q, ++i) {
      const int64_t row_at = ws_row(params, ws, batch, head_q, q_tiles(range.visit<!DETERMINISTIC>(v)) * T::BLOCK_M);
      float *dq_block = ws.dq_accum + row_at * T::HEAD_DIM;
      int *semaphore = ws.semaphore + row_at / T::BLOCK_M;
      if (DETERMINISTIC && leader) wait_dq_turn(semaphore, n_block);
#pragma unroll
      for (int c = 0; c < T::NUM_CONSUMERS; ++c) {
        named_barrier_sync(DQ_FULL_BARRIER + c, DQ_BARRIER_THREADS);
        if (leader) {
          bulk_reduce_add_f32(dq_block + (T::DQ_SPLIT_COLUMNS ? c * T::DQ_WG_FLOATS : 0),
                              reinterpret_cast<const float *>(smem + T::SDQ_OFFSET + c * T::DQ_WG_BYTES),
                              T::DQ_WG_BYTES);
          bulk_commit_group();
          if (DETERMINISTIC && !T::DQ_SPLIT_COLUMNS)
            bulk_wait_group_all();  // consumer 0's tile lands before consumer 1's is added
          else
            bulk_wait_group_read_all();
        }
        __syncwarp();
        if (i + 1 < steps || !last_tile) named_barrier_arrive(DQ_EMPTY_BARRIER + c, DQ_BARRIER_THREADS);
      }
      if (DETERMINISTIC && leader) pass_dq_turn(semaphore, n_block);
    }
  }
  return i;
}

// ---------------------------------------------------------------------------------------------------
// Consumers: GEMMs and the elementwise math of a step.
// ---------------------------------------------------------------------------------------------------

// Issue acc (64 keys x 64 queries) = A B^T with A this warpgroup's 64 rows of the K (or V) tile and B the Q (or
// dO) tile, both K-major (async; one wgmma-group). k-step kk reads columns 16kk .. 16kk+15: slab kk / 4, 32 bytes
// in per step inside the swizzled 128-byte rows.
template <class T>
__device__ __forceinline__ void gemm_key_query(float (&acc)[T::S_REGS], uint32_t kv_rows, uint32_t q_tile) {
  fence_operands(acc);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < T::HEAD_DIM / 16; ++kk) {
    const uint64_t desc_a = desc_k_major(kv_rows + (kk / 4) * T::KV_SLAB_BYTES + (kk % 4) * 32);
    const uint64_t desc_b = desc_k_major(q_tile + (kk / 4) * T::Q_SLAB_BYTES + (kk % 4) * 32);
    if (kk == 0)
      wgmma_ss<T::ELEMENT, T::BLOCK_M, true>(acc, desc_a, desc_b);
    else
      wgmma_ss<T::ELEMENT, T::BLOCK_M, false>(acc, desc_a, desc_b);
  }
  wgmma_commit_group();
  fence_operands(acc);
}

// Issue acc (64 keys x HEAD_DIM) += frag (64 keys x 64 queries, registers) * tile (64 queries x HEAD_DIM, the Q
// or dO tile as an MN-major B operand); k-step kk reads queries 16kk .. 16kk+15 (2048 bytes further in every slab).
// Not committed: the caller groups dV and dK.
template <class T>
__device__ __forceinline__ void gemm_grad_kv(float (&acc)[T::DKV_REGS], uint32_t (&frag)[T::P_REGS], uint32_t q_tile) {
  fence_operands(acc);
  fence_operands(frag);
#pragma unroll
  for (int kk = 0; kk < T::BLOCK_M / 16; ++kk) {
    const uint32_t a[4] = {frag[4 * kk], frag[4 * kk + 1], frag[4 * kk + 2], frag[4 * kk + 3]};
    wgmma_rs<T::ELEMENT, T::HEAD_DIM>(acc, a, desc_mn_major(q_tile + kk * 16 * 128, T::Q_SLAB_BYTES));
  }
}

// Issue acc (64 queries x 64 columns) = dS K over DQ_KEYS keys (async; one wgmma-group): dS from the stored dS^T
// (keys x 64 queries, an MN-major A operand of one slab), K from the 64-column slab of the K tile (MN-major B);
// ds_rows / k_rows: the first key's row in each.
template <class T>
__device__ __forceinline__ void gemm_dq(float (&acc)[T::DQ_REGS], uint32_t ds_rows, uint32_t k_rows) {
  fence_operands(acc);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < T::DQ_KEYS / 16; ++kk) {
    const uint64_t desc_a = desc_mn_major(ds_rows + kk * 16 * 128, T::DS_TILE_BYTES);
    const uint64_t desc_b = desc_mn_major(k_rows + kk * 16 * 128, T::KV_SLAB_BYTES);
    if (kk == 0)
      wgmma_ss_tt<T::ELEMENT, T::DQ_COLS, true>(acc, desc_a, desc_b);
    else
      wgmma_ss_tt<T::ELEMENT, T::DQ_COLS, false>(acc, desc_a, desc_b);
  }
  wgmma_commit_group();
  fence_operands(acc);
}

// Per-thread constants of a consumer warpgroup. Accumulator element 4j + e of a 64 x 64 tile is key row
// key_row0 + 8 * (e / 2) and query column 8j + 2 * (lane % 4) + e % 2 of the step's block.
struct ConsumerContext {
  unsigned char *smem;
  uint32_t smem_base;  // shared address of smem
  int consumer;        // 0 or 1
  int warp;            // within the warpgroup
  int lane;
  int wg_key0;   // the first of this warpgroup's 64 keys
  int key_row0;  // absolute key of this thread's accumulator row g
  int n_block;
  int seqlen_kv;
  int last_key_offset;  // row i sees key j < seqlen_kv iff j <= i + last_key_offset
  float scale_log2;
};

// The mask of the masking steps on the transposed score tile: key j of query i becomes -inf unless it exists
// and i sees it. q0: the step's first query row.
template <class T>
__device__ __forceinline__ void apply_mask(float (&acc_s)[T::S_REGS], const ConsumerContext &ctx, int q0) {
  const int col0 = q0 + (ctx.lane % 4) * 2;
#pragma unroll
  for (int j = 0; j < T::BLOCK_M / 8; ++j) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int key = ctx.key_row0 + (e / 2) * 8;
      const int row = col0 + j * 8 + (e % 2);
      if (key >= ctx.seqlen_kv || key > row + ctx.last_key_offset) acc_s[4 * j + e] = -kInf;
    }
  }
}

// P^T = exp2(S^T * scale * log2e - LSE * log2e): the forward's probabilities from its saved LSE (lse_log2:
// the step's 64 rows in shared memory; +inf for a row that sees nothing, which gives 0).
template <class T>
__device__ __forceinline__ void scores_to_probs(float (&acc_s)[T::S_REGS], const float *lse_log2, int lane,
                                                float scale_log2) {
#pragma unroll
  for (int j = 0; j < T::BLOCK_M / 8; ++j) {
    const float2 lse = *reinterpret_cast<const float2 *>(lse_log2 + 8 * j + 2 * (lane % 4));
#pragma unroll
    for (int e = 0; e < 4; ++e)
      acc_s[4 * j + e] = fast_exp2(fmaf(acc_s[4 * j + e], scale_log2, -(e % 2 ? lse.y : lse.x)));
  }
}

// dS^T = P^T * (dP^T - D), into acc_dp (dpsum: the step's 64 values of D in shared memory).
template <class T>
__device__ __forceinline__ void probs_to_dscores(float (&acc_dp)[T::S_REGS], const float (&acc_p)[T::S_REGS],
                                                 const float *dpsum, int lane) {
#pragma unroll
  for (int j = 0; j < T::BLOCK_M / 8; ++j) {
    const float2 d = *reinterpret_cast<const float2 *>(dpsum + 8 * j + 2 * (lane % 4));
#pragma unroll
    for (int e = 0; e < 4; ++e) acc_dp[4 * j + e] = acc_p[4 * j + e] * (acc_dp[4 * j + e] - (e % 2 ? d.y : d.x));
  }
}

// A 64 x 64 fp32 accumulator rounded to 16 bits: register pairs (2i, 2i+1) are register i of the A fragments
// (see sm90_primitives.cuh).
template <class T>
__device__ __forceinline__ void to_frag(uint32_t (&frag)[T::P_REGS], const float (&acc)[T::S_REGS]) {
#pragma unroll
  for (int i = 0; i < T::P_REGS; ++i) frag[i] = pack_float2<T::ELEMENT>(acc[2 * i], acc[2 * i + 1]);
}

// dS^T (16-bit, this warpgroup's 64 keys) into the swizzled dS^T buffer `ds`: key row r, query pair 8j + 2t at
// chunk j ^ (r % 8) (conflict-free: the 8 rows of a warp's store hit distinct chunks).
template <class T>
__device__ __forceinline__ void store_dscores(unsigned char *ds, const uint32_t (&ds_frag)[T::P_REGS],
                                              const ConsumerContext &ctx) {
  uint32_t lane = ctx.lane;
  fence_operand(lane);  // opaque: the 8 swizzled chunk offsets are recomputed, not hoisted into live registers
  const int row0 = ctx.consumer * T::WG_KEYS + ctx.warp * 16 + lane / 4;
  unsigned char *rows = ds + row0 * 128 + (lane % 4) * 4;
#pragma unroll
  for (int j = 0; j < T::BLOCK_M / 8; ++j) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      *reinterpret_cast<uint32_t *>(rows + half * 8 * 128 + ((j ^ (lane / 4 % 8)) << 4)) = ds_frag[2 * j + half];
    }
  }
}

// This warpgroup's dQ tile into its shared-memory buffer, in the fragment order of the workspace (float4 q of
// thread tid at (q * 128 + tid) * 4: conflict-free), for the dQ writer to add into the workspace.
template <class T>
__device__ __forceinline__ void store_dq(const float (&acc_dq)[T::DQ_REGS], const ConsumerContext &ctx) {
  const int tid = ctx.warp * 32 + ctx.lane;
  float4 *dst = reinterpret_cast<float4 *>(ctx.smem + T::SDQ_OFFSET + ctx.consumer * T::DQ_WG_BYTES) + tid;
#pragma unroll
  for (int q = 0; q < T::DQ_REGS / 4; ++q)
    dst[q * 128] = make_float4(acc_dq[4 * q], acc_dq[4 * q + 1], acc_dq[4 * q + 2], acc_dq[4 * q + 3]);
}

// One step of a consumer warpgroup: visit i (ring stage i % STAGES), query tile m_tile of head head_q of batch
// `batch` (a variant's scores read the tile's coordinates). (Issuing the next step's S = K Q^T before this step's
// dQ hand-off measured 10% slower on the H200.)
template <class T, bool IS_MASKED>
__device__ __forceinline__ void consumer_step(const cuir_attention_bwd_params &params, const ConsumerContext &ctx,
                                              Barriers<T::STAGES> *bars, int i, int m_tile, int batch, int head_q,
                                              float (&acc_dk)[T::DKV_REGS], float (&acc_dv)[T::DKV_REGS]) {
  (void)params, (void)batch, (void)head_q;
  const int stage = i % T::STAGES;
  const int q_row0 = m_tile * T::BLOCK_M;  // the step's first query row
  const uint32_t phase = (i / T::STAGES) % 2;
  // Opaque to the compiler, so that the wgmma descriptors of the K and V tiles (the same every step) are
  // recomputed each step rather than hoisted out of the loops into ~50 live registers.
  uint32_t smem_base = ctx.smem_base;
  fence_operand(smem_base);
  const uint32_t kv_rows = ctx.consumer * T::WG_KEYS * 128;  // this warpgroup's first K / V row, slab 0
  const uint32_t sq = smem_base + T::SQ_OFFSET + stage * T::Q_TILE_BYTES;
  const uint32_t sdo = smem_base + T::SDO_OFFSET + stage * T::Q_TILE_BYTES;
  const float *lse_log2 = reinterpret_cast<const float *>(ctx.smem + T::SLSE_OFFSET + stage * T::ROW_BYTES);
  const float *dpsum = reinterpret_cast<const float *>(ctx.smem + T::SDPSUM_OFFSET + stage * T::ROW_BYTES);

  // ---- S^T = K Q^T and dP^T = V dO^T, in flight together ----
  float acc_s[T::S_REGS], acc_dp[T::S_REGS];
  mbarrier_wait(&bars->q_full[stage], phase);
  gemm_key_query<T>(acc_s, smem_base + T::SK_OFFSET + kv_rows, sq);
  mbarrier_wait(&bars->do_full[stage], phase);
  gemm_key_query<T>(acc_dp, smem_base + T::SV_OFFSET + kv_rows, sdo);
  wgmma_wait_group<1>();
  fence_operands(acc_s);

  // ------- score tile complete: acc_s = K Q^T (unscaled) of query tile m_tile -------
  if constexpr (IS_MASKED) apply_mask<T>(acc_s, ctx, q_row0);
  scores_to_probs<T>(acc_s, lse_log2, ctx.lane, ctx.scale_log2);
  wgmma_wait_group<0>();
  fence_operands(acc_dp);
  probs_to_dscores<T>(acc_dp, acc_s, dpsum, ctx.lane);

  // ---- dV += P^T dO, dK += dS^T Q (one wgmma-group), dS^T to shared memory for dQ ----
  uint32_t p_frag[T::P_REGS], ds_frag[T::P_REGS];
  to_frag<T>(p_frag, acc_s);
  to_frag<T>(ds_frag, acc_dp);
  wgmma_fence();
  gemm_grad_kv<T>(acc_dv, p_frag, sdo);
  gemm_grad_kv<T>(acc_dk, ds_frag, sq);
  wgmma_commit_group();
  unsigned char *ds = ctx.smem + T::SDS_OFFSET + (i % 2) * T::DS_TILE_BYTES;
  store_dscores<T>(ds, ds_frag, ctx);
  fence_proxy_async_shared();  // the generic stores above, before the wgmma (async proxy) reads of dS
  if constexpr (T::DQ_SPLIT_COLUMNS)
    named_barrier_sync(DS_BARRIER, T::NUM_CONSUMER_THREADS);
  else
    named_barrier_sync(DS_WG_BARRIER + ctx.consumer, 128);

  // ---- dQ = dS K (this warpgroup's columns or keys) ----
  float acc_dq[T::DQ_REGS];
  const int dq_key0 = T::DQ_SPLIT_COLUMNS ? 0 : ctx.consumer * T::WG_KEYS;
  const int dq_slab = T::DQ_SPLIT_COLUMNS ? ctx.consumer : 0;
  gemm_dq<T>(acc_dq, smem_u32addr(ds) + dq_key0 * 128,
             smem_base + T::SK_OFFSET + dq_slab * T::KV_SLAB_BYTES + dq_key0 * 128);
  wgmma_wait_group<0>();
  fence_operands(acc_dv);
  fence_operands(acc_dk);
  fence_operands(p_frag);
  fence_operands(ds_frag);
  fence_operands(acc_dq);
  mbarrier_arrive(&bars->q_empty[stage]);

  // ---- dQ to shared memory, for the dQ writer (once it has read the previous step's) ----
  if (i > 0) named_barrier_sync(DQ_EMPTY_BARRIER + ctx.consumer, DQ_BARRIER_THREADS);
  store_dq<T>(acc_dq, ctx);
  fence_proxy_async_shared();  // the generic stores above, before the bulk reduction (async proxy) reads them
  named_barrier_arrive(DQ_FULL_BARRIER + ctx.consumer, DQ_BARRIER_THREADS);
}

// One gradient tile of this warp's 16 keys (acc times `scale`, rounded to 16 bits) to global memory: staged through
// `stage` (a free ring buffer, in the swizzled layout of a KV tile: chunk c of block row r at slab c / 8, chunk
// position (c % 8) ^ (r % 8); conflict-free) for 16-byte coalesced stores; keys past Nkv are dropped. Only this
// warp touches its rows of the stage.
template <class T>
__device__ __forceinline__ void write_gradient(unsigned char *stage, uint16_t *grad, int64_t row_stride,
                                               const float (&acc)[T::DKV_REGS], float scale,
                                               const ConsumerContext &ctx) {
  constexpr int CHUNKS_PER_ROW = T::HEAD_DIM / 8;
  auto chunk_offset = [](int row, int chunk) {
    return (chunk / 8) * T::KV_SLAB_BYTES + row * 128 + (((chunk % 8) ^ (row % 8)) << 4);
  };
  const int warp_row = ctx.consumer * T::WG_KEYS + ctx.warp * 16;  // within the KV tile
#pragma unroll
  for (int j = 0; j < CHUNKS_PER_ROW; ++j) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = warp_row + half * 8 + ctx.lane / 4;
      *reinterpret_cast<uint32_t *>(stage + chunk_offset(row, j) + (ctx.lane % 4) * 4) =
          pack_float2<T::ELEMENT>(acc[4 * j + 2 * half] * scale, acc[4 * j + 2 * half + 1] * scale);
    }
  }
  __syncwarp();
  const int key0 = ctx.n_block * T::BLOCK_N + warp_row;
#pragma unroll
  for (int pass = 0; pass < 16 * CHUNKS_PER_ROW / 32; ++pass) {
    const int chunk_id = pass * 32 + ctx.lane;
    const int row = chunk_id / CHUNKS_PER_ROW, chunk = chunk_id % CHUNKS_PER_ROW;
    const uint4 data = *reinterpret_cast<const uint4 *>(stage + chunk_offset(warp_row + row, chunk));
    if (key0 + row < ctx.seqlen_kv) *reinterpret_cast<uint4 *>(grad + (key0 + row) * row_stride + chunk * 8) = data;
  }
}

// dK (times softmax_scale) and dV of the block, through the Q and dO stages once every consumer is done with them.
template <class T>
__device__ __forceinline__ void write_dkv(const cuir_attention_bwd_params &params, const ConsumerContext &ctx, int head_kv,
                                          int batch, const float (&acc_dk)[T::DKV_REGS],
                                          const float (&acc_dv)[T::DKV_REGS]) {
  static_assert(T::STAGES * T::Q_TILE_BYTES >= T::KV_TILE_BYTES, "a gradient tile fits in the Q (dO) stages");
  named_barrier_sync(DS_BARRIER, T::NUM_CONSUMER_THREADS);  // the other warpgroup's last wgmmas have read them
  fence_proxy_async_shared();  // generic writes below, after the async-proxy (TMA, wgmma) accesses
  write_gradient<T>(ctx.smem + T::SQ_OFFSET,
                    static_cast<uint16_t *>(params.dk) + batch * params.dk_batch_stride + head_kv * params.dk_head_stride,
                    params.dk_row_stride, acc_dk, params.softmax_scale, ctx);
  write_gradient<T>(ctx.smem + T::SDO_OFFSET,
                    static_cast<uint16_t *>(params.dv) + batch * params.dv_batch_stride + head_kv * params.dv_head_stride,
                    params.dv_row_stride, acc_dv, 1.f, ctx);
}

// The consumer warpgroups' loop: every query block that sees the tile, for every query head of the group. One loop
// per kind of step, with the head and the query block counted along (two nested loops spill at head dim 128).
// The tile is the block's tile-th (its K and V on kv_full's phase tile % 2), its steps i0 onwards; returns the
// step after its last.
template <class T, bool REVERSE, class QTiles>
__device__ __forceinline__ int consumer(const cuir_attention_bwd_params &params, const ConsumerContext &ctx,
                                        Barriers<T::STAGES> *bars, int head_kv, int batch, const QueryBlocks &range,
                                        const QTiles &q_tiles, int i0, int tile) {
  float acc_dk[T::DKV_REGS], acc_dv[T::DKV_REGS];
#pragma unroll
  for (int r = 0; r < T::DKV_REGS; ++r) acc_dk[r] = acc_dv[r] = 0.f;
  mbarrier_wait(&bars->kv_full, tile % 2);
  const int group = params.num_heads_q / params.num_heads_kv;
  const int head_q0 = head_kv * group, head_end = head_q0 + group;
  const int masking_steps = i0 + group * (range.m_unmasked_begin - range.m_begin);
  const int steps = i0 + group * range.num_steps();
  int i = i0, v = range.m_begin, head_q = head_q0;
  for (; i < masking_steps; ++i) {  // masking steps: the ragged tile, the causal diagonal
    consumer_step<T, true>(params, ctx, bars, i, q_tiles(range.visit<REVERSE>(v)), batch, head_q, acc_dk, acc_dv);
    if (++head_q == head_end) head_q = head_q0, ++v;
  }
  for (; i < steps; ++i) {  // unmasked steps
    consumer_step<T, false>(params, ctx, bars, i, q_tiles(range.visit<REVERSE>(v)), batch, head_q, acc_dk, acc_dv);
    if (++head_q == head_end) head_q = head_q0, ++v;
  }
  write_dkv<T>(params, ctx, head_kv, batch, acc_dk, acc_dv);
  return steps;
}

// The KV tiles, KV head and batch of this thread block. Grid: units x Hkv x B, the unit fastest: the blocks in
// flight together share their head's Q, dO and dQ accumulator in L2 (KV tile slowest, which would put the heavy
// causal tiles first, measured 10-30% slower on the H200, presumably for that reason).
// - Causal GQA, default mode: unit u is KV tiles u and T - 1 - u (T tiles; the middle one alone if T is odd), the first
//   with its unmasked query blocks from the last down, the second ascending from its diagonal. Every unit then
//   walks the same number of query blocks (2T + 2 of 64 rows per head at Nq = Nkv), and at any step the units of
//   a head that started together read one of two query blocks, whatever u: they stay in step wave after wave.
//   (With one tile a block, tile 0 walks every query block and tile T - 1 two, so the blocks that replace the
//   short ones start out of step, and a GQA group's Q, dO and dQ accumulator at 8k, larger than L2, are read
//   from DRAM again.) With MHA (a step is one head) the pairs measured 6-7% slower, so it does not pair
//   (unpaired, this code runs MHA at the speed of the kernel before the pairs: docs/benchmarks/bwd-configs.md).
// - Otherwise one tile a block, u; tile n - 1 of a head is dispatched before tile n, which the deterministic mode's
//   semaphores rely on (tile n waits for n - 1, resident or done).
struct BlockIndex {
  int n_block, head_kv, batch;
  int partner;  // the pair's second tile, or -1
  __device__ __forceinline__ int tiles() const { return partner < 0 ? 1 : 2; }
  __device__ __forceinline__ int tile(int u) const { return u == 0 ? n_block : partner; }
};
template <bool IS_CAUSAL, bool DETERMINISTIC>
__host__ __device__ __forceinline__ bool paired_tiles(const cuir_attention_bwd_params &params) {
  return IS_CAUSAL && !DETERMINISTIC && params.num_heads_q != params.num_heads_kv;
}
template <class T, bool IS_CAUSAL, bool DETERMINISTIC>
__device__ __forceinline__ BlockIndex block_index(const cuir_attention_bwd_params &params) {
  const int x = blockIdx.x;
  const int units = static_cast<int>(gridDim.x) / (params.num_heads_kv * params.batch);
  const int u = x % units, kv_tiles = (params.seqlen_kv + T::BLOCK_N - 1) / T::BLOCK_N;
  const bool paired = paired_tiles<IS_CAUSAL, DETERMINISTIC>(params);
  const int partner = paired && kv_tiles - 1 - u != u ? kv_tiles - 1 - u : -1;
  return BlockIndex{u, (x / units) % params.num_heads_kv, x / (units * params.num_heads_kv), partner};
}

template <Element ELEMENT, int HEAD_DIM, bool IS_CAUSAL, bool DETERMINISTIC>
__global__ void __launch_bounds__(FlashBwdTraits<ELEMENT, HEAD_DIM>::NUM_THREADS, 1)
    flash_bwd_sm90_kernel(const __grid_constant__ cuir_attention_bwd_params params, const Workspace ws,
                          const __grid_constant__ TensorMaps maps) {
  using T = FlashBwdTraits<ELEMENT, HEAD_DIM>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char *smem = smem_raw + ((1024u - (smem_u32addr(smem_raw) & 1023u)) & 1023u);
  Barriers<T::STAGES> *bars = reinterpret_cast<Barriers<T::STAGES> *>(smem + T::BAR_OFFSET);
  const BlockIndex block = block_index<T, IS_CAUSAL, DETERMINISTIC>(params);
  const int head_kv = block.head_kv, batch = block.batch;

  if (threadIdx.x == 0) {
    mbarrier_init(&bars->kv_full, 1);
    mbarrier_init(&bars->kv_empty, T::NUM_CONSUMER_THREADS);
#pragma unroll
    for (int s = 0; s < T::STAGES; ++s) {
      mbarrier_init(&bars->q_full[s], 1);  // the producer's arrive_expect_tx, then the TMA bytes
      mbarrier_init(&bars->do_full[s], 1);
      mbarrier_init(&bars->q_empty[s], T::NUM_CONSUMER_THREADS);
    }
    fence_barrier_init();
  }
  __syncthreads();

  // The block's tiles one after the other, each handed to `role` (one code path per role: setmaxnreg); the
  // ring's steps and the dQ hand-offs count on across them.
  auto visit_tiles = [&](auto &&role) __attribute__((always_inline)) {
    for (int u = 0, i = 0; u < block.tiles(); ++u) {
      const int n_block = block.tile(u);
      // Virtual query block m is query tile q_tiles(m); a runtime block mask replaces this statement by its
      // listed tiles, whose range replaces the kernel's own.
      const cuir_kernels::DenseQTiles q_tiles{};  // block-iteration point
      QueryBlocks range = q_tiles.range(query_blocks<T, IS_CAUSAL>(params, n_block));
      range.descending = u == 0;
      i = role(u, n_block, range, q_tiles, i);
    }
  };

  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    setmaxnreg_dec<T::PRODUCER_REGS>();
    if (threadIdx.x / 32 == 0 && elect_one_sync()) {
      visit_tiles([&](int u, int n_block, const QueryBlocks &range, const auto &q_tiles,
                      int i) __attribute__((always_inline)) {
        if (u > 0) mbarrier_wait(&bars->kv_empty, (u - 1) % 2);  // the previous tile's dK, dV left the stages
        return producer<T, !DETERMINISTIC>(params, ws, maps, smem, bars, n_block, head_kv, batch, range, q_tiles, i);
      });
    } else if (threadIdx.x / 32 == 1) {
      const bool leader = elect_one_sync();
      visit_tiles([&](int u, int n_block, const QueryBlocks &range, const auto &q_tiles,
                      int i) __attribute__((always_inline)) {
        return dq_writer<T, DETERMINISTIC>(params, ws, smem, n_block, head_kv, batch, range, q_tiles, leader, i,
                                           u + 1 == block.tiles());
      });
      if (leader) bulk_wait_group_all();
    }
  } else {
    setmaxnreg_inc<T::CONSUMER_REGS>();
    const int tid = static_cast<int>(threadIdx.x) - 128;
    ConsumerContext ctx;
    ctx.smem = smem;
    ctx.smem_base = smem_u32addr(smem);
    ctx.consumer = tid / 128;
    ctx.warp = (tid % 128) / 32;
    ctx.lane = tid % 32;
    ctx.seqlen_kv = params.seqlen_kv;
    ctx.last_key_offset = IS_CAUSAL ? params.seqlen_kv - params.seqlen_q : params.seqlen_kv;
    ctx.scale_log2 = params.softmax_scale * kLog2e;
    visit_tiles([&](int u, int n_block, const QueryBlocks &range, const auto &q_tiles,
                    int i) __attribute__((always_inline)) {
      // Paired: opaque at each tile, so that what the steps derive from them is recomputed per tile rather than
      // held across both (without, a softcap variant's causal d = 128 consumer spilled 64 bytes; with them in
      // every instantiation, its full-attention one spilled).
      if constexpr (IS_CAUSAL && !DETERMINISTIC)
        fence_operand(ctx.smem_base), fence_operand(ctx.consumer), fence_operand(ctx.warp), fence_operand(ctx.lane);
      ctx.wg_key0 = n_block * T::BLOCK_N + ctx.consumer * T::WG_KEYS;
      ctx.key_row0 = ctx.wg_key0 + ctx.warp * 16 + ctx.lane / 4;
      ctx.n_block = n_block;
      i = consumer<T, !DETERMINISTIC>(params, ctx, bars, head_kv, batch, range, q_tiles, i, u);
      if (u + 1 < block.tiles()) {
        fence_proxy_async_shared();  // the dK / dV staging's generic accesses, before the next tile's TMA writes
        mbarrier_arrive(&bars->kv_empty);
      }
      return i;
    });
  }
}

// ---------------------------------------------------------------------------------------------------
// Host side: tensor maps, launches, dispatch over (element type, head dim, causal, deterministic).
// ---------------------------------------------------------------------------------------------------

template <Element ELEMENT, int HEAD_DIM, bool IS_CAUSAL, bool DETERMINISTIC>
static cudaError_t launch_main(const cuir_attention_bwd_params &params, const Workspace &ws, cudaStream_t stream) {
  using T = FlashBwdTraits<ELEMENT, HEAD_DIM>;
  TensorMaps maps;
  cudaError_t err = make_tile_map(&maps.q, params.q, params.dtype, HEAD_DIM, params.seqlen_q, params.num_heads_q, params.batch, params.q_row_stride,
                                  params.q_head_stride, params.q_batch_stride, T::BLOCK_M);
  if (err == cudaSuccess)
    err = make_tile_map(&maps.d_o, params.d_o, params.dtype, HEAD_DIM, params.seqlen_q, params.num_heads_q, params.batch, params.do_row_stride,
                        params.do_head_stride, params.do_batch_stride, T::BLOCK_M);
  if (err == cudaSuccess)
    err = make_tile_map(&maps.k, params.k, params.dtype, HEAD_DIM, params.seqlen_kv, params.num_heads_kv, params.batch, params.k_row_stride,
                        params.k_head_stride, params.k_batch_stride, T::BLOCK_N);
  if (err == cudaSuccess)
    err = make_tile_map(&maps.v, params.v, params.dtype, HEAD_DIM, params.seqlen_kv, params.num_heads_kv, params.batch, params.v_row_stride,
                        params.v_head_stride, params.v_batch_stride, T::BLOCK_N);
  if (err != cudaSuccess) return err;
  auto kernel = flash_bwd_sm90_kernel<ELEMENT, HEAD_DIM, IS_CAUSAL, DETERMINISTIC>;
  err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM_BYTES);
  if (err != cudaSuccess) return err;
  const int kv_tiles = (params.seqlen_kv + T::BLOCK_N - 1) / T::BLOCK_N;
  const int units = paired_tiles<IS_CAUSAL, DETERMINISTIC>(params) ? (kv_tiles + 1) / 2 : kv_tiles;  // block_index
  const dim3 grid(static_cast<unsigned>(units) * params.num_heads_kv * params.batch);
  kernel<<<grid, T::NUM_THREADS, T::SMEM_BYTES, stream>>>(params, ws, maps);
  return cudaGetLastError();
}

template <Element ELEMENT, int HEAD_DIM>
static cudaError_t run_backward(const cuir_attention_bwd_params &params, cudaStream_t stream) {
  Workspace ws;
  carve_workspace(params, params.workspace, &ws);
  constexpr int rows_per_block = kRowKernelThreads / (HEAD_DIM / 8);
  const dim3 row_grid((ws.rows_pad + rows_per_block - 1) / rows_per_block, params.num_heads_q, params.batch);
  flash_bwd_preprocess_kernel<ELEMENT, HEAD_DIM><<<row_grid, kRowKernelThreads, 0, stream>>>(params, ws);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  if (params.is_causal)
    err = params.deterministic ? launch_main<ELEMENT, HEAD_DIM, true, true>(params, ws, stream)
                          : launch_main<ELEMENT, HEAD_DIM, true, false>(params, ws, stream);
  else
    err = params.deterministic ? launch_main<ELEMENT, HEAD_DIM, false, true>(params, ws, stream)
                          : launch_main<ELEMENT, HEAD_DIM, false, false>(params, ws, stream);
  if (err != cudaSuccess) return err;
  flash_bwd_convert_dq_kernel<ELEMENT, HEAD_DIM><<<row_grid, kRowKernelThreads, 0, stream>>>(params, ws);
  return cudaGetLastError();
}

// Zeros of the [B, rows, heads, d] gradient at `base` (an empty problem's dQ, or dK and dV).
template <int HEAD_DIM>
static cudaError_t zero_gradient(void *base, int rows, int heads, int batch, int64_t batch_stride, int64_t row_stride,
                                 int64_t head_stride, cudaStream_t stream) {
  const int64_t chunks = static_cast<int64_t>(rows) * (HEAD_DIM / 8);
  const dim3 grid(static_cast<unsigned>((chunks + kRowKernelThreads - 1) / kRowKernelThreads), heads, batch);
  zero_fill_kernel<HEAD_DIM><<<grid, kRowKernelThreads, 0, stream>>>(static_cast<uint16_t *>(base), rows, batch_stride,
                                                                     row_stride, head_stride);
  return cudaGetLastError();
}

// Nq == 0 < Nkv: dK = dV = 0; Nkv == 0 < Nq: dQ = 0.
template <int HEAD_DIM>
static cudaError_t zero_empty_problem(const cuir_attention_bwd_params &params, cudaStream_t stream) {
  if (params.seqlen_kv == 0)
    return zero_gradient<HEAD_DIM>(params.dq, params.seqlen_q, params.num_heads_q, params.batch, params.dq_batch_stride, params.dq_row_stride,
                                   params.dq_head_stride, stream);
  const cudaError_t err = zero_gradient<HEAD_DIM>(params.dk, params.seqlen_kv, params.num_heads_kv, params.batch, params.dk_batch_stride,
                                                  params.dk_row_stride, params.dk_head_stride, stream);
  if (err != cudaSuccess) return err;
  return zero_gradient<HEAD_DIM>(params.dv, params.seqlen_kv, params.num_heads_kv, params.batch, params.dv_batch_stride, params.dv_row_stride,
                                 params.dv_head_stride, stream);
}

template <int HEAD_DIM>
static cudaError_t dispatch_dtype(const cuir_attention_bwd_params &params, cudaStream_t stream) {
  if (params.seqlen_q == 0 || params.seqlen_kv == 0) return zero_empty_problem<HEAD_DIM>(params, stream);
  return params.dtype == CUIR_DTYPE_BF16 ? run_backward<Element::kBF16, HEAD_DIM>(params, stream)
                                    : run_backward<Element::kFP16, HEAD_DIM>(params, stream);
}

}  // namespace bwd

}  // namespace cuir_sm90

extern "C" int cuir_attention_bwd_params_sizeof(void) { return static_cast<int>(sizeof(cuir_attention_bwd_params)); }

extern "C" size_t cuir_flash_bwd_sm90_workspace_size(const cuir_attention_bwd_params *params) {
  if (params == nullptr || params->batch < 0 || params->num_heads_q < 0 || params->seqlen_q < 0 || params->head_dim < 0)
    return 0;
  return cuir_sm90::bwd::carve_workspace(*params, nullptr, nullptr);
}

// The argument checks and error codes of cuir/attention_bwd_params_check.h.
extern "C" int cuir_flash_bwd_sm90(const cuir_attention_bwd_params *params, void *stream) {
  using namespace cuir_sm90::bwd;
  bool nothing_to_do;
  if (const cudaError_t err = cuir_kernels::check_attention_bwd_params(params, &nothing_to_do);
      err != cudaSuccess || nothing_to_do)
    return err;
  // the main kernel's one-dimensional grid: KV tiles x Hkv x B blocks
  if ((static_cast<int64_t>(params->seqlen_kv) + 127) / 128 * params->num_heads_kv * params->batch > INT32_MAX)
    return cudaErrorInvalidValue;
  cudaStream_t cu_stream = static_cast<cudaStream_t>(stream);
  return params->head_dim == 128 ? dispatch_dtype<128>(*params, cu_stream) : dispatch_dtype<64>(*params, cu_stream);
}
