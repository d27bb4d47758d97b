//===- Diff.h - What a Target CuIR kernel changed from its Source -*- C++ -*-===//
//
// Lowering patches the expert source for exactly the changes that the
// transforms recorded on the IR. The diff aligns each block of the Target
// CuIR kernel with the Source CuIR's (ops by name and location, in order):
// an op with a `cuir.change` was inserted; a Source op without a counterpart
// was removed (it must be listed in the kernel's `cuir.removed`); an operand
// that reads another value than its Source counterpart changed, and belongs
// to the rewrite of the changed value it reads (or of the removed op it read).
// Anything else (an edited attribute, an op nobody recorded) is an error at
// its location.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LOWER_DIFF_H
#define CUIR_LOWER_DIFF_H

#include "cuir/Dialect/CuIR.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::cuir {

/// Locations in one form: a file range parsed as `3:1 to :7` and one built
/// as `3:1 to 3:7` print alike but are different attributes.
class LocationCanonicalizer {
public:
  Location canonical(Location loc);
  bool same(Location a, Location b) { return canonical(a) == canonical(b); }

private:
  llvm::DenseMap<Attribute, Attribute> cache;
};

struct Difference {
  enum class Kind {
    /// `target` was inserted (with everything nested in it).
    Inserted,
    /// `source` has no counterpart in the Target CuIR.
    Removed,
    /// Operand `operand` of `target` (counterpart `source`) reads another
    /// value than in the Source CuIR.
    Operand,
    /// `argument` is a new kernel argument.
    Argument,
  };
  Kind kind;
  Rewrite rewrite;
  Operation *target = nullptr;
  Operation *source = nullptr;
  unsigned operand = 0;
  BlockArgument argument;

  /// Where the difference is reported.
  Location getLoc() const;
  /// For Operand: the value read in the Source and in the Target CuIR.
  Value getSourceValue() const { return source->getOperand(operand); }
  Value getTargetValue() const { return target->getOperand(operand); }
};

struct KernelDiff {
  KernelOp target, source;
  SmallVector<Difference> differences;
  /// The Source CuIR counterpart of each Target CuIR op that has one.
  llvm::DenseMap<Operation *, Operation *> sourceOf;
  /// The rewrite that removed each removed Source CuIR op.
  llvm::DenseMap<Operation *, Rewrite> removedBy;

  /// The differences of one rewrite.
  SmallVector<Difference> of(Rewrite rewrite) const;
};

/// Diffs `target` against `source`, its Source CuIR; an unrecorded
/// difference is an error at its location.
FailureOr<KernelDiff> diffKernels(KernelOp target, KernelOp source);

} // namespace mlir::cuir

#endif // CUIR_LOWER_DIFF_H
