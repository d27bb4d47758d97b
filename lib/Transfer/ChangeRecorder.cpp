//===- ChangeRecorder.cpp - Transforms record what they change ------------===//

#include "cuir/Transfer/ChangeRecorder.h"

#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::cuir;

void ChangeRecorder::notifyOperationInserted(Operation *op,
                                             OpBuilder::InsertPoint previous) {
  // A moved op keeps its record (or lack of one).
  if (previous.isSet() || getEnclosingChange(op->getParentOp()) || getChange(op))
    return;
  setChange(op, rewrite);
}

void ChangeRecorder::notifyOperationErased(Operation *op) {
  if (!getEnclosingChange(op))
    recordRemoved(kernel, op, rewrite);
}

void RecordingRewriter::eraseDeadOps() {
  (void)runRegionDCE(*this, kernel->getRegions());
}
