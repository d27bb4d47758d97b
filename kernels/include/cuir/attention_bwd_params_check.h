// cuir/attention_bwd_params_check.h: the argument checks every backward kernel's C entry point makes before
// launching, with the error codes documented in cuir/attention_bwd_params.h (the forward's checks, extended to
// the gradients and the workspace). Host C++ (CUDA runtime error codes).
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "cuir/attention_bwd_params.h"

namespace cuir_kernels {

// cudaSuccess when the kernels may run on `params`; `nothing_to_do` is then set when there is nothing to write
// (no batch, no query head, or neither a query row nor a key: success without a launch). Otherwise
// cudaErrorNotSupported (head dim, dtype) or cudaErrorInvalidValue.
inline cudaError_t check_attention_bwd_params(const cuir_attention_bwd_params *params, bool *nothing_to_do) {
  *nothing_to_do = false;
  if (params == nullptr) return cudaErrorInvalidValue;
  const cuir_attention_bwd_params &p = *params;
  if (p.head_dim != 64 && p.head_dim != 128) return cudaErrorNotSupported;
  if (p.dtype != CUIR_DTYPE_BF16 && p.dtype != CUIR_DTYPE_FP16) return cudaErrorNotSupported;
  if (p.batch < 0 || p.num_heads_q < 0 || p.num_heads_kv <= 0 || p.seqlen_q < 0 || p.seqlen_kv < 0)
    return cudaErrorInvalidValue;
  if (p.num_heads_q % p.num_heads_kv != 0) return cudaErrorInvalidValue;
  // coordinates below 2^30, as the lowering's static mask analysis assumes (lib/Transfer/MaskAnalysis.cpp)
  if (p.seqlen_q >= (1 << 30) || p.seqlen_kv >= (1 << 30)) return cudaErrorInvalidValue;
  // grid limits: y and z at most 65535 (heads and batch; the blocks of a sequence go in x)
  if (p.batch > 65535 || p.num_heads_q > 65535) return cudaErrorInvalidValue;
  if (!(p.softmax_scale > 0.f) || p.softmax_scale > 3.0e38f) return cudaErrorInvalidValue;  // also rejects NaN
  if (p.is_causal != 0 && p.is_causal != 1) return cudaErrorInvalidValue;
  if (p.deterministic != 0 && p.deterministic != 1) return cudaErrorInvalidValue;
  if (p.batch == 0 || p.num_heads_q == 0 || (p.seqlen_q == 0 && p.seqlen_kv == 0)) {
    *nothing_to_do = true;
    return cudaSuccess;
  }
  auto aligned = [](const void *ptr, uintptr_t bytes) { return (reinterpret_cast<uintptr_t>(ptr) & (bytes - 1)) == 0; };
  auto tensor_ok = [&](const void *ptr) { return ptr != nullptr && aligned(ptr, 16); };
  if (p.seqlen_q > 0) {  // the query side is read (and dQ written) only when there are query rows
    if (!tensor_ok(p.q) || !tensor_ok(p.o) || !tensor_ok(p.d_o) || !tensor_ok(p.dq)) return cudaErrorInvalidValue;
    if (p.lse == nullptr || !aligned(p.lse, 4)) return cudaErrorInvalidValue;
  }
  if (p.seqlen_kv > 0) {
    if (!tensor_ok(p.k) || !tensor_ok(p.v) || !tensor_ok(p.dk) || !tensor_ok(p.dv)) return cudaErrorInvalidValue;
  }
  if (p.workspace == nullptr || !aligned(p.workspace, 256)) return cudaErrorInvalidValue;
  const int64_t strides[] = {
      p.q_batch_stride,  p.q_row_stride,  p.q_head_stride,  p.k_batch_stride,  p.k_row_stride,  p.k_head_stride,
      p.v_batch_stride,  p.v_row_stride,  p.v_head_stride,  p.o_batch_stride,  p.o_row_stride,  p.o_head_stride,
      p.do_batch_stride, p.do_row_stride, p.do_head_stride, p.dq_batch_stride, p.dq_row_stride, p.dq_head_stride,
      p.dk_batch_stride, p.dk_row_stride, p.dk_head_stride, p.dv_batch_stride, p.dv_row_stride, p.dv_head_stride};
  for (int64_t s : strides)
    if (s % 8 != 0) return cudaErrorInvalidValue;  // 16-byte rows, heads and batches
  return cudaSuccess;
}

}  // namespace cuir_kernels
