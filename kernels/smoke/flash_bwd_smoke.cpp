// flash_bwd_smoke.cpp: host driver that runs libcuir_flash_bwd_<KERNEL>.so on random inputs for a handful of
// shapes that exercise every code path (ragged tails at both ends, Nq != Nkv both ways, rows that see no key,
// GQA, both dtypes and head dims, causal and full, the deterministic mode, Nq = 0, Nkv = 0). It checks only
// return codes and that the gradients are finite: it exists to be run under compute-sanitizer (memcheck,
// racecheck, synccheck), where PyTorch would be slow. Numerical checks are in tools/gpu/check_bwd.py. Built once
// per kernel, with -DCUIR_SMOKE_KERNEL=sm80 or sm90 (kernels/CMakeLists.txt, cuir_add_smoke_driver).
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

// Small normal values as 16-bit patterns: bf16 by truncation, fp16 through the exponent (no subnormals).
static uint16_t to_half_bits(float f, int dtype) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (dtype == CUIR_DTYPE_BF16) return static_cast<uint16_t>(u >> 16);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const int exp = static_cast<int>((u >> 23) & 0xff) - 127 + 15;
  if (exp <= 0) return static_cast<uint16_t>(sign);
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) | ((u & 0x7fffffu) >> 13));
}
static bool finite_bits(uint16_t h, int dtype) {
  return dtype == CUIR_DTYPE_BF16 ? ((h >> 7) & 0xff) != 0xff : ((h >> 10) & 0x1f) != 0x1f;
}

struct Case {
  int dtype, d, B, Hq, Hkv, Nq, Nkv, causal, deterministic;
};

// A device buffer of n 16-bit elements: random normal values, or the NaN poison.
static void *device_tensor(size_t n, int dtype, std::mt19937 &rng, bool poison) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<uint16_t> h(n);
  for (auto &x : h) x = poison ? 0xffff : to_half_bits(normal(rng), dtype);
  void *d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, n * 2 + 16));
  CHECK_CUDA(cudaMemcpy(d, h.data(), n * 2, cudaMemcpyHostToDevice));
  return d;
}

static int run_case(const Case &c, launch_fn launch, workspace_fn workspace_size, std::mt19937 &rng) {
  const size_t nq = static_cast<size_t>(c.B) * c.Nq * c.Hq * c.d, nkv = static_cast<size_t>(c.B) * c.Nkv * c.Hkv * c.d;
  void *q = device_tensor(nq, c.dtype, rng, false), *o = device_tensor(nq, c.dtype, rng, false);
  void *d_o = device_tensor(nq, c.dtype, rng, false), *dq = device_tensor(nq, c.dtype, rng, true);
  void *k = device_tensor(nkv, c.dtype, rng, false), *v = device_tensor(nkv, c.dtype, rng, false);
  void *dk = device_tensor(nkv, c.dtype, rng, true), *dv = device_tensor(nkv, c.dtype, rng, true);
  // LSE: about the log of the visible keys (keeps P below 1), -inf for a row that sees none.
  std::vector<float> lse(static_cast<size_t>(c.B) * c.Hq * c.Nq);
  for (size_t r = 0; r < lse.size(); ++r) {
    const int i = static_cast<int>(r % c.Nq);
    const int seen = c.causal ? std::min(c.Nkv, std::max(0, i + 1 + c.Nkv - c.Nq)) : c.Nkv;
    lse[r] = seen == 0 ? -INFINITY : std::log(static_cast<float>(seen)) + 1.f;
  }
  float *dlse = nullptr;
  CHECK_CUDA(cudaMalloc(&dlse, lse.size() * 4 + 16));
  CHECK_CUDA(cudaMemcpy(dlse, lse.data(), lse.size() * 4, cudaMemcpyHostToDevice));

  cuir_attention_bwd_params p;
  std::memset(&p, 0, sizeof(p));
  p.q = q, p.k = k, p.v = v, p.o = o, p.d_o = d_o, p.lse = dlse, p.dq = dq, p.dk = dk, p.dv = dv;
  p.q_row_stride = p.o_row_stride = p.do_row_stride = p.dq_row_stride = static_cast<int64_t>(c.Hq) * c.d;
  p.q_head_stride = p.o_head_stride = p.do_head_stride = p.dq_head_stride = c.d;
  p.q_batch_stride = p.o_batch_stride = p.do_batch_stride = p.dq_batch_stride = static_cast<int64_t>(c.Nq) * c.Hq * c.d;
  p.k_row_stride = p.v_row_stride = p.dk_row_stride = p.dv_row_stride = static_cast<int64_t>(c.Hkv) * c.d;
  p.k_head_stride = p.v_head_stride = p.dk_head_stride = p.dv_head_stride = c.d;
  p.k_batch_stride = p.v_batch_stride = p.dk_batch_stride = p.dv_batch_stride =
      static_cast<int64_t>(c.Nkv) * c.Hkv * c.d;
  p.batch = c.B, p.num_heads_q = c.Hq, p.num_heads_kv = c.Hkv, p.seqlen_q = c.Nq, p.seqlen_kv = c.Nkv;
  p.head_dim = c.d, p.dtype = c.dtype, p.softmax_scale = 1.f / std::sqrt(static_cast<float>(c.d));
  p.is_causal = c.causal, p.deterministic = c.deterministic;
  CHECK_CUDA(cudaMalloc(&p.workspace, workspace_size(&p) + 256));
  const int rc = launch(&p, nullptr);
  CHECK_CUDA(cudaDeviceSynchronize());
  size_t bad = 0;
  for (auto [ptr, n] : {std::pair<void *, size_t>{dq, nq}, {dk, nkv}, {dv, nkv}}) {
    std::vector<uint16_t> h(n);
    CHECK_CUDA(cudaMemcpy(h.data(), ptr, n * 2, cudaMemcpyDeviceToHost));
    for (uint16_t x : h) bad += !finite_bits(x, c.dtype);
  }
  std::printf("%s d=%d B=%d Hq=%d Hkv=%d Nq=%d Nkv=%d causal=%d det=%d: rc=%d non-finite gradients=%zu\n",
              c.dtype == CUIR_DTYPE_BF16 ? "bf16" : "fp16", c.d, c.B, c.Hq, c.Hkv, c.Nq, c.Nkv, c.causal,
              c.deterministic, rc, bad);
  for (void *ptr : {q, k, v, o, d_o, dq, dk, dv, static_cast<void *>(dlse), p.workspace}) CHECK_CUDA(cudaFree(ptr));
  return rc != 0 || bad != 0;
}

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
      {CUIR_DTYPE_BF16, 128, 1, 4, 2, 300, 400, 1, 1}, {CUIR_DTYPE_FP16, 64, 1, 4, 2, 300, 400, 0, 1},
      {CUIR_DTYPE_BF16, 128, 1, 2, 2, 130, 0, 0, 0},   {CUIR_DTYPE_BF16, 64, 1, 2, 2, 0, 130, 1, 0},
  };
  std::mt19937 rng(1234);
  int failures = 0;
  for (const Case &c : cases) failures += run_case(c, launch, workspace_size, rng);
  std::printf("%d passed, %d failed\n", static_cast<int>(sizeof(cases) / sizeof(cases[0])) - failures, failures);
  return failures == 0 ? 0 : 1;
}
