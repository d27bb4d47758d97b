//===- BlockMask.h - Classifying the tiles of a block mask ------*- C++ -*-===//

#ifndef CUIR_LIB_INTERPRETER_BLOCKMASK_H
#define CUIR_LIB_INTERPRETER_BLOCKMASK_H

#include "Values.h"

#include "cuir/Interpreter/Interpreter.h"

namespace mlir::cuir::interp {

/// The sizes of a problem that a block mask's lists depend on.
struct MaskProblem {
  int64_t B, Hq, Hkv, Nq, Nkv;
};

/// Bytes that classifying `mask` on `p` takes (the lists, as the lists and
/// as kernel buffers, the tile classes and one query tile's values of the
/// region), or std::nullopt if that overflows.
std::optional<int64_t> blockMaskBytes(BlockMaskOp mask, const MaskProblem &p);

/// Runs the region of `mask`, its arguments bound to `args`, on every
/// in-range pair of `p`, one query tile at a time, and builds the lists.
FailureOr<BlockMaskLists> classifyBlockMask(BlockMaskOp mask,
                                            ArrayRef<RtValue> args,
                                            const MaskProblem &p);

} // namespace mlir::cuir::interp

#endif // CUIR_LIB_INTERPRETER_BLOCKMASK_H
