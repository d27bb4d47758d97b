// sm90_tma_host.h: host-side TMA tensor maps of [batch, rows, heads, head_dim] tensors, as the sm_90 kernels
// read them (boxes of 64 columns x box_rows rows of one (batch, head), 128-byte swizzled in shared memory).
// cuTensorMapEncodeTiled is found at run time through the runtime, so nothing links against libcuda.
#pragma once

#include <cuda.h>  // CUtensorMap and its enums only
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuir/attention_params.h"

namespace cuir_sm90 {

// cuTensorMapEncodeTiled from the driver, looked up once.
inline PFN_cuTensorMapEncodeTiled_v12000 encode_tiled_fn() {
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

// Tensor map of a 16-bit [batch, rows, heads, head_dim] tensor (element strides; head_dim contiguous);
// out-of-bounds rows of a box are zero-filled.
inline cudaError_t make_tile_map(CUtensorMap *map, const void *base, int dtype, int head_dim, int rows, int heads,
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
  const CUresult r =
      encode(map, dtype == CUIR_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4,
             const_cast<void *>(base), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace cuir_sm90
