// sm80_tiles.cuh: swizzled shared-memory tiles and warp-level mma.sync GEMMs over them, for the sm_80 kernels.
//
// A tile is [rows][ROW_BYTES] of 16-bit elements in shared memory, XOR-swizzled at 16-byte-chunk granularity
// (chunk c of row r is stored at chunk position c ^ (r % 8)), so that the cp.async writes and the ldmatrix reads
// of 8 consecutive rows hit 8 distinct groups of 4 banks. Tiles start at 256-byte-aligned addresses.
//
// The four operand readers below produce mma.m16n8k16 fragments (sm80_primitives.cuh documents their layouts)
// from such a tile, whichever way the operand is stored: A row-major (A[m][k] at row m) or column-major (at row k),
// B "n-major" (B[k][n] at row n, as K in Q K^T) or "k-major" (at row k, as V in P V). Each holds this lane's
// ldmatrix address for step (0, 0) of its warp's sub-tile; another step is (lane_addr ^ (chunk << 4)) + row
// offset, with chunk even: every row a lane addresses has row % 8 == lane % 8, and its chunk index is
// chunk0 + 2 * step + (0 or 1) with chunk0 a multiple of the chunks a warp steps over, so the step's chunk XORs
// bits 5.. of the address. Row steps are multiples of 8 rows, plain additions (ldmatrix immediate offsets).
#pragma once

#include <stdint.h>

#include "sm80_primitives.cuh"

namespace cuir_sm80 {

// Byte offset of 16-byte chunk `chunk` of row `row` in a swizzled tile of ROW_BYTES-byte rows.
template <int ROW_BYTES>
__device__ __forceinline__ uint32_t swizzled_offset(int row, int chunk) {
  static_assert(ROW_BYTES == 128 || ROW_BYTES == 256, "8 or 16 chunks per row");
  return row * ROW_BYTES + ((chunk ^ (row % 8)) << 4);
}

// Hides x's value from LLVM's loop-invariant code motion (an empty asm): the address arithmetic that starts from
// it stays inside a loop step instead of being hoisted into long-lived registers.
__device__ __forceinline__ uint32_t opaque_u32(uint32_t x) {
  asm volatile("" : "+r"(x));
  return x;
}
__device__ __forceinline__ int64_t opaque_i64(int64_t x) {
  asm volatile("" : "+l"(x));
  return x;
}

// threadIdx.x, read from its special register at every use (volatile asm), so that values derived from it are
// recomputed where needed rather than held in registers across a loop.
__device__ __forceinline__ int thread_index() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(r));
  return static_cast<int>(r);
}

// Issue the cp.async copies of one [ROWS][ROW_ELEMS] tile (row 0 at gmem_tile) into the swizzled tile at
// smem_tile, NUM_THREADS threads each copying 16-byte chunks. Rows >= valid_rows are zero-filled: their copies have
// source size 0 and read nothing, so their source address is never dereferenced.
template <int ROWS, int ROW_ELEMS, int NUM_THREADS>
__device__ __forceinline__ void load_tile_async(uint32_t smem_tile, const uint16_t *gmem_tile, int64_t row_stride,
                                                int valid_rows, int tid) {
  constexpr int CHUNKS_PER_ROW = ROW_ELEMS / 8;
  constexpr int ROWS_PER_PASS = NUM_THREADS / CHUNKS_PER_ROW;  // a multiple of 8: row % 8 is fixed per thread
  static_assert(ROWS % ROWS_PER_PASS == 0 && ROWS_PER_PASS % 8 == 0, "whole passes");
  const int row = tid / CHUNKS_PER_ROW;
  const int chunk = tid % CHUNKS_PER_ROW;
  const uint32_t dst = smem_tile + swizzled_offset<ROW_ELEMS * 2>(row, chunk);
  const int64_t pass_stride = opaque_i64(row_stride) * ROWS_PER_PASS;
  const uint16_t *src = gmem_tile + row * row_stride + chunk * 8;
  const int rows_left = valid_rows - row;
#pragma unroll
  for (int pass = 0; pass < ROWS / ROWS_PER_PASS; ++pass) {
    cp_async_16B_zfill(dst + pass * ROWS_PER_PASS * (ROW_ELEMS * 2), src, pass * ROWS_PER_PASS < rows_left);
    src += pass_stride;
  }
}

// The ldmatrix address of step (rows, chunk) from a lane's step-(0, 0) address (see the top of the file).
template <int ROW_BYTES>
__device__ __forceinline__ uint32_t ldsm_step(uint32_t lane_addr, int rows, int chunk) {
  return (lane_addr ^ (chunk << 4)) + rows * ROW_BYTES;
}

// A operand stored row-major: fragment (mi, ks) covers rows row0 + 16 mi .., columns 8 chunk0 + 16 ks ...
template <int ROW_BYTES>
struct RowMajorA {
  uint32_t lane_addr;
  __device__ __forceinline__ RowMajorA(uint32_t tile, int row0, int chunk0, int lane)
      : lane_addr(tile + swizzled_offset<ROW_BYTES>(row0 + lane % 16, chunk0 + lane / 16)) {}
  __device__ __forceinline__ void load(uint32_t (&frag)[4], int mi, int ks) const {
    ldmatrix_x4(frag, ldsm_step<ROW_BYTES>(lane_addr, 16 * mi, 2 * ks));
  }
};

// A operand stored column-major (A[m][k] at row k, column m; read transposed): fragment (mi, ks) covers
// m = 8 chunk0 + 16 mi .., k = row0 + 16 ks ...
template <int ROW_BYTES>
struct ColMajorA {
  uint32_t lane_addr;
  __device__ __forceinline__ ColMajorA(uint32_t tile, int row0, int chunk0, int lane)
      : lane_addr(tile + swizzled_offset<ROW_BYTES>(row0 + (lane / 16) * 8 + lane % 8, chunk0 + (lane / 8) % 2)) {}
  __device__ __forceinline__ void load(uint32_t (&frag)[4], int mi, int ks) const {
    ldmatrix_x4_trans(frag, ldsm_step<ROW_BYTES>(lane_addr, 16 * ks, 2 * mi));
  }
};

// B operand stored n-major (B[k][n] at row n): fragment nj holds the b0, b1 pairs of n8 tiles 2 nj and 2 nj + 1,
// n = row0 + 16 nj .., k = 8 chunk0 + 16 ks ...
template <int ROW_BYTES>
struct NMajorB {
  uint32_t lane_addr;
  __device__ __forceinline__ NMajorB(uint32_t tile, int row0, int chunk0, int lane)
      : lane_addr(tile + swizzled_offset<ROW_BYTES>(row0 + (lane / 16) * 8 + lane % 8, chunk0 + (lane / 8) % 2)) {}
  __device__ __forceinline__ void load(uint32_t (&frag)[4], int nj, int ks) const {
    ldmatrix_x4(frag, ldsm_step<ROW_BYTES>(lane_addr, 16 * nj, 2 * ks));
  }
};

// B operand stored k-major (B[k][n] at row k; read transposed): fragment nj as NMajorB's,
// k = row0 + 16 ks .., n = 8 chunk0 + 16 nj ...
template <int ROW_BYTES>
struct KMajorB {
  uint32_t lane_addr;
  __device__ __forceinline__ KMajorB(uint32_t tile, int row0, int chunk0, int lane)
      : lane_addr(tile + swizzled_offset<ROW_BYTES>(row0 + ((lane / 8) % 2) * 8 + lane % 8, chunk0 + lane / 16)) {}
  __device__ __forceinline__ void load(uint32_t (&frag)[4], int nj, int ks) const {
    ldmatrix_x4_trans(frag, ldsm_step<ROW_BYTES>(lane_addr, 16 * ks, 2 * nj));
  }
};

// acc += A B for one warp's [16 M_TILES] x [8 N_TILES] sub-tile over K_STEPS k16 steps.
template <Element ELEMENT, int M_TILES, int N_TILES, int K_STEPS, class OperandA, class OperandB>
__device__ __forceinline__ void warp_gemm(float (&acc)[M_TILES][N_TILES][4], const OperandA &a_op,
                                          const OperandB &b_op) {
  static_assert(N_TILES % 2 == 0, "B fragments come in pairs of n8 tiles");
#pragma unroll
  for (int ks = 0; ks < K_STEPS; ++ks) {
    uint32_t a_frag[M_TILES][4];
#pragma unroll
    for (int mi = 0; mi < M_TILES; ++mi) a_op.load(a_frag[mi], mi, ks);
#pragma unroll
    for (int nj = 0; nj < N_TILES / 2; ++nj) {
      uint32_t b_frag[4];
      b_op.load(b_frag, nj, ks);
#pragma unroll
      for (int mi = 0; mi < M_TILES; ++mi) {
        mma_m16n8k16<ELEMENT>(acc[mi][2 * nj], a_frag[mi], b_frag[0], b_frag[1]);
        mma_m16n8k16<ELEMENT>(acc[mi][2 * nj + 1], a_frag[mi], b_frag[2], b_frag[3]);
      }
    }
  }
}

template <int M_TILES, int N_TILES>
__device__ __forceinline__ void zero_acc(float (&acc)[M_TILES][N_TILES][4]) {
#pragma unroll
  for (int mi = 0; mi < M_TILES; ++mi)
#pragma unroll
    for (int ni = 0; ni < N_TILES; ++ni)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.f;
}

// Store an accumulator (fp32, rows row0 + 16 mi + 8 (e / 2) + lane / 4, columns 8 chunk0 + 8 ni + 2 (lane % 4)
// + e % 2), times `scale`, as 16-bit values into a swizzled tile (32-bit stores, one bank each per quad:
// conflict-free).
template <Element ELEMENT, int ROW_BYTES, int M_TILES, int N_TILES>
__device__ __forceinline__ void store_acc_to_tile(unsigned char *tile, const float (&acc)[M_TILES][N_TILES][4],
                                                  float scale, int row0, int chunk0, int lane) {
#pragma unroll
  for (int mi = 0; mi < M_TILES; ++mi)
#pragma unroll
    for (int ni = 0; ni < N_TILES; ++ni)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = row0 + 16 * mi + 8 * half + lane / 4;
        const uint32_t packed = pack_float2<ELEMENT>(acc[mi][ni][2 * half] * scale, acc[mi][ni][2 * half + 1] * scale);
        *reinterpret_cast<uint32_t *>(tile + swizzled_offset<ROW_BYTES>(row, chunk0 + ni) + (lane % 4) * 4) = packed;
      }
}

// Copy a swizzled [ROWS][ROW_ELEMS] tile to global memory with 16-byte stores, rows < valid_rows only.
template <int ROWS, int ROW_ELEMS, int NUM_THREADS>
__device__ __forceinline__ void store_tile(uint16_t *gmem_tile, int64_t row_stride, const unsigned char *tile,
                                           int valid_rows, int tid) {
  constexpr int CHUNKS_PER_ROW = ROW_ELEMS / 8;
  constexpr int ROWS_PER_PASS = NUM_THREADS / CHUNKS_PER_ROW;
  static_assert(ROWS % ROWS_PER_PASS == 0, "whole passes");
#pragma unroll
  for (int pass = 0; pass < ROWS / ROWS_PER_PASS; ++pass) {
    const int row = pass * ROWS_PER_PASS + tid / CHUNKS_PER_ROW;
    const int chunk = tid % CHUNKS_PER_ROW;
    const uint4 data = *reinterpret_cast<const uint4 *>(tile + swizzled_offset<ROW_ELEMS * 2>(row, chunk));
    if (row < valid_rows) *reinterpret_cast<uint4 *>(gmem_tile + row * row_stride + chunk * 8) = data;
  }
}

}  // namespace cuir_sm80
