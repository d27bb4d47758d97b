/*
 * cuir/block_mask.h: the runtime block mask of a variant library (C interface).
 *
 * A variant whose mask CuIR cannot decide per tile at compile time (documents, lookups in captured tensors, any
 * mask_mod) is lowered with a classification of its tiles at run time: a library entry point that writes, for a
 * problem (the sizes and variant parameters of a cuir_attention_params), FlexAttention's BlockMask lists for tiles
 * of block_m query rows x block_n keys (the attention kernel's tiles), all int32, row-major:
 *
 *   kv_num_blocks      [B', H', QB]       the partial KV tiles of query block m: how many
 *   kv_indices         [B', H', QB, KB]   their KV tile numbers, the first kv_num_blocks entries
 *   full_kv_num_blocks [B', H', QB]       the full KV tiles of query block m
 *   full_kv_indices    [B', H', QB, KB]
 *   q_num_blocks       [B', H', KB]       the transposed lists: the partial query tiles of KV block n
 *   q_indices          [B', H', KB, QB]
 *   full_q_num_blocks  [B', H', KB]       the full query tiles of KV block n
 *   full_q_indices     [B', H', KB, QB]
 *   q_order            [B', H', QB]       the query blocks from the most listed KV tiles (partial and full) to
 *                                         the fewest, ties from the last query block down: the order in which
 *                                         the attention kernels take them (heavy-first)
 *
 * QB = ceil(Nq / block_m), KB = ceil(Nkv / block_n). B' = B when the mask reads the batch index, else 1; H' = Hq
 * when it reads the head, else 1 (one row for all, broadcast). A backward library whose mask reads the head has a
 * row per KV head instead (the manifest's depends lists "kv_heads"): H' = Hkv, and row g classifies the tiles of
 * the query heads g * G .. g * G + G - 1 (G = Hq / Hkv) together: EMPTY or FULL where so for every one of them, else
 * PARTIAL. A tile is EMPTY when no pair (q, kv) of it with
 * q < Nq and kv < Nkv is visible, FULL when every pair of the tile is in range and visible (a ragged last tile is
 * never full), else PARTIAL. Lists are in descending tile order; the entries after a list's count are 0. The result
 * does not depend on how the GPU schedules the work (no atomics).
 *
 * partial_bits (optional, forward libraries whose manifest's block_mask fields name it): the mask itself on the
 * partial tiles, so that the attention kernel loads a thread's words of a tile instead of evaluating the mask at
 * each of its scores: bit c % 32 of word [b', h', m, n, r, c / 32] is 1 when pair (m * block_m + r, n * block_n + c)
 * is in range and visible. Only the tiles that the partial lists name are written, and in a row without partial
 * tiles its first full tile, full_kv_indices[b', h', m, 0] (all ones: the sm_90 forward's first step of a query
 * block always runs the mask, and reads its bits); the rest of the buffer is not read. Where the pointer is NULL
 * (as in params' field cuir_partial_bits), the kernel evaluates the mask.
 *
 * The tiles are those of the library's kernels for params->head_dim (the sm_80 kernel's KV tiles depend on it).
 * The mask's predicate is evaluated only at in-range pairs, with the variant's parameters of *params (the fields of
 * the variant section of cuir/attention_params.h that the mask reads); q, k, v, o, lse, the strides and dtype are
 * not read.
 */
#ifndef CUIR_BLOCK_MASK_H
#define CUIR_BLOCK_MASK_H

#include <stdint.h>

#include "cuir/attention_bwd_params.h"
#include "cuir/attention_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuir_block_mask {
  /* ---- the lists (device pointers, 4-byte aligned; shapes above) ---- */
  int32_t *kv_num_blocks;
  int32_t *kv_indices;
  int32_t *full_kv_num_blocks;
  int32_t *full_kv_indices;
  int32_t *q_num_blocks;
  int32_t *q_indices;
  int32_t *full_q_num_blocks;
  int32_t *full_q_indices;
  int32_t *q_order;
  /* ---- their sizes: what <entry>_block_mask_dims returns, and the library's tiles ---- */
  int32_t batch;     /* B' */
  int32_t heads;     /* H' */
  int32_t q_blocks;  /* QB */
  int32_t kv_blocks; /* KB */
  int32_t block_m;   /* query rows of a tile (the library's, at the problem's head dim) */
  int32_t block_n;   /* keys of a tile */
  /* ---- optional (NULL: none): the mask's bits of the partial tiles, for the attention kernel ---- */
  uint32_t *partial_bits; /* [B', H', QB, KB, block_m, block_n / 32], 16-byte aligned; see above */
} cuir_block_mask;

/*
 * A variant library with a runtime block mask exports two functions named after its attention entry point (for
 * cuir_flash_fwd_sm80 and cuir_flash_fwd_sm90, below); its manifest (<stem>.json, "block_mask") names them.
 *
 * <entry>_block_mask_dims: dims = {B', H', QB, KB} of params' problem (batch, num_heads_q, num_heads_kv where the
 * rows are per KV head, seqlen_q, seqlen_kv, head_dim). Returns a cudaError_t value: 0, or 1 (cudaErrorInvalidValue) for a NULL params or dims, or a negative
 * size; 801 (cudaErrorNotSupported) for a head dim the library has no kernel for.
 *
 * <entry>_block_mask: computes the nine lists of params' problem into mask's buffers, on stream (a cudaStream_t,
 * NULL for the legacy default stream), asynchronously. mask's sizes must be those <entry>_block_mask_dims gives
 * and its block_m, block_n the library's tiles at params->head_dim (so that the buffers hold the lists and the
 * attention entry reads them with its tiles). Returns 0 when the work was launched (or there is none: an empty problem), or
 *   1   (cudaErrorInvalidValue) for a NULL params or mask, a negative size, sizes or tiles other than the
 *       library's, a NULL or misaligned list buffer of a non-empty list, a NULL parameter array that the mask
 *       reads, or a partial_bits buffer that is not 16-byte aligned or that the library cannot write (rows of a
 *       GQA group, or keys of a tile not a multiple of 32: a backward library's lists);
 *   801 (cudaErrorNotSupported) for a head dim the library has no kernel for;
 *   or the launch's own error.
 */
CUIR_KERNEL_API int cuir_flash_fwd_sm80_block_mask_dims(const cuir_attention_params *params, int32_t dims[4]);
CUIR_KERNEL_API int cuir_flash_fwd_sm80_block_mask(const cuir_attention_params *params, cuir_block_mask *mask,
                                                   void *stream);
CUIR_KERNEL_API int cuir_flash_fwd_sm90_block_mask_dims(const cuir_attention_params *params, int32_t dims[4]);
CUIR_KERNEL_API int cuir_flash_fwd_sm90_block_mask(const cuir_attention_params *params, cuir_block_mask *mask,
                                                   void *stream);

/*
 * A variant's backward library (lowered from a flash_bwd.cu with the split) exports the same two functions named
 * after its backward entry point, with its params struct: the lists at the backward kernel's tiles (the sm_80
 * backward and the sm_90 one: 64 query rows x 128 keys at both head dims). Its kernel steps, for its KV tile,
 * over the transposed lists (q_num_blocks / q_indices: masked steps; full_q_num_blocks / full_q_indices: unmasked
 * steps); the other lists are computed too. Same contract and return values as above.
 */
CUIR_KERNEL_API int cuir_flash_bwd_sm80_block_mask_dims(const cuir_attention_bwd_params *params, int32_t dims[4]);
CUIR_KERNEL_API int cuir_flash_bwd_sm80_block_mask(const cuir_attention_bwd_params *params, cuir_block_mask *mask,
                                                   void *stream);
CUIR_KERNEL_API int cuir_flash_bwd_sm90_block_mask_dims(const cuir_attention_bwd_params *params, int32_t dims[4]);
CUIR_KERNEL_API int cuir_flash_bwd_sm90_block_mask(const cuir_attention_bwd_params *params, cuir_block_mask *mask,
                                                   void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CUIR_BLOCK_MASK_H */
