//===- DifferentiateScores.cpp - The --cuir-differentiate-scores pass -----===//

#include "cuir/Passes/Passes.h"
#include "cuir/Transfer/ScoreDerivative.h"

namespace mlir::cuir {
#define GEN_PASS_DEF_DIFFERENTIATESCORES
#include "cuir/Passes/Passes.h.inc"
} // namespace mlir::cuir

using namespace mlir;
using namespace mlir::cuir;

namespace {
class DifferentiateScoresPass
    : public cuir::impl::DifferentiateScoresBase<DifferentiateScoresPass> {
public:
  using Base::Base;
  void runOnOperation() override {
    // Every variant is tried, so that one run reports every refusal.
    SmallVector<VariantOp> variants;
    getOperation().walk([&](VariantOp v) { variants.push_back(v); });
    bool anyFailed = false;
    for (VariantOp variant : variants)
      anyFailed |= failed(differentiateScoreMod(variant));
    if (anyFailed)
      signalPassFailure();
  }
};
} // namespace
