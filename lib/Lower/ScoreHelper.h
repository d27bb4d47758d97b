//===- ScoreHelper.h - The variant's scores as C++ statements ---*- C++ -*-===//

#ifndef CUIR_LIB_LOWER_SCOREHELPER_H
#define CUIR_LIB_LOWER_SCOREHELPER_H

#include "cuir/Dialect/CuIR.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::cuir {

/// The statements of a score helper's body.
struct ScoreBody {
  /// Once per call (indented for the function body) and per element
  /// (indented for the innermost fragment loop).
  std::string hoisted, stmts;
  /// The same without the statements only the mask reads: what the path
  /// that reads the mask from the block mask's bits needs.
  std::string unmaskedHoisted, unmaskedStmts;
  /// Per result tile, the element's new value: `value`, then, on masking
  /// steps, `fill` where `hidden` holds (empty: no mask). Written as a
  /// conditional store rather than a select of selects: beside the kernel's
  /// own bound check, the select form made the sm_80 kernel's d = 64 masking
  /// steps spill.
  struct MaskedAssign {
    std::string value, hidden, fill;
    /// The new value as one expression (MASK a template parameter in scope).
    std::string expression() const {
      return hidden.empty() ? value
                            : "(MASK && " + hidden + " ? " + fill + " : " +
                                  value + ")";
    }
  };
  std::vector<MaskedAssign> maskedAssigns;
  /// The same with the mask read from the block mask's bits of the tile
  /// (`mask_bits`, a cuir_kernels::MaskBits) in place of the mask's value.
  std::vector<MaskedAssign> bitsMaskedAssigns;
  bool masked = false;
  /// The index clamps min(q_idx, bound) and min(kv_idx, bound) of the
  /// body, by the bound's C++ (true: the query's); their statements are
  /// among `hoisted`. Where the thread's whole fragment is within every
  /// bound, `inRange` computes the same without the clamps.
  std::vector<std::pair<bool, std::string>> clampBounds;
  /// Captured tensors read at (..., kv_idx), through a local pointer
  /// declared pair-aligned where the tensor is: (that pointer, the tensor).
  std::vector<std::pair<std::string, std::string>> pairReads;
  std::shared_ptr<ScoreBody> inRange;
  /// With a gather phase: the in-range loads gathered early.
  std::shared_ptr<struct GatherBody> gathered;
};

/// The loads of the in-range loops that a kernel's early score hook issues
/// (each a captured tensor read once per score at (..., kv_idx)), a word
/// per pair of a thread's adjacent keys, and the scores that read them.
struct GatherBody {
  /// Once per call, and per pair (indented for the innermost fragment loop,
  /// which visits a pair at its first key): what the addresses read.
  std::string hoisted, stmts;
  /// As ScoreBody's: the in-range condition, which the gather decides.
  std::vector<std::pair<bool, std::string>> clampBounds;
  std::vector<std::pair<std::string, std::string>> pairReads;
  /// Per gathered load: the field of the gathered struct, the address of
  /// the pair's first element, the bytes of an element, the elements of a
  /// row of its tensor (its last dimension), and the tensor (its parameter).
  struct Word {
    std::string field, address;
    unsigned elementBytes;
    int64_t rowElements;
    std::string tensor;
    /// The word's C++ type: a pair of elements.
    const char *type() const {
      return elementBytes == 1 ? "uint16_t" : "uint32_t";
    }
  };
  std::vector<Word> words;
  /// The in-range scores, reading each gathered load from `g.<field>`.
  std::shared_ptr<ScoreBody> apply;
  /// The warps of a block that have a buffer in shared memory where the
  /// gather stages its one tensor's rows (the scores patcher decides:
  /// stagingBufferWarps); 0 where each thread gathers its own words.
  int64_t stagingWarps = 0;
  /// The first of those warps (the scores run in warps [first, first +
  /// stagingWarps) of the block: a warp-specialized kernel's consumers).
  int64_t firstStagingWarp = 0;
};

/// Prints the body of the variant's `ew` after MLIR's clean-up of a copy
/// (the Target CuIR stays as it is); with `halve`, of s / 2 for the sigmoid
/// weights' tanh(s / 2). With `pairIndex` and `keyInPair` (a register's
/// pair and its key in the pair, FragmentWalk's), the in-range loads that
/// can be gathered early are (`gathered`).
FailureOr<ScoreBody> printScoreBody(ElementwiseOp ew, bool halve,
                                    llvm::StringRef hoistIndent,
                                    llvm::StringRef elementIndent,
                                    llvm::StringRef pairIndex = "",
                                    llvm::StringRef keyInPair = "");

/// The statements of a cuir.scatter_add's body over (ds, b, h, q_idx,
/// kv_idx), as printScoreBody's, and the expressions of the indices and of
/// the value it adds.
struct ScatterBody {
  std::string hoisted, stmts;
  std::vector<std::string> indices;
  std::string value;
  /// Whether an index depends on the element (q_idx, kv_idx or ds): if
  /// none does, every element of a call adds to one place.
  bool perElementIndex = false;
};

/// Prints the body of `op` (inputs dS and, if the partial reads the score,
/// the raw scores: `ds`, `s`) after MLIR's clean-up of a copy.
FailureOr<ScatterBody> printScatterBody(ScatterAddOp op,
                                        llvm::StringRef hoistIndent,
                                        llvm::StringRef elementIndent);

/// The statements of a function's body and the expression it returns.
struct FunctionBody {
  std::string stmts, result;
};

/// Prints the body of `op`'s region (one block, ending in a terminator that
/// yields one value) after MLIR's clean-up of a copy, as the statements of a
/// C++ function whose parameters are the block's arguments, named
/// `argNames`; `what` names what it computes in diagnostics. `simplify`, if
/// given, rewrites the copy's body first (what the caller knows of the
/// arguments that MLIR does not).
FailureOr<FunctionBody>
printFunctionBody(Operation *op, llvm::ArrayRef<std::string> argNames,
                  llvm::StringRef indent, llvm::StringRef what,
                  llvm::function_ref<void(Block &)> simplify = nullptr);

} // namespace mlir::cuir

#endif // CUIR_LIB_LOWER_SCOREHELPER_H
