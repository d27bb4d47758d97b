#!/usr/bin/env python3
"""Experiment (not the product): would a persistent sm_90 forward kernel (FlashAttention-3's scheduler) lift the
block-sparse catalogue entries whose thread blocks are short (docs/benchmarks/catalogue.md: document 1.00x,
prefix_document 1.09x, dilated 1.14x; ncu: no eligible warp in 63% of cycles)? One thread block a multiprocessor
loops over the (query block, head, batch) tiles in the kernel's own heavy-first order (tile = blockIdx.x,
+gridDim.x, ...). Its producer issues the next tile's Q and K while the consumers finish the last P V and the
epilogue of the current one:
  - the K/V ring's stage and phase count visits across tiles, not within one;
  - Q gets a q_empty mbarrier (every consumer thread arrives once all of a tile's Q K^T have landed), and
    the epilogue stages O in its own shared buffer instead of Q's rows;
  - the ping-pong hand-offs are balanced per tile, as in the expert kernel, so they repeat unchanged.
Per-tile arithmetic is the expert kernel's, so outputs should be bitwise equal to the unpatched library's.

  make.py OUT [entry ...]  (CPU, here): for each entry (default: the slow ones and causal) and each of the
                           shapes below, trace, lower with cuir-opt (compile=false), hand-patch, and
                           build OUT/<entry>/<shape>/{orig,persistent}.so + .json as lib/Lower/Compile.cpp does
  ab.py OUT                (GPU): each persistent library against the float64 reference (gqa, multi) and the
                           unpatched one (bitwise, bench), then per-call times interleaved and FlexAttention's

The hand patch takes the lowered kernel function's variant statements (the KV-tile bounds and block list, the
score hooks, the consumer constants, the step loops) and puts them into the persistent loop; make.py refuses a lowering whose
kernel function has other patches (the diff would not be the experiment's alone)."""
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[3]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tools" / "gpu")]

ENTRIES = ("causal", "document", "document_causal", "prefix_document", "dilated", "global_window")
# check_catalogue.py's bench and gqa shapes (the gqa one fits in one wave: a tile a block), and one of about
# three tiles a block, ragged, GQA, d 128.
SHAPES = {"bench": (4, 16, 16, 4096, 4096, 128), "gqa": (2, 8, 2, 777, 1024, 64),
          "multi": (4, 8, 2, 1500, 1900, 128)}


def replace_once(s, old, new):
    assert s.count(old) == 1, f"anchor found {s.count(old)} times: {old[:80]!r}"
    return s.replace(old, new)


def between(s, start, end):
    """The text from `start` (included) to `end` (excluded), each found once."""
    assert s.count(start) == 1 and s.count(end) == 1, (start[:60], end[:60])
    i = s.index(start)
    return s[i:s.index(end, i)]


KERNEL_START = "template <Element ELEMENT, int HEAD_DIM, bool IS_CAUSAL>\n__global__"
KERNEL_END = "// ---------------------------------------------------------------------------------------------------\n" \
             "// Host side"
BOUNDS = ("  int n_block_min = 0;\n", "  if (n_block_max <= 0) {\n")
CONSTANTS = ("    ctx.consumer = consumer_index;\n", "    // ---- accumulators and softmax state")
HOOKS = ("    auto masking_scores = [&]", "    // =============================== masking steps")
STEPS = ("    // =============================== masking steps", "    // =============================== last P V")

PERSISTENT_HELPERS = r"""
// ---- experiment: persistent scheduling (tools/gpu/experiments/persistent) ----
// Tile t of the launch, in the expert kernel's order (block_index of a grid (query blocks, Hq, B)).
__device__ __forceinline__ bool persistent_listed(const cuir_kernels::ExpertQueryOrder &, BlockIndex &, int, int, int) {
  return false;
}
__device__ __forceinline__ bool persistent_listed(const cuir_kernels::ListedQueryOrder &o, BlockIndex &out, int tile,
                                                  int num_heads, int q_blocks) {
  const int head = tile % num_heads;
  const int rank = tile / num_heads % q_blocks;
  const int batch = tile / (num_heads * q_blocks);
  out = BlockIndex{o.q_order[cuir_kernels::block_mask_row(batch, head, rank, o.per_batch, o.per_head, num_heads,
                                                          q_blocks)],
                   head, batch};
  return true;
}
"""

PRODUCER = r"""
// ---- experiment: the producer of one tile, its visits numbered from visit_base across the block's tiles ----
template <class T, class KvTiles>
__device__ __forceinline__ void persistent_load_kv(const CUtensorMap *tensor_map, uint32_t tile_offset,
                                                   unsigned char *smem, uint64_t *full, uint64_t *empty, int visit,
                                                   int i, int n_block_max, int head_kv, int batch,
                                                   const KvTiles &kv_tiles) {
  const int stage = visit % T::STAGES;
  const uint32_t phase = (visit / T::STAGES) % 2;
  mbarrier_wait(&empty[stage], phase ^ 1);
  mbarrier_arrive_expect_tx(&full[stage], T::KV_TILE_BYTES);
  const int row = kv_tiles(n_block_max - 1 - i) * T::BLOCK_N;
#pragma unroll
  for (int slab = 0; slab < T::SLABS; ++slab)
    tma_load_4d(smem + tile_offset + stage * T::KV_TILE_BYTES + slab * T::KV_SLAB_BYTES, tensor_map, slab * 64, row,
                head_kv, batch, &full[stage]);
}

template <class T, class KvTiles>
__device__ __forceinline__ void persistent_producer(const CUtensorMap *tma_q, const CUtensorMap *tma_k,
                                                    const CUtensorMap *tma_v, unsigned char *smem,
                                                    Barriers<T::STAGES> *bars, const BlockIndex &block, int head_kv,
                                                    int n_block_max, int n_block_min, const KvTiles &kv_tiles,
                                                    int visit_base, int tiles_done) {
  mbarrier_wait(&bars->q_empty, (tiles_done % 2) ^ 1);  // the last tile's Q K^T have all landed
  mbarrier_arrive_expect_tx(&bars->q_full, T::Q_TILE_BYTES);
#pragma unroll
  for (int slab = 0; slab < T::SLABS; ++slab)
    tma_load_4d(smem + T::SQ_OFFSET + slab * T::Q_SLAB_BYTES, tma_q, slab * 64, block.m_block * T::BLOCK_M,
                block.head_q, block.batch, &bars->q_full);
  const int n_visits = n_block_max - n_block_min;
  for (int i = 0; i <= n_visits; ++i) {
    if (i < n_visits)
      persistent_load_kv<T>(tma_k, T::SK_OFFSET, smem, bars->k_full, bars->k_empty, visit_base + i, i, n_block_max,
                            head_kv, block.batch, kv_tiles);
    if (i >= 1)
      persistent_load_kv<T>(tma_v, T::SV_OFFSET, smem, bars->v_full, bars->v_empty, visit_base + i - 1, i - 1,
                            n_block_max, head_kv, block.batch, kv_tiles);
  }
}

"""

KERNEL = r"""template <Element ELEMENT, int HEAD_DIM, bool IS_CAUSAL>
__global__ void __launch_bounds__(FlashFwdTraits<ELEMENT, HEAD_DIM>::NUM_THREADS, 1)
    flash_fwd_sm90_kernel(const __grid_constant__ cuir_attention_params params, const __grid_constant__ CUtensorMap tma_q,
                          const __grid_constant__ CUtensorMap tma_k, const __grid_constant__ CUtensorMap tma_v) {
  using T = FlashFwdTraits<ELEMENT, HEAD_DIM>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char *smem = smem_raw + ((1024u - (smem_u32addr(smem_raw) & 1023u)) & 1023u);
  Barriers<T::STAGES> *bars = reinterpret_cast<Barriers<T::STAGES> *>(smem + T::BAR_OFFSET);
  const int num_tiles = (params.seqlen_q + T::BLOCK_M - 1) / T::BLOCK_M * params.num_heads_q * params.batch;

  if (threadIdx.x == 0) {
    mbarrier_init(&bars->q_full, 1);
    mbarrier_init(&bars->q_empty, T::NUM_CONSUMER_THREADS);
#pragma unroll
    for (int s = 0; s < T::STAGES; ++s) {
      mbarrier_init(&bars->k_full[s], 1);
      mbarrier_init(&bars->v_full[s], 1);
      mbarrier_init(&bars->k_empty[s], T::NUM_CONSUMER_THREADS);
      mbarrier_init(&bars->v_empty[s], T::NUM_CONSUMER_THREADS);
    }
    fence_barrier_init();
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    // =============================== producer warpgroup ===============================
    setmaxnreg_dec<T::PRODUCER_REGS>();
    if (threadIdx.x / 32 == 0 && elect_one_sync()) {
      int visits = 0, tiles_done = 0;
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
@TILE@
        if (n_block_max <= 0) continue;
        persistent_producer<T>(&tma_q, &tma_k, &tma_v, smem, bars, block, head_kv, n_block_max, n_block_min,
                               kv_tiles, visits, tiles_done);
        visits += n_block_max - n_block_min;
        ++tiles_done;
      }
    }
  } else {
    // =============================== consumer warpgroups ===============================
    setmaxnreg_inc<T::CONSUMER_REGS>();
    const int tid = static_cast<int>(threadIdx.x) - 128;
    const int consumer_index = tid / 128;
    const int warp = (tid % 128) / 32;
    const int lane = tid % 32;
    const int wg_row_in_block = consumer_index * T::WG_ROWS;
    const uint32_t smem_base = smem_u32addr(smem);
    int visits = 0, tiles_done = 0;
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
@TILE@
      if (n_block_max <= 0) {
        persistent_write_empty<T>(params, block, tid);
        continue;
      }
    ConsumerContext ctx;
    ctx.sq_rows = smem_base + T::SQ_OFFSET + wg_row_in_block * 128;
    ctx.sk = smem_base + T::SK_OFFSET;
    ctx.sv = smem_base + T::SV_OFFSET;
    ctx.visit_base = visits;
@CONSTANTS@
    float acc_o[T::O_REGS];
    float acc_s[T::S_REGS];
    uint32_t p_frag[T::P_REGS];
    float row_max[2] = {kNegInf, kNegInf};
    float row_sum[2] = {0.f, 0.f};
    float o_rescale[2];
  #pragma unroll
    for (int r = 0; r < T::O_REGS; ++r) acc_o[r] = 0.f;

    mbarrier_wait(&bars->q_full, tiles_done % 2);
    if (T::PINGPONG && consumer_index == 1) named_barrier_arrive(PINGPONG_BARRIER + 0, T::NUM_CONSUMER_THREADS);

@HOOKS@
@STEPS@
    mbarrier_arrive(&bars->q_empty);  // every Q K^T of the tile has landed: the producer may load the next Q

    const int last_visit = visits + n_block_max - 1 - n_block_min;
    pingpong_wait_turn<T>(consumer_index);
    issue_pv<T>(ctx, bars, last_visit, acc_o, p_frag, o_rescale);
    pingpong_pass_turn<T>(consumer_index, true);
    wgmma_wait_group<0>();
    fence_operands(acc_o);
    fence_operands(p_frag);
    mbarrier_arrive(&bars->v_empty[last_visit % T::STAGES]);

    consumer_epilogue<T>(params, smem, block, ctx, wg_row_in_block, warp, acc_o, row_max, row_sum);
    visits += n_block_max - n_block_min;
    ++tiles_done;
    }
  }
}

"""

TILE = """  const BlockIndex block = block_index(params, tile);
  const int seqlen_q = params.seqlen_q;
  const int seqlen_kv = params.seqlen_kv;
  const int causal_offset = seqlen_kv - seqlen_q;
  const int m_start = block.m_block * T::BLOCK_M;
  const int head_kv = block.head_q / (params.num_heads_q / params.num_heads_kv);
  (void)seqlen_q, (void)seqlen_kv, (void)causal_offset, (void)head_kv;
"""


def consumers_write_empty(src):
    """The kernel's write_empty_block as persistent_write_empty: written by the consumer threads (tid 0 ..
    255) alone, the producer warpgroup being in its own loop."""
    start = "template <class T>\n__device__ __forceinline__ void write_empty_block("
    text = between(src, start, "template <Element ELEMENT, int HEAD_DIM, bool IS_CAUSAL>\n__global__")
    text = text[:text.index("\n}\n") + 3] + "\n"
    for old, new in (("write_empty_block(", "persistent_write_empty("),
                     ("const BlockIndex &block)", "const BlockIndex &block, int tid)"),
                     ("threadIdx.x", "tid"), ("T::NUM_THREADS", "T::NUM_CONSUMER_THREADS")):
        assert old in text, old
        text = text.replace(old, new)
    return "// An empty tile, written by the consumer threads (tid 0 .. 255) alone.\n" + text


def cut(kernel, pieces):
    """The kernel function with each (start, end) piece removed, and the pieces."""
    texts = []
    for start, end in pieces:
        text = between(kernel, start, end)
        texts.append(text)
        kernel = kernel.replace(text, f"@{len(texts)}@\n", 1)
    return kernel, texts


def persistent(src, expert):
    """The lowered source `src` of the expert kernel `expert`, made persistent."""
    def kernel_of(s):
        return between(s, KERNEL_START, KERNEL_END)

    kernel = kernel_of(src)
    rest, (bounds, constants, hooks, steps) = cut(kernel, (BOUNDS, CONSTANTS, HOOKS, STEPS))
    expert_rest, _ = cut(kernel_of(expert), (BOUNDS, CONSTANTS, HOOKS, STEPS))
    assert rest == expert_rest, "the lowering patched the kernel function elsewhere: not this experiment's case"
    tile = TILE + bounds
    body = (KERNEL.replace("@TILE@", re.sub(r"(?m)^", "      ", tile).rstrip())
            .replace("@CONSTANTS@", constants.rstrip()).replace("@HOOKS@", hooks.rstrip()).replace("@STEPS@", steps.rstrip()))
    s = src.replace(kernel, PRODUCER + consumers_write_empty(src) + body)
    # Shared memory: a q_empty barrier and O's own staging buffer after the barriers.
    s = replace_once(s, "  static constexpr int SMEM_BYTES = BAR_OFFSET + 8 * (1 + 4 * STAGES) + 1024;",
                     "  static constexpr int SO_OFFSET = (BAR_OFFSET + 8 * (2 + 4 * STAGES) + 1023) / 1024 * 1024;\n"
                     "  static constexpr int SMEM_BYTES = SO_OFFSET + Q_TILE_BYTES + 1024;")
    s = replace_once(s, "  uint64_t v_empty[STAGES];   // ... the stage's V tile\n",
                     "  uint64_t v_empty[STAGES];   // ... the stage's V tile\n"
                     "  uint64_t q_empty;           // every consumer thread's Q K^T of the tile have landed\n")
    s = replace_once(s, "    return T::SQ_OFFSET + (chunk / 8) * T::Q_SLAB_BYTES",
                     "    return T::SO_OFFSET + (chunk / 8) * T::Q_SLAB_BYTES")
    s = replace_once(s, "      *reinterpret_cast<uint4 *>(o_head + (m_start + row) * params.o_row_stride + chunk * 8) = data;\n"
                        "  }\n}\n",
                     "      *reinterpret_cast<uint4 *>(o_head + (m_start + row) * params.o_row_stride + chunk * 8) = data;\n"
                     "  }\n  __syncwarp();  // the warp's next epilogue overwrites these rows\n}\n")
    # Visits numbered across the block's tiles.
    s = replace_once(s, "  int last_key_offset;\n", "  int last_key_offset;\n  int visit_base;       // visits of the block's earlier tiles\n")
    s = replace_once(s, "  const int i = n_block_max - 1 - n_block;\n  const int stage = i % T::STAGES;\n",
                     "  const int i = ctx.visit_base + n_block_max - 1 - n_block;\n  const int stage = i % T::STAGES;\n")
    # The tile order from a tile number.
    s = replace_once(s, "__device__ __forceinline__ BlockIndex block_index(const cuir_attention_params &params) {",
                     PERSISTENT_HELPERS +
                     "__device__ __forceinline__ BlockIndex block_index(const cuir_attention_params &params, int tile) {")
    s = replace_once(s, "  if (BlockIndex listed; query_order.block(listed, params.num_heads_q, static_cast<int>(gridDim.x))) return listed;\n"
                        "  const int group = params.num_heads_q / params.num_heads_kv;  // query heads per KV head\n"
                        "  const int num_m_blocks = static_cast<int>(gridDim.x);\n"
                        "  const int linear = static_cast<int>(blockIdx.y) * num_m_blocks + static_cast<int>(blockIdx.x);\n"
                        "  const int rest = linear / group;\n"
                        "  return BlockIndex{num_m_blocks - 1 - rest % num_m_blocks, (rest / num_m_blocks) * group + linear % group,\n"
                        "                    static_cast<int>(blockIdx.z)};\n",
                     "  const int num_m_blocks = (params.seqlen_q + 127) / 128;  // BLOCK_M\n"
                     "  if (BlockIndex listed; persistent_listed(query_order, listed, tile, params.num_heads_q, num_m_blocks)) return listed;\n"
                     "  const int group = params.num_heads_q / params.num_heads_kv;  // query heads per KV head\n"
                     "  const int linear = tile % (num_m_blocks * params.num_heads_q);\n"
                     "  const int rest = linear / group;\n"
                     "  return BlockIndex{num_m_blocks - 1 - rest % num_m_blocks, (rest / num_m_blocks) * group + linear % group,\n"
                     "                    tile / (num_m_blocks * params.num_heads_q)};\n")
    # One block a multiprocessor, at most one a tile.
    s = replace_once(s, "  const unsigned num_m_blocks = (p.seqlen_q + T::BLOCK_M - 1) / T::BLOCK_M;\n"
                        "  const dim3 grid(num_m_blocks, p.num_heads_q, p.batch);  // see block_index\n",
                     "  const long long num_tiles = static_cast<long long>((p.seqlen_q + T::BLOCK_M - 1) / T::BLOCK_M) *\n"
                     "                              p.num_heads_q * p.batch;\n"
                     "  static int sms = 0;\n"
                     "  if (sms == 0) {\n"
                     "    int device = 0;\n"
                     "    cudaGetDevice(&device);\n"
                     "    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);\n"
                     "  }\n"
                     "  const dim3 grid(static_cast<unsigned>(num_tiles < sms ? num_tiles : sms));\n")
    return s


def lower(entry, tag, where):
    """Traces `entry` at shape `tag` and lowers it onto the sm_90 forward kernel, not compiled: the .cu."""
    from cuir import catalogue
    from cuir.catalogue.check import trace_entry
    B, Hq, Hkv, Nq, Nkv, D = SHAPES[tag]
    text, _ = trace_entry(catalogue.get(entry), B, Hq, Nq, Nkv, defaults=False)
    where.mkdir(parents=True, exist_ok=True)
    (where / "variant.mlir").write_text(text)
    cu = where / "lowered" / f"{entry}.cu"
    subprocess.run([str(ROOT / "build" / "bin" / "cuir-opt"), str(ROOT / "kernels" / "sm90" / "flash_fwd.cu"),
                    "--lift", f"--transfer={where / 'variant.mlir'}", "--cuir-split-full-partial",
                    "--lower=archs=sm_90a compile=false", "-o", str(cu)], check=True, capture_output=True)
    return cu


def main(out, entries):
    sys.path.insert(0, str(HERE.parent / "prefetch_gathers"))
    from make import build  # lib/Lower/Compile.cpp's command lines
    expert = (ROOT / "kernels" / "sm90" / "flash_fwd.cu").read_text()
    for entry in entries:
        for tag in SHAPES:
            where = out / entry / tag
            cu = lower(entry, tag, where)
            src = cu.read_text()
            manifest = cu.with_suffix(".json").read_text()
            for name, text in (("orig", src), ("persistent", persistent(src, expert))):
                patched = where / f"{name}.cu"
                patched.write_text(text)
                build(patched, cu.parent, where / f"{name}.so")
                (where / f"{name}.json").write_text(manifest)


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), sys.argv[2:] or ENTRIES)
