//===- SplitFullPartial.cpp - The --cuir-split-full-partial pass ----------===//

#include "cuir/Passes/Passes.h"
#include "cuir/Transfer/Split.h"

namespace mlir::cuir {
#define GEN_PASS_DEF_SPLITFULLPARTIAL
#include "cuir/Passes/Passes.h.inc"
} // namespace mlir::cuir

using namespace mlir;
using namespace mlir::cuir;

namespace {
class SplitFullPartialPass
    : public cuir::impl::SplitFullPartialBase<SplitFullPartialPass> {
public:
  using Base::Base;
  void runOnOperation() override {
    for (KernelOp kernel : getOperation().getOps<KernelOp>())
      if (failed(splitFullPartial(kernel)))
        return signalPassFailure();
  }
};
} // namespace
