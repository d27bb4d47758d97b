#!/usr/bin/env python3
"""Experiment (not the product): would the sm_90 kernel's captured-tensor gathers gain from being issued while
S = Q K^T is still on the tensor cores, and from a grid order that runs the batches of one (head, query block)
together? Hand-patches the staged bench libraries of random_mask and bias_tensor (check_catalogue.py --stage
DIR --kernels sm90 random_mask bias_tensor) and builds them as the lowering does (clang, ptxas, fatbinary).

  make.py DIR OUT   (CPU, here): OUT/<name>.so + .json for each variant below
  ab.py OUT DIR     (GPU): outputs against the unpatched library, times interleaved, FlexAttention's

Variants: orig (as lowered), pre (gathers after the GEMMs are issued, before their wait), early (at the top of
the step), *_b (batch fastest in the grid order). Shape constants are the bench shape's (N = 4096, H = 16)."""
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[3]

WAIT = """  pingpong_pass_turn<T>(ctx.consumer, false);

  wgmma_wait_group<FIRST ? 0 : 1>();"""
TOP = """  pingpong_wait_turn<T>(ctx.consumer);
  mbarrier_wait(&bars->k_full[stage], (i / T::STAGES) % 2);
  gemm_qk"""
GATHER = "  score_hook(kv_tiles(n_block), true);  // gather what the scores read\n"

ORDER = """  const int linear = static_cast<int>(blockIdx.y) * num_m_blocks + static_cast<int>(blockIdx.x);
  const int rest = linear / group;
  return BlockIndex{num_m_blocks - 1 - rest % num_m_blocks, (rest / num_m_blocks) * group + linear % group,
                    static_cast<int>(blockIdx.z)};"""
BATCH_FASTEST = """  const int batches = static_cast<int>(gridDim.z);
  const int all = (static_cast<int>(blockIdx.z) * static_cast<int>(gridDim.y) + static_cast<int>(blockIdx.y)) *
                      num_m_blocks + static_cast<int>(blockIdx.x);
  const int linear = all / batches;
  const int rest = linear / group;
  return BlockIndex{num_m_blocks - 1 - rest % num_m_blocks, (rest / num_m_blocks) * group + linear % group,
                    all % batches};"""

# The gathered values: a thread's two adjacent keys are one 2- (bool) or 4-byte (f16 pair) load.
GATHERS = {
    "random_mask": dict(word="uint16_t", tensor="keep", index="q_idx * 4096 + kv_idx", mask="true",
                        apply="const bool v = (pre.w[2 * j + e / 2] >> (8 * (e % 2))) & 0xff;\n"
                              "      scores[4 * j + e] = v ? scores[4 * j + e] : -INFINITY;"),
    "bias_tensor": dict(word="uint32_t", tensor="attn_bias", index="h * 16777216 + q_idx * 4096 + kv_idx",
                        mask="false",
                        apply="scores[4 * j + e] = scores[4 * j + e] * params.softmax_scale + "
                              "cuir_f16_bits_to_float(uint16_t(pre.w[2 * j + e / 2] >> (16 * (e % 2))));"),
}


def helpers(g):
    return f"""
template <int N>
struct cuir_gathered {{ {g['word']} w[N / 2]; bool valid; }};
template <int N>
__device__ __forceinline__ void cuir_variant_gather(cuir_gathered<N> &pre, const cuir_attention_params &params,
                                                    int b, int h, int row0, int col0) {{
  pre.valid = row0 + 8 <= params.seqlen_q - 1 && col0 + (N / 4 - 1) * 8 + 1 <= params.seqlen_kv - 1 &&
              cuir_pairs_aligned(params.{g['tensor']});
  if (!pre.valid) return;
  const {g['word']} *p = reinterpret_cast<const {g['word']} *>(params.{g['tensor']});
  #pragma unroll
  for (int j = 0; j < N / 4; ++j)
  #pragma unroll
    for (int e = 0; e < 4; e += 2) {{
      const int q_idx = row0 + (e / 2) * 8, kv_idx = col0 + j * 8;
      pre.w[2 * j + e / 2] = p[({g['index']}) / 2];
    }}
}}
template <int N>
__device__ __forceinline__ void cuir_variant_scores_gathered(float (&scores)[N], const cuir_gathered<N> &pre,
                                                             const cuir_attention_params &params) {{
  #pragma unroll
  for (int j = 0; j < N / 4; ++j)
  #pragma unroll
    for (int e = 0; e < 4; ++e) {{
      {g['apply']}
    }}
}}
"""


def hooks(mask):
    return f"""    cuir_gathered<T::S_REGS> cuir_pre;
    auto masking_scores = [&](int n_block, bool gather) __attribute__((always_inline)) {{
      const int row0 = m_start + wg_row_in_block + (threadIdx.x / 32 % 4) * 16 + (threadIdx.x % 32) / 4;
      const int col0 = (n_block * T::BLOCK_N) + (threadIdx.x % 32) % 4 * 2;
      if (gather) {{ cuir_variant_gather(cuir_pre, params, block.batch, block.head_q, row0, col0); return; }}
      if (cuir_pre.valid) cuir_variant_scores_gathered(acc_s, cuir_pre, params);
      else cuir_variant_scores<{mask}>(acc_s, params, block.batch, block.head_q, row0, col0);
    }};
    auto unmasked_scores = masking_scores;

"""


def patch(src, entry, where, batch_fastest):
    s = src
    if where:
        anchor = WAIT if where == "pre" else TOP
        assert s.count(anchor) == 1
        s = s.replace(anchor, anchor.replace("\n\n", "\n" + GATHER + "\n") if where == "pre" else GATHER + anchor)
        s = s.replace("  score_hook(kv_tile);\n", "  score_hook(kv_tile, false);\n")
        at = s.index("template <Element ELEMENT, int HEAD_DIM, bool IS_CAUSAL>\n__global__")
        s = s[:at] + helpers(GATHERS[entry]) + "\n" + s[at:]
        start = s.index("    auto masking_scores = [&](int n_block)")
        end = s.index("    // =============================== masking steps")
        s = s[:start] + hooks(GATHERS[entry]["mask"]) + s[end:]
    if batch_fastest:
        assert s.count(ORDER) == 1
        s = s.replace(ORDER, BATCH_FASTEST)
    return s


def build(cu, include, out, kernel="sm90"):
    """lib/Lower/Compile.cpp's command lines (cuir-opt compiles from the IR, not from a patched .cu), for the
    sm_90 kernel, or the sm_80 one (`kernel="sm80"`) as the H200 runs it (sm_90)."""
    cuda = "/usr/local/cuda"
    arch = "sm_90a" if kernel == "sm90" else "sm_90"
    flags = ["-x", "cuda", f"--cuda-path={cuda}", "-Wno-unknown-cuda-version", f"-I{include}",
             f"-I{cuda}/include/cccl", f"-I{ROOT}/kernels/{kernel}", f"-I{ROOT}/kernels/include", "-O3", "-std=c++17"]
    ptx, cubin, fat = out.with_suffix(".ptx"), out.with_suffix(".cubin"), out.with_suffix(".fatbin")
    subprocess.run(["clang++-22", *flags, f"--cuda-gpu-arch={arch}", "--cuda-device-only", "-S", cu, "-o", ptx],
                   check=True)
    log = subprocess.run([f"{cuda}/bin/ptxas", f"-arch={arch}", "-O3", "-v", ptx, "-o", cubin], check=True,
                         capture_output=True, text=True).stderr
    spills = sorted({l.strip() for l in log.splitlines() if "spill" in l})
    subprocess.run([f"{cuda}/bin/fatbinary", "-64", "--create", fat, f"--image3=kind=elf,sm=90,file={cubin}",
                    f"--image3=kind=ptx,sm=90,file={ptx}"], check=True)
    subprocess.run(["clang++-22", *flags, "--cuda-host-only", "-Xclang", "-fcuda-include-gpubinary", "-Xclang",
                    fat, "-fPIC", "-shared", "-fvisibility=hidden", cu, "-o", out, f"-L{cuda}/lib64",
                    "-lcudart_static", "-ldl", "-lpthread", "-lrt"], check=True)
    for f in (cubin, fat):
        f.unlink()
    print(out.name, "|", "; ".join(spills))


def rebuild_staged(stage, out, kernel, entries, patch):
    """OUT gets STAGE's stage.json and the named entries, each one's bench library rebuilt from its .cu as
    patch(source) returns it: the experiments' common step (ab_catalogue.py then times OUT against STAGE)."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(stage / "stage.json", out / "stage.json")
    for entry in entries:
        shutil.copytree(stage / kernel / entry, out / kernel / entry, dirs_exist_ok=True)
        d = out / kernel / entry / "bench"
        cu = d / f"{entry}.cu"
        cu.write_text(patch((stage / kernel / entry / "bench" / f"{entry}.cu").read_text()))
        build(cu, d, d / f"lib{entry}.so", kernel=kernel)


def main(stage, out):
    out.mkdir(parents=True, exist_ok=True)
    for entry, short in (("random_mask", "rm"), ("bias_tensor", "bias")):
        d = stage / "sm90" / entry / "bench"
        src = (d / f"{entry}.cu").read_text()
        for name, where, fastest in (("orig", None, False), ("pre", "pre", False), ("early", "early", False),
                                     ("orig_b", None, True), ("pre_b", "pre", True)):
            cu = out / f"{short}_{name}.cu"
            cu.write_text(patch(src, entry, where, fastest))
            build(cu, d, out / f"{short}_{name}.so")
            (out / f"{short}_{name}.json").write_text((d / f"{entry}.json").read_text())


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))
