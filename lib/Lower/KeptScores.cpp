//===- KeptScores.cpp - A backward's raw scores, kept until dS ------------===//

#include "KeptScores.h"
#include "SharedBudget.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::cuir;

bool mlir::cuir::isReadPastScores(Value raw) {
  return llvm::any_of(raw.getUsers(), [](Operation *user) {
    auto ew = dyn_cast<ElementwiseOp>(user);
    return isa<ScatterAddOp>(user) ||
           (ew && CuIRDialect::ScoreDerivativeAttrHelper(ew->getContext())
                      .isAttrPresent(ew));
  });
}

bool mlir::cuir::isKeptScores(Value raw) {
  return isReadPastScores(raw) &&
         llvm::any_of(raw.getUsers(), [](Operation *user) {
           return CuIRDialect::VariantScoresAttrHelper(user->getContext())
               .isAttrPresent(user);
         });
}

/// The threads that share one accumulator tile of `layout`.
static int64_t tileThreads(FragmentLayoutAttr layout) {
  if (layout.getInstr() == MmaInstr::WgmmaM64NK16)
    return 128;
  int64_t warps = 1;
  for (int64_t w : layout.getWarps())
    warps *= w;
  return 32 * warps;
}

/// Where the scores op `ew` of one kernel would keep its raw scores in
/// shared memory (threads, first, bytes), or why not.
static KeptScores sharedPlace(ElementwiseOp ew, int64_t otherBytes) {
  KeptScores k;
  auto kernel = ew->getParentOfType<KernelOp>();
  auto tile = cast<RankedTensorType>(ew.getInputs()[0].getType());
  FragmentLayoutAttr layout = getFragmentLayout(tile);
  if (!kernel || !layout) {
    k.whyNot = "the score tile has no fragment layout";
    return k;
  }
  k.threads = kernel.getThreads();
  if (auto bind = ew->getParentOfType<BindOp>()) {
    ArrayRef<int64_t> workers = bind.getWorkers();
    for (size_t i = 1; i < workers.size(); ++i)
      if (workers[i] != workers[0] + static_cast<int64_t>(i)) {
        k.whyNot = "the workers that compute the scores are not one range "
                   "of threads";
        return k;
      }
    k.first = workers.front() * bind.getThreadsPerWorker();
    k.threads =
        static_cast<int64_t>(workers.size()) * bind.getThreadsPerWorker();
  }
  int64_t perThread = tile.getNumElements() / tileThreads(layout);
  k.bytes = perThread * 4 * k.threads;
  int64_t own = ownSharedBytes(kernel);
  if (own + kSharedBytesBesideBuffers + otherBytes + k.bytes >
      kSharedBytesPerBlock) {
    k.whyNot = std::to_string(k.bytes) +
               " bytes of shared memory do not fit beside the kernel's own " +
               std::to_string(own + otherBytes);
    return k;
  }
  k.shared = true;
  return k;
}

KeptScores mlir::cuir::decideKeptScores(ElementwiseOp scores,
                                        int64_t otherBytes) {
  KeptScores decided;
  bool first = true;
  auto module = scores->getParentOfType<ModuleOp>();
  Operation *root = module ? module.getOperation() : scores.getOperation();
  root->walk([&](ElementwiseOp ew) {
    if (!CuIRDialect::VariantScoresAttrHelper(ew->getContext())
             .isAttrPresent(ew) ||
        !isReadPastScores(ew.getInputs()[0]))
      return;
    KeptScores k = sharedPlace(ew, otherBytes);
    if (first) {
      decided = k;
      first = false;
    } else if (decided.shared && !k.shared) {
      decided = k;
    } else if (decided.shared &&
               (k.threads != decided.threads || k.first != decided.first)) {
      decided.shared = false;
      decided.whyNot = "the kernels compute their scores with different "
                       "threads";
    } else if (decided.shared) {
      decided.bytes = std::max(decided.bytes, k.bytes);
    }
  });
  return decided;
}

std::string mlir::cuir::keptScoresHelper(const KeptScores &kept) {
  if (!kept.shared)
    return "// ---- cuir: the raw scores S, kept for the backward's "
           "derivative and partials at dS (the\n"
           "//      kernel overwrites its S tile with P): a register copy. "
           "(i) reads register i of the tile. ----\n"
           "template <int COUNT>\n"
           "struct cuir_kept_scores {\n"
           "  float v[COUNT];\n"
           "  __device__ __forceinline__ float operator()(int i) const { "
           "return v[i]; }\n"
           "};\n"
           "template <class Tile>\n"
           "__device__ __forceinline__ cuir_kept_scores<int(sizeof(Tile) / "
           "sizeof(float))> cuir_keep_scores(const Tile &tile) {\n"
           "  cuir_kept_scores<int(sizeof(Tile) / sizeof(float))> kept;\n"
           "  const float *s = reinterpret_cast<const float *>(&tile);\n"
           "#pragma unroll\n"
           "  for (int i = 0; i < int(sizeof(Tile) / sizeof(float)); ++i) "
           "kept.v[i] = s[i];\n"
           "  return kept;\n"
           "}\n";
  std::string threads = std::to_string(kept.threads);
  std::string tid = kept.first
                        ? "(threadIdx.x - " + std::to_string(kept.first) + ")"
                        : std::string("threadIdx.x");
  return "// ---- cuir: the raw scores S, kept for the backward's derivative "
         "and partials at dS (the\n"
         "//      kernel overwrites its S tile with P): in shared memory, "
         "register i of each of the\n"
         "//      " +
         threads +
         " threads that compute scores at [i][thread] (a warp's access is "
         "128 contiguous bytes);\n"
         "//      a thread reads back only what it wrote. (i) reads register "
         "i of the tile. ----\n"
         "template <int COUNT>\n"
         "struct cuir_kept_scores {\n"
         "  const float *at;\n"
         "  __device__ __forceinline__ float operator()(int i) const { "
         "return at[i * " +
         threads +
         "]; }\n"
         "};\n"
         "template <class Tile>\n"
         "__device__ __forceinline__ cuir_kept_scores<int(sizeof(Tile) / "
         "sizeof(float))> cuir_keep_scores(const Tile &tile) {\n"
         "  constexpr int COUNT = int(sizeof(Tile) / sizeof(float));\n"
         "  __shared__ float kept[COUNT * " +
         threads +
         "];\n"
         "  float *at = kept + " +
         tid +
         ";\n"
         "  const float *s = reinterpret_cast<const float *>(&tile);\n"
         "#pragma unroll\n"
         "  for (int i = 0; i < COUNT; ++i) at[i * " +
         threads +
         "] = s[i];\n"
         "  return {at};\n"
         "}\n";
}
