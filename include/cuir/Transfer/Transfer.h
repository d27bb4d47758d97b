//===- Transfer.h - Give a kernel the semantics of a variant ----*- C++ -*-===//

#ifndef CUIR_TRANSFER_TRANSFER_H
#define CUIR_TRANSFER_TRANSFER_H

#include "cuir/Dialect/CuIR.h"

namespace mlir::cuir {

/// Rewrites `kernel` to compute `variant` instead of its own attention:
/// the variant's scores and mask after every score GEMM's completion, its
/// parameters as new kernel parameters, its normaliser. The kernel's own
/// causal mask is switched off (the variant's mask replaces it); its other
/// masks (ragged tails) stay. Every change is recorded on the IR
/// (`cuir.change`, `cuir.removed`).
LogicalResult transferKernel(KernelOp kernel, VariantOp variant,
                             llvm::StringRef spec);

} // namespace mlir::cuir

#endif // CUIR_TRANSFER_TRANSFER_H
