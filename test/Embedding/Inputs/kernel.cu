__global__ void copy_tile(const float *src, float *dst) {
  __shared__ float tile[64];
  tile[threadIdx.x] = src[threadIdx.x];
  __syncthreads();
  dst[threadIdx.x] = tile[threadIdx.x];
}
