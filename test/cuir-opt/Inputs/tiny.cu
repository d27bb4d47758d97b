// A "quoted" kernel with a backslash \ and a tab	in it.
__global__ void scale(float *x, float s) {
  x[threadIdx.x] *= s;
}
