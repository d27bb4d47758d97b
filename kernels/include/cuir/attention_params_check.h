// cuir/attention_params_check.h: the argument checks every kernel's C entry point makes before launching,
// with the error codes documented in cuir/attention_params.h. Host C++ (CUDA runtime error codes).
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "cuir/attention_params.h"

namespace cuir_kernels {

// cudaSuccess when the kernel may run on `params`; `nothing_to_do` is then set when the problem is empty (no
// batch, head or query row: success without a launch). Otherwise cudaErrorNotSupported (head dim, dtype) or
// cudaErrorInvalidValue.
inline cudaError_t check_attention_params(const cuir_attention_params *params, bool *nothing_to_do) {
  *nothing_to_do = false;
  if (params == nullptr) return cudaErrorInvalidValue;
  const cuir_attention_params &p = *params;
  if (p.head_dim != 64 && p.head_dim != 128) return cudaErrorNotSupported;
  if (p.dtype != CUIR_DTYPE_BF16 && p.dtype != CUIR_DTYPE_FP16) return cudaErrorNotSupported;
  if (p.batch < 0 || p.num_heads_q < 0 || p.num_heads_kv <= 0 || p.seqlen_q < 0 || p.seqlen_kv < 0)
    return cudaErrorInvalidValue;
  if (p.num_heads_q % p.num_heads_kv != 0) return cudaErrorInvalidValue;
  // sizes and coordinates below 2^30, as the static mask analysis and the lowering's index ranges assume
  // (cuir/Support/IntRanges.h)
  if (p.seqlen_q >= (1 << 30) || p.seqlen_kv >= (1 << 30)) return cudaErrorInvalidValue;
  // grid limits: y and z at most 65535 (the query blocks, in y on the sm_80 kernel, and the batch); heads too
  if (p.batch > 65535 || p.num_heads_q > 65535 || (static_cast<int64_t>(p.seqlen_q) + 127) / 128 > 65535)
    return cudaErrorInvalidValue;
  if (!(p.softmax_scale > 0.f) || p.softmax_scale > 3.0e38f) return cudaErrorInvalidValue;  // also rejects NaN
  if (p.is_causal != 0 && p.is_causal != 1) return cudaErrorInvalidValue;
  if (p.batch == 0 || p.num_heads_q == 0 || p.seqlen_q == 0) {
    *nothing_to_do = true;
    return cudaSuccess;
  }
  if (p.q == nullptr || p.o == nullptr) return cudaErrorInvalidValue;
  if (p.seqlen_kv > 0 && (p.k == nullptr || p.v == nullptr)) return cudaErrorInvalidValue;
  auto aligned16 = [](const void *ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0; };
  if (!aligned16(p.q) || !aligned16(p.k) || !aligned16(p.v) || !aligned16(p.o)) return cudaErrorInvalidValue;
  if (p.lse != nullptr && (reinterpret_cast<uintptr_t>(p.lse) & 3u) != 0) return cudaErrorInvalidValue;
  const int64_t strides[] = {p.q_batch_stride, p.q_row_stride, p.q_head_stride, p.k_batch_stride,
                             p.k_row_stride,   p.k_head_stride, p.v_batch_stride, p.v_row_stride,
                             p.v_head_stride,  p.o_batch_stride, p.o_row_stride, p.o_head_stride};
  for (int64_t s : strides)
    if (s % 8 != 0) return cudaErrorInvalidValue;  // 16-byte rows, heads and batches
  return cudaSuccess;
}

}  // namespace cuir_kernels
