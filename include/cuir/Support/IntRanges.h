//===- IntRanges.h - Signed ranges of integer and index values --*- C++ -*-===//
//
// The static mask analysis and the lowering both ask what values an integer
// or index value can take: the analysis to know that a sum cannot wrap, the
// lowering to know whether a C++ int holds an index value (else it computes
// the value at 64 bits, as the interpreter does). Both read MLIR's integer
// range inference (InferIntRangeInterface) of the ops that define the value.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_SUPPORT_INTRANGES_H
#define CUIR_SUPPORT_INTRANGES_H

#include "mlir/IR/Value.h"
#include "mlir/Interfaces/InferIntRangeInterface.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <functional>

namespace mlir::cuir {

/// Coordinates and sizes are below 2^30: the kernels refuse sequences of
/// 2^30 tokens or more (cuir/attention_params_check.h), and a batch or head
/// count is a grid dimension.
inline constexpr int64_t kIndexLimit = int64_t(1) << 30;

/// Signed ranges of integer and index values, index at 64 bits (as the
/// interpreter computes it), memoized. A value is bounded by the integer
/// range inference of the op that defines it, over its operands' ranges;
/// the result of an scf.if by what its branches yield.
/// A loop's induction variable is within the loop's bounds. Other index
/// block arguments (coordinates, sizes) are in [0, kIndexLimit). Any other
/// value has its type's range.
/// An index value for which `heldInInt` is true (the lifted source's own
/// values, which the source holds in a C++ int) is narrowed to int's range.
class IntRanges {
public:
  explicit IntRanges(std::function<bool(Value)> heldInInt = nullptr)
      : heldInInt(std::move(heldInInt)) {}

  /// The range of `v` (an integer or index value), at its type's width.
  ConstantIntRanges of(Value v);
  /// Whether every value `v` takes, read as signed, is in [lo, hi].
  bool within(Value v, int64_t lo, int64_t hi);
  /// Whether every value of `v` is non-negative.
  bool nonNegative(Value v) { return !of(v).smin().isNegative(); }

private:
  ConstantIntRanges compute(Value v, unsigned depth);
  ConstantIntRanges seed(Value v) const;

  std::function<bool(Value)> heldInInt;
  llvm::DenseMap<Value, ConstantIntRanges> memo;
};

} // namespace mlir::cuir

#endif // CUIR_SUPPORT_INTRANGES_H
