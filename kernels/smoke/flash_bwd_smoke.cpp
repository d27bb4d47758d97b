// flash_bwd_smoke.cpp: host driver that runs libcuir_flash_bwd_<KERNEL>.so on random inputs for a handful of
// shapes that exercise every code path of a backward kernel (ragged tails at both ends, Nq != Nkv both ways, rows
// that see no key, Nq = 1, Nq = 0, Nkv = 0, GQA/MQA, both dtypes and head dims, causal and full, deterministic
// mode) plus the argument checks. O and LSE are random (finite LSE, -inf for the rows that see no key): it checks
// only return codes and that the gradients are finite, to be run under compute-sanitizer (memcheck, racecheck,
// synccheck, initcheck), where PyTorch would be slow. Numerical checks are in tools/gpu/check_bwd.py. Built once per
// kernel, with -DCUIR_SMOKE_KERNEL=sm80 or sm90 (kernels/CMakeLists.txt, cuir_add_smoke_driver).
//
// usage: flash_bwd_<KERNEL>_smoke [path/to/libcuir_flash_bwd_<KERNEL>.so]   (default: next to this executable)
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

#include "cuir/attention_bwd_params.h"

#ifndef CUIR_SMOKE_KERNEL
#error "build with -DCUIR_SMOKE_KERNEL=sm80 or sm90: the kernel library to drive"
#endif
#define CUIR_SMOKE_STR2(x) #x
#define CUIR_SMOKE_STR(x) CUIR_SMOKE_STR2(x)
#define CUIR_SMOKE_KERNEL_NAME CUIR_SMOKE_STR(CUIR_SMOKE_KERNEL)

using launch_fn = int (*)(const cuir_attention_bwd_params *, void *);
using workspace_fn = size_t (*)(const cuir_attention_bwd_params *);
using sizeof_fn = int (*)(void);

#define CHECK_CUDA(call)                                                                          \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

// Random 16-bit values: bf16 by truncation of an fp32 in [-2, 2); fp16 with a random mantissa and exponents of
// [-4, 1) (both finite and normal).
static uint16_t random_half_bits(std::mt19937 &rng, int dtype) {
  std::uniform_real_distribution<float> uniform(-2.f, 2.f);
  if (dtype == CUIR_DTYPE_BF16) {
    const float f = uniform(rng);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return static_cast<uint16_t>(u >> 16);
  }
  const uint32_t sign = rng() & 1u, exponent = 15 - 4 + rng() % 5, mantissa = rng() & 0x3ffu;
  return static_cast<uint16_t>(sign << 15 | exponent << 10 | mantissa);
}

static bool finite_half(uint16_t h, int dtype) {
  return dtype == CUIR_DTYPE_BF16 ? ((h >> 7) & 0xff) != 0xff : ((h >> 10) & 0x1f) != 0x1f;
}

struct Case {
  int dtype, d, B, Hq, Hkv, Nq, Nkv, causal, deterministic;
};

struct DeviceTensor {
  void *ptr = nullptr;
  size_t elems = 0;
  DeviceTensor(size_t n, std::mt19937 &rng, int dtype) : elems(n) {
    CHECK_CUDA(cudaMalloc(&ptr, n * 2 + 16));
    std::vector<uint16_t> host(n);
    for (auto &x : host) x = random_half_bits(rng, dtype);
    CHECK_CUDA(cudaMemcpy(ptr, host.data(), n * 2, cudaMemcpyHostToDevice));
  }
  ~DeviceTensor() { cudaFree(ptr); }
  size_t non_finite(int dtype) const {
    std::vector<uint16_t> host(elems);
    CHECK_CUDA(cudaMemcpy(host.data(), ptr, elems * 2, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (uint16_t h : host) bad += !finite_half(h, dtype);
    return bad;
  }
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
    lib_path = lib_path.substr(0, lib_path.rfind('/') + 1) + "libcuir_flash_bwd_" CUIR_SMOKE_KERNEL_NAME ".so";
  }
  void *handle = dlopen(lib_path.c_str(), RTLD_NOW);
  if (!handle) {
    std::fprintf(stderr, "dlopen %s: %s\n", lib_path.c_str(), dlerror());
    return 1;
  }
  auto launch = reinterpret_cast<launch_fn>(dlsym(handle, "cuir_flash_bwd_" CUIR_SMOKE_KERNEL_NAME));
  auto workspace_size =
      reinterpret_cast<workspace_fn>(dlsym(handle, "cuir_flash_bwd_" CUIR_SMOKE_KERNEL_NAME "_workspace_size"));
  auto params_sizeof = reinterpret_cast<sizeof_fn>(dlsym(handle, "cuir_attention_bwd_params_sizeof"));
  if (!launch || !workspace_size || !params_sizeof ||
      params_sizeof() != static_cast<int>(sizeof(cuir_attention_bwd_params))) {
    std::fprintf(stderr, "bad library %s\n", lib_path.c_str());
    return 1;
  }

  const Case cases[] = {
      {CUIR_DTYPE_BF16, 128, 1, 4, 2, 200, 333, 1, 0}, {CUIR_DTYPE_BF16, 128, 2, 2, 2, 333, 200, 1, 0},
      {CUIR_DTYPE_FP16, 128, 1, 4, 1, 257, 257, 0, 0}, {CUIR_DTYPE_BF16, 64, 1, 4, 2, 300, 129, 0, 0},
      {CUIR_DTYPE_FP16, 64, 2, 2, 1, 129, 300, 1, 0},  {CUIR_DTYPE_BF16, 128, 1, 2, 1, 1, 1000, 1, 0},
      {CUIR_DTYPE_BF16, 64, 1, 2, 2, 1, 1, 0, 0},      {CUIR_DTYPE_BF16, 128, 1, 2, 2, 130, 0, 0, 0},
      {CUIR_DTYPE_BF16, 128, 1, 2, 2, 0, 130, 1, 0},   {CUIR_DTYPE_BF16, 128, 1, 4, 2, 300, 400, 1, 1},
      {CUIR_DTYPE_FP16, 64, 1, 2, 1, 400, 300, 0, 1},
  };
  std::mt19937 rng(1234);
  int failures = 0;
  for (const Case &c : cases) {
    const size_t nq = static_cast<size_t>(c.B) * c.Nq * c.Hq * c.d;
    const size_t nkv = static_cast<size_t>(c.B) * c.Nkv * c.Hkv * c.d;
    DeviceTensor q(nq, rng, c.dtype), o(nq, rng, c.dtype), d_o(nq, rng, c.dtype), dq(nq, rng, c.dtype);
    DeviceTensor k(nkv, rng, c.dtype), v(nkv, rng, c.dtype), dk(nkv, rng, c.dtype), dv(nkv, rng, c.dtype);
    // LSE: log(Nkv) + 3 for a row that sees a key (the probabilities stay below 1), -inf for one that sees none.
    std::vector<float> lse(static_cast<size_t>(c.B) * c.Hq * c.Nq);
    for (size_t i = 0; i < lse.size(); ++i) {
      const int row = static_cast<int>(i % (c.Nq > 0 ? c.Nq : 1));
      const bool sees = c.Nkv > 0 && (!c.causal || row + c.Nkv - c.Nq >= 0);
      lse[i] = sees ? std::log(static_cast<float>(c.Nkv)) + 3.f : -INFINITY;
    }
    float *dlse;
    CHECK_CUDA(cudaMalloc(&dlse, lse.size() * sizeof(float) + 16));
    CHECK_CUDA(cudaMemcpy(dlse, lse.data(), lse.size() * sizeof(float), cudaMemcpyHostToDevice));

    cuir_attention_bwd_params p;
    std::memset(&p, 0, sizeof(p));
    p.q = q.ptr, p.k = k.ptr, p.v = v.ptr, p.o = o.ptr, p.d_o = d_o.ptr, p.lse = dlse;
    p.dq = dq.ptr, p.dk = dk.ptr, p.dv = dv.ptr;
    const int64_t q_row = static_cast<int64_t>(c.Hq) * c.d, kv_row = static_cast<int64_t>(c.Hkv) * c.d;
    p.q_row_stride = p.o_row_stride = p.do_row_stride = p.dq_row_stride = q_row;
    p.q_head_stride = p.o_head_stride = p.do_head_stride = p.dq_head_stride = c.d;
    p.q_batch_stride = p.o_batch_stride = p.do_batch_stride = p.dq_batch_stride = q_row * c.Nq;
    p.k_row_stride = p.v_row_stride = p.dk_row_stride = p.dv_row_stride = kv_row;
    p.k_head_stride = p.v_head_stride = p.dk_head_stride = p.dv_head_stride = c.d;
    p.k_batch_stride = p.v_batch_stride = p.dk_batch_stride = p.dv_batch_stride = kv_row * c.Nkv;
    p.batch = c.B, p.num_heads_q = c.Hq, p.num_heads_kv = c.Hkv, p.seqlen_q = c.Nq, p.seqlen_kv = c.Nkv;
    p.head_dim = c.d, p.dtype = c.dtype, p.softmax_scale = 1.f / std::sqrt(static_cast<float>(c.d));
    p.is_causal = c.causal, p.deterministic = c.deterministic;
    void *workspace;
    const size_t ws_bytes = workspace_size(&p);
    CHECK_CUDA(cudaMalloc(&workspace, ws_bytes > 0 ? ws_bytes : 256));
    p.workspace = workspace;
    const int rc = launch(&p, nullptr);
    CHECK_CUDA(cudaDeviceSynchronize());
    const size_t bad = dq.non_finite(c.dtype) + dk.non_finite(c.dtype) + dv.non_finite(c.dtype);
    std::printf("%s d=%d B=%d Hq=%d Hkv=%d Nq=%d Nkv=%d causal=%d deterministic=%d: rc=%d non-finite gradients=%zu\n",
                c.dtype == CUIR_DTYPE_BF16 ? "bf16" : "fp16", c.d, c.B, c.Hq, c.Hkv, c.Nq, c.Nkv, c.causal,
                c.deterministic, rc, bad);
    failures += rc != 0 || bad != 0;

    // Argument checks: each must be refused with its code, launching nothing.
    cuir_attention_bwd_params bad_d = p, bad_heads = p, bad_ptr = p, bad_stride = p, bad_ws = p;
    bad_d.head_dim = 96;
    bad_heads.num_heads_kv = 3;
    bad_ptr.dv = nullptr, bad_ptr.seqlen_kv = bad_ptr.seqlen_kv > 0 ? bad_ptr.seqlen_kv : 1;
    bad_stride.dk_row_stride += 4;
    bad_ws.workspace = static_cast<char *>(workspace) + 16;
    const int codes[] = {launch(&bad_d, nullptr),      launch(&bad_heads, nullptr), launch(&bad_ptr, nullptr),
                         launch(&bad_stride, nullptr), launch(&bad_ws, nullptr),    launch(nullptr, nullptr)};
    const int expect[] = {cudaErrorNotSupported, cudaErrorInvalidValue, cudaErrorInvalidValue,
                          cudaErrorInvalidValue, cudaErrorInvalidValue, cudaErrorInvalidValue};
    for (int i = 0; i < 6; ++i)
      if (codes[i] != expect[i]) {
        std::printf("  argument check %d: got %d, expected %d\n", i, codes[i], expect[i]);
        ++failures;
      }
    CHECK_CUDA(cudaFree(workspace));
    CHECK_CUDA(cudaFree(dlse));
  }
  std::printf("%d passed, %d failed\n", static_cast<int>(sizeof(cases) / sizeof(cases[0])) - failures, failures);
  return failures == 0 ? 0 : 1;
}
