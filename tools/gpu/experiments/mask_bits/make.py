#!/usr/bin/env python3
"""Experiment (the prototype of the product's partial_bits, docs/Lowering.md "The partial tiles' mask bits";
data in docs/benchmarks/block-sparse.md): would a runtime block mask's partial tiles run faster if the kernel
loaded the mask's bits, made once per block mask, instead of evaluating the mask per score? The short-block ablations
(../short_blocks) put the partial tiles' mask at 23-29% of document, prefix_document and dilated; moving it
earlier in the step did not help (../early_mask). Here the mask costs two 16-byte loads a thread a tile (issued
in the step's early score-hook phase) and a bit test and a select a score.

Hand-patches the staged sm_90 bench libraries (check_catalogue.py --stage DIR --kernels sm90 ENTRY ...):
  - the library's <entry>_block_mask also runs a kernel that evaluates the mask on every tile and writes its
    bits, row-major (bit c % 32 of word r * 4 + c / 32 of tile (row, kv tile) is pair (r, c)), into a buffer
    that a __device__ pointer names (an experiment's shortcut: the product would pass it in the lists);
  - the masking steps' score hook loads the two rows' words of this thread in its early phase and masks with
    them; the mask's own code is no longer called.
Only masks without a score_mod (the scores are the mask alone) and tiles of 128 x 128 are handled.

  make.py STAGE OUT entry ...   (here) copies STAGE to OUT, rebuilds OUT's bench libraries of the entries
  ab_catalogue.py --kernel sm90 orig=STAGE bits=OUT entry ...   (GPU) outputs compared, times interleaved"""
import importlib.util
import json
import pathlib
import re
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent

DEVICE_CODE = r"""
// ---- experiment: the mask's bits of every tile, made by the block mask (row-major, 4 words a row) ----
__device__ const uint32_t *g_cuir_mask_bits;

__device__ __forceinline__ void cuir_bits_load(uint4 &a, uint4 &b, int64_t list_row, int kv_blocks, int kv_tile,
                                               int row) {
  const uint32_t *tile = g_cuir_mask_bits + (list_row * kv_blocks + kv_tile) * 512;
  a = __ldg(reinterpret_cast<const uint4 *>(tile + row * 4));
  b = __ldg(reinterpret_cast<const uint4 *>(tile + (row + 8) * 4));
}

template <int N>
__device__ __forceinline__ void cuir_bits_scores(float (&scores)[N], const uint4 &a, const uint4 &b, int col) {
  static_assert(N == 64, "tiles of 128 keys");
  const uint32_t w[2][4] = {{a.x >> col, a.y >> col, a.z >> col, a.w >> col},
                            {b.x >> col, b.y >> col, b.z >> col, b.w >> col}};
  #pragma unroll
  for (int j = 0; j < N / 4; ++j)
  #pragma unroll
    for (int e = 0; e < 4; ++e)
      if (!((w[e / 2][j / 4] >> (8 * (j % 4) + e % 2)) & 1u)) scores[4 * j + e] = -INFINITY;
}

"""

HOST_CODE = r"""
// ---- experiment: the block mask also writes the bits of every tile ----
namespace {
__global__ void cuir_mask_bits_kernel(const __grid_constant__ cuir_attention_params params, uint32_t *bits,
                                      int heads, int q_blocks, int kv_blocks, bool per_batch, bool per_head) {
  const int kv_tile = blockIdx.x, m = blockIdx.y, bh = blockIdx.z;
  const int b = per_batch ? bh / heads : 0, h = per_head ? bh % heads : 0;
  const int r = threadIdx.x, q = m * 128 + r;
  uint32_t *out = bits + ((int64_t(bh) * q_blocks + m) * kv_blocks + kv_tile) * 512 + r * 4;
  for (int w = 0; w < 4; ++w) {
    uint32_t word = 0;
    for (int i = 0; i < 32; ++i) {
      const int kv = kv_tile * 128 + w * 32 + i;
      if (q < params.seqlen_q && kv < params.seqlen_kv && cuir_block_mask_visible(params, b, h, q, kv))
        word |= 1u << i;
    }
    out[w] = word;
  }
}
}  // namespace

extern "C" int cuir_flash_fwd_sm90_block_mask(const cuir_attention_params *params, cuir_block_mask *mask,
                                              void *stream) {
  if (const int err = cuir_lists_block_mask(params, mask, stream)) return err;
  static uint32_t *buffer = nullptr;
  static size_t capacity = 0;
  const size_t words = size_t(mask->batch) * mask->heads * mask->q_blocks * mask->kv_blocks * 512;
  if (words > capacity) {
    cudaFree(buffer);
    if (const cudaError_t err = cudaMalloc(&buffer, words * 4)) return err;
    capacity = words;
  }
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  cuir_mask_bits_kernel<<<dim3(mask->kv_blocks, mask->q_blocks, mask->batch * mask->heads), 128, 0, s>>>(
      *params, buffer, mask->heads, mask->q_blocks, mask->kv_blocks, PER_BATCH, PER_HEAD);
  return cudaMemcpyToSymbolAsync(cuir_sm90::g_cuir_mask_bits, &buffer, sizeof(buffer), 0, cudaMemcpyHostToDevice, s);
}
"""

HOOK_CALL = re.compile(r"      cuir_variant_scores<true>\(acc_s, params, block\.batch, block\.head_q, (?P<row>m_start \+ "
                       r"wg_row_in_block \+ [^,]+), (?P<col>\(n_block \* T::BLOCK_N\) \+ [^)]+\) [^;]+)\);\n")


def replace_once(s, old, new):
    assert s.count(old) == 1, f"anchor found {s.count(old)} times: {old[:80]!r}"
    return s.replace(old, new)


def patch(src):
    per_batch, per_head = re.search(r"BlockMaskDepends\{(true|false), (true|false)\}", src).groups()
    assert "const float s = scores[4 * j + e];" in src
    kernel = "template <Element ELEMENT, int HEAD_DIM, bool IS_CAUSAL>\n__global__"
    src = replace_once(src, kernel, DEVICE_CODE + kernel)
    hook = HOOK_CALL.search(src)
    assert hook, "the masking steps' score hook"
    row = "wg_row_in_block + (threadIdx.x / 32 % 4) * 16 + (threadIdx.x % 32) / 4"
    list_row = (f"cuir_kernels::ListedKvTiles::row_of(block.batch, block.head_q, m_start / T::BLOCK_M, {per_batch}, "
                f"{per_head}, params.num_heads_q, (params.seqlen_q + T::BLOCK_M - 1) / T::BLOCK_M)")
    new_hook = ("      cuir_bits_scores(acc_s, cuir_bits_a, cuir_bits_b, (threadIdx.x % 32) % 4 * 2);  // experiment\n")
    src = src[:hook.start()] + new_hook + src[hook.end():]
    src = replace_once(src, "      if (gather) return;  // the scores load nothing early\n",
                       f"      if (gather) {{  // experiment: this step's mask bits\n"
                       f"        cuir_bits_load(cuir_bits_a, cuir_bits_b, {list_row},\n"
                       f"                       (params.seqlen_kv + T::BLOCK_N - 1) / T::BLOCK_N, n_block, {row});\n"
                       f"        return;\n      }}\n")
    src = replace_once(src, "    auto masking_scores = [&](",
                       "    uint4 cuir_bits_a, cuir_bits_b;  // experiment\n    auto masking_scores = [&](")
    src = replace_once(src, 'extern "C" int cuir_flash_fwd_sm90_block_mask(const cuir_attention_params *params,',
                       "static int cuir_lists_block_mask(const cuir_attention_params *params,")
    return src + HOST_CODE.replace("PER_BATCH", per_batch).replace("PER_HEAD", per_head)


def main(stage, out, entries):
    spec = importlib.util.spec_from_file_location("prefetch_make", HERE.parent / "prefetch_gathers" / "make.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not out.exists():
        shutil.copytree(stage, out)
    info = json.loads((stage / "stage.json").read_text())
    for entry in entries:
        item = next(i for i in info["staged"] if i["entry"] == entry and i["kernel"] == "sm90" and i["shape"] == "bench")
        lib = out / item["library"]
        cu = lib.parent / f"{entry}.cu"
        patched = lib.parent / f"{entry}.bits.cu"
        patched.write_text(patch(cu.read_text()))
        mod.build(patched, cu.parent, lib)


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:])
