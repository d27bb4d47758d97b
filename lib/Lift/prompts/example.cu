// S = Q K^T for one 64-row query tile and one 64-row key tile (head dim 64,
// bf16 in, fp32 out), warp-specialised: warpgroup 0 stages the tiles in
// shared memory with cp.async, warpgroup 1 multiplies them on the tensor
// cores. ldmatrix_x4/_x2 and mma_16816 wrap the PTX instructions of the same
// names (ldmatrix.sync.aligned.m8n8.x4.shared.b16, mma.sync.aligned.m16n8k16).
#include "mma_wrappers.cuh"

__global__ void __launch_bounds__(256)
qk_tile(const bf16 *q, const bf16 *k, float *s, int n) {
  __shared__ alignas(128) bf16 sQ[64][64];
  __shared__ alignas(128) bf16 sK[64][64];
  const int q0 = blockIdx.x * 64;
  if (threadIdx.x < 128) {
    for (int c = threadIdx.x; c < 512; c += 128) {
      const int r = c / 8, col = c % 8 * 8;
      cp_async_16(&sQ[r][col], q + (q0 + r) * 64 + col, q0 + r < n);
      cp_async_16(&sK[r][col], k + r * 64 + col, true);
    }
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    asm volatile("bar.arrive 1, 256;\n" ::);
  } else {
    asm volatile("bar.sync 1, 256;\n" ::);
    const int warp = threadIdx.x / 32 - 4, lane = threadIdx.x % 32;
    float acc[8][4] = {};
    for (int kk = 0; kk < 64; kk += 16) {
      uint32_t a[4];
      ldmatrix_x4(a, &sQ[warp * 16 + lane % 16][kk + lane / 16 * 8]);
      for (int j = 0; j < 8; ++j) {
        uint32_t b[2];
        ldmatrix_x2(b, &sK[j * 8 + lane % 8][kk + lane / 8 % 2 * 8]);
        mma_16816(acc[j], a, b);
      }
    }
    const int row = q0 + warp * 16 + lane / 4;
    for (int j = 0; j < 8; ++j) {
      const int col = j * 8 + lane % 4 * 2;
      if (row < n)
        *(float2 *)&s[row * 64 + col] = make_float2(acc[j][0], acc[j][1]);
      if (row + 8 < n)
        *(float2 *)&s[(row + 8) * 64 + col] = make_float2(acc[j][2], acc[j][3]);
    }
  }
}
