//===- Transfer.cpp - Give a kernel the semantics of a variant ------------===//
//
// Each step rewrites through a RecordingRewriter, so that every op it
// inserts carries the rewrite's `cuir.change` and every Source CuIR op it
// erases is listed in the kernel's `cuir.removed`: lowering patches exactly
// these changes.
//
//===----------------------------------------------------------------------===//

#include "cuir/Transfer/Transfer.h"

#include "TransferSteps.h"
#include "cuir/Variants/Variants.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::cuir;
using mlir::cuir::detail::Transfer;

/// The variant's parameters: sizes bind to the kernel's, the rest become new
/// kernel parameters.
LogicalResult Transfer::addParameters() {
  use(Rewrite::Parameter);
  MLIRContext *ctx = kernel.getContext();
  Block &vbody = variant.getBody().front();
  for (unsigned i = 0, e = vbody.getNumArguments(); i < e; ++i) {
    StringRef name = variant.getParamName(i);
    if (isSizeParam(name)) {
      auto it = as.params.find(name);
      if (it == as.params.end())
        return kernel.emitError() << "variant '" << variant.getSymName()
                                  << "' reads the size " << name
                                  << ", but the kernel has no parameter with "
                                     "that role";
      paramValues.push_back(it->second);
      continue;
    }
    if (as.params.count(variantParamRole(name)))
      return kernel.emitError() << "already has a parameter '" << name
                                << "': transfer a variant once";
    NamedAttrList attrs(cast<DictionaryAttr>(variant.getArgAttrsAttr()[i]));
    attrs.erase("cuir.param");
    attrs.set(CuIRDialect::ArgAttrHelper::getNameStr(),
              StringAttr::get(ctx, variantParamRole(name)));
    attrs.set(CuIRDialect::ChangeAttrHelper::getNameStr(),
              ChangeAttr::get(ctx, Rewrite::Parameter));
    unsigned pos = kernel.getNumArguments();
    if (failed(kernel.insertArgument(pos, vbody.getArgument(i).getType(),
                                     attrs.getDictionary(ctx),
                                     kernel.getLoc())))
      return kernel.emitError() << "cannot add the parameter '" << name << "'";
    paramValues.push_back(kernel.getArgument(pos));
  }
  return success();
}

/// The variant's mask replaces the kernel's causal mask.
void Transfer::switchOffCausal() {
  use(Rewrite::Constant);
  CuIRDialect::CausalAttrHelper causalAttr(kernel.getContext());
  if (causalAttr.isAttrPresent(kernel))
    causalAttr.removeAttr(kernel);
  auto it = as.params.find("causal");
  if (it == as.params.end())
    return;
  BlockArgument causal = it->second;
  rewriter.setInsertionPointToStart(&kernel.getBody().front());
  Value off = arith::ConstantOp::create(
      rewriter, causal.getLoc(), rewriter.getIntegerAttr(causal.getType(), 0));
  rewriter.replaceAllUsesWith(causal, off);
}

/// Score functions see scaled scores: the scale moves into the variant's
/// scores and the softmax runs on scale 1 (log2 e for a kernel that scales
/// by log2 e). `folds` picks the uses of the scale that the softmax makes
/// (all of them if null).
LogicalResult Transfer::foldScale(function_ref<bool(OpOperand &)> folds) {
  BlockArgument scale;
  bool log2 = false;
  if (auto it = as.params.find("softmax_scale"); it != as.params.end())
    scale = it->second;
  else if (auto it = as.params.find("softmax_scale_log2");
           it != as.params.end())
    scale = it->second, log2 = true;
  if (!scale)
    return kernel.emitError()
           << "has no 'softmax_scale' parameter: the variant's score "
              "function needs the scaled scores";
  rewriter.setInsertionPointToStart(&kernel.getBody().front());
  Location loc = scale.getLoc();
  use(Rewrite::Scores);
  naturalScale = scale;
  if (log2) {
    Value ln2 = arith::ConstantOp::create(rewriter, loc,
                                          rewriter.getF32FloatAttr(M_LN2));
    naturalScale = arith::MulFOp::create(rewriter, loc, scale, ln2);
  }
  use(Rewrite::Constant);
  Value unit = arith::ConstantOp::create(
      rewriter, loc, rewriter.getF32FloatAttr(log2 ? float(M_LOG2E) : 1.0f));
  rewriter.replaceUsesWithIf(scale, unit, [&](OpOperand &use) {
    return use.getOwner() != naturalScale.getDefiningOp() &&
           (!folds || folds(use));
  });
  return success();
}

/// The loads of a variant function's body and the ops whose values reach
/// their indices (top-level ops, standing for what they contain).
static llvm::DenseSet<Operation *> loadIndexSlice(Block &body) {
  llvm::DenseSet<Operation *> slice;
  SmallVector<Value> work;
  body.walk([&](memref::LoadOp load) {
    slice.insert(body.findAncestorOpInBlock(*load));
    llvm::append_range(work, load.getIndices());
  });
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def)
      continue;
    def = body.findAncestorOpInBlock(*def);
    if (def && slice.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  return slice;
}

/// The coordinates `at` (b, h, q_idx, kv_idx) with q_idx and kv_idx clamped to
/// the last row and key. A score tile covers rows and keys past the
/// sequences (padding, whose scores are never used): the loads of captured
/// tensors see those positions clamped, so that no load leaves its tensor.
/// Visible positions are unchanged. Empty if the kernel has no sizes.
SmallVector<Value> Transfer::clampedCoordinates(OpBuilder &eb, Block *body,
                                                ValueRange at) {
  auto nq = as.params.find("Nq"), nkv = as.params.find("Nkv");
  if (nq == as.params.end() || nkv == as.params.end())
    return {};
  SmallVector<Value> coords(at);
  Location loc = body->getParentOp()->getLoc();
  Value one = arith::ConstantIndexOp::create(eb, loc, 1);
  auto clampToLast = [&](Value v, Value size) -> Value {
    Value last = arith::SubIOp::create(eb, loc, size, one);
    return arith::MinSIOp::create(eb, loc, v, last);
  };
  coords[2] = clampToLast(coords[2], nq->second);
  coords[3] = clampToLast(coords[3], nkv->second);
  return coords;
}

/// One of the variant's functions (`mod`), inlined at the end of `body` with
/// `args` for its arguments. Each inlined op is located where the variant
/// wrote it, called from the op it stands for, so that diagnostics name the
/// user's line. The loads' indices see clamped coordinates (`clamped`, made
/// on first need).
SmallVector<Value> Transfer::inlineMod(OpBuilder &eb, Block *body,
                                       Operation *mod, ValueRange args,
                                       IRMapping &map,
                                       SmallVector<Value> &clamped) {
  Location loc = body->getParentOp()->getLoc();
  Block &src = mod->getRegion(0).front();
  llvm::DenseSet<Operation *> indexing = loadIndexSlice(src);
  auto indexes = [&](Value coordinate) {
    return llvm::any_of(coordinate.getUsers(), [&](Operation *user) {
      return indexing.contains(src.findAncestorOpInBlock(*user));
    });
  };
  auto qk = src.getArguments().take_back(2);
  if (clamped.empty() && (indexes(qk[0]) || indexes(qk[1])))
    clamped = clampedCoordinates(eb, body, args.take_back(4));
  for (auto [from, to] : llvm::zip(src.getArguments(), args))
    map.map(from, to);
  auto bindCoordinates = [&](ValueRange to) {
    for (auto [from, v] : llvm::zip(src.getArguments().take_back(4), to))
      map.map(from, v);
  };
  for (Operation &op : src.without_terminator()) {
    bool clamp = indexing.contains(&op) && !clamped.empty();
    bindCoordinates(clamp ? ValueRange(clamped) : args.take_back(4));
    Location at = isa<UnknownLoc>(op.getLoc())
                      ? loc
                      : Location(CallSiteLoc::get(op.getLoc(), loc));
    eb.clone(op, map)->setLoc(at);
  }
  return llvm::map_to_vector(src.getTerminator()->getOperands(),
                             [&](Value v) { return map.lookup(v); });
}

/// The variant's parameters bound to the kernel's values.
IRMapping Transfer::variantParamMap() {
  IRMapping map;
  Block &vbody = variant.getBody().front();
  for (unsigned i = 0, e = vbody.getNumArguments(); i < e; ++i)
    map.map(vbody.getArgument(i), paramValues[i]);
  return map;
}

/// The score as the variant sees it, in an elementwise body: `raw` times the
/// natural scale where the softmax runs on scale 1.
Value Transfer::variantScore(OpBuilder &eb, Location loc, Value raw) {
  return naturalScale ? arith::MulFOp::create(eb, loc, raw, naturalScale)
                      : raw;
}

/// The variant's score function and mask, inlined into `body` (the score and
/// the coordinates b, h, q_idx, kv_idx as arguments).
void Transfer::inlineMods(OpBuilder &eb, Block *body) {
  Location loc = body->getParentOp()->getLoc();
  Value x = variantScore(eb, loc, body->getArgument(0));
  IRMapping map = variantParamMap();
  SmallVector<Value> clamped;
  ValueRange coords = body->getArguments().drop_front();
  SmallVector<Value> args = {x};
  args.append(coords.begin(), coords.end());
  Value score = x;
  if (ScoreModOp s = variant.getScoreMod())
    score = inlineMod(eb, body, s, args, map, clamped)[0];
  if (MaskModOp m = variant.getMaskMod()) {
    Value visible = inlineMod(eb, body, m, coords, map, clamped)[0];
    if (!inlinedMask)
      inlinedMask = visible;
    // A hidden score is -inf.
    Value ninf = arith::ConstantOp::create(
        eb, loc, eb.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
    score = arith::SelectOp::create(eb, loc, visible, score, ninf);
  }
  YieldOp::create(eb, loc, score);
}

/// A cuir.elementwise after the score GEMM's completion applies the
/// variant's scores and mask; the softmax reads its result.
void Transfer::insertScores(ScoreSite &site) {
  use(Rewrite::Scores);
  Operation *def = site.score.getDefiningOp();
  rewriter.setInsertionPointAfter(def);
  Value bn = findBlockNConstant(site);
  if (!bn)
    bn = arith::ConstantIndexOp::create(rewriter, def->getLoc(), site.blockN);
  Value kvBase =
      arith::MulIOp::create(rewriter, def->getLoc(), site.kvBlock, bn);
  insertScores(site.score, {site.batch, site.head, site.qBase, kvBase});
}

/// The variant's scores and mask over `score`, whose element (0, 0) has the
/// coordinates `at` (b, h, q_idx, kv_idx), at the rewriter's insertion
/// point, replacing `score` for every reader but the new op.
ElementwiseOp Transfer::insertScores(Value score, ArrayRef<Value> at) {
  use(Rewrite::Scores);
  MLIRContext *ctx = kernel.getContext();
  ElementwiseOp ew = createScoreOp(score, at, score.getDefiningOp()->getLoc());
  CuIRDialect::VariantScoresAttrHelper(ctx).setAttr(ew,
                                                    StringAttr::get(ctx, spec));
  Block *body = &ew.getBody().front();
  OpBuilder eb = OpBuilder::atBlockEnd(body);
  inlineMods(eb, body);
  rewriter.replaceUsesWithIf(score, ew.getResult(0), [&](OpOperand &use) {
    return use.getOwner() != ew;
  });
  return ew;
}

/// A cuir.elementwise over `score` at the rewriter's insertion point, located
/// at `loc`, with coordinates `at` and one tile of the score's type; its
/// empty entry block takes the score and (b, h, q, kv).
ElementwiseOp Transfer::createScoreOp(Value score, ArrayRef<Value> at,
                                      Location loc) {
  auto ew =
      ElementwiseOp::create(rewriter, loc, {score.getType()}, ValueRange{score},
                            at[0], at[1], at[2], at[3]);
  Block *body = new Block();
  ew.getBody().push_back(body);
  body->addArgument(rewriter.getF32Type(), loc);
  for (int i = 0; i < 4; ++i)
    body->addArgument(rewriter.getIndexType(), loc);
  return ew;
}

/// A tile of 1s of `like`'s type.
Value Transfer::onesLike(Value like, Location loc) {
  auto tile = cast<RankedTensorType>(like.getType());
  return arith::ConstantOp::create(
      rewriter, loc,
      DenseElementsAttr::get(tile, rewriter.getF32FloatAttr(1.0f)));
}

/// 1 / (1 + exp(-s)) over the tile `s`, `one` a tile of 1s.
Value Transfer::sigmoidTile(Value s, Value one, Location loc) {
  Value neg = arith::NegFOp::create(rewriter, loc, s);
  Value e = math::ExpOp::create(rewriter, loc, neg);
  Value den = arith::AddFOp::create(rewriter, loc, one, e);
  return arith::DivFOp::create(rewriter, loc, one, den);
}

/// Sigmoid: P = 1 / (1 + exp(-s)) over the masked scores; no rescale of O.
LogicalResult Transfer::useSigmoidWeights(ScoreSite &site) {
  use(Rewrite::Normalizer);
  if (!site.weights)
    return site.rowMax.emitError()
           << "is a row maximum of scores, but no exp/exp2 of the scores "
              "relative to it was found: the sigmoid normaliser replaces "
              "an online softmax";
  if (!site.carriedAcc)
    return site.pvGemm->emitError()
           << "accumulates into a value that is not the rescaled "
              "loop-carried output: cannot remove the softmax rescale for "
              "a sigmoid normaliser";
  rewriter.setInsertionPointAfter(site.weights);
  Location wloc = site.weights->getLoc();
  Value s = site.rowMax.getInput();
  Value p = sigmoidTile(s, onesLike(s, wloc), wloc);
  rewriter.replaceAllUsesWith(site.weights->getResult(0), p);
  rewriter.replaceAllUsesWith(site.rescaledAcc, site.carriedAcc);
  return success();
}

/// The output is the weighted sum itself: the division by the row sum after
/// the loops goes. A software-pipelined kernel rescales O once more and adds
/// its last P V after the loops: O is followed through those GEMMs and their
/// waits.
void Transfer::dropRowNormalizers() {
  use(Rewrite::Normalizer);
  for (ScoreSite &site : as.sites) {
    auto arg = cast<BlockArgument>(site.carriedAcc);
    unsigned resultNo = arg.getArgNumber() - 1;
    SmallVector<Value> work = {site.loop.getResult(resultNo)};
    while (!work.empty()) {
      Value o = work.pop_back_val();
      for (OpOperand &use : llvm::make_early_inc_range(o.getUses())) {
        Operation *user = use.getOwner();
        if (auto mul = dyn_cast<arith::MulFOp>(user)) {
          if (mul.getLhs() == o &&
              mul.getRhs().getDefiningOp<BroadcastRowsOp>() &&
              !mul.getResult().use_empty()) {
            rewriter.replaceAllUsesWith(mul.getResult(), o);
            work.push_back(o);
          }
        } else if (auto gemm = dyn_cast<GemmAsyncOp>(user)) {
          if (use.getOperandNumber() == 2)
            work.push_back(gemm.getResult());
        } else if (auto wait = dyn_cast<GemmWaitOp>(user)) {
          work.push_back(wait.getResult());
        }
      }
    }
  }
}

/// A sigmoid has no log-sum-exp: its stores go.
void Transfer::dropLogSumExp() {
  use(Rewrite::Normalizer);
  auto it = as.params.find("lse");
  if (it == as.params.end())
    return;
  SmallVector<Operation *> stores;
  kernel.walk([&](StoreOp store) {
    Value dst = store.getDst();
    while (auto sub = dst.getDefiningOp<memref::SubViewOp>())
      dst = sub.getSource();
    if (dst == it->second)
      stores.push_back(store);
  });
  for (Operation *s : stores)
    rewriter.eraseOp(s);
}

/// A softmax score_mod's float constant of magnitude 2^16 or more (-1e9 as
/// the value of a mask) is refused, forward and backward. On a row whose
/// every score is near it, the forward's reference point row_max * log2 e
/// rounds by up to 2^(its exponent - 24) (64 at -1e9) and a 16-bit P
/// overflows; the backward recomputes P = exp(score - LSE) in float32, where
/// score and LSE agree in every bit float32 keeps. Below 2^16, float32's
/// spacing at that score times log2 e is at most 2^-6 and bf16's rounding of
/// P dominates.
LogicalResult Transfer::checkLargeScoreConstants(ScoreModOp mod) {
  constexpr double kLimit = 65536.0;
  WalkResult walk = mod.walk([&](arith::ConstantOp cst) {
    auto value = dyn_cast<FloatAttr>(cst.getValue());
    double x = value ? value.getValueAsDouble() : 0.0;
    if (!value || !std::isfinite(x) || std::fabs(x) < kLimit)
      return WalkResult::advance();
    double spacing = std::ldexp(1.0, std::ilogb(std::fabs(x) * M_LOG2E) - 23);
    auto shortest = [](double d) {
      std::string text;
      llvm::raw_string_ostream(text) << llvm::format("%g", d);
      return text;
    };
    cst.emitError() << "is " << shortest(x)
                    << " in a softmax score_mod: on a row whose every score is "
                       "near this value, float32 keeps none of the difference "
                       "between a score and the row's reference point (its "
                       "spacing there is "
                    << shortest(spacing)
                    << "), so the forward's 16-bit P and the backward's "
                       "recomputed P would be wrong. Mask with -inf, or use a "
                       "value of magnitude below 65536 (-1e4)";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult Transfer::run() {
  if (isPartOfBackwardPass(kernel))
    return runBackward();
  FailureOr<AttentionStructure> analysis = analyzeAttention(kernel);
  if (failed(analysis))
    return failure();
  as = std::move(*analysis);
  bool sigmoid = variant.getNormalizer() == Normalizer::Sigmoid;
  if (!sigmoid && variant.getScoreMod() &&
      failed(checkLargeScoreConstants(variant.getScoreMod())))
    return failure();
  if (failed(addParameters()))
    return failure();
  switchOffCausal();
  if ((variant.getScoreMod() || sigmoid) && failed(foldScale()))
    return failure();
  for (ScoreSite &site : as.sites)
    insertScores(site);
  rewriter.eraseDeadOps();
  if (sigmoid) {
    for (ScoreSite &site : as.sites)
      if (failed(useSigmoidWeights(site)))
        return failure();
    dropRowNormalizers();
    dropLogSumExp();
    rewriter.eraseDeadOps();
  }
  MLIRContext *ctx = kernel.getContext();
  CuIRDialect::VariantAttrHelper(ctx).setAttr(kernel,
                                              StringAttr::get(ctx, spec));
  CuIRDialect::NormalizerAttrHelper(ctx).setAttr(
      kernel, NormalizerAttr::get(ctx, variant.getNormalizer()));
  return success();
}

LogicalResult mlir::cuir::transferKernel(KernelOp kernel, VariantOp variant,
                                         StringRef spec) {
  CuIRDialect::VariantAttrHelper variantAttr(kernel.getContext());
  if (StringAttr done = variantAttr.getAttr(kernel))
    return kernel.emitError()
           << "already computes the variant '" << done.getValue()
           << "'; transfer the source kernel once, with a composition such "
              "as --transfer="
           << done.getValue() << "," << spec;
  return Transfer(kernel, variant, spec).run();
}
