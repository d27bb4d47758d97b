// cuir/kernel_primitives.cuh: the device helpers both of CuIR's attention kernels use, whatever the
// architecture: the element type, shared-memory addresses, fp32 -> 16-bit packing and the base-2 special
// functions. The architecture-specific instructions stay in kernels/sm80/sm80_primitives.cuh and
// kernels/sm90/sm90_primitives.cuh, which bring these names into their kernel's namespace.
#pragma once

#include <stdint.h>

namespace cuir_kernels {

// Element types of Q, K, V, O (both 16-bit, stored as uint16_t bit patterns).
enum class Element : int { kBF16 = 0, kFP16 = 1 };

// Generic address of a shared-memory object -> 32-bit shared-window address used by PTX.
__device__ __forceinline__ uint32_t smem_u32addr(const void *smem_ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(smem_ptr));
}

// ---- two fp32 values -> one register of two 16-bit elements (round to nearest even) ----
// lo goes to the low half (the lower column index in a fragment).
template <Element ELEMENT>
__device__ __forceinline__ uint32_t pack_float2(float lo, float hi) {
  uint32_t packed;
  if constexpr (ELEMENT == Element::kBF16) {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(hi), "f"(lo));
  } else {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(hi), "f"(lo));
  }
  return packed;
}

// ---- one register of two 16-bit elements -> two fp32 values (exact) ----
template <Element ELEMENT>
__device__ __forceinline__ float2 unpack_float2(uint32_t packed) {
  if constexpr (ELEMENT == Element::kBF16) {
    return make_float2(__uint_as_float(packed << 16), __uint_as_float(packed & 0xffff0000u));
  } else {
    float lo, hi;
    asm("{\n .reg .f16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;\n}\n"
        : "=f"(lo), "=f"(hi)
        : "r"(packed));
    return make_float2(lo, hi);
  }
}

// ---- special functions: base-2 exponential and logarithm (MUFU.EX2 / MUFU.LG2) ----
// ex2.approx.ftz maps -inf to +0, which the online softmax relies on for masked scores.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float fast_log2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace cuir_kernels
