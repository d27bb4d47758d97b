//===- Patcher.h - One patcher per transform's rewrite ----------*- C++ -*-===//
//
// Lowering hands each difference between Target and Source CuIR to the
// patcher of the rewrite that recorded it (see Diff.h); the patcher turns its
// differences into edits of the expert source. A new transform is one new
// Rewrite case and one new patcher file.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LIB_LOWER_PATCHER_H
#define CUIR_LIB_LOWER_PATCHER_H

#include "cuir/Lower/Diff.h"
#include "cuir/Lower/Lower.h"
#include "cuir/Lower/SourcePatch.h"

#include "llvm/ADT/DenseSet.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <set>

namespace mlir::cuir {

/// A field of the params struct for a new kernel parameter.
struct ParamField {
  std::string name, ctype, pytype, extent, defaultValue;
  /// A captured tensor's: torch dtype, shape, row-major strides (elements)
  /// and its default, row-major (non-finite floats as "nan", "inf", "-inf").
  std::string dtype;
  SmallVector<int64_t> shape, strides;
  std::optional<nlohmann::ordered_json> tensorDefault;
  /// A block mask's list ("kv_indices", ...): the field is its device
  /// pointer (type "block_mask"), bound from a block mask, not by name.
  std::string blockMaskList;
  /// A parameter's fp32 gradient buffer ("grad"): the parameter's name,
  /// and whether its partials are centred on the row's reference key
  /// (cuir.row_centred), which a check modelling the kernel's rounding needs.
  std::string gradOf;
  bool rowCentred = false;
};

/// The runtime block mask of a variant library, for its manifest.
struct BlockMaskInfo {
  /// The tiles and broadcast of the kernels of one head dim.
  struct Tiles {
    int64_t headDim, blockM, blockN;
    bool perBatch, perHead;
    /// A row per KV head, its GQA group's query heads together.
    bool perKvHead = false;
  };
  /// The cuir.block_mask op whose mask the library classifies.
  std::string symbol;
  std::vector<Tiles> tiles;
  /// The library's attention entry point and the two block-mask entries
  /// named after it (cuir/block_mask.h).
  std::string attentionEntry, entry, dimsEntry;
  /// (list, params field) of the kernels' list arguments: ("kv_indices",
  /// "cuir_kv_indices"), ...
  std::vector<std::pair<std::string, std::string>> fields;
  /// The variant parameters the mask reads.
  std::vector<std::string> params;
};

/// A kernel that walks a runtime block mask, and its head dim.
struct BlockMaskKernel {
  KernelOp kernel;
  BlockMaskOp op;
  int64_t headDim;
};

/// The role prefix of a block mask's list arguments ("block_mask:<list>").
inline constexpr llvm::StringLiteral kBlockMaskRolePrefix = "block_mask:";
/// The params field of the list argument of role `role`: "cuir_<list>".
std::string blockMaskFieldName(llvm::StringRef role);

/// The block mask's optional list of the partial tiles' mask bits
/// (cuir/block_mask.h): not a list of the IR but a copy of its mask, which
/// the classification writes and the masking steps read in place of
/// evaluating the mask.
inline constexpr llvm::StringLiteral kMaskBitsList = "partial_bits";

/// The kernels' block-iteration point (cuir/kv_tiles.cuh), which a runtime
/// block mask's patch makes a ListedKvTiles.
inline constexpr llvm::StringLiteral kKvTilesVariable = "kv_tiles";

/// Whether `kernel`'s masking steps read their tiles' mask from the block
/// mask's bits where the call gives them: its KV tiles come from the forward
/// lists of a block mask with a row per query head, whose tiles have 32 to
/// 1024 keys, a multiple of 32 (a word a row per 32 keys), and whose mask
/// costs more than the bits' load (a lookup per key, or several ops).
bool usesMaskBits(KernelOp kernel);

/// The file range a location names (through NameLoc; the callee or, with
/// `caller`, the call site of a CallSiteLoc; the first range of a FusedLoc).
FileLineColRange rangeOf(Location loc, bool caller = false);

/// What the patchers of one module share: the source and its patch, the
/// helpers to add before the kernels, the parameters for the manifest.
class PatchContext {
public:
  PatchContext(const SourceText &src, SourcePatch &patch, StringRef path)
      : src(src), patch(patch), sourcePath(path.str()) {}

  const SourceText &src;
  SourcePatch &patch;
  std::string sourcePath;
  /// The kernel being patched and its differences.
  KernelDiff *diff = nullptr;

  /// Adds an edit; a conflict with another edit is an error at `loc`.
  LogicalResult edit(SourceEdit e, Location loc);
  /// The first line of `loc`'s range (0 if it has none).
  unsigned lineOf(Location loc, bool caller = false) const {
    FileLineColRange r = rangeOf(loc, caller);
    return r ? r.getStartLine() : 0;
  }
  /// A helper function to add (once) before the first function that uses it.
  void addHelper(const std::string &key, const std::string &text);
  /// A line that calls a helper.
  void noteCall(unsigned line) {
    if (!firstCallLine || line < firstCallLine)
      firstCallLine = line;
  }
  /// A copy of lines [first, last] (as patched) after line `after`, with
  /// `from` replaced by `to` and `header` above it.
  struct Copy {
    unsigned first, last, after;
    std::string from, to, header;
    Location loc;
  };
  void addCopy(Copy c) { copies.push_back(std::move(c)); }

  /// Applies the helpers and copies once every patcher ran.
  LogicalResult finish(unsigned helperLine, Location loc);

  /// The params struct the kernels read and the header that declares it
  /// (a backward pass has its own).
  std::string paramsStruct = "cuir_attention_params";
  std::string paramsHeader = "cuir/attention_params.h";
  /// The variant and its normaliser, from the kernels' records.
  std::string variantSpec;
  Normalizer normalizer = Normalizer::Softmax;
  /// Whether the variant kernels run the causal instantiation (is_causal).
  bool causal = false;
  std::vector<ParamField> fields;
  std::set<std::string> fieldNames;
  /// The kernels that walk a runtime block mask; the mask once lowered.
  std::vector<BlockMaskKernel> blockMaskKernels;
  std::optional<BlockMaskInfo> blockMask;
  /// Score tiles whose variant scores are written as s / 2 for the sigmoid
  /// weights, in the current kernel.
  unsigned halvedScoreSites = 0;

private:
  std::set<std::string> helperKeys;
  std::vector<std::string> helpers;
  unsigned firstCallLine = 0;
  std::vector<Copy> copies;
};

class Patcher {
public:
  virtual ~Patcher() = default;
  /// The rewrite whose differences this patcher owns.
  virtual Rewrite getRewrite() const = 0;
  /// Edits the source for `differences`, all of this patcher's rewrite in
  /// the current kernel; a difference it cannot express is an error there.
  virtual LogicalResult patch(ArrayRef<Difference> differences,
                              PatchContext &ctx) = 0;
};

std::unique_ptr<Patcher> createParameterPatcher();
std::unique_ptr<Patcher> createConstantPatcher();
std::unique_ptr<Patcher> createScoresPatcher();
std::unique_ptr<Patcher> createNormalizerPatcher();
std::unique_ptr<Patcher> createSplitPatcher();
std::unique_ptr<Patcher> createBlockListPatcher();
std::unique_ptr<Patcher> createParamGradPatcher();

/// For a kernel that walks a runtime block mask (its `cuir.block_mask`):
/// adds the params fields of its list arguments (`block_mask:` roles,
/// whichever rewrite recorded them) and notes it for finishBlockMasks.
/// Nothing for other kernels.
LogicalResult lowerBlockMask(KernelOp kernel, PatchContext &ctx);
/// Once every kernel is lowered: appends the mask of the noted kernels (one
/// for the module) and its classification's entry points, with the tiles of
/// each head dim, to the source.
LogicalResult finishBlockMasks(PatchContext &ctx, Location loc);

/// An inserted op a patcher did not write: an error, unless it is unused or
/// a constant (written as a literal where used).
LogicalResult checkAllWritten(ArrayRef<Difference> differences,
                              const llvm::DenseSet<Operation *> &written);

} // namespace mlir::cuir

#endif // CUIR_LIB_LOWER_PATCHER_H
