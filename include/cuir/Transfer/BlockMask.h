//===- BlockMask.h - A kernel's runtime block mask --------------*- C++ -*-===//
//
// Builds the cuir.block_mask of a kernel from the mask condition of its
// variant's scores: the predicate whose tiles a runtime classification
// sorts into empty, partial and full.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_TRANSFER_BLOCKMASK_H
#define CUIR_TRANSFER_BLOCKMASK_H

#include "cuir/Dialect/CuIR.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::cuir {

/// The cuir.block_mask of `visible`, an i1 inside `kernel`'s variant scores
/// whose coordinates are `b`, `h`, `q`, `kv`: its slice becomes the op's
/// region, the kernel arguments it reads the op's arguments (same cuir.arg
/// and cuir.extent), pure ops outside the region over them and constants
/// are cloned. Inserted after the kernel as `<kernel>_blocks`, named by the
/// kernel's `cuir.block_mask`; a block mask of the module with the same
/// predicate, tiles and depends (another instantiation's) is reused. Fails, at the value, if the mask reads what
/// is neither (a loop value, a score).
FailureOr<BlockMaskOp> buildBlockMask(KernelOp kernel, Value visible, Value b, Value h, Value q,
                                      Value kv, int64_t blockM, int64_t blockN);

/// Whether `a` and `b` classify pairs alike: the same arguments (types and
/// attributes) and equivalent regions. Their tiles and depends may differ.
bool haveSamePredicate(BlockMaskOp a, BlockMaskOp b);

} // namespace mlir::cuir

#endif // CUIR_TRANSFER_BLOCKMASK_H
