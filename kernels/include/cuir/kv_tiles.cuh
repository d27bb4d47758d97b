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
struct ListedKvTiles {
  const int32_t *partial;
  const int32_t *full;
  int num_partial;
  int num_full;

  __device__ __forceinline__ ListedKvTiles(const int32_t *kv_num_blocks, const int32_t *kv_indices,
                                           const int32_t *full_kv_num_blocks, const int32_t *full_kv_indices,
                                           int64_t row, int kv_blocks)
      : partial(kv_indices + row * kv_blocks),
        full(full_kv_indices + row * kv_blocks),
        num_partial(kv_num_blocks[row]),
        num_full(full_kv_num_blocks[row]) {}

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

// The query-order point. A kernel's block_index declares
//     const cuir_kernels::ExpertQueryOrder query_order{};  // query-order point
// and keeps its own grid mapping where `query_order.block(...)` gives none. A runtime block mask replaces that
// declaration by a ListedQueryOrder: the block mask knows which query blocks see the most tiles (global tokens,
// the last blocks of a causal mask, long documents), and the heaviest go first so that the light ones fill the
// tail of the grid.
struct ExpertQueryOrder {
  template <class BlockIndex>
  __device__ __forceinline__ bool block(BlockIndex &, int, int) const { return false; }
};

// Heavy-first dispatch over the grid's blocks, in launch order (x fastest, then y, then z; the grid has
// Hq x QB x B blocks in any shape): the query heads fastest, so that the heads of a GQA group run side by side,
// then the rank of the query block in its row of q_order (query blocks from the most listed tiles to the
// fewest), then the batch: every head's heaviest query block starts first.
struct ListedQueryOrder {
  const int32_t *q_order;  // [B', H', QB]
  bool per_batch, per_head;

  template <class BlockIndex>
  __device__ __forceinline__ bool block(BlockIndex &out, int num_heads, int q_blocks) const {
    const int64_t linear =
        (int64_t(blockIdx.z) * gridDim.y + blockIdx.y) * int64_t(gridDim.x) + blockIdx.x;
    const int head = static_cast<int>(linear % num_heads);
    const int rank = static_cast<int>(linear / num_heads % q_blocks);
    const int batch = static_cast<int>(linear / (int64_t(num_heads) * q_blocks));
    const int m_block =
        q_order[block_mask_row(batch, head, rank, per_batch, per_head, num_heads, q_blocks)];
    out = BlockIndex{m_block, head, batch};
    return true;
  }
};

}  // namespace cuir_kernels

