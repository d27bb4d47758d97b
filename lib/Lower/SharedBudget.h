//===- SharedBudget.h - The shared memory lowering may add ------*- C++ -*-===//
//
// Helpers that lowering adds (a staged gather, the kept raw scores) take
// static shared memory beside the kernel's own buffers; the budget they
// share.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LIB_LOWER_SHAREDBUDGET_H
#define CUIR_LIB_LOWER_SHAREDBUDGET_H

#include "cuir/Dialect/CuIR.h"

namespace mlir::cuir {

/// The shared memory of sm_90 a block may have.
constexpr int64_t kSharedBytesPerBlock = 227 * 1024;
/// What the kernels' shared memory holds beside their buffers (barriers, and
/// the slack of aligning the buffers to 1 KB).
constexpr int64_t kSharedBytesBesideBuffers = 2048;

/// The bytes of the buffers `kernel` allocates itself (its cuir.alloc ops).
inline int64_t ownSharedBytes(KernelOp kernel) {
  int64_t own = 0;
  kernel.walk([&](AllocOp alloc) {
    auto type = cast<MemRefType>(alloc.getType());
    own += type.getNumElements() *
           llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  });
  return own;
}

} // namespace mlir::cuir

#endif // CUIR_LIB_LOWER_SHAREDBUDGET_H
