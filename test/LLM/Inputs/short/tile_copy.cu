// Copies one 64-float tile per block through shared memory.
__global__ void copy_tile(const float *src, float *dst, int n) {
  __shared__ float tile[64];
