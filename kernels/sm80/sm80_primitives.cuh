// sm80_primitives.cuh: the few sm_80 instructions the FA2-class kernel needs, one thin wrapper each.
//
// CCCL's <cuda/ptx> has no wrapper for cp.async (the non-bulk form with a zero-fill source size),
// ldmatrix or mma.sync, so these are inline PTX, one instruction per function, named after the
// instruction. Each wrapper documents the fragment layout it produces or consumes
// (PTX ISA, "Matrix fragments for mma.m16n8k16"); g = lane / 4 and t = lane % 4 below.
#pragma once

#include <stdint.h>

#include "cuir/kernel_primitives.cuh"

namespace cuir_sm80 {

using cuir_kernels::Element;
using cuir_kernels::fast_exp2;
using cuir_kernels::fast_log2;
using cuir_kernels::pack_float2;
using cuir_kernels::smem_u32addr;
using cuir_kernels::unpack_float2;

// ---- cp.async (global -> shared, 16 bytes, bypassing L1) ----
// When in_bounds is false no byte is read from global memory (src-size operand 0: ptxas turns it into the
// predicate of LDGSTS, gmem_src is not dereferenced) and the 16 destination bytes are zeroed.
__device__ __forceinline__ void cp_async_16B_zfill(uint32_t smem_dst, const void *gmem_src, bool in_bounds) {
  const int src_bytes = in_bounds ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_dst), "l"(gmem_src), "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit_group() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Wait until at most PENDING of this thread's most recently committed groups are still in flight.
template <int PENDING>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// ---- ldmatrix: four 8x8 b16 matrices from shared memory ----
// Lane l supplies the address of row (l % 8) of matrix (l / 8). After the load, register j holds
// row g, columns 2t and 2t+1 of matrix j (low half = lower column).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&frag)[4], uint32_t smem_row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(frag[0]), "=r"(frag[1]), "=r"(frag[2]), "=r"(frag[3])
               : "r"(smem_row_addr));
}

// Same, transposed: register j holds rows 2t and 2t+1, column g of matrix j.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&frag)[4], uint32_t smem_row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(frag[0]), "=r"(frag[1]), "=r"(frag[2]), "=r"(frag[3])
               : "r"(smem_row_addr));
}

// ---- mma.sync.m16n8k16, fp32 accumulation: acc += A (16x16, row) * B (16x8, col) ----
// A: a[0] = A[g][2t..2t+1], a[1] = A[g+8][2t..], a[2] = A[g][8+2t..], a[3] = A[g+8][8+2t..]
// B: b0 = B[2t..2t+1][g], b1 = B[8+2t..8+2t+1][g]
// C: acc[0..1] = C[g][2t..2t+1], acc[2..3] = C[g+8][2t..2t+1]
template <Element ELEMENT>
__device__ __forceinline__ void mma_m16n8k16(float (&acc)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (ELEMENT == Element::kBF16) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// ---- global fp32 reductions and the deterministic mode's counter ----
// addr[i] += v.i (i = x, y, z, w), without a result (RED); one vector reduction on sm_90, four scalar ones before.
// addr is 16-byte aligned.
__device__ __forceinline__ void red_add_f32x4(float *addr, float4 v) {
#if __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(addr), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
               : "memory");
#else
  asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(addr), "f"(v.x) : "memory");
  asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(addr + 1), "f"(v.y) : "memory");
  asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(addr + 2), "f"(v.z) : "memory");
  asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(addr + 3), "f"(v.w) : "memory");
#endif
}

// A load with acquire semantics at GPU scope (the reads after it see what the releasing writer wrote before).
__device__ __forceinline__ int ld_acquire_gpu(const int *addr) {
  int value;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(value) : "l"(addr) : "memory");
  return value;
}

}  // namespace cuir_sm80
