// sm90_primitives.cuh: the Hopper (sm_90a) instructions the FA3-class kernel needs, one thin wrapper each.
//
// mbarrier, TMA (cp.async.bulk.tensor) and the proxy fences go through CCCL's <cuda/ptx> wrappers. CCCL has
// no wrapper for elect.sync, setmaxnreg, named barriers or wgmma, so those are inline PTX, one instruction per
// function, named after the instruction. The wgmma instructions themselves (which list every accumulator
// register) are generated into sm90_wgmma.cuh by gen_wgmma.py.
//
// Fragment layouts (PTX ISA, "Register fragments" of wgmma.mma_async.m64nNk16), for thread tid of a
// warpgroup, warp w = tid / 32, g = (tid % 32) / 4, t = tid % 4:
//   accumulator D (64 x N, f32, N/2 registers): d[4j + 0..1] = D[16w + g    ][8j + 2t .. 8j + 2t + 1]
//                                               d[4j + 2..3] = D[16w + g + 8][8j + 2t .. 8j + 2t + 1]
//   A from registers (64 x 16, four 16x2 registers): a[0] = A[16w + g][2t..2t+1],  a[1] = A[16w + g + 8][2t..],
//                                                    a[2] = A[16w + g][8 + 2t..],  a[3] = A[16w + g + 8][8 + 2t..]
// so accumulator registers d[8k .. 8k+7] (columns 16k .. 16k+15), packed pairwise, are the A fragment of k-step k.
#pragma once

#include <cuda/ptx>
#include <stdint.h>

#include "cuir/kernel_primitives.cuh"

#include "sm90_wgmma.cuh"

namespace cuir_sm90 {

using cuir_kernels::Element;
using cuir_kernels::fast_exp2;
using cuir_kernels::fast_log2;
using cuir_kernels::pack_float2;
using cuir_kernels::smem_u32addr;

// ---- mbarrier (shared-memory barrier with a phase bit and a transaction-byte count) ----
__device__ __forceinline__ void mbarrier_init(uint64_t *bar, uint32_t arrivals) {
  cuda::ptx::mbarrier_init(bar, arrivals);
}
// Makes the initialisations above visible to the other threads and to the async proxy (TMA).
__device__ __forceinline__ void fence_barrier_init() {
  cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
}
__device__ __forceinline__ void mbarrier_arrive(uint64_t *bar) { (void)cuda::ptx::mbarrier_arrive(bar); }
// One arrival that also announces `bytes` more transaction bytes (the TMA copies that complete on `bar`).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
  (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                             bar, bytes);
}
// Blocks until the phase with parity `parity` of `bar` has completed. (A freshly initialised barrier counts
// as having just completed a phase of parity 1, so waiting on parity 1 returns at once.)
__device__ __forceinline__ void mbarrier_wait(uint64_t *bar, uint32_t parity) {
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, parity)) {
  }
}

// ---- TMA: a 4-D tile of the tensor described by `tensor_map` -> shared memory, completing on `bar` ----
// coords: {column, row, head, batch} of the box's first element; out-of-bounds elements are zero-filled.
__device__ __forceinline__ void tma_load_4d(void *smem_dst, const void *tensor_map, int col, int row, int head,
                                            int batch, uint64_t *bar) {
  const int32_t coords[4] = {col, row, head, batch};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, smem_dst, tensor_map, coords,
                                  bar);
}

// ---- bulk copy (cp.async.bulk, no tensor map): `bytes` contiguous bytes (a multiple of 16, both addresses
//      16-byte aligned) global -> shared memory, completing on `bar` ----
__device__ __forceinline__ void bulk_load(void *smem_dst, const void *src, uint32_t bytes, uint64_t *bar) {
  cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, smem_dst, src, bytes, bar);
}

// ---- bulk reduction (cp.reduce.async.bulk .add.f32): `bytes` contiguous fp32 values of shared memory added
//      into global memory, element-wise atomically, as one bulk async-group of this thread ----
__device__ __forceinline__ void bulk_reduce_add_f32(float *dst, const float *smem_src, uint32_t bytes) {
  cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_add, dst, smem_src,
                                  bytes);
}
__device__ __forceinline__ void bulk_commit_group() { cuda::ptx::cp_async_bulk_commit_group(); }
// Waits until this thread's bulk async-groups have finished reading their shared-memory sources.
__device__ __forceinline__ void bulk_wait_group_read_all() { cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{}); }
// Waits until this thread's bulk async-groups have completed (their global writes are done).
__device__ __forceinline__ void bulk_wait_group_all() { cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{}); }
// fence.proxy.async.global: orders this thread's generic-proxy global accesses with its async-proxy ones.
__device__ __forceinline__ void fence_proxy_async_global() { cuda::ptx::fence_proxy_async(cuda::ptx::space_global); }

// fence.proxy.async.shared::cta: orders this thread's generic-proxy shared-memory accesses with later
// async-proxy (TMA, wgmma) accesses.
__device__ __forceinline__ void fence_proxy_async_shared() { cuda::ptx::fence_proxy_async(cuda::ptx::space_shared); }

// ---- elect.sync: true in exactly one lane of the (fully active) warp ----
__device__ __forceinline__ bool elect_one_sync() {
  uint32_t elected;
  asm volatile(
      "{\n.reg .pred p;\n"
      "elect.sync _|p, 0xffffffff;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(elected));
  return elected != 0;
}

// ---- setmaxnreg: move registers between warpgroups (every warp of the warpgroup executes it) ----
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

// ---- named barriers (bar.sync / bar.arrive on barrier `id` among `threads` threads; id 0 is __syncthreads) ----
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// ---- wgmma bookkeeping ----
// wgmma.fence: orders this warpgroup's earlier register accesses before the wgmma instructions that follow.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
// Groups every wgmma issued since the last commit into one wgmma-group.
__device__ __forceinline__ void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most PENDING wgmma-groups of this warpgroup are still in flight.
template <int PENDING>
__device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}
// Pins a register operand of an in-flight wgmma in place: the compiler may not move reads or writes of `x`
// across this point (used on accumulators and A fragments around wgmma issue and wait, as CUTLASS does).
__device__ __forceinline__ void fence_operand(float &x) { asm volatile("" : "+f"(x)::"memory"); }
__device__ __forceinline__ void fence_operand(uint32_t &x) { asm volatile("" : "+r"(x)::"memory"); }
__device__ __forceinline__ void fence_operand(int &x) { asm volatile("" : "+r"(x)::"memory"); }
template <class T, int N>
__device__ __forceinline__ void fence_operands(T (&x)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) fence_operand(x[i]);
}

// ---- wgmma shared-memory matrix descriptors, 128-byte swizzle ----
// The tiles are stored as TMA writes them with CU_TENSOR_MAP_SWIZZLE_128B: slabs of 64 columns (128 bytes) x
// rows, row r of a slab at r * 128 bytes, its 16-byte chunk c at chunk position c ^ (r % 8); every slab
// starts 1024-byte aligned (so the descriptors' base offset is 0).
//   bits 0-13: start address >> 4; 16-29: leading-dimension byte offset >> 4; 32-45: stride-dimension byte
//   offset >> 4; 62-63: swizzle mode (1 = 128-byte swizzle).
__device__ __forceinline__ uint64_t make_smem_desc_sw128(uint32_t smem_addr, uint32_t leading_byte_offset,
                                                         uint32_t stride_byte_offset) {
  return static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4) |
         (static_cast<uint64_t>((leading_byte_offset & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((stride_byte_offset & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}
// Descriptor of a K-major operand (rows = M or N, 16 contiguous K elements per k-step) at byte address
// smem_addr: 8-row groups 1024 bytes apart (stride byte offset); the leading byte offset is unused (1).
__device__ __forceinline__ uint64_t desc_k_major(uint32_t smem_addr) { return make_smem_desc_sw128(smem_addr, 16, 1024); }
// Descriptor of an MN-major operand (V as the B operand of P V: rows = K (keys), 64 contiguous N elements
// per slab): 8-key groups 1024 bytes apart (stride byte offset), 64-column slabs slab_bytes apart (leading).
__device__ __forceinline__ uint64_t desc_mn_major(uint32_t smem_addr, uint32_t slab_bytes) {
  return make_smem_desc_sw128(smem_addr, slab_bytes, 1024);
}

// ---- the GEMM shapes ----
// acc (64 x N) = A (64 x 16) * B (16 x N) [+ acc]: Q K^T k-step, both operands K-major in shared memory.
template <Element ELEMENT, int N, bool ZERO_INIT>
__device__ __forceinline__ void wgmma_ss(float (&acc)[N / 2], uint64_t desc_a, uint64_t desc_b) {
  static_assert(N == 64 || N == 128 || N == 176 || N == 192, "generated shapes: see gen_wgmma.py");
#define CUIR_SS_CASE(NN)                                                                     \
  if constexpr (N == NN) {                                                                   \
    if constexpr (ZERO_INIT) {                                                               \
      if constexpr (ELEMENT == Element::kBF16) CUIR_WGMMA_SS_ZERO_##NN("bf16", acc, desc_a, desc_b); \
      else CUIR_WGMMA_SS_ZERO_##NN("f16", acc, desc_a, desc_b);                             \
    } else {                                                                                 \
      if constexpr (ELEMENT == Element::kBF16) CUIR_WGMMA_SS_##NN("bf16", acc, desc_a, desc_b, 1); \
      else CUIR_WGMMA_SS_##NN("f16", acc, desc_a, desc_b, 1);                               \
    }                                                                                        \
  }
  CUIR_SS_CASE(64)
  CUIR_SS_CASE(128)
  CUIR_SS_CASE(176)
  CUIR_SS_CASE(192)
#undef CUIR_SS_CASE
}

// acc (64 x N) = A (64 x 16) * B (16 x N) [+ acc], both operands MN-major in shared memory (the backward's
// dQ = dS K: dS stored key-major, K stored key-major).
template <Element ELEMENT, int N, bool ZERO_INIT>
__device__ __forceinline__ void wgmma_ss_tt(float (&acc)[N / 2], uint64_t desc_a, uint64_t desc_b) {
  static_assert(N == 64, "generated shapes: see gen_wgmma.py");
  if constexpr (ZERO_INIT) {
    if constexpr (ELEMENT == Element::kBF16) CUIR_WGMMA_SS_ZERO_TT_64("bf16", acc, desc_a, desc_b);
    else CUIR_WGMMA_SS_ZERO_TT_64("f16", acc, desc_a, desc_b);
  } else {
    if constexpr (ELEMENT == Element::kBF16) CUIR_WGMMA_SS_TT_64("bf16", acc, desc_a, desc_b, 1);
    else CUIR_WGMMA_SS_TT_64("f16", acc, desc_a, desc_b, 1);
  }
}

// acc (64 x N) += A (64 x 16, registers) * B (16 x N): P V k-step, B MN-major in shared memory.
template <Element ELEMENT, int N>
__device__ __forceinline__ void wgmma_rs(float (&acc)[N / 2], const uint32_t (&a)[4], uint64_t desc_b) {
  static_assert(N == 64 || N == 128, "generated shapes: see gen_wgmma.py");
#define CUIR_RS_CASE(NN)                                                           \
  if constexpr (N == NN) {                                                         \
    if constexpr (ELEMENT == Element::kBF16) CUIR_WGMMA_RS_TB_##NN("bf16", acc, a, desc_b); \
    else CUIR_WGMMA_RS_TB_##NN("f16", acc, a, desc_b);                            \
  }
  CUIR_RS_CASE(64)
  CUIR_RS_CASE(128)
#undef CUIR_RS_CASE
}

}  // namespace cuir_sm90
