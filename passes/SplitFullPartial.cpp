//===- SplitFullPartial.cpp - The --cuir-split-full-partial pass ----------===//

#include "cuir/Passes/Passes.h"
#include "cuir/Transfer/Split.h"

#include "llvm/ADT/StringSwitch.h"

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
    std::optional<BlockMaskMode> mode =
        llvm::StringSwitch<std::optional<BlockMaskMode>>(blockMask)
            .Case("auto", BlockMaskMode::Auto)
            .Case("runtime", BlockMaskMode::Runtime)
            .Case("dense", BlockMaskMode::Dense)
            .Default(std::nullopt);
    if (!mode) {
      emitError(getOperation().getLoc())
          << "--cuir-split-full-partial: block-mask='" << blockMask
          << "' is none of auto, runtime, dense";
      return signalPassFailure();
    }
    // The kernels are collected first: a block mask adds ops to the module.
    for (KernelOp kernel :
         llvm::to_vector(getOperation().getOps<KernelOp>()))
      if (failed(splitFullPartial(kernel, *mode)))
        return signalPassFailure();
  }
};
} // namespace
