//===- ScoreHelper.h - The variant's scores as C++ statements ---*- C++ -*-===//

#ifndef CUIR_LIB_LOWER_SCOREHELPER_H
#define CUIR_LIB_LOWER_SCOREHELPER_H

#include "cuir/Dialect/CuIR.h"

#include <string>

namespace mlir::cuir {

/// The statements of a score helper's body.
struct ScoreBody {
  /// Once per call (indented for the function body) and per element
  /// (indented for the innermost fragment loop).
  std::string hoisted, stmts;
  /// The element's new value: the score, or under MASK the mask's select.
  std::string assign;
  bool masked = false;
};

/// Prints the body of the variant's `ew` after MLIR's clean-up of a copy
/// (the Target CuIR stays as it is); with `halve`, of s / 2 for the sigmoid
/// weights' tanh(s / 2).
FailureOr<ScoreBody> printScoreBody(ElementwiseOp ew, bool halve,
                                    llvm::StringRef hoistIndent,
                                    llvm::StringRef elementIndent);

} // namespace mlir::cuir

#endif // CUIR_LIB_LOWER_SCOREHELPER_H
