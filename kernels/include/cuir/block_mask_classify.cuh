// cuir/block_mask_classify.cuh: the GPU classification of a runtime block mask (the lists of cuir/block_mask.h).
//
// A variant library's <entry>_block_mask instantiates compute_block_mask with its mask, a functor
// `bool operator()(const Params &, int b, int h, int q, int kv)` that the lowering writes from the Target CuIR's
// cuir.block_mask op. Params is the library's params struct: cuir_attention_params for an attention library,
// cuir_attention_bwd_params for a backward one (both have the sizes batch, num_heads_q, seqlen_q, seqlen_kv). Kernels, in stream order:
//   1. classify_tiles: one warp per tile (b', h', m, n) (per query head of the row's GQA group where it covers one:
//      equal classes stay, others are partial). Each lane evaluates the mask at its columns of a row of the
//      tile, the warp votes, and it stops at the first row after which the tile has shown a visible and a hidden
//      (or out-of-range) pair: partial. Empty and full tiles are read whole. The class lands in q_indices at the
//      transposed place [b', h', n, QB - 1 - m] (q_indices has exactly one entry per tile), so that no scratch
//      memory is needed.
//   2. compact_kv_lists: one warp per query block (b', h', m): the row's classes from KV tile KB - 1 down to 0,
//      32 at a time, appended to the partial and full lists in that order (ballot and prefix popcount: the lists
//      do not depend on scheduling), the rest of each list zeroed, the counts written.
//   3. order_query_blocks: one thread per query block (b', h', m): its rank among the row's query blocks by
//      descending listed tiles (ties: the higher block first), the place where q_order lists it.
//   2b. write_partial_bits (where mask->partial_bits is set): one warp per entry of the partial lists, the mask's
//      bits of that tile (cuir/block_mask.h).
//   4. compact_q_lists: one warp per KV tile (b', h', n): the column of classes q_indices[b', h', n, :] holds the
//      query blocks in descending order already; compacted in place (an entry is written at or before the place
//      it was read from, after the whole warp has read its 32), the full list into full_q_indices.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "cuir/block_mask.h"

namespace cuir_kernels {

// What the variant's mask reads: the batch index, the head (else one row of lists for all, broadcast). kv_heads:
// it reads the head, and a row covers the query heads of one KV head's GQA group together (a backward pass).
struct BlockMaskDepends {
  bool batch;
  bool heads;
  bool kv_heads = false;
};

// B', H', QB, KB of a problem, and the query heads a row of lists covers (1, or a GQA group).
struct BlockMaskDims {
  int batch, heads, q_blocks, kv_blocks;
  int group = 1;
  __host__ __device__ int64_t bh() const { return int64_t(batch) * heads; }
};

enum TileClass : int32_t { kTileEmpty = 0, kTilePartial = 1, kTileFull = 2 };

inline constexpr int kBlockMaskWarps = 8;  // warps of a thread block of the four kernels
inline constexpr int kBlockMaskMaxGrid = 1 << 16;  // thread blocks at most (grid-stride loops beyond)

// The dims of `p`'s problem for tiles of block_m x block_n; cudaErrorInvalidValue for a NULL p, a negative size or
// a sequence longer than 2^30 (the static mask analysis's bound, as the kernels' checks).
template <class Params>
cudaError_t block_mask_dims(const Params *p, int block_m, int block_n, BlockMaskDepends dep, BlockMaskDims *out) {
  if (p == nullptr || p->batch < 0 || p->num_heads_q < 0 || p->seqlen_q < 0 || p->seqlen_kv < 0 ||
      p->seqlen_q >= (1 << 30) || p->seqlen_kv >= (1 << 30))
    return cudaErrorInvalidValue;
  if (dep.kv_heads && (p->num_heads_kv <= 0 || p->num_heads_q % p->num_heads_kv != 0))
    return cudaErrorInvalidValue;
  out->batch = dep.batch ? p->batch : 1;
  out->heads = dep.heads ? p->num_heads_q : dep.kv_heads ? p->num_heads_kv : 1;
  out->group = dep.kv_heads ? p->num_heads_q / p->num_heads_kv : 1;
  out->q_blocks = static_cast<int>((int64_t(p->seqlen_q) + block_m - 1) / block_m);
  out->kv_blocks = static_cast<int>((int64_t(p->seqlen_kv) + block_n - 1) / block_n);
  return cudaSuccess;
}

// <entry>_block_mask_dims (cuir/block_mask.h): {B', H', QB, KB}.
template <class Params>
cudaError_t block_mask_dims(const Params *p, int block_m, int block_n, BlockMaskDepends dep, int32_t dims[4]) {
  BlockMaskDims d;
  if (dims == nullptr) return cudaErrorInvalidValue;
  if (const cudaError_t err = block_mask_dims(p, block_m, block_n, dep, &d); err != cudaSuccess) return err;
  dims[0] = d.batch;
  dims[1] = d.heads;
  dims[2] = d.q_blocks;
  dims[3] = d.kv_blocks;
  return cudaSuccess;
}

// The class of the tile of rows [q0, q0 + rows) and keys [kv0, kv0 + cols) (the in-range part of a
// BLOCK_M x BLOCK_N tile), by the whole warp; lane l evaluates the columns l, l + 32, ... of each row.
// ALL_COLS: cols == BLOCK_N, a multiple of 32 (no lane has a column out of range, so what the mask reads of
// the row once, the compiler reads once for all of the lane's columns).
template <class Visible, int BLOCK_M, int BLOCK_N, bool ALL_COLS, class Params>
__device__ __forceinline__ TileClass classify_tile(const Params &params, int b, int h, int q0, int kv0, int rows,
                                                   int cols, int lane) {
  constexpr int COLS_PER_LANE = (BLOCK_N + 31) / 32;
  const Visible visible{};
  bool seen_visible = false;
  bool seen_hidden = rows < BLOCK_M || cols < BLOCK_N;  // pairs out of range: the tile is never full
  for (int r = 0; r < rows; ++r) {
    unsigned seen = 0;  // bit 0: a visible pair in this lane's columns of the row, bit 1: a hidden one
#pragma unroll
    for (int j = 0; j < COLS_PER_LANE; ++j) {
      const int c = j * 32 + lane;
      if (ALL_COLS || c < cols)
        seen |= visible(params, b, h, q0 + r, kv0 + c) ? 1u : 2u;
    }
    seen = __reduce_or_sync(0xffffffffu, seen);
    seen_visible |= (seen & 1u) != 0;
    seen_hidden |= (seen & 2u) != 0;
    if (seen_visible && seen_hidden)  // uniform across the warp
      return kTilePartial;
  }
  return seen_visible ? (seen_hidden ? kTilePartial : kTileFull) : kTileEmpty;
}

template <class Visible, int BLOCK_M, int BLOCK_N, class Params>
__global__ void __launch_bounds__(kBlockMaskWarps * 32)
    classify_tiles(const Params params, const BlockMaskDims d, int32_t *classes) {
  const int lane = threadIdx.x % 32;
  const int64_t tiles = d.bh() * d.q_blocks * d.kv_blocks;
  const int64_t step = int64_t(gridDim.x) * kBlockMaskWarps;
  for (int64_t t = int64_t(blockIdx.x) * kBlockMaskWarps + threadIdx.x / 32; t < tiles; t += step) {
    // KV tiles fastest: the warps of a thread block share query rows.
    const int n = static_cast<int>(t % d.kv_blocks);
    const int m = static_cast<int>(t / d.kv_blocks % d.q_blocks);
    const int64_t bh = t / d.kv_blocks / d.q_blocks;
    const int b = static_cast<int>(bh / d.heads), h0 = static_cast<int>(bh % d.heads) * d.group;
    const int64_t q0 = int64_t(m) * BLOCK_M, kv0 = int64_t(n) * BLOCK_N;
    const int rows = static_cast<int>(min(int64_t(BLOCK_M), params.seqlen_q - q0));
    const int cols = static_cast<int>(min(int64_t(BLOCK_N), params.seqlen_kv - kv0));
    auto classify = [&](int h) {
      return BLOCK_N % 32 == 0 && cols == BLOCK_N
                 ? classify_tile<Visible, BLOCK_M, BLOCK_N, true>(params, b, h, static_cast<int>(q0),
                                                                  static_cast<int>(kv0), rows, cols, lane)
                 : classify_tile<Visible, BLOCK_M, BLOCK_N, false>(params, b, h, static_cast<int>(q0),
                                                                   static_cast<int>(kv0), rows, cols, lane);
    };
    // A row of a GQA group: empty or full where so for every one of its query heads (warp-uniform).
    TileClass c = classify(h0);
    for (int j = 1; j < d.group && c != kTilePartial; ++j)
      if (classify(h0 + j) != c) c = kTilePartial;
    if (lane == 0)
      classes[(bh * d.kv_blocks + n) * d.q_blocks + (d.q_blocks - 1 - m)] = c;
  }
}

// Appends the tiles of the lanes that `take` one to `list` (at `count`), in lane order.
__device__ __forceinline__ void append_tiles(bool take, int32_t tile, int32_t *list, int &count, int lane) {
  const unsigned ballot = __ballot_sync(0xffffffffu, take);
  if (take)
    list[count + __popc(ballot & ((1u << lane) - 1u))] = tile;
  count += __popc(ballot);
}

// The entries of a list of `size` after its `count` valid ones: 0.
__device__ __forceinline__ void zero_tail(int32_t *list, int count, int size, int lane) {
  for (int i = count + lane; i < size; i += 32)
    list[i] = 0;
}

__global__ void __launch_bounds__(kBlockMaskWarps * 32)
    compact_kv_lists(const BlockMaskDims d, const int32_t *classes, cuir_block_mask mask) {
  const int lane = threadIdx.x % 32;
  const int64_t lists = d.bh() * d.q_blocks;
  const int64_t step = int64_t(gridDim.x) * kBlockMaskWarps;
  for (int64_t row = int64_t(blockIdx.x) * kBlockMaskWarps + threadIdx.x / 32; row < lists; row += step) {
    const int m = static_cast<int>(row % d.q_blocks);
    const int64_t bh = row / d.q_blocks;
    int32_t *partial = mask.kv_indices + row * d.kv_blocks, *full = mask.full_kv_indices + row * d.kv_blocks;
    int num_partial = 0, num_full = 0;
    for (int base = 0; base < d.kv_blocks; base += 32) {
      const int n = d.kv_blocks - 1 - (base + lane);  // descending tile order
      const int32_t c = n >= 0 ? classes[(bh * d.kv_blocks + n) * d.q_blocks + (d.q_blocks - 1 - m)] : kTileEmpty;
      append_tiles(c == kTilePartial, n, partial, num_partial, lane);
      append_tiles(c == kTileFull, n, full, num_full, lane);
    }
    zero_tail(partial, num_partial, d.kv_blocks, lane);
    zero_tail(full, num_full, d.kv_blocks, lane);
    if (lane == 0) {
      mask.kv_num_blocks[row] = num_partial;
      mask.full_kv_num_blocks[row] = num_full;
    }
  }
}

// The mask's bits of every listed partial tile (mask.partial_bits): one warp per entry (row, slot) of the partial
// lists; for each row r of the tile, lane l evaluates key w * 32 + l and the warp's ballot is word w. A row without
// partial tiles also gets the bits (all ones) of its first full tile, the one its first step visits: the sm_90
// forward's first step always runs the mask, and reads them.
template <class Visible, int BLOCK_M, int BLOCK_N, class Params>
__global__ void __launch_bounds__(kBlockMaskWarps * 32)
    write_partial_bits(const Params params, const BlockMaskDims d, cuir_block_mask mask) {
  constexpr int WORDS = BLOCK_N / 32;
  static_assert(BLOCK_N % 32 == 0 && WORDS <= 32, "tiles of 32 to 1024 keys, a multiple of 32");
  const Visible visible{};
  const int lane = threadIdx.x % 32;
  const int64_t entries = d.bh() * d.q_blocks * d.kv_blocks;
  const int64_t step = int64_t(gridDim.x) * kBlockMaskWarps;
  for (int64_t e = int64_t(blockIdx.x) * kBlockMaskWarps + threadIdx.x / 32; e < entries; e += step) {
    const int64_t row = e / d.kv_blocks;
    const int slot = static_cast<int>(e % d.kv_blocks);
    const int num_partial = mask.kv_num_blocks[row];  // uniform across the warp
    const bool first_full = num_partial == 0 && slot == 0 && mask.full_kv_num_blocks[row] > 0;
    if (slot >= num_partial && !first_full)
      continue;
    const int n = first_full ? mask.full_kv_indices[row * d.kv_blocks] : mask.kv_indices[row * d.kv_blocks + slot];
    const int m = static_cast<int>(row % d.q_blocks);
    const int64_t bh = row / d.q_blocks;
    const int b = static_cast<int>(bh / d.heads), h = static_cast<int>(bh % d.heads);
    uint32_t *out = mask.partial_bits + (row * d.kv_blocks + n) * (int64_t(BLOCK_M) * WORDS);
    for (int r = 0; r < BLOCK_M; ++r) {
      const int64_t q = int64_t(m) * BLOCK_M + r;
      uint32_t mine = 0;
#pragma unroll
      for (int w = 0; w < WORDS; ++w) {
        const int64_t kv = int64_t(n) * BLOCK_N + w * 32 + lane;
        const bool in_range = q < params.seqlen_q && kv < params.seqlen_kv;
        const unsigned word = __ballot_sync(
            0xffffffffu, in_range && visible(params, b, h, static_cast<int>(q), static_cast<int>(kv)));
        if (lane == w) mine = word;
      }
      if (lane < WORDS) out[r * WORDS + lane] = mine;
    }
  }
}

__global__ void __launch_bounds__(kBlockMaskWarps * 32) order_query_blocks(const BlockMaskDims d, cuir_block_mask mask) {
  const int64_t blocks = d.bh() * d.q_blocks;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t at = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; at < blocks; at += step) {
    const int64_t row = at - at % d.q_blocks;
    const int m = static_cast<int>(at % d.q_blocks);
    auto tiles = [&](int j) { return mask.kv_num_blocks[row + j] + mask.full_kv_num_blocks[row + j]; };
    const int mine = tiles(m);
    int rank = 0;
    for (int j = 0; j < d.q_blocks; ++j) {
      const int t = tiles(j);
      rank += t > mine || (t == mine && j > m);
    }
    mask.q_order[row + rank] = m;
  }
}

__global__ void __launch_bounds__(kBlockMaskWarps * 32) compact_q_lists(const BlockMaskDims d, cuir_block_mask mask) {
  const int lane = threadIdx.x % 32;
  const int64_t lists = d.bh() * d.kv_blocks;
  const int64_t step = int64_t(gridDim.x) * kBlockMaskWarps;
  for (int64_t col = int64_t(blockIdx.x) * kBlockMaskWarps + threadIdx.x / 32; col < lists; col += step) {
    int32_t *partial = mask.q_indices + col * d.q_blocks, *full = mask.full_q_indices + col * d.q_blocks;
    int num_partial = 0, num_full = 0;
    for (int base = 0; base < d.q_blocks; base += 32) {
      const int i = base + lane;  // the class of query block QB - 1 - i
      const int32_t c = i < d.q_blocks ? partial[i] : kTileEmpty;
      __syncwarp();  // every lane has read its class before any overwrites it (in place: num_partial <= i)
      const int m = d.q_blocks - 1 - i;
      append_tiles(c == kTilePartial, m, partial, num_partial, lane);
      append_tiles(c == kTileFull, m, full, num_full, lane);
    }
    __syncwarp();
    zero_tail(partial, num_partial, d.q_blocks, lane);
    zero_tail(full, num_full, d.q_blocks, lane);
    if (lane == 0) {
      mask.q_num_blocks[col] = num_partial;
      mask.full_q_num_blocks[col] = num_full;
    }
  }
}

// Whether a list buffer of `elements` entries is usable: not needed when empty, else set and 4-byte aligned.
inline bool list_buffer_ok(const int32_t *p, int64_t elements) {
  return elements == 0 || (p != nullptr && (reinterpret_cast<uintptr_t>(p) & 3u) == 0);
}

inline cudaError_t check_block_mask(const cuir_block_mask &mask, const BlockMaskDims &d, int block_m, int block_n) {
  if (mask.batch != d.batch || mask.heads != d.heads || mask.q_blocks != d.q_blocks ||
      mask.kv_blocks != d.kv_blocks || mask.block_m != block_m || mask.block_n != block_n)
    return cudaErrorInvalidValue;
  const int64_t rows = d.bh() * d.q_blocks, cols = d.bh() * d.kv_blocks, tiles = rows * d.kv_blocks;
  const bool ok = list_buffer_ok(mask.kv_num_blocks, rows) && list_buffer_ok(mask.full_kv_num_blocks, rows) &&
                  list_buffer_ok(mask.kv_indices, tiles) && list_buffer_ok(mask.full_kv_indices, tiles) &&
                  list_buffer_ok(mask.q_num_blocks, cols) && list_buffer_ok(mask.full_q_num_blocks, cols) &&
                  list_buffer_ok(mask.q_indices, tiles) && list_buffer_ok(mask.full_q_indices, tiles) &&
                  list_buffer_ok(mask.q_order, rows);
  return ok ? cudaSuccess : cudaErrorInvalidValue;
}

// Thread blocks for `work` warps.
inline unsigned block_mask_grid(int64_t work) {
  const int64_t blocks = (work + kBlockMaskWarps - 1) / kBlockMaskWarps;
  return static_cast<unsigned>(blocks < kBlockMaskMaxGrid ? blocks : kBlockMaskMaxGrid);
}

// The nine lists of `params`' problem (see cuir/block_mask.h for the contract and the error codes).
// `params_set`: the parameter arrays the mask reads are not NULL.
template <class Visible, int BLOCK_M, int BLOCK_N, class Params>
cudaError_t compute_block_mask(const Params *params, BlockMaskDepends dep, bool params_set, cuir_block_mask *mask,
                               cudaStream_t stream) {
  static_assert(BLOCK_M > 0 && BLOCK_N > 0, "tiles of at least one row and one key");
  BlockMaskDims d;
  if (mask == nullptr || !params_set) return cudaErrorInvalidValue;
  if (const cudaError_t err = block_mask_dims(params, BLOCK_M, BLOCK_N, dep, &d); err != cudaSuccess) return err;
  if (const cudaError_t err = check_block_mask(*mask, d, BLOCK_M, BLOCK_N); err != cudaSuccess) return err;
  // The bits are per query head and row-major in 32-key words (write_partial_bits' tiles).
  constexpr bool kBitsTiles = BLOCK_N % 32 == 0 && BLOCK_N <= 1024;
  const bool bits_ok =
      kBitsTiles && d.group == 1 && (reinterpret_cast<uintptr_t>(mask->partial_bits) & 15u) == 0;
  if (mask->partial_bits != nullptr && !bits_ok) return cudaErrorInvalidValue;
  const int64_t rows = d.bh() * d.q_blocks, cols = d.bh() * d.kv_blocks, tiles = rows * d.kv_blocks;
  constexpr int threads = kBlockMaskWarps * 32;
  if (tiles > 0) {
    classify_tiles<Visible, BLOCK_M, BLOCK_N><<<block_mask_grid(tiles), threads, 0, stream>>>(*params, d,
                                                                                              mask->q_indices);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  }
  if (rows > 0) {
    compact_kv_lists<<<block_mask_grid(rows), threads, 0, stream>>>(d, mask->q_indices, *mask);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  }
  if (mask->partial_bits != nullptr && tiles > 0) {
    if constexpr (kBitsTiles) {
      write_partial_bits<Visible, BLOCK_M, BLOCK_N><<<block_mask_grid(tiles), threads, 0, stream>>>(*params, d, *mask);
      if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    }
  }
  if (rows > 0) {
    order_query_blocks<<<block_mask_grid((rows + 31) / 32), threads, 0, stream>>>(d, *mask);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  }
  if (cols > 0) {
    compact_q_lists<<<block_mask_grid(cols), threads, 0, stream>>>(d, *mask);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

}  // namespace cuir_kernels
