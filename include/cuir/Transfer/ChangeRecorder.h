//===- ChangeRecorder.h - Transforms record what they change ----*- C++ -*-===//
//
// Lowering patches the expert source only where a transform recorded a
// change (see ChangeAttr and RemovedAttr). Transforms build and erase through
// a rewriter with this listener: every op it sees inserted gets the current
// rewrite's `cuir.change` (ops nested in an inserted op need none), every
// Source CuIR op it sees erased is added to the kernel's `cuir.removed`.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_TRANSFER_CHANGERECORDER_H
#define CUIR_TRANSFER_CHANGERECORDER_H

#include "cuir/Dialect/CuIR.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::cuir {

class ChangeRecorder : public RewriterBase::Listener {
public:
  ChangeRecorder(KernelOp kernel, Rewrite rewrite)
      : kernel(kernel), rewrite(rewrite) {}

  /// Later changes belong to `r`.
  void setRewrite(Rewrite r) { rewrite = r; }
  Rewrite getRewrite() const { return rewrite; }

  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override;
  void notifyOperationErased(Operation *op) override;

private:
  KernelOp kernel;
  Rewrite rewrite;
};

/// A rewriter of `kernel` whose changes `recorder` records.
class RecordingRewriter : public IRRewriter {
public:
  RecordingRewriter(KernelOp kernel, Rewrite rewrite)
      : IRRewriter(kernel.getContext()), recorder(kernel, rewrite),
        kernel(kernel) {
    setListener(&recorder);
  }
  ChangeRecorder &getRecorder() { return recorder; }
  /// Erases the ops of the kernel that nothing uses any more (MLIR's region
  /// DCE), recording those of the Source CuIR as removed.
  void eraseDeadOps();

private:
  ChangeRecorder recorder;
  KernelOp kernel;
};

} // namespace mlir::cuir

#endif // CUIR_TRANSFER_CHANGERECORDER_H
