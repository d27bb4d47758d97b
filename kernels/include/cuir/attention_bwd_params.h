/*
 * cuir/attention_bwd_params.h: the stable C interface of CuIR's attention backward kernels.
 *
 * Usable from C and C++ (and mirrored by python/cuir through ctypes). The sm_80 kernel
 * (kernels/sm80/flash_bwd.cu) and the sm_90 kernel (kernels/sm90/flash_bwd.cu) share this struct.
 *
 * Tensor layouts (element strides, the head dimension is always contiguous), as the forward's:
 *   Q, O, dO, dQ : [B, Nq,  Hq,  d]
 *   K, V, dK, dV : [B, Nkv, Hkv, d]
 *   LSE          : float [B, Hq, Nq] contiguous, as written by the forward (natural log, of the scaled scores;
 *                  -inf for a row that sees no key)
 *
 * Semantics: with P = softmax_j(softmax_scale * Q K^T) over the visible keys (the forward's mask: all keys, or
 * is_causal's bottom-right aligned causal mask), O = P V and the upstream gradient dO:
 *   D  = rowsum(dO * O)                       (per query row)
 *   dV = P^T dO,   dP = dO V^T,   dS = P * (dP - D),
 *   dQ = softmax_scale * dS K,   dK = softmax_scale * dS^T Q,
 * where, under GQA / MQA, dK and dV of a KV head sum over the Hq / Hkv query heads that read it.
 * A row that sees no key has dQ = 0; a key no row sees has dK = dV = 0.
 */
#ifndef CUIR_ATTENTION_BWD_PARAMS_H
#define CUIR_ATTENTION_BWD_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "cuir/attention_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever the fixed part of the struct below changes. */
#define CUIR_ATTENTION_BWD_PARAMS_VERSION 1

typedef struct cuir_attention_bwd_params {
  /* ---- inputs (device pointers, 16-byte aligned) ---- */
  const void *q;      /* [B, Nq,  Hq,  d] */
  const void *k;      /* [B, Nkv, Hkv, d] */
  const void *v;      /* [B, Nkv, Hkv, d] */
  const void *o;      /* [B, Nq,  Hq,  d] the forward's output */
  const void *d_o;    /* [B, Nq,  Hq,  d] upstream gradient dO */
  const float *lse;   /* [B, Hq, Nq] contiguous, the forward's */

  /* ---- outputs (device pointers, 16-byte aligned; fully written, never accumulated into) ---- */
  void *dq;           /* [B, Nq,  Hq,  d] */
  void *dk;           /* [B, Nkv, Hkv, d] */
  void *dv;           /* [B, Nkv, Hkv, d] */

  /* ---- scratch: at least cuir_flash_bwd_<arch>_workspace_size(params) bytes of device memory, 256-byte
   *      aligned, owned by the caller (its contents on entry do not matter) ---- */
  void *workspace;

  /* ---- strides, in elements (multiples of 8) ---- */
  int64_t q_batch_stride, q_row_stride, q_head_stride;
  int64_t k_batch_stride, k_row_stride, k_head_stride;
  int64_t v_batch_stride, v_row_stride, v_head_stride;
  int64_t o_batch_stride, o_row_stride, o_head_stride;
  int64_t do_batch_stride, do_row_stride, do_head_stride;
  int64_t dq_batch_stride, dq_row_stride, dq_head_stride;
  int64_t dk_batch_stride, dk_row_stride, dk_head_stride;
  int64_t dv_batch_stride, dv_row_stride, dv_head_stride;

  /* ---- sizes ---- */
  int32_t batch;         /* B */
  int32_t num_heads_q;   /* Hq, a multiple of num_heads_kv */
  int32_t num_heads_kv;  /* Hkv */
  int32_t seqlen_q;      /* Nq  (any value >= 0) */
  int32_t seqlen_kv;     /* Nkv (any value >= 0) */
  int32_t head_dim;      /* d: 64 or 128 */

  /* ---- semantics ---- */
  int32_t dtype;          /* enum cuir_dtype, of every tensor but lse */
  float softmax_scale;    /* > 0, the forward's */
  int32_t is_causal;      /* 0: full attention; 1: bottom-right aligned causal mask */
  int32_t deterministic;  /* 1: bitwise reproducible dQ (no float atomics' order dependence); 0: fastest */

  /* ==== CUIR VARIANT PARAMETERS BEGIN ====
   * As in cuir_attention_params: a variant's own fields are appended here and nowhere else.
   * ==== CUIR VARIANT PARAMETERS END ==== */
} cuir_attention_bwd_params;

/* sizeof(cuir_attention_bwd_params) as this library was built, for binding checks (ctypes). */
CUIR_KERNEL_API int cuir_attention_bwd_params_sizeof(void);

/*
 * FA2-class backward pass on sm_80 and later (kernels/sm80/flash_bwd.cu).
 * workspace_size: the bytes of scratch `workspace` must hold for these sizes (0 for a NULL params).
 * stream: a cudaStream_t (NULL for the legacy default stream).
 * Returns a cudaError_t value: 0 when the kernels were launched; 1 (cudaErrorInvalidValue) for a NULL pointer,
 *   bad sizes (a sequence over 2^30 included), Hq % Hkv != 0, misaligned pointers or strides, a softmax_scale that is not finite and positive;
 *   801 (cudaErrorNotSupported) for a head_dim other than 64/128 or an unknown dtype; or a launch's own error.
 * Nothing is launched (and 0 is returned) when there is nothing to compute; dK and dV are still zeroed when
 *   Nq == 0 < Nkv, and dQ when Nkv == 0 < Nq.
 */
CUIR_KERNEL_API size_t cuir_flash_bwd_sm80_workspace_size(const cuir_attention_bwd_params *params);
CUIR_KERNEL_API int cuir_flash_bwd_sm80(const cuir_attention_bwd_params *params, void *stream);

/*
 * FA3-class backward pass on sm_90a (TMA, wgmma, warp-specialized; kernels/sm90/flash_bwd.cu).
 * Same contract, argument checks and return values as the sm_80 one.
 */
CUIR_KERNEL_API size_t cuir_flash_bwd_sm90_workspace_size(const cuir_attention_bwd_params *params);
CUIR_KERNEL_API int cuir_flash_bwd_sm90(const cuir_attention_bwd_params *params, void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CUIR_ATTENTION_BWD_PARAMS_H */
