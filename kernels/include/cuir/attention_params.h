/*
 * cuir/attention_params.h: the stable C interface of CuIR's attention forward kernels.
 *
 * Usable from C and C++ (and mirrored by python/cuir/kernel_lib.py through ctypes).
 * The sm_80 kernel (kernels/sm80/flash_fwd.cu) and the sm_90 kernel share this struct.
 *
 * Tensor layouts (element strides, the head dimension is always contiguous):
 *   Q, O : [B, Nq,  Hq,  d]   element (b, i, h, c) at b*batch_stride + i*row_stride + h*head_stride + c
 *   K, V : [B, Nkv, Hkv, d]
 *   LSE  : float [B, Hq, Nq], contiguous: (b, h, i) at (b*Hq + h)*Nq + i, natural-log log-sum-exp of
 *          the scaled scores of row i (-inf for a row that sees no key at all; its O row is 0).
 *
 * Semantics: O[b,i,h] = softmax_j(softmax_scale * Q[b,i,h] . K[b,j,h/(Hq/Hkv)]) V[b,j,h/(Hq/Hkv)]
 * over the keys j that row i may see: all 0 <= j < Nkv, or, when is_causal, those with
 * j <= i + Nkv - Nq (the causal mask aligned to the bottom-right corner when Nq != Nkv).
 */
#ifndef CUIR_ATTENTION_PARAMS_H
#define CUIR_ATTENTION_PARAMS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Symbols of the kernel libraries' C interface (built with -fvisibility=hidden). */
#if defined(__GNUC__) || defined(__clang__)
#define CUIR_KERNEL_API __attribute__((visibility("default")))
#else
#define CUIR_KERNEL_API
#endif

/* Element types of Q, K, V and O. */
enum cuir_dtype {
  CUIR_DTYPE_BF16 = 0,
  CUIR_DTYPE_FP16 = 1
};

/* Bumped whenever the fixed part of the struct below changes. */
#define CUIR_ATTENTION_PARAMS_VERSION 1

typedef struct cuir_attention_params {
  /* ---- tensors (device pointers, 16-byte aligned) ---- */
  const void *q;     /* [B, Nq,  Hq,  d] */
  const void *k;     /* [B, Nkv, Hkv, d] */
  const void *v;     /* [B, Nkv, Hkv, d] */
  void *o;           /* [B, Nq,  Hq,  d] */
  float *lse;        /* [B, Hq, Nq] contiguous float; may be NULL (then it is not written) */

  /* ---- strides, in elements (multiples of 8, so that every row starts 16-byte aligned) ---- */
  int64_t q_batch_stride, q_row_stride, q_head_stride;
  int64_t k_batch_stride, k_row_stride, k_head_stride;
  int64_t v_batch_stride, v_row_stride, v_head_stride;
  int64_t o_batch_stride, o_row_stride, o_head_stride;

  /* ---- sizes ---- */
  int32_t batch;         /* B */
  int32_t num_heads_q;   /* Hq, a multiple of num_heads_kv (GQA / MQA) */
  int32_t num_heads_kv;  /* Hkv */
  int32_t seqlen_q;      /* Nq  (any value >= 0) */
  int32_t seqlen_kv;     /* Nkv (any value >= 0) */
  int32_t head_dim;      /* d: 64 or 128 */

  /* ---- semantics ---- */
  int32_t dtype;         /* enum cuir_dtype */
  float softmax_scale;   /* > 0, usually 1/sqrt(d) */
  int32_t is_causal;     /* 0: full attention; 1: bottom-right aligned causal mask */
  int32_t reserved0;     /* padding: keeps the variant section 8-byte aligned; set to 0 */

  /* ==== CUIR VARIANT PARAMETERS BEGIN ====
   * A compiler that derives a variant kernel from a base kernel appends the variant's own
   * fields here, after everything above, and nowhere else (for example: float softcap;
   * int32_t window_left, window_right; int32_t prefix_len; const float *alibi_slopes).
   * The base kernels read none of them.
   * ==== CUIR VARIANT PARAMETERS END ==== */
} cuir_attention_params;

/* sizeof(cuir_attention_params) as this library was built, for binding checks (ctypes). */
CUIR_KERNEL_API int cuir_attention_params_sizeof(void);

/*
 * FA2-class forward pass on sm_80 and later (kernels/sm80/flash_fwd.cu).
 * stream: a cudaStream_t (NULL for the legacy default stream).
 * Returns a cudaError_t value: 0 (cudaSuccess) when the kernel was launched;
 *   1   (cudaErrorInvalidValue) for a NULL params/q/k/v/o pointer, bad sizes (a sequence over 2^30 included), Hq % Hkv != 0,
 *       misaligned pointers or strides, or a softmax_scale that is not finite and positive;
 *   801 (cudaErrorNotSupported) for a head_dim other than 64/128 or an unknown dtype;
 *   or the launch's own error.
 * Nothing is launched (and 0 is returned) when B*Hq*Nq == 0.
 */
CUIR_KERNEL_API int cuir_flash_fwd_sm80(const cuir_attention_params *params, void *stream);

/*
 * FA3-class forward pass on sm_90a (Hopper: TMA, wgmma, warp-specialized; kernels/sm90/flash_fwd.cu).
 * Same contract, argument checks and return values as cuir_flash_fwd_sm80.
 */
CUIR_KERNEL_API int cuir_flash_fwd_sm90(const cuir_attention_params *params, void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CUIR_ATTENTION_PARAMS_H */
