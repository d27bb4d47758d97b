//===- Transfer.h - Give a kernel the semantics of a variant ----*- C++ -*-===//

#ifndef CUIR_TRANSFER_TRANSFER_H
#define CUIR_TRANSFER_TRANSFER_H

#include "cuir/Dialect/CuIR.h"

namespace mlir::cuir {

/// Attribute on the cuir.elementwise op that transfer inserts after each
/// score GEMM: it applies the variant's score function and mask.
inline constexpr llvm::StringLiteral kVariantOpAttr = "cuir.variant_scores";

/// Location metadata of ops a transform inserted: lowering emits them after
/// the source lines of the fused anchor location.
inline constexpr llvm::StringLiteral kInsertedLocTag = "cuir.inserted";

/// Rewrites `kernel` to compute `variant` instead of its own attention:
/// the variant's scores and mask after every score GEMM's completion, its
/// parameters as new kernel parameters, its normaliser. The kernel's own
/// causal mask is switched off (the variant's mask replaces it); its other
/// masks (ragged tails) stay.
LogicalResult transferKernel(KernelOp kernel, VariantOp variant,
                             llvm::StringRef spec);

/// Erases ops of `root` whose results are unused and that have no effects.
void eraseDeadOps(Operation *root);

} // namespace mlir::cuir

#endif // CUIR_TRANSFER_TRANSFER_H
