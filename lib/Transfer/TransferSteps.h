//===- TransferSteps.h - The steps of one transfer --------------*- C++ -*-===//
//
// Private to lib/Transfer: the state and steps that the forward
// (Transfer.cpp) and backward (BackwardTransfer.cpp) transfers share.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LIB_TRANSFER_TRANSFERSTEPS_H
#define CUIR_LIB_TRANSFER_TRANSFERSTEPS_H

#include "cuir/Transfer/AttentionAnalysis.h"
#include "cuir/Transfer/BackwardAnalysis.h"
#include "cuir/Transfer/ChangeRecorder.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::cuir::detail {

/// What the steps of one transfer share.
struct Transfer {
  Transfer(KernelOp kernel, VariantOp variant, StringRef spec)
      : kernel(kernel), variant(variant), spec(spec),
        rewriter(kernel, Rewrite::Parameter) {}

  LogicalResult run();
  /// The steps of a kernel of a backward pass (BackwardTransfer.cpp).
  LogicalResult runBackward();

private:
  LogicalResult addParameters();
  /// A softmax score_mod's float constants of magnitude 2^16 or more refused.
  static LogicalResult checkLargeScoreConstants(ScoreModOp mod);
  void switchOffCausal();
  void keepCausal();
  bool maskImpliesCausal();
  LogicalResult foldScale(function_ref<bool(OpOperand &)> folds = nullptr);
  void insertScores(ScoreSite &site);
  ElementwiseOp insertScores(Value score, ArrayRef<Value> at);
  ElementwiseOp createScoreOp(Value score, ArrayRef<Value> at, Location loc);
  Value variantScore(OpBuilder &eb, Location loc, Value raw);
  void inlineMods(OpBuilder &eb, Block *body);
  SmallVector<Value> clampedCoordinates(OpBuilder &eb, Block *body,
                                        ValueRange at);
  SmallVector<Value> inlineMod(OpBuilder &eb, Block *body, Operation *mod,
                               ValueRange args, IRMapping &map,
                               SmallVector<Value> &clamped);
  IRMapping variantParamMap();
  // Backward (BackwardTransfer.cpp).
  LogicalResult insertBackwardScores(BackwardSite &site, ScoreGradOp grad);
  Value insertScoreDerivative(BackwardSite &site, ScoreGradOp grad,
                              ArrayRef<Value> at);
  void insertDerivative(BackwardSite &site, Value derivative);
  LogicalResult useSigmoidBackward(BackwardSite &site);
  LogicalResult addGradientBuffers(ScoreGradOp grad);
  llvm::SmallDenseSet<unsigned> uncentredParams(ScoreGradOp grad);
  void insertParamGrads(BackwardSite &site, ScoreGradOp grad,
                        ArrayRef<Value> at);
  LogicalResult useSigmoidWeights(ScoreSite &site);
  Value onesLike(Value like, Location loc);
  Value sigmoidTile(Value s, Value one, Location loc);
  void dropRowNormalizers();
  void dropLogSumExp();
  void use(Rewrite r) { rewriter.getRecorder().setRewrite(r); }

  KernelOp kernel;
  VariantOp variant;
  StringRef spec;
  AttentionStructure as;
  RecordingRewriter rewriter;
  /// The variant's arguments: the kernel's sizes and new parameters.
  SmallVector<Value> paramValues;
  /// The scale the variant's scores see, when the softmax runs on scale 1.
  Value naturalScale;
  /// The variant's mask as inlined into the first score elementwise.
  Value inlinedMask;
  /// The fp32 gradient buffer (a kernel argument "grad:<name>") of each
  /// float parameter of the variant whose elements have partials, by the
  /// parameter's argument number in the variant's body.
  llvm::DenseMap<unsigned, Value> gradBuffers;
};

} // namespace mlir::cuir::detail

#endif // CUIR_LIB_TRANSFER_TRANSFERSTEPS_H
