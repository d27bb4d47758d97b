// cuir/kv_tiles.cuh: the block-iteration and query-order points of CuIR's kernels (KV tiles of the forward,
// query tiles of the backward, the forward's order of its query blocks).
//
// A kernel's KV steps count virtual blocks n from n_block_max - 1 down to n_block_min; the masking steps take
// [n_unmasked_blocks, n_block_max), the unmasked ones the rest. Every virtual block that becomes a KV coordinate
// goes through the kernel's `kv_tiles(n)`. The expert kernels declare the dense schedule (virtual block n is KV
// tile n); a variant with a runtime block mask replaces that one declaration by a ListedKvTiles and takes its
// bounds from it, so the loops, the pipeline and the barriers stay the expert's.
#pragma once

#include <stdint.h>

namespace cuir_kernels {

// The row of block `block` of (batch, head) in lists of B' x H' rows of `blocks` rows each, where a mask that
// reads neither b nor h has one row for all (broadcast, as FlexAttention's B = 1 or H = 1).
__device__ __forceinline__ int64_t block_mask_row(int batch, int head, int block, bool per_batch, bool per_head,
                                                  int num_heads, int blocks) {
  const int64_t b = per_batch ? batch : 0;
  const int64_t h = per_head ? head : 0;
  return (b * (per_head ? num_heads : 1) + h) * blocks + block;
}

// The dense schedule: virtual block n is KV tile n.
struct DenseKvTiles {
  __device__ __forceinline__ int operator()(int n) const { return n; }
};

// The backward's dense schedule: virtual query block m is query tile m. A backward kernel's steps count virtual
// query blocks of one KV block, and every one that becomes a Q / dO / LSE / D coordinate goes through the
// kernel's `q_tiles(m)`; its range of steps (fields m_begin, m_unmasked_begin, m_end: masking steps
// [m_begin, m_unmasked_begin), unmasked ones up to m_end) through `q_tiles.range(r)`. A block mask replaces that
// declaration by a ListedQTiles over the transposed (KV-block-major) lists.
struct DenseQTiles {
  __device__ __forceinline__ int operator()(int m) const { return m; }
  template <class Range>
  __device__ __forceinline__ Range range(Range r) const {
    return r;
  }
};

// One KV block's column of a block mask's transposed lists (q_num_blocks / q_indices for the partial query tiles,
// full_q_num_blocks / full_q_indices for the full ones; rows of q_blocks entries). Virtual blocks
// [0, num_partial) are the partial tiles, which the masking steps visit; [num_partial, num_partial + num_full)
// the full ones, which need no mask.
// The index lists are held by reference: bound to the kernel's parameters, they stay in constant memory rather
// than in four registers for the whole KV tile (the backward's d = 128 steps have none to spare).
struct ListedQTiles {
  const int32_t *const &partial;
  const int32_t *const &full;
  int64_t offset;  // of this KV tile's row in the index lists
  int num_partial;
  int num_full;

  __device__ __forceinline__ ListedQTiles(const int32_t *q_num_blocks, const int32_t *const &q_indices,
                                          const int32_t *full_q_num_blocks, const int32_t *const &full_q_indices,
                                          int64_t row, int q_blocks)
      : partial(q_indices),
        full(full_q_indices),
        offset(row * q_blocks),
        num_partial(q_num_blocks[row]),
        num_full(full_q_num_blocks[row]) {}

  // The row of KV block n_block of (batch, head) in the transposed lists.
  __device__ __forceinline__ static int64_t row_of(int batch, int head, int n_block, bool per_batch, bool per_head,
                                                   int num_heads, int kv_blocks) {
    return block_mask_row(batch, head, n_block, per_batch, per_head, num_heads, kv_blocks);
  }

  __device__ __forceinline__ int operator()(int m) const {
    return m < num_partial ? partial[offset + m] : full[offset + m - num_partial];
  }
  template <class Range>
  __device__ __forceinline__ Range range(Range r) const {
    r.m_begin = 0;
    r.m_unmasked_begin = num_partial;
    r.m_end = num_partial + num_full;
    return r;
  }
};

// One query block's row of a block mask in FlexAttention's layout (kv_num_blocks / kv_indices for the partial
// tiles, full_kv_num_blocks / full_kv_indices for the full ones; rows of kv_blocks entries). Virtual blocks
// [num_full, num_full + num_partial) are the partial tiles, visited first, from the top down in list order;
// [0, num_full) the full ones, which need no mask.
// A thread's first row of a tile's mask bits (ListedKvTiles::mask_bits), if the block mask has them.
struct MaskBitsRow {
  const uint32_t *words;
  bool present;
};

// With the block mask's partial_bits (cuir/block_mask.h; may be null), also this row's mask bits: mask_bits gives
// a thread the words of its first row in a tile, which MaskBits loads. The bits' and the index list's pointers
// are held by reference to the kernel's parameters (constant memory, no registers for the kernel's lifetime).
struct ListedKvTiles {
  const int32_t *partial;
  const int32_t *full;
  int num_partial;
  int num_full;
  const uint32_t *const *bits = nullptr;  // the parameter partial_bits [B', H', QB, KB, block_m, block_n / 32]
  const int32_t *const *indices = nullptr;  // the parameter kv_indices: partial - *indices is this row's offset
  int block_m = 0, block_n = 0;

  __device__ __forceinline__ ListedKvTiles(const int32_t *kv_num_blocks, const int32_t *kv_indices,
                                           const int32_t *full_kv_num_blocks, const int32_t *full_kv_indices,
                                           int64_t row, int kv_blocks)
      : partial(kv_indices + row * kv_blocks),
        full(full_kv_indices + row * kv_blocks),
        num_partial(kv_num_blocks[row]),
        num_full(full_kv_num_blocks[row]) {}
  __device__ __forceinline__ ListedKvTiles(const int32_t *kv_num_blocks, const int32_t *const &kv_indices,
                                           const int32_t *full_kv_num_blocks, const int32_t *full_kv_indices,
                                           int64_t row, int kv_blocks, const uint32_t *const &partial_bits,
                                           int tile_m, int tile_n)
      : ListedKvTiles(kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, row, kv_blocks) {
    bits = &partial_bits;
    indices = &kv_indices;
    block_m = tile_m;
    block_n = tile_n;
  }

  // The words of query row0's row of the tile holding key col0 (none without bits).
  __device__ __forceinline__ MaskBitsRow mask_bits(int row0, int col0) const {
    // The parameter's value tested as an integer: LLVM's NVPTX backend tests a pointer parameter against null
    // after converting both to the global space, where null need not be 0 (a NULL partial_bits then passed).
    if (bits == nullptr || *reinterpret_cast<const uintptr_t *>(bits) == 0) return {nullptr, false};
    const int64_t tile = (partial - *indices) + col0 / block_n;  // row * KB + the KV tile
    return {*bits + (tile * block_m + row0 % block_m) * (block_n / 32), true};
  }

  // The row of query block m_block of (batch, head) in the lists.
  __device__ __forceinline__ static int64_t row_of(int batch, int head, int m_block, bool per_batch, bool per_head,
                                                   int num_heads, int q_blocks) {
    return block_mask_row(batch, head, m_block, per_batch, per_head, num_heads, q_blocks);
  }

  __device__ __forceinline__ int operator()(int n) const {
    return n >= num_full ? partial[num_full + num_partial - 1 - n] : full[num_full - 1 - n];
  }
  __device__ __forceinline__ int num_blocks() const { return num_full + num_partial; }
};

// The mask's bits of a thread's accumulator rows in a KV tile, as the block mask's classification wrote them
// (cuir/block_mask.h, partial_bits): ROWS rows 8 apart (a fragment's query offsets 0, 8, 16, ...), WORDS words of
// 32 keys each. The thread's keys are col0 % 8 + kv_off with kv_off % 8 < 2 (the mma and wgmma accumulators:
// pairs of adjacent keys 8 apart), so shifting each word by col0 % 8 once leaves bit kv_off % 32 for every key:
// a score's mask is then one bit test of compile-time position.
template <int ROWS, int WORDS>
struct MaskBits {
  static constexpr int kRows = ROWS, kWords = WORDS;
  uint32_t w[ROWS][WORDS];
  bool valid = false;

  // row: the thread's first row of the tile (ListedKvTiles::mask_bits); without bits valid stays false.
  __device__ __forceinline__ void load(MaskBitsRow row, int col0) {
    valid = row.present;
    if (!valid) return;
    const int shift = col0 % 8;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const uint32_t *words = row.words + r * 8 * WORDS;
      if constexpr (WORDS % 4 == 0) {
#pragma unroll
        for (int i = 0; i < WORDS; i += 4) {
          const uint4 v = __ldg(reinterpret_cast<const uint4 *>(words + i));
          w[r][i] = v.x >> shift, w[r][i + 1] = v.y >> shift, w[r][i + 2] = v.z >> shift, w[r][i + 3] = v.w >> shift;
        }
      } else {
#pragma unroll
        for (int i = 0; i < WORDS; ++i) w[r][i] = __ldg(words + i) >> shift;
      }
    }
  }
  // Whether the score at query offset q_off (a multiple of 8) and key offset kv_off of the thread is visible
  // (offsets within the fragment: compile-time in the unrolled walks, so w stays in registers).
  __device__ __forceinline__ bool visible(int q_off, int kv_off) const {
    static_assert(ROWS > 0 && WORDS > 0, "a fragment of rows and keys");
    return (w[q_off / 8][kv_off / 32] >> (kv_off % 32)) & 1u;
  }
};

// The type of a scores helper's mask_bits where a kernel gives none.
struct NoMaskBits {
  static constexpr int kRows = 0, kWords = 0;
  bool valid = false;
  __device__ __forceinline__ bool visible(int, int) const { return true; }
};

// The MaskBits of an accumulator fragment: a wgmma tile's float[N] (2 rows, 2 N keys), an mma.sync one's
// float[M_TILES][N_TILES][4] (2 M_TILES rows, 8 N_TILES keys).
template <int N>
__device__ __forceinline__ MaskBits<2, (2 * N + 31) / 32> mask_bits_of(const float (&)[N]) {
  return {};
}
template <int M_TILES, int N_TILES>
__device__ __forceinline__ MaskBits<2 * M_TILES, (8 * N_TILES + 31) / 32> mask_bits_of(
    const float (&)[M_TILES][N_TILES][4]) {
  return {};
}

// The query-order point. A kernel's block_index declares
//     const cuir_kernels::ExpertQueryOrder query_order{};  // query-order point
// and keeps its own grid mapping where `query_order.block(...)` gives none: `block(out, num_heads, q_blocks)` maps
// the thread block of a grid of work items, `block(out, work, num_heads, q_blocks)` work item `work` of a
// persistent kernel. A runtime block mask replaces that
// declaration by a ListedQueryOrder: the block mask knows which query blocks see the most tiles (global tokens,
// the last blocks of a causal mask, long documents), and the heaviest go first so that the light ones fill the
// tail of the grid.
struct ExpertQueryOrder {
  template <class BlockIndex>
  __device__ __forceinline__ bool block(BlockIndex &, int, int) const { return false; }
  template <class BlockIndex>
  __device__ __forceinline__ bool block(BlockIndex &, int64_t, int, int) const { return false; }
};

// Heavy-first order over a grid's blocks (x fastest, then y, then z; the grid has Hq x QB x B blocks in any shape)
// or a persistent kernel's work items (numbered as those blocks are launched): the query heads fastest, so that
// the heads of a GQA group run side by side, then the rank of the query block in its row of q_order (query blocks
// from the most listed tiles to the fewest), then the batch: every head's heaviest query block starts first, and
// the blocks in flight share one batch's keys and values in L2 (ordered by rank across batches instead, packed
// documents at 8 batches of 32 heads ran 30-40% slower: likely those keys and values spread over every batch).
struct ListedQueryOrder {
  const int32_t *q_order;  // [B', H', QB]
  bool per_batch, per_head;

  template <class BlockIndex>
  __device__ __forceinline__ bool block(BlockIndex &out, int num_heads, int q_blocks) const {
    return block(out, (int64_t(blockIdx.z) * gridDim.y + blockIdx.y) * int64_t(gridDim.x) + blockIdx.x, num_heads,
                 q_blocks);
  }
  template <class BlockIndex>
  __device__ __forceinline__ bool block(BlockIndex &out, int64_t work, int num_heads, int q_blocks) const {
    const int head = static_cast<int>(work % num_heads);
    const int rank = static_cast<int>(work / num_heads % q_blocks);
    const int batch = static_cast<int>(work / (int64_t(num_heads) * q_blocks));
    out = BlockIndex{q_order[block_mask_row(batch, head, rank, per_batch, per_head, num_heads, q_blocks)], head, batch};
    return true;
  }
};

}  // namespace cuir_kernels

