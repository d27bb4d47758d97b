#!/usr/bin/env python3
"""Experiment (not the product): is the sm_90 kernel's gather of a per-score f16 tensor limited by the number of
its loads? As lowered, a thread loads one 4-byte word per pair of its keys (32 loads a step), each warp load
touching 8 rows x 16 bytes. Two alternatives, hand-patched into the staged bench library of bias_tensor
(check_catalogue.py --stage DIR --kernels sm90 bias_tensor) and built as the lowering builds it:

  quad:  the 4 threads of a quad (one row) load 16-byte chunks (8 loads a step, each warp load 8 rows x 64
         bytes) and transpose them among themselves (two butterfly stages of __shfl_xor_sync), so each thread
         ends with the same words as before;
  stage: each warp copies its 16 rows x 128 keys of the tensor into its own shared-memory buffer with
         cp.async (16 bytes a copy, 2 full rows a warp instruction) at the step's start, and the scores read
         them back with ldmatrix.x4 (its fragment is the accumulator's: 8 ldmatrix a step).

  make.py DIR OUT   (CPU, here): OUT/bias_{orig,quad,stage}.so + .json
  ab.py OUT         (GPU): outputs against bias_orig's (bitwise), per-call and back-to-back times
                    interleaved, FlexAttention's
Shape constants are the bench shape's (N = 4096, H = 16). Written against the lowering of 44346da (register
gathers); since 3d51988 the lowering stages such a gather itself, and make.py refuses a stage made by it
(the loop it replaces is gone)."""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "prefetch_gathers"))
from make import build  # noqa: E402  (lib/Lower/Compile.cpp's command lines)

LOOP = """  const auto *cuir_pairs_0 = cuir_assume_pairs_aligned(params.attn_bias);
  #pragma unroll
  for (int j = 0; j < N / 4; ++j)
  #pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (e % 2 != 0) continue;  // a pair, at its first key
      const int q_off = (e / 2) * 8, q_idx = row0 + q_off;
      const int kv_off = j * 8 + (e % 2), kv_idx = col0 + kv_off;
      cuir_load_pair(g.w0[2 * j + e / 2], (cuir_pairs_0 + h * 16777216 + q_idx * 4096 + kv_idx));
    }
}
"""
VALID = "  g.valid = row0 + 8 <= v1 && col0 + (N / 4 - 1) * 8 + 1 <= v2 && cuir_pairs_aligned(params.attn_bias) && col0 % 2 == 0;\n"
WIDE_VALID = ("  g.valid = __all_sync(0xffffffffu, row0 + 8 <= v1 && col0 + (N / 4 - 1) * 8 + 1 <= v2 &&\n"
              "                       reinterpret_cast<uintptr_t>(params.attn_bias) % 16 == 0 && col0 % 8 == 2 * (threadIdx.x % 4));\n")

QUAD = """  const int c = threadIdx.x % 4;  // this thread's pair in each 8 keys; the quad shares a row
  const bool c1 = (c & 2) != 0, c0 = (c & 1) != 0;
  #pragma unroll
  for (int half = 0; half < 2; ++half) {
    const uint16_t *row = params.attn_bias + h * 16777216 + (row0 + half * 8) * 4096 + (col0 - 2 * c);
    #pragma unroll
    for (int k = 0; k < N / 16; ++k) {
      // the 16 bytes of keys 8 (4k + c) ...: word i is pair i of those 8 keys
      const uint4 v = *reinterpret_cast<const uint4 *>(row + 8 * (4 * k + c));
      uint32_t a[4] = {v.x, v.y, v.z, v.w}, t[4];
      // transpose the quad's 4 x 4 words: then word i is pair c of keys 8 (4k + i) ...
      #pragma unroll
      for (int s = 0; s < 2; ++s) {
        const uint32_t r = __shfl_xor_sync(0xffffffffu, c1 ? a[s] : a[2 | s], 2);
        t[s] = c1 ? r : a[s];
        t[2 | s] = c1 ? a[2 | s] : r;
      }
      #pragma unroll
      for (int s = 0; s < 2; ++s) {
        const uint32_t r = __shfl_xor_sync(0xffffffffu, c0 ? t[2 * s] : t[2 * s + 1], 1);
        a[2 * s] = c0 ? r : t[2 * s];
        a[2 * s + 1] = c0 ? t[2 * s + 1] : r;
      }
      #pragma unroll
      for (int i = 0; i < 4; ++i) g.w0[2 * (4 * k + i) + half] = a[i];
    }
  }
}
"""

STAGE = """  // the warp's rows [row0 - lane/4, +16) and keys [col0 - 2 (lane%4), +2N), 16-byte chunks swizzled by row
  __syncwarp();  // the last step's ldmatrix reads are done
  const int lane = threadIdx.x % 32;
  const uint16_t *base = params.attn_bias + h * 16777216 + (row0 - lane / 4) * 4096 + (col0 - 2 * (lane % 4));
  const uint32_t buf = static_cast<uint32_t>(__cvta_generic_to_shared(cuir_stage_buffer<N>()));
  #pragma unroll
  for (int i = 0; i < N / 8; ++i) {
    const int row = 2 * i + lane / 16, chunk = lane % 16;
    const uint32_t dst = buf + row * (4 * N) + ((chunk ^ (row % 8)) << 4);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\\n" ::"r"(dst), "l"(base + row * 4096 + 8 * chunk) : "memory");
  }
  asm volatile("cp.async.commit_group;\\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cuir_variant_unstage(cuir_variant_gathered<N> &g) {
  if (!g.valid)
    return;
  asm volatile("cp.async.wait_group 0;\\n" ::: "memory");
  __syncwarp();
  const int lane = threadIdx.x % 32;
  const uint32_t buf = static_cast<uint32_t>(__cvta_generic_to_shared(cuir_stage_buffer<N>()));
  const int row = lane % 8 + 8 * ((lane / 8) % 2);
  #pragma unroll
  for (int jj = 0; jj < N / 8; ++jj) {
    const int chunk = 2 * jj + lane / 16;
    const uint32_t src = buf + row * (4 * N) + ((chunk ^ (row % 8)) << 4);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\\n"
                 : "=r"(g.w0[4 * jj]), "=r"(g.w0[4 * jj + 1]), "=r"(g.w0[4 * jj + 2]), "=r"(g.w0[4 * jj + 3])
                 : "r"(src));
  }
}
"""
STAGE_BUFFER = """template <int N>
__device__ __forceinline__ unsigned char *cuir_stage_buffer() {
  // a buffer of 16 rows x 2N keys (16-bit) for each warp of the block (384 threads)
  __shared__ __align__(128) unsigned char buffer[12][16 * 4 * N];
  return buffer[threadIdx.x / 32];
}
"""


def patch(src, how):
    assert src.count(LOOP) == 1 and src.count(VALID) == 1
    if how == "orig":
        return src
    s = src.replace(VALID, WIDE_VALID)
    if how == "quad":
        return s.replace(LOOP, QUAD)
    s = s.replace(LOOP, STAGE)
    at = s.index("template <int N>\nstruct cuir_variant_gathered")
    s = s[:at] + STAGE_BUFFER + s[at:]
    for i in (0, 1):  # the hooks: the words come back from shared memory before the scores read them
        call = f"cuir_variant_scores<false>(acc_s, cuir_gathered_{i},"
        assert s.count(call) == 1
        s = s.replace(call, f"cuir_variant_unstage(cuir_gathered_{i});\n      " + call)
    return s


def main(stage, out):
    out.mkdir(parents=True, exist_ok=True)
    d = stage / "sm90" / "bias_tensor" / "bench"
    src = (d / "bias_tensor.cu").read_text()
    for how in ("orig", "quad", "stage"):
        cu = out / f"bias_{how}.cu"
        cu.write_text(patch(src, how))
        build(cu, d, out / f"bias_{how}.so")
        (out / f"bias_{how}.json").write_text((d / "bias_tensor.json").read_text())


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))
