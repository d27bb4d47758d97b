//===- BlockMask.h - A kernel's mask as a cuir.block_mask -------*- C++ -*-===//
//
// A runtime block mask (cuir.block_mask) is the variant's mask predicate as a
// function of the kernel's arguments and the coordinates (b, h, q, kv). The
// transform that makes a kernel walk block lists builds it from the mask
// condition of the kernel's variant scores.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_TRANSFER_BLOCKMASK_H
#define CUIR_TRANSFER_BLOCKMASK_H

#include "cuir/Dialect/CuIR.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::cuir {

/// Builds the cuir.block_mask of `kernel` from `visible`, the i1 mask
/// condition inside the kernel's variant-scores cuir.elementwise, whose
/// coordinate block arguments are `b`, `h`, `q` and `kv`. The op reads the
/// backward slice of `visible`: its ops in the region, the kernel arguments
/// it reaches (which become the op's arguments, with their cuir.arg and
/// cuir.extent) and the side-effect-free ops outside the region that compute
/// from kernel arguments and constants only. It depends on batch or heads if
/// the slice reads b or h; with `perKvHead`, a slice that reads h gets a row
/// of lists per KV head instead (`kv_heads`: a GQA group's query heads
/// merged), for a kernel whose thread block walks a group's heads. It is inserted after the kernel as
/// `@<kernel>_blocks` (made unique), and the kernel's `cuir.block_mask`
/// names it; a block mask of the module with the same predicate, tiles and
/// depends (another instantiation's) is named instead. The kernel's
/// block_mask:* arguments are not added.
///
/// Fails, with an error at the op that reads it, if the slice reads any
/// other value (a score, a loop's induction variable, a block id, memory
/// outside the region) or a kernel argument without a cuir.arg or of a type
/// a block mask cannot take.
FailureOr<BlockMaskOp> buildBlockMask(RewriterBase &rewriter, KernelOp kernel,
                                      Value visible, Value b, Value h, Value q,
                                      Value kv, int64_t blockM, int64_t blockN,
                                      bool perKvHead = false);

/// Whether `a` and `b` classify pairs alike: the same arguments (types and
/// attributes) and equivalent regions. Their tiles and depends may differ.
bool haveSamePredicate(BlockMaskOp a, BlockMaskOp b);

} // namespace mlir::cuir

#endif // CUIR_TRANSFER_BLOCKMASK_H
