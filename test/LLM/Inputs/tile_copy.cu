// Copies one 64-float tile per block through shared memory.
__global__ void copy_tile(const float *src, float *dst, int n) {
  __shared__ float tile[64];
  tile[threadIdx.x] = src[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  dst[blockIdx.x * 64 + threadIdx.x] = tile[threadIdx.x];
}
