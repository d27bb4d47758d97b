// flash_fwd_smoke.cpp: host driver that runs libcuir_flash_fwd_<KERNEL>.so on random inputs for a handful of
// shapes that exercise every code path (ragged tails, Nq != Nkv both ways, Nq = 1, Nkv = 0, GQA/MQA, both
// dtypes and head dims, causal and full, more KV tiles than sm90's ring stages) plus the argument checks. It
// checks only return codes and that the outputs are finite: it exists to be run under compute-sanitizer
// (memcheck, racecheck, synccheck), where PyTorch would be slow. Numerical checks are in
// tools/gpu/check_flash_fwd_sm80.py and tools/gpu/check_flash_fwd.py. Built once per kernel, with
// -DCUIR_SMOKE_KERNEL=sm80 or sm90 (kernels/CMakeLists.txt, cuir_add_smoke_driver).
//
// usage: flash_fwd_<KERNEL>_smoke [path/to/libcuir_flash_fwd_<KERNEL>.so]   (default: next to this executable)
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuir/attention_params.h"

#ifndef CUIR_SMOKE_KERNEL
#error "build with -DCUIR_SMOKE_KERNEL=sm80 or sm90: the kernel library to drive"
#endif
#define CUIR_SMOKE_STR2(x) #x
#define CUIR_SMOKE_STR(x) CUIR_SMOKE_STR2(x)
#define CUIR_SMOKE_KERNEL_NAME CUIR_SMOKE_STR(CUIR_SMOKE_KERNEL)

using launch_fn = int (*)(const cuir_attention_params *, void *);
using sizeof_fn = int (*)(void);

#define CHECK_CUDA(call)                                                                  \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

static uint16_t to_half_bits(float f, int dtype) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (dtype == CUIR_DTYPE_BF16) return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  // fp16 (values here are small and normal): round the mantissa to 10 bits.
  const uint32_t sign = (u >> 16) & 0x8000u;
  const int exp = static_cast<int>((u >> 23) & 0xff) - 127 + 15;
  if (exp <= 0) return static_cast<uint16_t>(sign);
  const uint32_t mant = (u & 0x7fffffu) + 0x1000u;
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) + (mant >> 13));
}
static float from_half_bits(uint16_t h, int dtype) {
  if (dtype == CUIR_DTYPE_BF16) {
    uint32_t u = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  const int exp = (h >> 10) & 0x1f;
  const float mant = static_cast<float>(h & 0x3ff);
  const float mag = exp == 0 ? std::ldexp(mant, -24) : (exp == 31 ? INFINITY : std::ldexp(1024.f + mant, exp - 25));
  return (h & 0x8000) ? -mag : mag;
}

struct Case {
  int dtype, d, B, Hq, Hkv, Nq, Nkv, causal;
};

int main(int argc, char **argv) {
  std::string lib_path;
  if (argc > 1) {
    lib_path = argv[1];
  } else {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    buf[n > 0 ? n : 0] = 0;
    lib_path = std::string(buf);
    lib_path = lib_path.substr(0, lib_path.rfind('/') + 1) + "libcuir_flash_fwd_" CUIR_SMOKE_KERNEL_NAME ".so";
  }
  void *handle = dlopen(lib_path.c_str(), RTLD_NOW);
  if (!handle) {
    std::fprintf(stderr, "dlopen %s: %s\n", lib_path.c_str(), dlerror());
    return 1;
  }
  auto launch = reinterpret_cast<launch_fn>(dlsym(handle, "cuir_flash_fwd_" CUIR_SMOKE_KERNEL_NAME));
  auto params_sizeof = reinterpret_cast<sizeof_fn>(dlsym(handle, "cuir_attention_params_sizeof"));
  if (!launch || !params_sizeof || params_sizeof() != static_cast<int>(sizeof(cuir_attention_params))) {
    std::fprintf(stderr, "bad library %s\n", lib_path.c_str());
    return 1;
  }

  const Case cases[] = {
      {CUIR_DTYPE_BF16, 128, 1, 4, 2, 200, 333, 1}, {CUIR_DTYPE_BF16, 128, 2, 2, 2, 333, 200, 1},
      {CUIR_DTYPE_FP16, 128, 1, 4, 1, 257, 257, 0}, {CUIR_DTYPE_BF16, 64, 1, 4, 2, 300, 129, 0},
      {CUIR_DTYPE_FP16, 64, 2, 2, 1, 129, 300, 1},  {CUIR_DTYPE_BF16, 128, 1, 2, 1, 1, 1000, 1},
      {CUIR_DTYPE_BF16, 64, 1, 2, 2, 1, 1, 0},      {CUIR_DTYPE_BF16, 128, 1, 2, 2, 130, 0, 0},
      {CUIR_DTYPE_FP16, 128, 1, 2, 2, 384, 256, 1}, {CUIR_DTYPE_BF16, 128, 1, 2, 1, 640, 1024, 0},
      {CUIR_DTYPE_BF16, 64, 1, 2, 1, 256, 1100, 1},
  };
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.f, 1.f);
  int failures = 0;
  for (const Case &c : cases) {
    const size_t nq = static_cast<size_t>(c.B) * c.Nq * c.Hq * c.d;
    const size_t nkv = static_cast<size_t>(c.B) * c.Nkv * c.Hkv * c.d;
    std::vector<uint16_t> hq(nq), hk(nkv), hv(nkv), ho(nq);
    for (auto &x : hq) x = to_half_bits(normal(rng), c.dtype);
    for (auto &x : hk) x = to_half_bits(normal(rng), c.dtype);
    for (auto &x : hv) x = to_half_bits(normal(rng), c.dtype);
    void *dq, *dk = nullptr, *dv = nullptr, *dout;
    float *dlse;
    CHECK_CUDA(cudaMalloc(&dq, nq * 2));
    CHECK_CUDA(cudaMalloc(&dout, nq * 2));
    CHECK_CUDA(cudaMalloc(&dlse, sizeof(float) * c.B * c.Hq * c.Nq));
    CHECK_CUDA(cudaMalloc(&dk, nkv * 2 + 16));
    CHECK_CUDA(cudaMalloc(&dv, nkv * 2 + 16));
    CHECK_CUDA(cudaMemcpy(dq, hq.data(), nq * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dk, hk.data(), nkv * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dv, hv.data(), nkv * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(dout, 0xff, nq * 2));  // NaN poison

    cuir_attention_params p;
    std::memset(&p, 0, sizeof(p));
    p.q = dq, p.k = dk, p.v = dv, p.o = dout, p.lse = dlse;
    p.q_row_stride = p.o_row_stride = static_cast<int64_t>(c.Hq) * c.d;
    p.q_head_stride = p.o_head_stride = c.d;
    p.q_batch_stride = p.o_batch_stride = static_cast<int64_t>(c.Nq) * c.Hq * c.d;
    p.k_row_stride = p.v_row_stride = static_cast<int64_t>(c.Hkv) * c.d;
    p.k_head_stride = p.v_head_stride = c.d;
    p.k_batch_stride = p.v_batch_stride = static_cast<int64_t>(c.Nkv) * c.Hkv * c.d;
    p.batch = c.B, p.num_heads_q = c.Hq, p.num_heads_kv = c.Hkv, p.seqlen_q = c.Nq, p.seqlen_kv = c.Nkv;
    p.head_dim = c.d, p.dtype = c.dtype, p.softmax_scale = 1.f / std::sqrt(static_cast<float>(c.d));
    p.is_causal = c.causal;
    const int rc = launch(&p, nullptr);
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(ho.data(), dout, nq * 2, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (uint16_t h : ho) bad += !std::isfinite(from_half_bits(h, c.dtype));
    std::printf("%s d=%d B=%d Hq=%d Hkv=%d Nq=%d Nkv=%d causal=%d: rc=%d non-finite outputs=%zu\n",
                c.dtype == CUIR_DTYPE_BF16 ? "bf16" : "fp16", c.d, c.B, c.Hq, c.Hkv, c.Nq, c.Nkv, c.causal, rc, bad);
    failures += rc != 0 || bad != 0;

    // Argument checks: each must be refused with its code, launching nothing.
    cuir_attention_params bad_d = p;
    bad_d.head_dim = 96;
    cuir_attention_params bad_heads = p;
    bad_heads.num_heads_kv = 3;
    cuir_attention_params bad_ptr = p;
    bad_ptr.q = nullptr;
    cuir_attention_params bad_stride = p;
    bad_stride.k_row_stride += 4;
    const int codes[] = {launch(&bad_d, nullptr), launch(&bad_heads, nullptr), launch(&bad_ptr, nullptr),
                         launch(&bad_stride, nullptr), launch(nullptr, nullptr)};
    const int expect[] = {cudaErrorNotSupported, cudaErrorInvalidValue, cudaErrorInvalidValue, cudaErrorInvalidValue,
                          cudaErrorInvalidValue};
    for (int i = 0; i < 5; ++i)
      if (codes[i] != expect[i]) {
        std::printf("  argument check %d: got %d, expected %d\n", i, codes[i], expect[i]);
        ++failures;
      }
    CHECK_CUDA(cudaFree(dq));
    CHECK_CUDA(cudaFree(dk));
    CHECK_CUDA(cudaFree(dv));
    CHECK_CUDA(cudaFree(dout));
    CHECK_CUDA(cudaFree(dlse));
  }
  std::printf("%d passed, %d failed\n", static_cast<int>(sizeof(cases) / sizeof(cases[0])) - failures, failures);
  return failures == 0 ? 0 : 1;
}
