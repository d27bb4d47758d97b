//===- ScoreDerivative.h - Derivatives of a variant's score -----*- C++ -*-===//
//
// The backward pass needs d score_mod / d score and, for every element a
// score_mod loads from a float array parameter, d score_mod / d element.
// They are derived from the score_mod region by the chain rule over its
// arith and math ops (docs/ScoreDerivative.md).
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_TRANSFER_SCOREDERIVATIVE_H
#define CUIR_TRANSFER_SCOREDERIVATIVE_H

#include "cuir/Dialect/CuIR.h"

namespace mlir::cuir {

/// Adds to `variant` the cuir.score_grad of its cuir.score_mod, replacing
/// an earlier one, and returns it. A variant without a score_mod gets none
/// (returns null). An op on a differentiated path without an exact rule is
/// refused: an error at its location, the variant left unchanged.
FailureOr<ScoreGradOp> differentiateScoreMod(VariantOp variant);

} // namespace mlir::cuir

#endif // CUIR_TRANSFER_SCOREDERIVATIVE_H
