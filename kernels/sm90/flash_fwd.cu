// flash_fwd.cu: CuIR's FA3-class attention forward kernel for Hopper (sm_90a: TMA, wgmma, setmaxnreg).
//
// A work item is BLOCK_M = 128 query rows of one (batch, query head) against all the keys those rows may see;
// a thread block runs work items one after another (persistent, one thread block a multiprocessor, each taking
// the next item from a work counter as it goes), streaming K and V through a ring of shared-memory stages filled
// by TMA that runs on from one item to the next:
//
//   warpgroup 0 (producer): one elected thread issues every TMA copy (an item's Q once the consumers are done
//                           with the previous item's, then K and V tile by tile into the ring), each completing
//                           on its stage's "full" mbarrier; it waits on the stage's "empty" mbarrier before
//                           overwriting it. setmaxnreg gives its registers away.
//   warpgroups 1, 2 (consumers): each owns 64 of the 128 query rows (the M = 64 of wgmma) and runs
//       S  = Q K^T              wgmma, Q and K from shared memory, fp32 accumulators in registers
//       ---- the score tile is complete after its wgmma wait; masking steps mask it here ----
//       online softmax          row max / row sum in registers, P = exp2(S * scale*log2e - max)
//       O += P V                wgmma, P converted to 16 bits in registers as the A operand, V from shared memory
//     and finally O / row_sum and LSE = max * scale + ln(row_sum), O staged through a buffer of its own.
//
// Overlap (FlashAttention-3's schedule):
//   - across work items: the next item's Q and first K / V tiles load during this item's last P V and epilogue
//     (a mask that leaves a query block a few tiles pays its fixed cost once, not per block);
//   - intra-warpgroup: step i issues S_i = Q K_i^T and then O += P_{i-1} V_{i-1} back to back; the softmax of
//     S_i runs while P_{i-1} V_{i-1} is still on the tensor cores (consumer_step);
//   - ping-pong between the two consumer warpgroups (CUIR_SM90_PINGPONG): a pair of named barriers lets only
//     one warpgroup at a time issue its GEMMs, so that one warpgroup's softmax runs while the other's GEMMs do.
//
// KV tiles are visited from the last one (n_block_max - 1) down to n_block_min (0 here; a variant whose mask has
// a left edge raises it), as in the sm_80 kernel: the tiles that
// need a mask (the ragged last tile, and for causal the tiles that cross the diagonal) come first as "masking
// steps", then the rest as "unmasked steps" with no mask arithmetic; a step's mask is a score hook that the
// step calls once the score tile is complete. Visit i (0, 1, ..., counted over the thread block's items) uses
// ring stage i % STAGES with phase parity (i / STAGES) % 2, for K and V alike. The block numbers the loops count
// are virtual: the block-iteration point kv_tiles (cuir/kv_tiles.cuh) maps each to the KV tile it loads and masks,
// the identity here; a runtime block mask lists the partial tiles there (its masking steps), then the full ones.
//
// Shared memory: every tile is stored as TMA writes it with 128-byte swizzle, in slabs of 64 columns
// (128 bytes): Q [HEAD_DIM/64][BLOCK_M][64], K and V [STAGES][HEAD_DIM/64][BLOCK_N][64] (see
// sm90_primitives.cuh for the layout and the wgmma descriptors), O as Q, then the mbarriers. Out-of-bounds rows
// (ragged Nq, Nkv) are zero-filled by TMA, and the mask sets their scores to -inf.
//
// Work items: (query blocks, Hq, B), the query heads of a KV head side by side, heaviest query blocks first
// (block_index), taken by min(items, multiprocessors) thread blocks in turn from a work counter (WorkTickets;
// persistent_ctas and work_counter on the host side).
// ptxas -v: 168 registers at launch (setmaxnreg then moves them: producer 24, consumers 240), no spills, for every
// instantiation (the build checks). Correctness, sanitizers and speed on the H200: docs/benchmarks/sm90.md.
#include <cuda.h>  // CUtensorMap and its enums only: cuTensorMapEncodeTiled is found at run time, no -lcuda
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>
#include <utility>

#include "cuir/attention_params.h"
#include "cuir/attention_params_check.h"
#include "cuir/kv_tiles.cuh"
#include "sm90_primitives.cuh"

// Tuning knobs (compile-time; the defaults are the shipped configuration).
#ifndef CUIR_SM90_BLOCK_N_D128
#define CUIR_SM90_BLOCK_N_D128 128  // keys per KV tile at head dim 128 (64 x BLOCK_N scores per warpgroup)
#endif
#ifndef CUIR_SM90_STAGES_D128
#define CUIR_SM90_STAGES_D128 2  // ring stages at head dim 128
#endif
#ifndef CUIR_SM90_STAGES_D64
#define CUIR_SM90_STAGES_D64 4  // ring stages at head dim 64
#endif
#ifndef CUIR_SM90_PINGPONG
#define CUIR_SM90_PINGPONG 1  // 1: the consumer warpgroups take turns issuing GEMMs (named barriers)
#endif

namespace cuir_sm90 {

constexpr float kNegInf = -__builtin_huge_valf();
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <Element ELEMENT_, int HEAD_DIM_>
struct FlashFwdTraits {
  static constexpr Element ELEMENT = ELEMENT_;
  static constexpr int HEAD_DIM = HEAD_DIM_;
  static constexpr int NUM_CONSUMERS = 2;                   // consumer warpgroups
  static constexpr int WG_ROWS = 64;                        // query rows per consumer warpgroup (wgmma M)
  static constexpr int BLOCK_M = NUM_CONSUMERS * WG_ROWS;   // query rows per thread block
  static constexpr int BLOCK_N = HEAD_DIM == 128 ? CUIR_SM90_BLOCK_N_D128 : 128;  // keys per KV tile
  static constexpr int STAGES = HEAD_DIM == 128 ? CUIR_SM90_STAGES_D128 : CUIR_SM90_STAGES_D64;
  static constexpr int NUM_CONSUMER_THREADS = NUM_CONSUMERS * 128;
  static constexpr int NUM_THREADS = 128 + NUM_CONSUMER_THREADS;
  static constexpr int PRODUCER_REGS = 24;   // setmaxnreg: 128 x 24 + 256 x 240 <= 65536
  static constexpr int CONSUMER_REGS = 240;
  static constexpr bool PINGPONG = CUIR_SM90_PINGPONG != 0;
  static constexpr int SLABS = HEAD_DIM / 64;               // 64-column (128-byte) slabs of a tile
  static constexpr int Q_SLAB_BYTES = BLOCK_M * 128;
  static constexpr int KV_SLAB_BYTES = BLOCK_N * 128;
  static constexpr int Q_TILE_BYTES = SLABS * Q_SLAB_BYTES;
  static constexpr int KV_TILE_BYTES = SLABS * KV_SLAB_BYTES;
  static constexpr int S_REGS = BLOCK_N / 2;                // fp32 registers per thread of a 64 x BLOCK_N tile
  static constexpr int O_REGS = HEAD_DIM / 2;               // ... of the 64 x HEAD_DIM output tile
  static constexpr int P_REGS = BLOCK_N / 4;                // 16x2 registers per thread of P
  static constexpr int QK_K_STEPS = HEAD_DIM / 16;          // wgmma k-steps of Q K^T
  static constexpr int PV_K_STEPS = BLOCK_N / 16;           // wgmma k-steps of P V
  static constexpr int CHUNKS_PER_ROW = HEAD_DIM / 8;       // 16-byte chunks per row
  // Shared memory, as offsets from a 1024-byte aligned base.
  static constexpr int SQ_OFFSET = 0;
  static constexpr int SK_OFFSET = SQ_OFFSET + Q_TILE_BYTES;
  static constexpr int SV_OFFSET = SK_OFFSET + STAGES * KV_TILE_BYTES;
  static constexpr int SO_OFFSET = SV_OFFSET + STAGES * KV_TILE_BYTES;  // O staged for its stores (Q's layout)
  static constexpr int BAR_OFFSET = SO_OFFSET + Q_TILE_BYTES;
  static constexpr int SMEM_BYTES = BAR_OFFSET + 8 * (2 + 4 * STAGES + 6) + 1024;  // + 1 KB for the alignment
  static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "head dim 64 or 128");
  static_assert(BLOCK_N % 16 == 0 && BLOCK_N <= 256, "BLOCK_N: whole k16 steps, one TMA box");
  static_assert(SMEM_BYTES <= 227 * 1024, "shared memory");
};

// The mbarriers, in shared memory after the tiles.
template <int STAGES>
struct Barriers {
  uint64_t q_full;            // Q landed (TMA transaction bytes)
  uint64_t q_empty;           // every consumer thread is done reading Q (its block's last S = Q K^T landed)
  uint64_t k_full[STAGES];    // K tile of the stage landed
  uint64_t v_full[STAGES];    // V tile of the stage landed
  uint64_t k_empty[STAGES];   // every consumer thread is done reading the stage's K tile
  uint64_t v_empty[STAGES];   // ... the stage's V tile
  uint64_t work_full[2];      // the producer wrote the work slot (WorkTickets)
  uint64_t work_empty[2];     // every consumer thread read it
  int64_t work_slot[2];       // the thread block's next work items, from the producer to the consumers
};

// Named barriers of the ping-pong (id 0 is __syncthreads): consumer c waits on PINGPONG_BARRIER + c.
constexpr int PINGPONG_BARRIER = 1;

struct BlockIndex {
  int m_block;  // query block: rows [m_block * BLOCK_M, +BLOCK_M)
  int head_q;   // query head
  int batch;
};

// Work item `work` of the (query blocks x query heads x batch) items, counted query block fastest and mapped so
// that the query heads sharing a KV head run side by side, each query block from the last one down, then the
// next KV head. Items in flight together read the same K and V from L2, and under a causal-like mask (the last
// query block sees the most keys) the heavy items go first and the light ones fill the tail; variants launch as
// full attention and keep that order.
__device__ __forceinline__ BlockIndex block_index(const cuir_attention_params &params, int64_t work,
                                                  int num_m_blocks) {
  // A runtime block mask replaces this statement by its heavy-first order (cuir/kv_tiles.cuh).
  const cuir_kernels::ExpertQueryOrder query_order{};  // query-order point
  if (BlockIndex listed; query_order.block(listed, work, params.num_heads_q, num_m_blocks)) return listed;
  const int group = params.num_heads_q / params.num_heads_kv;  // query heads per KV head
  const int64_t per_batch = static_cast<int64_t>(num_m_blocks) * params.num_heads_q;
  const int linear = static_cast<int>(work % per_batch);
  const int rest = linear / group;
  return BlockIndex{num_m_blocks - 1 - rest % num_m_blocks, (rest / num_m_blocks) * group + linear % group,
                    static_cast<int>(work / per_batch)};
}

// The thread block's k-th work item (k = 0, 1, ...; num_work or more: none left). Two schedules:
//   - tickets (`counter` given): the producer warp takes the next ticket of the launch's work counter, so a thread
//     block that drew heavy items takes fewer of them, as the hardware's own dispatch of a grid would; it hands
//     the ticket to the consumers through work_slot[k % 2]. The counter wraps back to 0 once the launch has taken
//     num_work + G tickets (every thread block ends on one past the items), so it is 0 again for the next launch
//     on its stream (the host gives each stream its own counter);
//   - fixed (`counter` null): thread block c of G takes items c, 2G - 1 - c, 2G + c, 4G - 1 - c, ... (rounds of
//     G, every other round backwards). With G = the number of items it takes item c alone.
template <int STAGES>
struct WorkTickets {
  unsigned *counter;
  int64_t num_work;
  Barriers<STAGES> *bars;

  __device__ __forceinline__ int64_t fixed(int k) const {
    const int64_t g = gridDim.x, c = blockIdx.x;
    return int64_t(k) * g + (k % 2 == 0 ? c : g - 1 - c);
  }
  // The producer warp (all its lanes).
  __device__ __forceinline__ int64_t producer_next(int k) const {
    if (counter == nullptr) return fixed(k);
    const int slot = k % 2;
    int64_t work = 0;
    if (threadIdx.x % 32 == 0) {
      mbarrier_wait(&bars->work_empty[slot], ((k / 2) % 2) ^ 1);  // the first use of a slot passes at once
      work = atomicInc(counter, static_cast<unsigned>(num_work + gridDim.x - 1));
      bars->work_slot[slot] = work;
      mbarrier_arrive(&bars->work_full[slot]);  // release: the slot's write before the arrival
    }
    return __shfl_sync(0xffffffffu, work, 0);
  }
  // A consumer thread.
  __device__ __forceinline__ int64_t consumer_next(int k) const {
    if (counter == nullptr) return fixed(k);
    const int slot = k % 2;
    mbarrier_wait(&bars->work_full[slot], (k / 2) % 2);
    const int64_t work = bars->work_slot[slot];
    mbarrier_arrive(&bars->work_empty[slot]);
    return work;
  }
};

// ---------------------------------------------------------------------------------------------------
// Producer: one thread issues every TMA copy of the block.
// ---------------------------------------------------------------------------------------------------

// Load the K or V tile of virtual block n_block (KV tile kv_tiles(n_block)) into the ring at its visit i (counted
// over the thread block's work items), stage i % STAGES, once every consumer thread has released that stage's
// previous contents.
template <class T, class KvTiles>
__device__ __forceinline__ void producer_load_kv(const CUtensorMap *tensor_map, uint32_t tile_offset,
                                                 unsigned char *smem, uint64_t *full, uint64_t *empty, int i,
                                                 int n_block, int head_kv, int batch, const KvTiles &kv_tiles) {
  const int stage = i % T::STAGES;
  const uint32_t phase = (i / T::STAGES) % 2;
  mbarrier_wait(&empty[stage], phase ^ 1);  // the first round passes at once (fresh barrier)
  mbarrier_arrive_expect_tx(&full[stage], T::KV_TILE_BYTES);
  const int row = kv_tiles(n_block) * T::BLOCK_N;
#pragma unroll
  for (int slab = 0; slab < T::SLABS; ++slab)
    tma_load_4d(smem + tile_offset + stage * T::KV_TILE_BYTES + slab * T::KV_SLAB_BYTES, tensor_map, slab * 64, row,
                head_kv, batch, &full[stage]);
}

// The loads of one work item: its ring visits follow the `visits_before` of the thread block's earlier items, and
// it is the thread block's item number `items_before` (the parity of the Q barriers).
template <class T, class KvTiles>
__device__ __forceinline__ void producer(const CUtensorMap *tma_q, const CUtensorMap *tma_k, const CUtensorMap *tma_v,
                                         unsigned char *smem, Barriers<T::STAGES> *bars, const BlockIndex &block,
                                         int head_kv, int n_block_max, int n_block_min, const KvTiles &kv_tiles,
                                         int visits_before, int items_before) {
  // Q: once, when the consumers are done with the previous item's (the first item's wait passes at once).
  mbarrier_wait(&bars->q_empty, (items_before % 2) ^ 1);
  mbarrier_arrive_expect_tx(&bars->q_full, T::Q_TILE_BYTES);
#pragma unroll
  for (int slab = 0; slab < T::SLABS; ++slab)
    tma_load_4d(smem + T::SQ_OFFSET + slab * T::Q_SLAB_BYTES, tma_q, slab * 64, block.m_block * T::BLOCK_M,
                block.head_q, block.batch, &bars->q_full);
  // K of visit i, then V of visit i - 1: the order in which the consumers wait for them.
  const int n_visits = n_block_max - n_block_min;
  for (int i = 0; i <= n_visits; ++i) {
    if (i < n_visits)
      producer_load_kv<T>(tma_k, T::SK_OFFSET, smem, bars->k_full, bars->k_empty, visits_before + i,
                          n_block_max - 1 - i, head_kv, block.batch, kv_tiles);
    if (i >= 1)
      producer_load_kv<T>(tma_v, T::SV_OFFSET, smem, bars->v_full, bars->v_empty, visits_before + i - 1,
                          n_block_max - i, head_kv, block.batch, kv_tiles);
  }
}

// ---------------------------------------------------------------------------------------------------
// Consumers: GEMMs, mask, online softmax.
// ---------------------------------------------------------------------------------------------------

// Issue S = Q K^T for this warpgroup's 64 rows (async; one wgmma-group). q_rows: shared address of the
// warpgroup's first Q row in slab 0; k_tile: shared address of the K tile. k-step kk reads columns
// 16kk .. 16kk+15: slab kk / 4, 32 bytes in per step inside the (swizzled) 128-byte rows.
template <class T>
__device__ __forceinline__ void gemm_qk(float (&acc_s)[T::S_REGS], uint32_t q_rows, uint32_t k_tile) {
  fence_operands(acc_s);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < T::QK_K_STEPS; ++kk) {
    const uint64_t desc_q = desc_k_major(q_rows + (kk / 4) * T::Q_SLAB_BYTES + (kk % 4) * 32);
    const uint64_t desc_k = desc_k_major(k_tile + (kk / 4) * T::KV_SLAB_BYTES + (kk % 4) * 32);
    if (kk == 0)
      wgmma_ss<T::ELEMENT, T::BLOCK_N, true>(acc_s, desc_q, desc_k);  // S = Q K^T (no accumulator read)
    else
      wgmma_ss<T::ELEMENT, T::BLOCK_N, false>(acc_s, desc_q, desc_k);
  }
  wgmma_commit_group();
  fence_operands(acc_s);
}

// Issue O += P V (async; one wgmma-group): P from registers, V [BLOCK_N keys][HEAD_DIM] from shared memory
// as an MN-major B operand; k-step kk reads keys 16kk .. 16kk+15 (2048 bytes further in every slab).
template <class T>
__device__ __forceinline__ void gemm_pv(float (&acc_o)[T::O_REGS], uint32_t (&p_frag)[T::P_REGS], uint32_t v_tile) {
  fence_operands(acc_o);
  fence_operands(p_frag);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < T::PV_K_STEPS; ++kk) {
    const uint32_t a[4] = {p_frag[4 * kk], p_frag[4 * kk + 1], p_frag[4 * kk + 2], p_frag[4 * kk + 3]};
    wgmma_rs<T::ELEMENT, T::HEAD_DIM>(acc_o, a, desc_mn_major(v_tile + kk * 16 * 128, T::KV_SLAB_BYTES));
  }
  wgmma_commit_group();
  fence_operands(acc_o);
}

// The mask of the masking steps: score (row, col) becomes -inf unless key col exists (col < seqlen_kv) and
// row may see it (col <= row + last_key_offset). row0: absolute query row of this thread's accumulator rows
// g (elements 0, 1 of each n8 block) and g + 8 (elements 2, 3); n_block: the KV tile.
template <class T>
__device__ __forceinline__ void apply_mask(float (&acc_s)[T::S_REGS], int row0, int n_block, int lane,
                                           int seqlen_kv, int last_key_offset) {
  const int col0 = n_block * T::BLOCK_N + (lane % 4) * 2;
#pragma unroll
  for (int j = 0; j < T::BLOCK_N / 8; ++j) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = row0 + (e / 2) * 8;
      const int col = col0 + j * 8 + (e % 2);
      if (col >= seqlen_kv || col > row + last_key_offset) acc_s[4 * j + e] = kNegInf;
    }
  }
}

// Online softmax over one complete (masked) score tile. For each of this thread's two rows (half 0: g,
// half 1: g + 8; elements 4j + 2*half + 0..1):
//   row_max' = max(row_max, max_j s_j);   o_rescale = exp2((row_max - row_max') * scale_log2)
//   p_j = exp2(s_j * scale_log2 - row_max' * scale_log2)        (one FFMA + one EX2 per score, into acc_s)
//   row_sum = row_sum * o_rescale + sum_j p_j   (this thread's columns; the quad is summed in the epilogue)
// o_rescale is applied to acc_o later (rescale_o), once the P V product still in flight has landed.
// The reference point row_max' * scale_log2 is rounded on its own (__fmul_rn: never contracted into an FMA),
// the same in P, the rescale and the log-sum-exp, so that its rounding cancels (contracted, the rescale of a
// row at -1e9 was 2^(1e9 log2 e - its rounding), up to 2^64, not 1). It is exact while |reference| < 2^20;
// the transfer refuses a score_mod constant of magnitude 2^16 or more, and fp16's P would overflow past ~2^26.
// A row with no visible key so far keeps row_max = -inf; its reference point is then 0 so that every p_j and
// the rescale are exp2(-inf) = 0 and no NaN appears.
template <class T>
__device__ __forceinline__ void online_softmax(float (&acc_s)[T::S_REGS], float (&row_max)[2], float (&row_sum)[2],
                                               float (&o_rescale)[2], float scale_log2) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float new_max = row_max[half];
#pragma unroll
    for (int j = 0; j < T::BLOCK_N / 8; ++j)
      new_max = fmaxf(new_max, fmaxf(acc_s[4 * j + 2 * half], acc_s[4 * j + 2 * half + 1]));
    new_max = fmaxf(new_max, __shfl_xor_sync(0xffffffffu, new_max, 1));  // the 4 threads of a quad share a row
    new_max = fmaxf(new_max, __shfl_xor_sync(0xffffffffu, new_max, 2));

    const float max_scaled = new_max == kNegInf ? 0.f : __fmul_rn(new_max, scale_log2);
    o_rescale[half] = fast_exp2(__fmul_rn(row_max[half], scale_log2) - max_scaled);
    row_max[half] = new_max;

    float tile_sum = 0.f;
#pragma unroll
    for (int j = 0; j < T::BLOCK_N / 8; ++j) {
#pragma unroll
      for (int e = 2 * half; e < 2 * half + 2; ++e) {
        const float p = fast_exp2(fmaf(acc_s[4 * j + e], scale_log2, -max_scaled));
        acc_s[4 * j + e] = p;
        tile_sum += p;
      }
    }
    row_sum[half] = row_sum[half] * o_rescale[half] + tile_sum;
  }
}

// acc_o *= o_rescale, row by row (the correction of the last online_softmax).
template <class T>
__device__ __forceinline__ void rescale_o(float (&acc_o)[T::O_REGS], const float (&o_rescale)[2]) {
#pragma unroll
  for (int j = 0; j < T::HEAD_DIM / 8; ++j) {
#pragma unroll
    for (int e = 0; e < 4; ++e) acc_o[4 * j + e] *= o_rescale[e / 2];
  }
}

// P = acc_s (probabilities) rounded to 16 bits: register pairs (2i, 2i+1) of the accumulator are exactly
// register i of the A fragments of P V (see sm90_primitives.cuh).
template <class T>
__device__ __forceinline__ void convert_p(uint32_t (&p_frag)[T::P_REGS], const float (&acc_s)[T::S_REGS]) {
#pragma unroll
  for (int i = 0; i < T::P_REGS; ++i) p_frag[i] = pack_float2<T::ELEMENT>(acc_s[2 * i], acc_s[2 * i + 1]);
}

// Ping-pong between the consumer warpgroups: consumer c waits for its turn before issuing GEMMs and passes
// the turn on after issuing them, across the thread block's work items. Consumer 1 hands consumer 0 the first
// turn, and consumer 0 takes one turn more after its last item (the hand-off of consumer 1's last turn), so that
// every bar.sync is matched by exactly one bar.arrive.
template <class T>
__device__ __forceinline__ void pingpong_wait_turn(int consumer) {
  if constexpr (T::PINGPONG) named_barrier_sync(PINGPONG_BARRIER + consumer, T::NUM_CONSUMER_THREADS);
}
template <class T>
__device__ __forceinline__ void pingpong_pass_turn(int consumer) {
  if constexpr (T::PINGPONG) named_barrier_arrive(PINGPONG_BARRIER + (1 - consumer), T::NUM_CONSUMER_THREADS);
}

// Shared-memory addresses and per-thread constants of a consumer warpgroup.
struct ConsumerContext {
  uint32_t sq_rows;   // this warpgroup's first Q row, slab 0
  uint32_t sk;        // K ring
  uint32_t sv;        // V ring
  int consumer;       // 0 or 1
  int visits_before;  // ring visits of the thread block's earlier work items
  int lane;
  int row0;           // absolute query row of this thread's accumulator row g
  int seqlen_kv;
  int last_key_offset;
  float scale_log2;
};

// Issue O += P V for ring visit i (async): O is first rescaled by the correction of the softmax that produced P
// (the one of visit i), then P, still in p_frag, multiplies the V tile of visit i once it has landed.
template <class T>
__device__ __forceinline__ void issue_pv(const ConsumerContext &ctx, Barriers<T::STAGES> *bars, int i,
                                         float (&acc_o)[T::O_REGS], uint32_t (&p_frag)[T::P_REGS],
                                         const float (&o_rescale)[2]) {
  const int stage = i % T::STAGES;
  rescale_o<T>(acc_o, o_rescale);
  mbarrier_wait(&bars->v_full[stage], (i / T::STAGES) % 2);
  gemm_pv<T>(acc_o, p_frag, ctx.sv + stage * T::KV_TILE_BYTES);
}

// One KV step of a consumer warpgroup: virtual block n_block (KV tile kv_tiles(n_block)), ring visit
// i = visits_before + n_block_max - 1 - n_block. Every visit but the FIRST also multiplies P_{i-1} (in p_frag) by
// the V tile of visit i - 1, issued right after S_i so that the softmax of S_i overlaps it. Once acc_s holds the complete score
// tile, score_hook(kv_tile, false) runs (score code before the mask, as FlashAttention-3's score_mod; none in
// this kernel), then the mask of a masking step. The hook also runs at the start of the step, as
// score_hook(kv_tile, true): what it loads from global memory there (the values a score_mod reads from its
// tensors) is in flight while the step waits for its turn and for S.
template <class T, bool FIRST, bool IS_MASKED, class KvTiles, class ScoreHook>
__device__ __forceinline__ void consumer_step(const ConsumerContext &ctx, Barriers<T::STAGES> *bars, int n_block,
                                              int n_block_max, float (&acc_o)[T::O_REGS], float (&acc_s)[T::S_REGS],
                                              uint32_t (&p_frag)[T::P_REGS], float (&row_max)[2], float (&row_sum)[2],
                                              float (&o_rescale)[2], const KvTiles &kv_tiles,
                                              const ScoreHook &score_hook) {
  const int i = ctx.visits_before + n_block_max - 1 - n_block;
  const int stage = i % T::STAGES;

  score_hook(kv_tiles(n_block), true);  // the score hook's early phase: its loads for this step
  pingpong_wait_turn<T>(ctx.consumer);
  mbarrier_wait(&bars->k_full[stage], (i / T::STAGES) % 2);
  gemm_qk<T>(acc_s, ctx.sq_rows, ctx.sk + stage * T::KV_TILE_BYTES);  // S_i = Q K_i^T (async)
  if constexpr (!FIRST) issue_pv<T>(ctx, bars, i - 1, acc_o, p_frag, o_rescale);  // O += P_{i-1} V_{i-1} (async)
  pingpong_pass_turn<T>(ctx.consumer);

  wgmma_wait_group<FIRST ? 0 : 1>();  // S_i has landed (P V may still be running)
  fence_operands(acc_s);
  mbarrier_arrive(&bars->k_empty[stage]);

  // ------- score tile complete: acc_s = Q K^T (unscaled) of KV tile kv_tile -------
  const int kv_tile = kv_tiles(n_block);  // the keys of this step: [kv_tile * BLOCK_N, +BLOCK_N)
  score_hook(kv_tile, false);
  if constexpr (IS_MASKED)
    apply_mask<T>(acc_s, ctx.row0, kv_tile, ctx.lane, ctx.seqlen_kv, ctx.last_key_offset);

  // ------- online softmax: row_max / row_sum, acc_s <- probabilities, o_rescale for the next P V -------
  online_softmax<T>(acc_s, row_max, row_sum, o_rescale, ctx.scale_log2);

  if constexpr (!FIRST) {
    wgmma_wait_group<0>();  // P_{i-1} V_{i-1} has landed: acc_o and p_frag are free again
    fence_operands(acc_o);
    fence_operands(p_frag);
    mbarrier_arrive(&bars->v_empty[(i - 1) % T::STAGES]);
  }
  convert_p<T>(p_frag, acc_s);  // P_i, the A operand of the next P V
}

// The epilogue of a consumer warpgroup: finish the row sums across the quad, normalise, write LSE, and stage O
// (16-bit) through this warp's own 16 rows of the O buffer (Q's swizzled layout), for 16-byte coalesced stores.
// The producer may be loading the next item's Q meanwhile: O has a buffer of its own.
template <class T>
__device__ __forceinline__ void consumer_epilogue(const cuir_attention_params &params, unsigned char *smem,
                                                  const BlockIndex &block, const ConsumerContext &ctx,
                                                  int wg_row_in_block, int warp, const float (&acc_o)[T::O_REGS],
                                                  const float (&row_max)[2], const float (&row_sum)[2]) {
  const int lane = ctx.lane;
  const int m_start = block.m_block * T::BLOCK_M;
  float *lse_head = params.lse == nullptr
                        ? nullptr
                        : params.lse + (static_cast<int64_t>(block.batch) * params.num_heads_q + block.head_q) *
                                           params.seqlen_q;
  float row_inv_sum[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float sum = row_sum[half];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const bool row_sees_nothing = sum == 0.f;  // every score of the row was masked
    row_inv_sum[half] = row_sees_nothing ? 0.f : 1.f / sum;
    const float lse = row_sees_nothing ? kNegInf : (__fmul_rn(row_max[half], ctx.scale_log2) + fast_log2(sum)) * kLn2;
    const int row = ctx.row0 + half * 8;
    if (lse_head != nullptr && lane % 4 == 0 && row < params.seqlen_q) lse_head[row] = lse;
  }

  // Byte offset of 16-byte chunk `chunk` of block row `row` in the swizzled O buffer.
  auto q_chunk_offset = [](int row, int chunk) {
    return T::SO_OFFSET + (chunk / 8) * T::Q_SLAB_BYTES + row * 128 + (((chunk % 8) ^ (row % 8)) << 4);
  };
  __syncwarp();  // the warp's reads of its rows for the previous item are done
  const int warp_row_in_block = wg_row_in_block + warp * 16;
#pragma unroll
  for (int j = 0; j < T::HEAD_DIM / 8; ++j) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = warp_row_in_block + half * 8 + lane / 4;
      const uint32_t packed = pack_float2<T::ELEMENT>(acc_o[4 * j + 2 * half] * row_inv_sum[half],
                                                      acc_o[4 * j + 2 * half + 1] * row_inv_sum[half]);
      *reinterpret_cast<uint32_t *>(smem + q_chunk_offset(row, j) + (lane % 4) * 4) = packed;
    }
  }
  __syncwarp();
  uint16_t *o_head = static_cast<uint16_t *>(params.o) + block.batch * params.o_batch_stride +
                     block.head_q * params.o_head_stride;
  constexpr int WARP_CHUNKS = 16 * T::CHUNKS_PER_ROW;
#pragma unroll
  for (int pass = 0; pass < WARP_CHUNKS / 32; ++pass) {
    const int chunk_id = pass * 32 + lane;
    const int row = warp_row_in_block + chunk_id / T::CHUNKS_PER_ROW;  // row within the block
    const int chunk = chunk_id % T::CHUNKS_PER_ROW;
    const uint4 data = *reinterpret_cast<const uint4 *>(smem + q_chunk_offset(row, chunk));
    if (m_start + row < params.seqlen_q)
      *reinterpret_cast<uint4 *>(o_head + (m_start + row) * params.o_row_stride + chunk * 8) = data;
  }
}

// A work item none of whose rows sees any key: O = 0, LSE = -inf, written by the consumer threads (tid 0 .. 255).
template <class T>
__device__ __forceinline__ void write_empty_block(const cuir_attention_params &params, const BlockIndex &block,
                                                  int tid) {
  const int m_start = block.m_block * T::BLOCK_M;
  uint16_t *o_head = static_cast<uint16_t *>(params.o) + block.batch * params.o_batch_stride +
                     block.head_q * params.o_head_stride;
  for (int chunk_id = tid; chunk_id < T::BLOCK_M * T::CHUNKS_PER_ROW; chunk_id += T::NUM_CONSUMER_THREADS) {
    const int row = m_start + chunk_id / T::CHUNKS_PER_ROW;
    const int col = (chunk_id % T::CHUNKS_PER_ROW) * 8;
    if (row < params.seqlen_q) *reinterpret_cast<uint4 *>(o_head + row * params.o_row_stride + col) = make_uint4(0, 0, 0, 0);
  }
  if (params.lse != nullptr) {
    float *lse_head = params.lse + (static_cast<int64_t>(block.batch) * params.num_heads_q + block.head_q) * params.seqlen_q;
    for (int row = m_start + tid; row < min(m_start + T::BLOCK_M, params.seqlen_q); row += T::NUM_CONSUMER_THREADS)
      lse_head[row] = kNegInf;
  }
}

// One work item, run by one role: the producer warp's loads (PRODUCER) or the consumer warpgroups' steps. Both
// roles plan the item from this one text (its bounds and block-iteration point, where a variant's patches go);
// each kernel role loop instantiates it for its own role, so that the producer's code stays within the registers
// setmaxnreg leaves it. visits_before / items_before: the ring visits of the thread block's earlier items and how
// many of them loaded a Q (the Q barriers' parity), counted alike by both roles.
template <class T, bool IS_CAUSAL, bool PRODUCER>
__device__ __forceinline__ void run_work_item(const cuir_attention_params &params, const CUtensorMap *tma_q,
                                              const CUtensorMap *tma_k, const CUtensorMap *tma_v, unsigned char *smem,
                                              Barriers<T::STAGES> *bars, int64_t work, int num_m_blocks,
                                              int &visits_before, int &items_before) {
  const BlockIndex block = block_index(params, work, num_m_blocks);
  const int seqlen_q = params.seqlen_q;
  const int seqlen_kv = params.seqlen_kv;
  const int causal_offset = seqlen_kv - seqlen_q;  // causal: row i sees key j iff j <= i + causal_offset
  const int m_start = block.m_block * T::BLOCK_M;
  const int head_kv = block.head_q / (params.num_heads_q / params.num_heads_kv);  // GQA / MQA

  // ---- KV tiles this block visits: [n_block_min, n_block_max), of which [n_block_min, n_unmasked_blocks) need
  //      no mask; every row of this kernel's masks sees key 0 (variants with a left edge raise n_block_min) ----
  int n_block_min = 0;
  int n_block_max = (seqlen_kv + T::BLOCK_N - 1) / T::BLOCK_N;
  int n_unmasked_blocks = seqlen_kv / T::BLOCK_N;
  if constexpr (IS_CAUSAL) {
    const int last_row = min(m_start + T::BLOCK_M, seqlen_q) - 1;
    const int last_key_of_last_row = last_row + causal_offset;  // the last key any row of the block sees
    const int last_key_of_first_row = m_start + causal_offset;  // the last key every row of the block sees
    n_block_max = min(n_block_max, last_key_of_last_row < 0 ? 0 : last_key_of_last_row / T::BLOCK_N + 1);
    n_unmasked_blocks = min(n_unmasked_blocks, last_key_of_first_row < 0 ? 0 : (last_key_of_first_row + 1) / T::BLOCK_N);
  }
  // Virtual block n of those is KV tile kv_tiles(n) (cuir/kv_tiles.cuh); a runtime block mask replaces this
  // statement by its listed tiles and takes the three bounds from them.
  const cuir_kernels::DenseKvTiles kv_tiles{};  // block-iteration point
  const int tid = static_cast<int>(threadIdx.x) - 128;  // consumers: 0 .. 255 over both consumer warpgroups
  if (n_block_max <= 0) {
    if constexpr (!PRODUCER) write_empty_block<T>(params, block, tid);
    return;
  }
  const int n_visits = n_block_max - n_block_min;

  if constexpr (PRODUCER) {
    // =============================== producer warp ===============================
    if (elect_one_sync())
      producer<T>(tma_q, tma_k, tma_v, smem, bars, block, head_kv, n_block_max, n_block_min, kv_tiles, visits_before,
                  items_before);
  } else {
    // =============================== consumer warpgroups ===============================
    const int consumer_index = tid / 128;
    const int warp = (tid % 128) / 32;  // warp within the warpgroup: rows 16*warp .. 16*warp+15
    const int lane = tid % 32;
    const int wg_row_in_block = consumer_index * T::WG_ROWS;

    const uint32_t smem_base = smem_u32addr(smem);
    ConsumerContext ctx;
    ctx.sq_rows = smem_base + T::SQ_OFFSET + wg_row_in_block * 128;
    ctx.sk = smem_base + T::SK_OFFSET;
    ctx.sv = smem_base + T::SV_OFFSET;
    ctx.consumer = consumer_index;
    ctx.visits_before = visits_before;
    ctx.lane = lane;
    ctx.row0 = m_start + wg_row_in_block + warp * 16 + lane / 4;
    ctx.seqlen_kv = params.seqlen_kv;
    // The mask: row i sees key j < seqlen_kv iff j <= i + last_key_offset; full attention sets it past every key.
    ctx.last_key_offset = IS_CAUSAL ? params.seqlen_kv - params.seqlen_q : params.seqlen_kv;
    ctx.scale_log2 = params.softmax_scale * kLog2e;

    // ---- accumulators and softmax state, all in registers ----
    float acc_o[T::O_REGS];
    float acc_s[T::S_REGS];
    uint32_t p_frag[T::P_REGS];
    float row_max[2] = {kNegInf, kNegInf};
    float row_sum[2] = {0.f, 0.f};
    float o_rescale[2];
#pragma unroll
    for (int r = 0; r < T::O_REGS; ++r) acc_o[r] = 0.f;

    mbarrier_wait(&bars->q_full, items_before % 2);

    // The score hooks of the masking and the unmasked steps: code over the complete score tile of KV tile n_block
    // (acc_s), before the step's mask; with `gather`, at the start of the step (consumer_step), the loads that
    // code will read. The plain softmax has none.
    auto masking_scores = [&](int n_block, bool gather) __attribute__((always_inline)) {
      (void)gather;
      (void)n_block;
    };
    auto unmasked_scores = [&](int n_block, bool gather) __attribute__((always_inline)) {
      (void)gather;
      (void)n_block;
    };

    // =============================== masking steps ===============================
    // Virtual blocks n_block_max-1 down to n_unmasked_blocks: the ragged tail and, for causal, the diagonal (a
    // block mask's partial tiles, in any order). The first visit (always a masking step) has no P V yet.
    int n_block = n_block_max - 1;
    consumer_step<T, true, true>(ctx, bars, n_block, n_block_max, acc_o, acc_s, p_frag, row_max, row_sum, o_rescale,
                                 kv_tiles, masking_scores);
    --n_block;
    for (; n_block >= n_unmasked_blocks; --n_block)
      consumer_step<T, false, true>(ctx, bars, n_block, n_block_max, acc_o, acc_s, p_frag, row_max, row_sum, o_rescale,
                                    kv_tiles, masking_scores);

    // =============================== unmasked steps ===============================
    // Virtual blocks n_unmasked_blocks-1 down to n_block_min: full tiles, every score visible, no mask arithmetic.
    for (; n_block >= n_block_min; --n_block)
      consumer_step<T, false, false>(ctx, bars, n_block, n_block_max, acc_o, acc_s, p_frag, row_max, row_sum,
                                     o_rescale, kv_tiles, unmasked_scores);
    mbarrier_arrive(&bars->q_empty);  // every S = Q K^T of the item has landed: the next item's Q may load

    // =============================== last P V ===============================
    const int last_visit = visits_before + n_visits - 1;
    pingpong_wait_turn<T>(consumer_index);
    issue_pv<T>(ctx, bars, last_visit, acc_o, p_frag, o_rescale);
    pingpong_pass_turn<T>(consumer_index);
    wgmma_wait_group<0>();
    fence_operands(acc_o);
    fence_operands(p_frag);
    mbarrier_arrive(&bars->v_empty[last_visit % T::STAGES]);

    // =============================== epilogue ===============================
    consumer_epilogue<T>(params, smem, block, ctx, wg_row_in_block, warp, acc_o, row_max, row_sum);
  }
  visits_before += n_visits;
  ++items_before;
}

// The persistent kernel: a thread block runs its work items (WorkTickets) one after another. The producer loads
// each item's Q once the consumers are done with the previous one's (q_empty), and the K / V ring runs on across
// items, so the next item's loads overlap this item's last P V and epilogue. work_counter: the launch's work
// counter, 0 at launch (null: the fixed schedule).
template <Element ELEMENT, int HEAD_DIM, bool IS_CAUSAL>
__global__ void __launch_bounds__(FlashFwdTraits<ELEMENT, HEAD_DIM>::NUM_THREADS, 1)
    flash_fwd_sm90_kernel(const __grid_constant__ cuir_attention_params params, const __grid_constant__ CUtensorMap tma_q,
                          const __grid_constant__ CUtensorMap tma_k, const __grid_constant__ CUtensorMap tma_v,
                          unsigned *work_counter) {
  using T = FlashFwdTraits<ELEMENT, HEAD_DIM>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // 1024-byte aligned base: the 128-byte swizzle pattern repeats every 1024 bytes (descriptor base offset 0).
  unsigned char *smem = smem_raw + ((1024u - (smem_u32addr(smem_raw) & 1023u)) & 1023u);
  Barriers<T::STAGES> *bars = reinterpret_cast<Barriers<T::STAGES> *>(smem + T::BAR_OFFSET);
  const int num_m_blocks = (params.seqlen_q + T::BLOCK_M - 1) / T::BLOCK_M;
  const int64_t num_work = static_cast<int64_t>(num_m_blocks) * params.num_heads_q * params.batch;

  // ---- barriers: initialised by one thread, visible to all (and to TMA) after the fence and __syncthreads ----
  if (threadIdx.x == 0) {
    mbarrier_init(&bars->q_full, 1);
    mbarrier_init(&bars->q_empty, T::NUM_CONSUMER_THREADS);
#pragma unroll
    for (int s = 0; s < T::STAGES; ++s) {
      mbarrier_init(&bars->k_full[s], 1);  // the producer's arrive_expect_tx, then the TMA bytes
      mbarrier_init(&bars->v_full[s], 1);
      mbarrier_init(&bars->k_empty[s], T::NUM_CONSUMER_THREADS);  // every consumer thread arrives
      mbarrier_init(&bars->v_empty[s], T::NUM_CONSUMER_THREADS);
    }
    for (int s = 0; s < 2; ++s) {
      mbarrier_init(&bars->work_full[s], 1);  // the producer's lane 0
      mbarrier_init(&bars->work_empty[s], T::NUM_CONSUMER_THREADS);
    }
    fence_barrier_init();
  }
  __syncthreads();

  const WorkTickets<T::STAGES> tickets{work_counter, num_work, bars};
  int visits_before = 0, items_before = 0;
  if (threadIdx.x / 128 == 0) {
    // =============================== producer warpgroup ===============================
    setmaxnreg_dec<T::PRODUCER_REGS>();
    if (threadIdx.x / 32 != 0) return;  // one warp issues the loads
    int64_t work;
    for (int k = 0; (work = tickets.producer_next(k)) < num_work; ++k)
      run_work_item<T, IS_CAUSAL, true>(params, &tma_q, &tma_k, &tma_v, smem, bars, work, num_m_blocks,
                                        visits_before, items_before);
  } else {
    // =============================== consumer warpgroups ===============================
    setmaxnreg_inc<T::CONSUMER_REGS>();
    const int consumer_index = (static_cast<int>(threadIdx.x) - 128) / 128;
    if (T::PINGPONG && consumer_index == 1) named_barrier_arrive(PINGPONG_BARRIER + 0, T::NUM_CONSUMER_THREADS);
    int64_t work;
    for (int k = 0; (work = tickets.consumer_next(k)) < num_work; ++k)
      run_work_item<T, IS_CAUSAL, false>(params, &tma_q, &tma_k, &tma_v, smem, bars, work, num_m_blocks,
                                         visits_before, items_before);
    // Consumer 0 takes the turn of consumer 1's last hand-off.
    if (consumer_index == 0) pingpong_wait_turn<T>(0);
  }
}

// ---------------------------------------------------------------------------------------------------
// Host side: TMA tensor maps, argument checks and dispatch over (element type, head dim, causal).
// ---------------------------------------------------------------------------------------------------

// cuTensorMapEncodeTiled from the driver, looked up once through the runtime (no link against libcuda).
static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled_fn() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = []() -> PFN_cuTensorMapEncodeTiled_v12000 {
    void *ptr = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(ptr);
  }();
  return fn;
}

// Tensor map of a [batch, rows, heads, head_dim] tensor (element strides; head_dim contiguous), read in boxes
// of 64 columns x box_rows rows of one (batch, head), 128-byte swizzled in shared memory.
static cudaError_t make_tile_map(CUtensorMap *map, const void *base, int dtype, int head_dim, int rows, int heads,
                                 int batch, int64_t row_stride, int64_t head_stride, int64_t batch_stride,
                                 int box_rows) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = encode_tiled_fn();
  if (encode == nullptr) return cudaErrorNotSupported;
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(head_dim), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(heads), static_cast<cuuint64_t>(batch)};
  // Byte strides of dims 1..3. A dimension of extent 1 is never stepped along: give it the packed stride, so
  // that an arbitrary (unused) stride there cannot make the map invalid.
  cuuint64_t strides[3];
  const int64_t given[3] = {row_stride, head_stride, batch_stride};
  cuuint64_t packed = static_cast<cuuint64_t>(head_dim) * 2;
  for (int k = 0; k < 3; ++k) {
    strides[k] = dims[k + 1] == 1 ? packed : static_cast<cuuint64_t>(given[k]) * 2;
    packed = strides[k] * dims[k + 1];
  }
  const cuuint32_t box[4] = {64, static_cast<cuuint32_t>(box_rows), 1, 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  const CUresult r = encode(map, dtype == CUIR_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                            4, const_cast<void *>(base), dims, strides, box, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

// Thread blocks of the persistent kernel: one a multiprocessor of the current device. The environment's
// CUIR_SM90_PERSISTENT, read at every call so that a comparison can switch it within one process, overrides it:
// 0 launches one thread block a work item (each takes its own, the fixed schedule), N > 0 at most N thread blocks
// (for checks that want several items a thread block on small problems).
static int64_t persistent_ctas(int64_t num_work) {
  if (const char *env = std::getenv("CUIR_SM90_PERSISTENT"); env != nullptr && *env != '\0') {
    char *end = nullptr;
    const long long n = std::strtoll(env, &end, 10);
    if (*end == '\0' && n >= 0) return n == 0 ? num_work : std::min<int64_t>(num_work, n);
  }
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0)
    return num_work;
  return std::min<int64_t>(num_work, sms);
}

// The work counter (WorkTickets) of a launch on `stream`: one a stream (cudaStreamGetId: never reused, and the
// calling thread's own for cudaStreamPerThread), 0 when the stream's previous launch has ended, so launches that
// may overlap never share one. Null, for the fixed schedule, while the stream is being captured into a graph (a
// graph's launches need not follow the stream's order), for the 4096th stream of a device and after, on any CUDA
// error, or when the environment's CUIR_SM90_TICKETS is 0.
constexpr int kWorkCounters = 4096;
__device__ unsigned work_counters[kWorkCounters];  // zero when the module loads

static unsigned *work_counter(cudaStream_t stream) {
  if (const char *env = std::getenv("CUIR_SM90_TICKETS"); env != nullptr && std::string_view(env) == "0")
    return nullptr;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  unsigned long long stream_id = 0;
  int device = 0;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone ||
      cudaStreamGetId(stream, &stream_id) != cudaSuccess || cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();  // a failed query is not the launch's error
    return nullptr;
  }
  static std::mutex mutex;
  static std::map<int, std::pair<unsigned *, int>> devices;                  // the counters, how many handed out
  static std::map<std::pair<int, unsigned long long>, unsigned *> counters;  // a stream's
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = counters.find({device, stream_id}); it != counters.end()) return it->second;
  auto &[base, used] = devices[device];
  if (base == nullptr && cudaGetSymbolAddress(reinterpret_cast<void **>(&base), work_counters) != cudaSuccess) {
    (void)cudaGetLastError();
    base = nullptr;
    return nullptr;
  }
  if (used == kWorkCounters) return nullptr;
  return counters[{device, stream_id}] = base + used++;
}

template <Element ELEMENT, int HEAD_DIM, bool IS_CAUSAL>
static cudaError_t launch_flash_fwd(const cuir_attention_params &p, cudaStream_t stream) {
  using T = FlashFwdTraits<ELEMENT, HEAD_DIM>;
  CUtensorMap tma_q, tma_k, tma_v;
  cudaError_t err = make_tile_map(&tma_q, p.q, p.dtype, HEAD_DIM, p.seqlen_q, p.num_heads_q, p.batch, p.q_row_stride,
                                  p.q_head_stride, p.q_batch_stride, T::BLOCK_M);
  if (err != cudaSuccess) return err;
  if (p.seqlen_kv > 0) {
    err = make_tile_map(&tma_k, p.k, p.dtype, HEAD_DIM, p.seqlen_kv, p.num_heads_kv, p.batch, p.k_row_stride,
                        p.k_head_stride, p.k_batch_stride, T::BLOCK_N);
    if (err != cudaSuccess) return err;
    err = make_tile_map(&tma_v, p.v, p.dtype, HEAD_DIM, p.seqlen_kv, p.num_heads_kv, p.batch, p.v_row_stride,
                        p.v_head_stride, p.v_batch_stride, T::BLOCK_N);
    if (err != cudaSuccess) return err;
  } else {
    tma_k = tma_v = tma_q;  // no key at all: every block writes O = 0 and never loads K or V
  }
  auto kernel = flash_fwd_sm90_kernel<ELEMENT, HEAD_DIM, IS_CAUSAL>;
  err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM_BYTES);
  if (err != cudaSuccess) return err;
  const int64_t num_m_blocks = (p.seqlen_q + T::BLOCK_M - 1) / T::BLOCK_M;
  const int64_t num_work = num_m_blocks * p.num_heads_q * p.batch;  // see block_index
  const int64_t ctas = persistent_ctas(num_work);
  // Tickets count to num_work + ctas - 1 in 32 bits; one thread block an item needs none.
  unsigned *counter = ctas < num_work && num_work + ctas <= UINT32_MAX ? work_counter(stream) : nullptr;
  kernel<<<static_cast<unsigned>(ctas), T::NUM_THREADS, T::SMEM_BYTES, stream>>>(p, tma_q, tma_k, tma_v, counter);
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

}  // namespace cuir_sm90

extern "C" int cuir_attention_params_sizeof(void) { return static_cast<int>(sizeof(cuir_attention_params)); }

// The argument checks and error codes of every kernel (cuir/attention_params_check.h).
extern "C" int cuir_flash_fwd_sm90(const cuir_attention_params *params, void *stream) {
  using namespace cuir_sm90;
  bool nothing_to_do;
  if (const cudaError_t err = cuir_kernels::check_attention_params(params, &nothing_to_do);
      err != cudaSuccess || nothing_to_do)
    return err;
  const cuir_attention_params &p = *params;
  cudaStream_t cu_stream = static_cast<cudaStream_t>(stream);
  return p.dtype == CUIR_DTYPE_BF16 ? dispatch_head_dim<Element::kBF16>(p, cu_stream)
                                    : dispatch_head_dim<Element::kFP16>(p, cu_stream);
}
