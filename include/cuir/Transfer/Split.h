//===- Split.h - Full / partial split of the key/value loops ----*- C++ -*-===//

#ifndef CUIR_TRANSFER_SPLIT_H
#define CUIR_TRANSFER_SPLIT_H

#include "cuir/Dialect/CuIR.h"

namespace mlir::cuir {

/// Restricts the variant mask of `kernel` (inserted by transfer) to the
/// key/value blocks that need it and skips the blocks nobody sees. See the
/// cuir-split-full-partial pass.
/// How the split treats masks it cannot bound statically: `Auto` visits the
/// tiles of a runtime block mask, `Runtime` does so for every mask, `Dense`
/// keeps the mask in every block.
enum class BlockMaskMode { Auto, Runtime, Dense };

LogicalResult splitFullPartial(KernelOp kernel,
                               BlockMaskMode mode = BlockMaskMode::Auto);

/// The split of a backward kernel (after the backward transfer): its query
/// steps visit the query tiles that a runtime block mask's transposed lists
/// give for its KV tile, the masking steps the partial ones, the unmasked
/// steps the full ones (BackwardSplit.cpp). splitFullPartial calls it for
/// the kernels of a backward pass.
LogicalResult splitBackward(KernelOp kernel, BlockMaskMode mode);

} // namespace mlir::cuir

#endif // CUIR_TRANSFER_SPLIT_H
