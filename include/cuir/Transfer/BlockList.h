//===- BlockList.h - Key/value loops over a runtime block mask --*- C++ -*-===//
//
// Rewrites a kernel's key/value loops to visit the tiles its runtime block
// mask lists (see BlockList.cpp): the split's fallback for masks it cannot
// bound statically.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_TRANSFER_BLOCKLIST_H
#define CUIR_TRANSFER_BLOCKLIST_H

#include "cuir/Dialect/CuIR.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::cuir {

struct AttentionStructure;
class RecordingRewriter;

/// The kernel's own block bounds: the masking steps' top, the unmasked
/// steps' top and their lowest block (null when 0), and the op after which
/// all are computed.
struct ListedBounds {
  Value top, unmaskedTop, lowest;
  Operation *after = nullptr;
};

/// Makes the loops of `kernel` visit the tiles of a runtime block mask of
/// `visible`, the mask condition in the variant's `scores`: builds the
/// kernel's cuir.block_mask, adds the list arguments, reads the list lengths
/// after `bounds.after` in place of the bounds, and maps every key
/// coordinate n * BLOCK_N of a virtual block n through the lists.
LogicalResult visitListedBlocks(KernelOp kernel, AttentionStructure &as,
                                RecordingRewriter &rewriter,
                                ElementwiseOp scores, Value visible,
                                const ListedBounds &bounds);

/// Appends to `kernel` one list argument (memref<?xi32> in global memory)
/// per role of `roles`, recorded as new parameters, into `lists`; fails if
/// the kernel already has one of them.
LogicalResult addBlockListArguments(KernelOp kernel, ArrayRef<StringRef> roles,
                                    SmallVectorImpl<Value> &lists);

/// Entry `at` of the i32 list `list`, as an index, built at `b`.
Value readListEntry(OpBuilder &b, Location loc, Value list, Value at);

/// Virtual block numbers: `seeds` (bounds), the induction variables of
/// loops bounded by them, and sums, differences and selects of those with
/// constants or each other; ops for which `isNew` holds are not followed.
llvm::SetVector<Value>
collectVirtualBlocks(KernelOp kernel, ArrayRef<Value> seeds,
                     function_ref<bool(Operation *)> isNew);

} // namespace mlir::cuir

#endif // CUIR_TRANSFER_BLOCKLIST_H
