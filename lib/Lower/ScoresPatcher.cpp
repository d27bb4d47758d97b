//===- ScoresPatcher.cpp - The variant's scores and mask ------------------===//
//
// A cuir.elementwise that applies the variant's scores to a score tile
// becomes a call, after the statement that completes the tile, of a helper
// that walks the accumulator fragment with the layout's exact element
// coordinates and rewrites each score in place. The helper's body is the
// elementwise region, printed by printScoreBody. The ops that compute the
// call's arguments (the first key of the block, the natural scale) are
// written into the call as expressions.
//
// In a backward pass, the derivative d score_mod / d score and the partials
// of trained parameters that read the score are computed where dS is
// formed, from the raw scores S (BackwardTransfer): before the scores call,
// cuir_keep_scores keeps each thread's raw scores (KeptScores.h), and after
// dS one helper computes each element's derivative from its kept score and
// multiplies dS by it (an exact zero, a hidden score's, stays zero), with no
// tile of derivatives in registers; the parameter gradients read the kept
// scores too (ParamGradPatcher).
//
// Two score sites at one statement are two instantiations of a function
// template (a backward kernel's masked and unmasked steps): where one site
// masks and the other does not, the call's MASK is the template's bool
// parameter that the kernel passes as true to the masking instantiation.
//
//===----------------------------------------------------------------------===//

#include "FragmentWalk.h"
#include "KeptScores.h"
#include "Patcher.h"
#include "ScoreHelper.h"
#include "SharedBudget.h"

#include "cuir/Lower/CppEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// Whether `ew` is a backward's d score_mod / d score over the raw scores.
bool isScoreDerivative(ElementwiseOp ew) {
  return CuIRDialect::ScoreDerivativeAttrHelper(ew->getContext())
      .isAttrPresent(ew);
}

class ScoresPatcher : public Patcher {
public:
  Rewrite getRewrite() const override { return Rewrite::Scores; }

  LogicalResult patch(ArrayRef<Difference> differences,
                      PatchContext &ctx) override {
    for (const Difference &d : differences)
      if (d.kind == Difference::Kind::Inserted)
        if (auto ew = dyn_cast<ElementwiseOp>(d.target);
            ew && !isScoreDerivative(ew))
          if (failed(lowerScores(ew, ctx)))
            return failure();
    if (failed(writeCalls(ctx)))
      return failure();
    for (const Difference &d : differences)
      if (d.kind == Difference::Kind::Inserted)
        if (auto sel = dyn_cast<arith::SelectOp>(d.target);
            sel && isa<RankedTensorType>(sel.getType()))
          if (failed(lowerDerivativeProduct(sel, ctx)))
            return failure();
    for (const Difference &d : differences)
      if (d.kind == Difference::Kind::Operand &&
          !written.contains(d.getTargetValue().getDefiningOp()))
        return emitError(d.getLoc())
               << "reads a value of the variant's scores that lowering did "
                  "not write";
    return checkAllWritten(differences, written);
  }

private:
  LogicalResult lowerScores(ElementwiseOp ew, PatchContext &ctx);
  LogicalResult lowerDerivativeProduct(arith::SelectOp sel, PatchContext &ctx);
  FailureOr<std::string> derivativeProductCall(ElementwiseOp dew, Value dS,
                                               StringRef ds, Location loc,
                                               PatchContext &ctx);
  std::string keepScores(ElementwiseOp ew, StringRef frag, StringRef indent,
                         PatchContext &ctx);
  /// Where the module keeps its raw scores (decided at the first keep).
  std::optional<KeptScores> kept;
  /// The shared memory of the scores' staged gather, if staged.
  int64_t stagingBytes = 0;
  FailureOr<std::string> expr(Value v, Location loc);
  std::string helperText(const FragmentWalk &fw, const ScoreBody &body,
                         MmaInstr instr, bool maskBits,
                         const PatchContext &ctx);
  /// The declaration of a score hook's mask bits and the statement that
  /// loads them.
  std::pair<std::string, std::string>
  maskBitsLoad(StringRef frag, StringRef row0, StringRef col0, bool early,
               unsigned line, PatchContext &ctx);
  /// `v`'s inserted ops, written as part of an expression.
  void markWritten(Value v);
  LogicalResult writeCalls(PatchContext &ctx);
  FailureOr<std::string> maskParameter(Location masked, Location unmasked,
                                       unsigned line, PatchContext &ctx);

  /// A scores call to write after a statement: the text before and after
  /// its MASK argument, per site.
  struct Call {
    std::string head, tail;
    bool masked;
    Location loc;
  };
  std::map<unsigned, SmallVector<Call, 2>> calls;
  /// The gathered words of each score hook (by its first line), numbered.
  std::map<unsigned, unsigned> gatheredStates;
  std::string gatheredState(unsigned line, PatchContext &ctx);
  /// The mask bits' variable of each score hook (by its first line).
  std::map<unsigned, unsigned> maskBitsStates;
  std::string maskBitsState(unsigned line, PatchContext &ctx);
  /// Whether the scores helper (the first site's) gathers.
  std::optional<bool> helperGathers;
  void decideStaging(ElementwiseOp ew, GatherBody &g,
                     ArrayRef<int64_t> tileShape);
  FailureOr<std::string> earlyPhase(bool gathers, StringRef flag,
                                    StringRef frag, StringRef args,
                                    StringRef bitsDecl, StringRef bitsLoad,
                                    unsigned line, Location loc,
                                    PatchContext &ctx);

  llvm::DenseSet<Operation *> written;
};

void ScoresPatcher::markWritten(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !getChange(def) || !written.insert(def).second)
    return;
  for (Value operand : def->getOperands())
    markWritten(operand);
}

/// A KV tile read from a runtime block mask's lists (the block list's
/// scf.if) is, at the scores' call, the source's own block variable: the
/// kernels pass their score hooks kv_tiles(n), the listed tile.
static void nameListedTiles(Value v, CppEmitter &em) {
  Operation *def = v.getDefiningOp();
  if (!def || em.names.count(v))
    return;
  auto tile = dyn_cast<scf::IfOp>(def);
  auto partial = tile ? tile.getCondition().getDefiningOp<arith::CmpIOp>()
                      : arith::CmpIOp();
  if (tile && getChange(tile) &&
      getChange(tile).getRewrite() == Rewrite::Blocks && partial) {
    std::string why;
    if (FailureOr<std::string> n = em.expr(partial.getLhs(), why);
        succeeded(n))
      em.names[v] = *n;
    return;
  }
  for (Value operand : def->getOperands())
    nameListedTiles(operand, em);
}

FailureOr<std::string> ScoresPatcher::expr(Value v, Location loc) {
  std::string why;
  CppEmitter em;
  nameListedTiles(v, em);
  FailureOr<std::string> e = em.expr(v, why);
  if (failed(e))
    return emitError(loc) << "cannot write " << why << " in the source";
  markWritten(v);
  return e;
}

/// The scores helper runs once per KV tile, inside the kernel's KV loop, where
/// row0 is invariant: LLVM hoisted each score's sum of row0 and the fragment's
/// constant offsets (its relative position, q - kv + c) out of the loop,
/// dozens of registers live across it, and the sm_90 kernel spilled. An empty
/// asm volatile cannot leave the loop: what derives from the thread's origin
/// is computed where it is used. Written for wgmma accumulators only: on the
/// sm_90 forward it took t5_bucket 1.69x, log_distance 1.6-1.8x and
/// relative_bias 1.2x faster (the rest 0.97-1.15x), on the sm_80 forward,
/// at 255 registers, 0.87-1.10x (docs/benchmarks/spills.md).
static const char *const kHeldOrigin =
    "  asm volatile(\"\" : \"+r\"(row0), \"+r\"(col0)); // held in the KV "
    "loop\n";

/// A register's query and key, declared in the fragment loops' body.
static std::string coordinates(const FragmentWalk &fw, StringRef ind) {
  return ind.str() + "const int q_off = " + fw.qOff +
         ", q_idx = row0 + q_off;\n" + ind.str() +
         "const int kv_off = " + fw.kvOff + ", kv_idx = col0 + kv_off;\n";
}

/// The loops of `body` over the fragment, at `indent`.
static std::string scoreLoops(const FragmentWalk &fw, const ScoreBody &body,
                              StringRef indent) {
  std::string ind = fw.bodyIndent(indent);
  std::string loopBody = coordinates(fw, ind) + ind +
                         "const float s = " + fw.element() + ";\n" + body.stmts;
  const ScoreBody::MaskedAssign &a = body.maskedAssigns[0];
  std::string element = fw.element();
  if (a.value != "s")
    loopBody += ind + element + " = " + a.value + ";\n";
  if (!a.hidden.empty())
    loopBody += ind + "if (MASK && " + a.hidden + ")\n" + ind + "  " +
                element + " = " + a.fill + ";\n";
  return fw.walk(indent, loopBody);
}

/// The clamp-free loops of `body.inRange`, taken when the thread's whole
/// fragment is within every clamp's bound and each tensor read at the key is
/// aligned for two elements (so the compiler may load both of a thread's
/// adjacent keys at once).
/// Whether the thread's whole fragment is within every clamp's bound and
/// each tensor read at the key is aligned for two elements.
static std::string
inRangeCondition(const FragmentWalk &fw,
                 ArrayRef<std::pair<bool, std::string>> clampBounds,
                 ArrayRef<std::pair<std::string, std::string>> pairReads) {
  std::string cond;
  for (auto [isQuery, bound] : clampBounds)
    cond += (cond.empty() ? "" : " && ") +
            (isQuery ? "row0 + " + fw.qOffMax : "col0 + " + fw.kvOffMax) +
            " <= " + bound;
  for (const auto &[alias, tensor] : pairReads)
    cond += " && cuir_pairs_aligned(" + tensor + ")";
  return cond;
}

/// The declarations of `pairReads`' pair-aligned aliases, at `indent`.
static std::string
pairAliases(ArrayRef<std::pair<std::string, std::string>> pairReads,
            StringRef indent) {
  std::string aliases;
  for (const auto &[alias, tensor] : pairReads)
    aliases += indent.str() + "const auto *" + alias +
               " = cuir_assume_pairs_aligned(" + tensor + ");\n";
  return aliases;
}

static std::string inRangeLoops(const FragmentWalk &fw, const ScoreBody &body) {
  if (!body.inRange)
    return "";
  const ScoreBody &fast = *body.inRange;
  return "  {  // every element within its tensors' bounds: no clamps\n" +
         fast.hoisted + "    if (" +
         inRangeCondition(fw, fast.clampBounds, fast.pairReads) + ") {\n" +
         pairAliases(fast.pairReads, "      ") +
         scoreLoops(fw, fast, "      ") + "      return;\n    }\n  }\n";
}

/// The scores over the gathered words, taken where the gather found the
/// fragment in range.
static std::string gatheredLoops(const FragmentWalk &fw, const GatherBody &g) {
  const ScoreBody &apply = *g.apply;
  return std::string("  if (g.valid) {  // the in-range loads, gathered at "
                     "the step's start\n") +
         (g.stagingWarps ? "    cuir_variant_unstage(g);\n" : "") +
         apply.hoisted + pairAliases(apply.pairReads, "    ") +
         scoreLoops(fw, apply, "    ") + "    return;\n  }\n";
}

/// `stmts` (lines indented for the fragment loops' body) at `indent`.
static std::string reindent(StringRef stmts, const FragmentWalk &fw,
                            StringRef indent) {
  std::string from = fw.bodyIndent("  "), out;
  SmallVector<StringRef> lines;
  stmts.split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines)
    out += indent.str() +
           line.drop_front(std::min(line.size(), from.size())).str() + "\n";
  return out;
}

/// The warps [first, first + count) of `kernel`'s block that run its
/// scores: the warps of its consumer workers where it binds them (a
/// warp-specialized kernel's producer computes no score), else all.
static std::pair<int64_t, int64_t> scoreWarps(KernelOp kernel) {
  int64_t all = llvm::divideCeil(kernel.getThreads(), 32);
  std::optional<std::pair<int64_t, int64_t>> consumers;
  kernel.walk([&](BindOp bind) {
    int64_t perWorker = bind.getKind() == WorkerKind::Warpgroup ? 4
                        : bind.getKind() == WorkerKind::Warp    ? 1
                                                                : 0;
    ArrayRef<int64_t> workers = bind.getWorkers();
    if (consumers || bind.getRole() != WorkerRole::Consumer || !perWorker ||
        workers.empty())
      return;
    auto [lo, hi] = std::minmax_element(workers.begin(), workers.end());
    consumers = {*lo * perWorker, (*hi - *lo + 1) * perWorker};
  });
  return consumers.value_or(std::pair<int64_t, int64_t>{0, all});
}

/// The warps a block has buffers for where `g` can be staged in shared
/// memory (GatherBody::stagingWarps): its one word, a pair of 1- or 2-byte
/// elements, of a tensor whose rows are whole 16-byte chunks; a wgmma
/// accumulator of `tileShape` (64 rows, 2N keys) whose warp rows are at
/// least 8 chunks (the swizzle's period); and, in every kernel of the module,
/// a buffer of 16 rows x 2N keys for each warp that runs the scores
/// (scoreWarps, the same in every kernel) beside its own buffers. Else none,
/// and `whyNot` says why; `bytes` is the buffers' size, `first` the first
/// of those warps.
static std::optional<int64_t> stagingBufferWarps(ElementwiseOp ew,
                                                 const GatherBody &g,
                                                 ArrayRef<int64_t> tileShape,
                                                 int64_t &bytes, int64_t &first,
                                                 std::string &whyNot) {
  if (g.words.size() != 1) {
    whyNot = "it gathers " + std::to_string(g.words.size()) + " tensors";
    return std::nullopt;
  }
  int64_t elementBytes = g.words.front().elementBytes;
  int64_t rowBytes = tileShape[1] * elementBytes;
  if (g.words.front().rowElements * elementBytes % 16 != 0) {
    whyNot = "rows of " + std::to_string(g.words.front().rowElements) +
             " elements are not whole 16-byte chunks";
    return std::nullopt;
  }
  if (rowBytes % 128 != 0) {
    whyNot = "a tile's " + std::to_string(tileShape[1]) +
             " keys are not whole multiples of 8 chunks";
    return std::nullopt;
  }
  auto module = ew->getParentOfType<ModuleOp>();
  int64_t warps = 0, ownMax = 0;
  std::optional<int64_t> firstWarp;
  bool sameWarps = true;
  if (module)
    module.walk([&](KernelOp kernel) {
      auto [kernelFirst, count] = scoreWarps(kernel);
      sameWarps &= !firstWarp || *firstWarp == kernelFirst;
      firstWarp = kernelFirst;
      warps = std::max(warps, count);
      ownMax = std::max(ownMax, ownSharedBytes(kernel));
    });
  if (!sameWarps) {
    whyNot = "its kernels run their scores in different warps";
    return std::nullopt;
  }
  first = firstWarp.value_or(0);
  bytes = warps * 16 * rowBytes;
  if (warps == 0 ||
      ownMax + kSharedBytesBesideBuffers + bytes > kSharedBytesPerBlock) {
    whyNot = "its buffers (" + std::to_string(bytes) +
             " bytes) do not fit beside the kernel's own " +
             std::to_string(ownMax) + " bytes of shared memory";
    return std::nullopt;
  }
  return warps;
}

/// Whether `op` is in the first kernel of its module.
static bool inFirstKernel(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  if (!module)
    return true;
  auto kernels = module.getOps<KernelOp>();
  return kernels.empty() || *kernels.begin() == op->getParentOfType<KernelOp>();
}

/// How a thread reads its words back from the staged rows of its warp
/// (`rows`, generic): 16-bit elements with ldmatrix.x4, whose fragment of an
/// 8 x 8 matrix is the wgmma accumulator's (row lane / 4, elements
/// 2 (lane % 4) and the next), four n8 tiles' words at once; bytes a word a
/// shared load.
static std::string unstageLoop(const GatherBody::Word &w, bool halves) {
  std::string f = "g." + w.field;
  if (halves)
    return "  const int row = lane % 8 + lane / 8 % 2 * 8;\n"
           "  #pragma unroll\n"
           "  for (int j = 0; j < N / 4; j += 2) {  // rows 0-7 and 8-15 of "
           "n8 tiles j and j + 1\n"
           "    const int chunk = j + lane / 16;\n"
           "    cuir_ldmatrix_x4(" +
           f + "[2 * j], " + f + "[2 * j + 1], " + f + "[2 * j + 2], " + f +
           "[2 * j + 3],\n"
           "                     rows + row * (4 * N) + ((chunk ^ (row % 8)) "
           "<< 4));\n"
           "  }\n";
  return "  #pragma unroll\n"
         "  for (int j = 0; j < N / 4; ++j)\n"
         "  #pragma unroll\n"
         "    for (int half = 0; half < 2; ++half) {  // keys 8j + 2 (lane % "
         "4) and the next, of row lane / 4 + 8 half\n"
         "      const int row = lane / 4 + 8 * half, chunk = j / 2;\n"
         "      " +
         f +
         "[2 * j + half] = *reinterpret_cast<const uint16_t *>(\n"
         "          rows + row * (2 * N) + ((chunk ^ (row % 8)) << 4) + j % 2 "
         "* 8 + lane % 4 * 2);\n"
         "    }\n";
}

/// The staged form of gatherText (GatherBody::stagingWarps): the gather copies
/// the warp's 16 query rows x 2N keys of the tensor into the warp's buffer in
/// shared memory (cp.async, 16 bytes a copy, whole rows a warp copy), rows
/// swizzled by 16-byte chunk, and cuir_variant_unstage, called by the
/// scores, reads a thread's words back (unstageLoop).
static std::string stagedGather(const FragmentWalk &fw, const GatherBody &g,
                                StringRef header, StringRef signature) {
  const GatherBody::Word &w = g.words.front();
  bool halves = w.elementBytes == 2;
  // A warp row's bytes, its 16-byte chunks, and a chunk's keys.
  std::string rowBytes = halves ? "4 * N" : "2 * N";
  std::string chunks = halves ? "N / 4" : "N / 8";
  std::string keys = halves ? "8" : "16";
  std::string loopBody =
      "    const int id = 32 * i + lane, row = id / (" + chunks +
      "), chunk = id % (" + chunks +
      ");\n"
      "    const int q_idx = row0 - lane / 4 + row, kv_idx = col0 - lane % 4 * "
      "2 + " +
      keys + " * chunk;\n" + reindent(g.stmts, fw, "    ") +
      "    cuir_stage_chunk(rows + row * (" + rowBytes +
      ") + ((chunk ^ (row % 8)) << 4), " + w.address + ");\n";
  return header.str() +
         "// The staged rows of this thread's warp: 16 rows x 2N keys, chunk "
         "c (16 bytes) of\n"
         "// row r at chunk c ^ (r % 8), so that 8 rows are read from distinct "
         "banks.\n"
         "template <int N>\n"
         "__device__ __forceinline__ unsigned char *cuir_variant_staged_rows() "
         "{\n"
         "  static_assert((" +
         rowBytes +
         ") % 128 == 0, \"rows of whole 16-byte chunks, at least 8\");\n"
         "  __shared__ __align__(128) unsigned char rows[" +
         std::to_string(g.stagingWarps) + "][16 * (" + rowBytes +
         ")];  // a buffer a warp of the block\n"
         "  return rows[threadIdx.x / 32" +
         (g.firstStagingWarp ? " - " + std::to_string(g.firstStagingWarp)
                             : std::string()) +
         "];\n}\n"
         "template <int N>\n"
         "__device__ __forceinline__ void cuir_variant_gather(" +
         signature.str() + "  (void)params, (void)b, (void)h;\n" + g.hoisted +
         "  const int lane = threadIdx.x % 32;\n"
         "  g.valid = __all_sync(0xffffffffu, " +
         inRangeCondition(fw, g.clampBounds, g.pairReads) +
         " &&\n                                     cuir_chunks_aligned(" +
         w.tensor + ") && col0 % " + keys +
         " == lane % 4 * 2);\n"
         "  if (!g.valid)\n    return;\n"
         "  __syncwarp();  // the warp has read its last staged rows\n"
         "  unsigned char *rows = cuir_variant_staged_rows<N>();\n" +
         pairAliases(g.pairReads, "  ") +
         "  #pragma unroll\n  for (int i = 0; i < (" + chunks +
         ") / 2; ++i) {  // 32 chunks a warp copy\n" + loopBody +
         "  }\n  cuir_stage_commit();\n}\n"
         "template <int N>\n"
         "__device__ __forceinline__ void "
         "cuir_variant_unstage(cuir_variant_gathered<N> &g) {\n"
         "  cuir_stage_wait();\n  __syncwarp();\n"
         "  const int lane = threadIdx.x % 32;\n"
         "  const unsigned char *rows = cuir_variant_staged_rows<N>();\n" +
         unstageLoop(w, halves) + "}\n";
}

/// The type of the gathered words, the gather that fills them, and the
/// function that gives the type for a register tile (in decltype).
static std::string gatherText(const FragmentWalk &fw, const GatherBody &g,
                              StringRef paramsStruct, StringRef variant) {
  std::string fields;
  for (const GatherBody::Word &w : g.words)
    fields += "  " + std::string(w.type()) + " " + w.field + fw.pairDims + ";\n";
  std::string ind = fw.bodyIndent("  ");
  std::string loopBody = ind + "if (" + fw.keyInPair +
                         " != 0) continue;  // a pair, at its first key\n" +
                         coordinates(fw, ind) + g.stmts;
  for (const GatherBody::Word &w : g.words)
    loopBody += ind + "cuir_load_pair(g." + w.field + fw.pairIndex + ", " +
                w.address + ");\n";
  std::string tmpl = "template <" + fw.templateParams + ">\n";
  std::string type = "cuir_variant_gathered<" + fw.templateArgs + ">";
  std::string header =
      "// ---- cuir: the loads of the variant '" + variant.str() +
      "' that its score hook issues at the start of a\n"
      "//      step, while the step waits for S: a word per pair of a "
      "thread's adjacent keys" +
      (g.stagingWarps ? ",\n//      staged in shared memory by the warp" : "") +
      ". ----\n" + tmpl + "struct cuir_variant_gathered {\n" + fields +
      "  bool valid;  // every element within its tensors' bounds, the "
      "pairs aligned\n};\n" +
      tmpl + "__device__ " + type + " cuir_variant_gathered_of(const " +
      fw.param("") + ");\n";
  std::string signature = type + " &g, const " + paramsStruct.str() +
                          " &params, int b, int h, int row0,\n"
                          "                                                 "
                          "   int col0) {\n";
  if (g.stagingWarps)
    return stagedGather(fw, g, header, signature);
  return header + tmpl +
         "__device__ __forceinline__ void cuir_variant_gather(" + signature +
         "  (void)params, (void)b, (void)h;\n" + g.hoisted +
         "  g.valid = " + inRangeCondition(fw, g.clampBounds, g.pairReads) +
         " && col0 % 2 == 0;\n  if (!g.valid)\n    return;\n" +
         pairAliases(g.pairReads, "  ") + fw.walk("  ", loopBody) + "}\n";
}

/// The masking scores over the block mask's bits of the tile (`mask_bits`,
/// where the kernel loaded them): the variant's statements with the mask's
/// value read from the bits (the statements only the mask reads left out).
static std::string maskBitsPath(const FragmentWalk &fw, const ScoreBody &body) {
  ScoreBody fromBits = body;
  fromBits.maskedAssigns = body.bitsMaskedAssigns;
  fromBits.stmts = reindent(body.unmaskedStmts, fw, fw.bodyIndent("      "));
  std::string hoisted;
  SmallVector<StringRef> lines;
  StringRef(body.unmaskedHoisted).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines)
    hoisted += "    " + line.str() + "\n";
  return "  if constexpr (MASK && MaskBitsT::kRows > 0) {\n"
         "    static_assert(MaskBitsT::kRows * 8 > " +
         fw.qOffMax + " && MaskBitsT::kWords * 32 > " + fw.kvOffMax +
         ", \"the bits cover the fragment\");\n"
         "    if (mask_bits != nullptr && mask_bits->valid) {  // the tile's "
         "mask, made by the block mask\n" +
         hoisted + scoreLoops(fw, fromBits, "      ") +
         "      return;\n    }\n  }\n";
}

std::string ScoresPatcher::helperText(const FragmentWalk &fw,
                                      const ScoreBody &body, MmaInstr instr,
                                      bool maskBits, const PatchContext &ctx) {
  std::string what = " becomes score_mod(s), or -inf where the\n"
                     "//      mask hides it (MASK: partial blocks only)";
  std::string gathered, gatheredParam, fastPath = inRangeLoops(fw, body);
  if (body.gathered) {
    gathered =
        gatherText(fw, *body.gathered, ctx.paramsStruct, ctx.variantSpec) +
        "\n";
    // Staged words are read back into g by the scores.
    gatheredParam =
        std::string(body.gathered->stagingWarps ? ", " : ", const ") +
        "cuir_variant_gathered<" + fw.templateArgs + "> &g";
    fastPath = gatheredLoops(fw, *body.gathered);
  }
  return gathered + "// ---- cuir: the scores of the variant '" +
         ctx.variantSpec +
         "' (generated from the Target CuIR): each\n"
         "//      score s of an " +
         stringifyMmaInstr(instr).str() + " accumulator tile" + what +
         ". row0/col0: this thread's first query and key. ----\n"
         "template <bool MASK, " +
         fw.templateParams +
         (maskBits ? ", class MaskBitsT = cuir_kernels::NoMaskBits" : "") +
         ">\n"
         "__device__ __forceinline__ void cuir_variant_scores(" +
         fw.param() + gatheredParam + ", const " + ctx.paramsStruct +
         " &params,\n"
         "                                                    int b, int h, "
         "int row0, int col0" +
         (maskBits ? ",\n                                                    "
                     "const MaskBitsT *mask_bits = nullptr"
                   : "") +
         ") {\n"
         "  (void)params, (void)b, (void)h;\n" +
         (instr == MmaInstr::WgmmaM64NK16 ? kHeldOrigin : "") +
         (maskBits ? maskBitsPath(fw, body) : "") + fastPath +
         body.hoisted + scoreLoops(fw, body, "  ") + "}\n";
}

/// Whether the scores helper's gather `g` is staged (stagingBufferWarps), said
/// in a remark at `ew` once for the module: every kernel decides alike.
void ScoresPatcher::decideStaging(ElementwiseOp ew, GatherBody &g,
                                  ArrayRef<int64_t> tileShape) {
  int64_t bytes = 0, first = 0;
  std::string whyNot;
  std::optional<int64_t> warps =
      stagingBufferWarps(ew, g, tileShape, bytes, first, whyNot);
  g.stagingWarps = warps.value_or(0);
  g.firstStagingWarp = warps ? first : 0;
  stagingBytes = warps ? bytes : 0;
  if (!inFirstKernel(ew))
    return;
  if (warps)
    emitRemark(ew.getLoc())
        << "the scores' per-score loads are staged in shared memory at the "
           "step's start, a warp's rows at a time ("
        << bytes << " bytes a block)";
  else
    emitRemark(ew.getLoc()) << "the scores' per-score loads are gathered at "
                               "the step's start by each thread, not staged: "
                            << whyNot;
}

LogicalResult ScoresPatcher::lowerScores(ElementwiseOp ew, PatchContext &ctx) {
  Location loc = ew.getLoc();
  Value in = ew.getInputs()[0];
  FragmentLayoutAttr layout = getFragmentLayout(in.getType());
  if (!layout || layout.getKind() != FragmentKind::Acc ||
      (layout.getInstr() == MmaInstr::WgmmaM64NK16 &&
       layout.getWarps() != ArrayRef<int64_t>{1, 1}))
    return emitError(loc) << "lowering writes variant scores over "
                             "mma.m16n8k16 accumulators and over one "
                             "warpgroup's wgmma accumulator; this tile is "
                          << in.getType();
  if (ew.getNumResults() != 1)
    return emitError(loc) << "lowering writes variant scores of one result, "
                             "the score; this op has "
                          << ew.getNumResults();
  bool transposed = holdsTransposedRegisters(in);
  FragmentWalk fw = FragmentWalk::of(layout.getInstr(), transposed);
  auto frag = expr(in, loc), b = expr(ew.getB(), loc), h = expr(ew.getH(), loc),
       q0 = expr(ew.getQBase(), loc), k0 = expr(ew.getKvBase(), loc);
  if (failed(frag) || failed(b) || failed(h) || failed(q0) || failed(k0))
    return failure();
  // Values the body reads from around it (the natural scale).
  ew.walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!ew->isAncestor(v.getParentBlock()->getParentOp()))
        markWritten(v);
  });
  bool halve = ctx.normalizer == Normalizer::Sigmoid;
  // The source's hook at this tile may also run early, told by a flag.
  StringAttr early;
  if (Operation *wait = in.getDefiningOp())
    early =
        CuIRDialect::EarlyScoreHookAttrHelper(ew->getContext()).getAttr(wait);
  FailureOr<ScoreBody> body =
      printScoreBody(ew, halve, "  ", fw.bodyIndent("  "),
                     early ? fw.pairIndex : "", fw.keyInPair);
  if (failed(body))
    return failure();
  if (halve)
    ++ctx.halvedScoreSites;
  if (body->gathered && !helperGathers)
    decideStaging(ew, *body->gathered,
                  cast<RankedTensorType>(in.getType()).getShape());
  // The first site's helper serves every site (their bodies differ only in
  // the mask, which MASK turns off), and so does its gather.
  if (!helperGathers)
    helperGathers = body->gathered != nullptr;
  // The masking steps of a kernel whose block mask has bits read them where
  // given: a thread's keys of the tile are col0 % 8 plus the walk's offsets
  // (one warp across the tile's keys, not transposed; MaskBits).
  auto shape = cast<RankedTensorType>(in.getType()).getShape();
  auto kernel = ew->getParentOfType<KernelOp>();
  ArrayRef<int64_t> warps = layout.getWarps();
  bool maskBits =
      body->masked && kernel && usesMaskBits(kernel) && !transposed &&
      shape.size() == 2 &&
      shape[1] == static_cast<int64_t>(getBlockMask(kernel).getBlockN()) &&
      (warps.size() < 2 || warps[1] == 1);
  std::string helper = helperText(fw, *body, layout.getInstr(), maskBits, ctx);
  if (helper.find(kTanhApproxName) != std::string::npos)
    ctx.addHelper("tanh", kTanhApproxHelper);
  ctx.addHelper("variant_scores", helper);

  // The call, right after the statement that completes the score tile.
  unsigned anchor = ctx.lineOf(loc);
  if (!anchor)
    return emitError(loc) << "the variant's scores have no anchor in the "
                             "source";
  auto [first, last] = ctx.src.statement(anchor);
  std::string indent = ctx.src.indent(first).str();
  auto [row0, col0] =
      FragmentWalk::threadOrigin(layout, shape, transposed, *q0, *k0);
  std::string args = "params, " + *b + ", " + *h + ", " + row0 + ", " + col0;
  std::string head = indent + "// ---- cuir: the variant's " +
                     (body->masked ? "scores and mask" : "scores") + " ----\n";
  std::string tiles = *frag;
  // With an early phase, the bits are loaded there, in flight while the
  // step waits for S; else before the call.
  std::string bitsDecl, bitsLoad;
  if (maskBits) {
    std::tie(bitsDecl, bitsLoad) =
        maskBitsLoad(*frag, row0, col0, early != nullptr, anchor, ctx);
    if (!early) {
      head += indent + bitsDecl + "\n" + bitsLoad;
      bitsDecl = bitsLoad = "";
    }
  }
  std::string callArgs =
      args + (maskBits ? ", &" + maskBitsState(anchor, ctx) : "") + ");";
  args += ");";
  if (early) {
    FailureOr<std::string> gathered =
        earlyPhase(*helperGathers, early.getValue(), *frag, args, bitsDecl,
                   bitsLoad, anchor, loc, ctx);
    if (failed(gathered))
      return failure();
    head += *gathered;
    if (*helperGathers)
      tiles += ", " + gatheredState(anchor, ctx);
  }
  if (isReadPastScores(in))
    head += keepScores(ew, *frag, indent, ctx);
  head += indent + "cuir_variant_scores<";
  written.insert(ew);
  ctx.noteCall(last);
  calls[last].push_back(
      {head, ">(" + tiles + ", " + callArgs, body->masked, loc});
  return success();
}

/// The name of the gathered words of the score hook around `line`.
std::string ScoresPatcher::gatheredState(unsigned line, PatchContext &ctx) {
  unsigned hook = ctx.src.enclosingStatement(line)->first;
  auto [it, inserted] = gatheredStates.try_emplace(hook, gatheredStates.size());
  return "cuir_gathered_" + std::to_string(it->second);
}

/// The variable of the mask bits that the score hook around `line` loads.
std::string ScoresPatcher::maskBitsState(unsigned line, PatchContext &ctx) {
  unsigned hook = ctx.src.enclosingStatement(line)->first;
  auto [it, inserted] = maskBitsStates.try_emplace(hook, maskBitsStates.size());
  return "cuir_mask_bits_" + std::to_string(it->second);
}

/// The load of this thread's words of the tile's mask bits (a MaskBits
/// for the fragment `frag`) from the block-iteration point's lists, which
/// give none where the call has no bits: the declaration, and the load
/// indented for the hook's body or, `early`, for its early phase.
std::pair<std::string, std::string>
ScoresPatcher::maskBitsLoad(StringRef frag, StringRef row0, StringRef col0,
                            bool early, unsigned line, PatchContext &ctx) {
  std::string state = maskBitsState(line, ctx);
  std::string decl = "decltype(cuir_kernels::mask_bits_of(" + frag.str() +
                     ")) " + state +
                     ";  // cuir: the block mask's bits of the tile";
  std::string indent =
      ctx.src.indent(ctx.src.statement(line).first).str() + (early ? "  " : "");
  return {decl, indent + state + ".load(" + kKvTilesVariable.str() +
                    ".mask_bits(" + row0.str() + ", " + col0.str() + "), " +
                    col0.str() + ");\n"};
}

/// The early phase of the score hook at `line` (its flag `flag` true): the
/// mask bits' load `bitsLoad` (declared before the hook by `bitsDecl`), if
/// any, and if the scores helper `gathers`, the gather of the loads it
/// reads, into words declared before the hook.
FailureOr<std::string> ScoresPatcher::earlyPhase(bool gathers, StringRef flag,
                                                 StringRef frag, StringRef args,
                                                 StringRef bitsDecl,
                                                 StringRef bitsLoad,
                                                 unsigned line, Location loc,
                                                 PatchContext &ctx) {
  unsigned at = ctx.src.statement(line).first;
  std::string indent = ctx.src.indent(at).str();
  if (!gathers && bitsDecl.empty())
    return indent + "if (" + flag.str() +
           ") return;  // the scores load nothing early\n";
  std::optional<std::pair<unsigned, unsigned>> hook =
      ctx.src.enclosingStatement(line);
  if (!hook)
    return emitError(loc) << "the score hook with the early flag '" << flag
                          << "' is not a statement with a block (a lambda) "
                             "in the source";
  std::string hookIndent = ctx.src.indent(hook->first).str();
  std::string state = gatheredState(line, ctx);
  std::string decls;
  if (!bitsDecl.empty())
    decls = hookIndent + bitsDecl.str();
  if (gathers)
    decls += (decls.empty() ? "" : "\n") + hookIndent +
             "decltype(cuir_variant_gathered_of(" + frag.str() + ")) " + state +
             ";  // cuir: what the hook below gathers";
  if (failed(ctx.edit(
          {SourceEdit::InsertBefore, hook->first, hook->first, decls, "", ""},
          loc)))
    return failure();
  std::string gather = gathers ? indent + "  cuir_variant_gather(" + state +
                                     ", " + args.str() + "\n"
                               : "";
  return indent + "if (" + flag.str() + ") {  // the step's start: the " +
         (gathers ? "loads of the scores" : "tile's mask bits") +
         ", in flight while it waits for S\n" + bitsLoad.str() + gather +
         indent + "  return;\n" + indent + "}\n";
}

/// The template parameter of the function around `line` that the masking
/// site's call passes as `true` and the unmasked site's as `false`.
FailureOr<std::string> ScoresPatcher::maskParameter(Location masked,
                                                    Location unmasked,
                                                    unsigned line,
                                                    PatchContext &ctx) {
  auto templateArgs = [](StringRef text) {
    SmallVector<std::string> args;
    size_t open = text.find('<');
    if (open == StringRef::npos)
      return args;
    int depth = 0;
    std::string cur;
    for (char c : text.drop_front(open + 1)) {
      if (c == '<')
        ++depth;
      if (c == '>' && depth-- == 0)
        break;
      if (c == ',' && depth == 0) {
        args.push_back(StringRef(cur).trim().str());
        cur.clear();
        continue;
      }
      cur += c;
    }
    args.push_back(StringRef(cur).trim().str());
    return args;
  };
  auto callText = [&](Location l) -> std::string {
    FileLineColRange r = rangeOf(l, /*caller=*/true);
    if (!r)
      return "";
    return ctx.src.line(r.getStartLine())
        .drop_front(r.getStartColumn() ? r.getStartColumn() - 1 : 0)
        .str();
  };
  SmallVector<std::string> a = templateArgs(callText(masked)),
                           b = templateArgs(callText(unmasked));
  std::string header = ctx.src.line(ctx.src.topLevelStart(line)).str();
  SmallVector<std::string> params =
      StringRef(header).trim().starts_with("template")
          ? templateArgs(header)
          : SmallVector<std::string>();
  for (unsigned i = 0; i < a.size() && i < b.size() && i < params.size(); ++i)
    if (a[i] == "true" && b[i] == "false" &&
        StringRef(params[i]).starts_with("bool ")) {
      StringRef name = StringRef(params[i]).drop_front(5).trim();
      return name.take_until([](char c) { return c == '=' || c == ' '; }).str();
    }
  return emitError(masked)
         << "masks its scores and another site of the same statement (line "
         << line
         << ") does not, but the two are not calls of one function template "
            "told apart by a bool parameter (true for the masking one): "
            "lowering cannot write both";
}

/// One call per statement: a site's own, or, for two instantiations of one
/// template of which one masks, the MASK of the template's parameter. A
/// score GEMM of the same statement whose scores stay as they are (a site
/// of full tiles after the split) is an unmasked site without a call.
LogicalResult ScoresPatcher::writeCalls(PatchContext &ctx) {
  for (auto &entry : calls) {
    // Named, not bound: the walk below captures them (C++17).
    unsigned line = entry.first;
    SmallVector<Call, 2> &sites = entry.second;
    FileLineColRange at = rangeOf(sites.front().loc);
    ctx.diff->target.walk([&](Operation *gemm) {
      if (!isa<GemmOp, GemmAsyncOp>(gemm))
        return;
      // The scores are complete at the GEMM, or at its wait.
      Operation *complete = gemm;
      for (Operation *u : gemm->getUsers())
        if (isa<GemmWaitOp>(u))
          complete = u;
      if (rangeOf(complete->getLoc()) != at)
        return;
      bool hasScores = llvm::any_of(complete->getUsers(), [](Operation *u) {
        return isa<ElementwiseOp>(u) && getChange(u);
      });
      if (!hasScores && sites.front().masked)
        sites.push_back(
            {sites.front().head, sites.front().tail, false, gemm->getLoc()});
    });
    const Call *maskedSite = nullptr, *unmaskedSite = nullptr;
    for (const Call &c : sites) {
      const Call *&same = c.masked ? maskedSite : unmaskedSite;
      if (same && (same->head != c.head || same->tail != c.tail))
        return emitError(c.loc)
               << "writes the variant's scores at line " << line
               << " differently from another site of that statement";
      same = &c;
    }
    if (maskedSite && unmaskedSite && maskedSite->tail != unmaskedSite->tail)
      return emitError(unmaskedSite->loc)
             << "writes the variant's scores at line " << line
             << " with other arguments than the masking site there";
    std::string flag = maskedSite ? "true" : "false";
    const Call &c = maskedSite ? *maskedSite : *unmaskedSite;
    if (maskedSite && unmaskedSite) {
      FailureOr<std::string> p =
          maskParameter(maskedSite->loc, unmaskedSite->loc, line, ctx);
      if (failed(p))
        return failure();
      flag = *p;
    }
    if (failed(ctx.edit({SourceEdit::InsertAfter, line, line,
                         c.head + flag + c.tail, "", ""},
                        c.loc)))
      return failure();
  }
  calls.clear();
  return success();
}

/// The elementwise product of a tile (a float array of any shape) with a
/// constant.
static const char *const kTimesConstant =
    "// ---- cuir: ds <- ds * c over a register tile (a float array of any "
    "shape), an exact zero kept\n"
    "//      (a hidden score's dS). ----\n"
    "template <class Tile>\n"
    "__device__ __forceinline__ void cuir_times_constant(Tile &ds, float c) "
    "{\n"
    "  float *x = reinterpret_cast<float *>(&ds);\n"
    "#pragma unroll\n"
    "  for (int i = 0; i < int(sizeof(Tile) / sizeof(float)); ++i) x[i] = "
    "x[i] == 0.f ? 0.f : x[i] * c;\n"
    "}\n";

/// The statement, before the scores call, that keeps the raw scores `frag`
/// for dS (KeptScores.h); the first decides, for the module, where.
std::string ScoresPatcher::keepScores(ElementwiseOp ew, StringRef frag,
                                      StringRef indent, PatchContext &ctx) {
  if (!kept) {
    kept = decideKeptScores(ew, stagingBytes);
    // Every kernel decides alike: said once, at the first kernel with
    // scores.
    auto module = ew->getParentOfType<ModuleOp>();
    KernelOp firstWithScores;
    if (module)
      module.walk([&](ElementwiseOp other) {
        if (!firstWithScores && isReadPastScores(other.getInputs()[0]))
          firstWithScores = other->getParentOfType<KernelOp>();
      });
    bool say = !module || firstWithScores == ew->getParentOfType<KernelOp>();
    if (say && kept->shared)
      emitRemark(ew.getLoc())
          << "the raw scores are kept in shared memory from S to dS, for the "
             "derivative and the partials computed there ("
          << kept->bytes << " bytes a block)";
    else if (say)
      emitRemark(ew.getLoc())
          << "the raw scores are kept in registers from S to dS, not in "
             "shared memory: "
          << kept->whyNot;
  }
  ctx.addHelper("kept_scores", keptScoresHelper(*kept));
  return indent.str() + "const auto " + kKeptScoresName +
         " = cuir_keep_scores(" + frag.str() + ");\n";
}

/// The call, after dS, of a helper that multiplies each element of dS by
/// d score_mod / d score at its kept raw score: the body of `dew` (the
/// derivative over the raw scores), element by element, with no tile of
/// derivatives in registers.
FailureOr<std::string>
ScoresPatcher::derivativeProductCall(ElementwiseOp dew, Value dS, StringRef ds,
                                     Location loc, PatchContext &ctx) {
  FragmentLayoutAttr layout = getFragmentLayout(dS.getType());
  if (!layout || layout.getKind() != FragmentKind::Acc ||
      (layout.getInstr() == MmaInstr::WgmmaM64NK16 &&
       layout.getWarps() != ArrayRef<int64_t>{1, 1}) ||
      dew.getInputs()[0].getType() != dS.getType() ||
      !isKeptScores(dew.getInputs()[0]))
    return emitError(loc) << "multiplies dS by a derivative that lowering "
                             "cannot compute from the kept raw scores: dS "
                             "and the scores must be one accumulator tile";
  bool transposed = holdsTransposedRegisters(dS);
  FragmentWalk fw = FragmentWalk::of(layout.getInstr(), transposed);
  auto b = expr(dew.getB(), loc), h = expr(dew.getH(), loc),
       q0 = expr(dew.getQBase(), loc), k0 = expr(dew.getKvBase(), loc);
  if (failed(b) || failed(h) || failed(q0) || failed(k0))
    return failure();
  dew.walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!dew->isAncestor(v.getParentBlock()->getParentOp()))
        markWritten(v);
  });
  FailureOr<ScoreBody> body =
      printScoreBody(dew, /*halve=*/false, "  ", fw.bodyIndent("  "));
  if (failed(body))
    return failure();
  std::string ind = fw.bodyIndent("  ");
  std::string loopBody =
      coordinates(fw, ind) + ind + "const float s = raw(" + fw.flat + ");\n" +
      body->stmts + ind + "float &x = " + fw.element("ds") + ";\n" + ind +
      "x = x == 0.f ? 0.f : x * (" + body->maskedAssigns[0].expression() +
      ");\n";
  std::string helper =
      "// ---- cuir: dS times the variant '" + ctx.variantSpec +
      "''s d score_mod / d score (generated from the\n"
      "//      Target CuIR) at each element's raw score, read back from the "
      "kept scores; an exact zero\n"
      "//      (a hidden score's dS) stays zero. row0/col0: this thread's "
      "first query and key. ----\n"
      "template <" +
      fw.templateParams +
      ", class Raw>\n"
      "__device__ __forceinline__ void cuir_variant_times_derivative(" +
      fw.param("ds") + ", const Raw &raw, const " + ctx.paramsStruct +
      " &params,\n"
      "                                                              int b, "
      "int h, int row0, int col0) {\n"
      "  (void)params, (void)b, (void)h;\n" +
      body->hoisted + fw.walk("  ", loopBody) + "}\n";
  if (helper.find(kTanhApproxName) != std::string::npos)
    ctx.addHelper("tanh", kTanhApproxHelper);
  ctx.addHelper("times_derivative", helper);
  written.insert(dew);
  auto shape = cast<RankedTensorType>(dS.getType()).getShape();
  auto [row0, col0] =
      FragmentWalk::threadOrigin(layout, shape, transposed, *q0, *k0);
  return "cuir_variant_times_derivative(" + ds.str() + ", " + kKeptScoresName +
         ", params, " + *b + ", " + *h + ", " + row0 + ", " + col0 + ");";
}

/// dS <- dS * d (select(dS == 0, 0, dS * d)), after the statement that
/// forms dS: `d` is the derivative over the raw scores, or a constant.
LogicalResult ScoresPatcher::lowerDerivativeProduct(arith::SelectOp sel,
                                                    PatchContext &ctx) {
  auto mul = sel.getFalseValue().getDefiningOp<arith::MulFOp>();
  auto cmp = sel.getCondition().getDefiningOp<arith::CmpFOp>();
  if (!mul || !cmp || !getChange(mul.getOperation()) ||
      cmp.getLhs() != mul.getLhs())
    return emitError(sel.getLoc())
           << "selects between register tiles in a way lowering does not "
              "write (expected the backward's dS times the score "
              "derivative)";
  Value dS = mul.getLhs(), d = mul.getRhs();
  FailureOr<std::string> ds = expr(dS, sel.getLoc());
  if (failed(ds))
    return failure();
  std::string call;
  DenseElementsAttr c;
  if (auto dew = d.getDefiningOp<ElementwiseOp>();
      dew && isScoreDerivative(dew)) {
    FailureOr<std::string> c =
        derivativeProductCall(dew, dS, *ds, sel.getLoc(), ctx);
    if (failed(c))
      return failure();
    call = *c;
  } else if (matchPattern(d, m_Constant(&c)) && c.isSplat()) {
    auto cst = d.getDefiningOp<arith::ConstantOp>();
    std::string value =
        std::to_string(c.getSplatValue<APFloat>().convertToDouble());
    call = "cuir_times_constant(" + *ds + ", " + value + "f);";
    written.insert(cst);
    ctx.addHelper("times_constant", kTimesConstant);
  } else {
    return emitError(sel.getLoc())
           << "multiplies dS by a value that is neither the score "
              "derivative lowering wrote nor a constant";
  }
  for (Operation *op :
       {sel.getOperation(), mul.getOperation(), cmp.getOperation(),
        sel.getTrueValue().getDefiningOp(), cmp.getRhs().getDefiningOp()})
    if (op)
      written.insert(op);
  unsigned anchor = ctx.lineOf(dS.getDefiningOp()->getLoc(), /*caller=*/true);
  if (!anchor)
    return emitError(sel.getLoc()) << "dS has no anchor in the source";
  auto [first, last] = ctx.src.statement(anchor);
  std::string indent = ctx.src.indent(first).str();
  ctx.noteCall(last);
  return ctx.edit({SourceEdit::InsertAfter, last, last,
                   indent +
                       "// ---- cuir: dS times d score_mod / d score "
                       "----\n" +
                       indent + call,
                   "", ""},
                  sel.getLoc());
}

} // namespace

std::unique_ptr<Patcher> mlir::cuir::createScoresPatcher() {
  return std::make_unique<ScoresPatcher>();
}
