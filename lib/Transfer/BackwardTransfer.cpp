//===- BackwardTransfer.cpp - Give a backward pass a variant's semantics --===//
//
// A backward kernel recomputes S, turns it into the forward's P with the
// saved log-sum-exp, and forms dS = P * (dP - D), the gradient of the
// (modified) scores. A variant's backward therefore needs, with no
// per-variant code:
//   - its scores and mask after S, exactly as in the forward (P is then the
//     variant's P, and 0 where the mask hides a score);
//   - the scale moved into the scores as in the forward, but only where the
//     weights use it: dK and dQ keep their factor softmax_scale, the
//     derivative of the scaled score;
//   - dS multiplied by d score_mod / d score, from the variant's
//     cuir.score_grad, computed where dS is formed from the raw scores S
//     (not beside the scores: a tile held from S to dS costs the registers
//     that the step's accumulators need);
//   - for every element a score_mod loads from a float array parameter, the
//     score's contribution dS * d score_mod / d element accumulated into
//     the parameter's fp32 gradient buffer (a new kernel argument), by a
//     cuir.scatter_add after dS (dS there is dL / d modified score);
//   - the kernel's own causal mask kept where the variant's mask implies it
//     (proved on the mask's linear constraints), so that the backward skips
//     the KV/query tiles above the diagonal; switched off otherwise.
//
//===----------------------------------------------------------------------===//

#include "TransferSteps.h"
#include "cuir/Transfer/MaskAnalysis.h"
#include "cuir/Transfer/ScoreDerivative.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::cuir;
using mlir::cuir::detail::Transfer;

namespace {

/// Whether `v` reaches `target` through the ops that read it (in any
/// region: a splat of the scale reaches the exponential in the loop).
bool reaches(Value v, Operation *target) {
  SmallVector<Value> work = {v};
  llvm::SmallPtrSet<Operation *, 32> seen;
  while (!work.empty()) {
    for (Operation *user : work.pop_back_val().getUsers()) {
      if (user == target)
        return true;
      if (seen.insert(user).second && user->getNumRegions() == 0)
        llvm::append_range(work, user->getResults());
    }
  }
  return false;
}

/// The constant value of the derivative the score_grad yields, if it is
/// one (an additive bias: 1).
std::optional<double> constantDerivative(ScoreGradOp grad) {
  FloatAttr value;
  if (matchPattern(grad.getYield().getOperand(1), m_Constant(&value)))
    return value.getValueAsDouble();
  return std::nullopt;
}

/// Erases the ops of `body` whose results nothing reads, last first.
void eraseDeadBodyOps(Block *body) {
  SmallVector<Operation *> ops = llvm::map_to_vector(
      body->without_terminator(), [](Operation &o) { return &o; });
  for (Operation *o : llvm::reverse(ops))
    if (isOpTriviallyDead(o))
      o->erase();
}

/// The point before which the variant's scores of `site` go: after S and
/// every coordinate's definition, before S's first reader.
FailureOr<Operation *> scoresInsertionPoint(BackwardSite &site,
                                            ArrayRef<Value> at) {
  Operation *after = site.score.getDefiningOp();
  Block *block = after->getBlock();
  for (Value v : at) {
    Operation *def = v.getDefiningOp();
    if (!def || !block->findAncestorOpInBlock(*def))
      continue; // Defined outside the step: it dominates the step.
    Operation *inBlock = block->findAncestorOpInBlock(*def);
    if (after->isBeforeInBlock(inBlock))
      after = inBlock;
  }
  for (Operation *reader : site.score.getUsers()) {
    Operation *inBlock = block->findAncestorOpInBlock(*reader);
    if (inBlock && !after->isBeforeInBlock(inBlock))
      return site.gemm->emitError()
             << "computes S, but the score tile's coordinates are known only "
                "after S is first read: the variant's scores cannot be placed "
                "between them";
  }
  return after;
}

} // namespace

/// Whether the variant's mask implies the kernel's causal mask: some
/// conjunct of it is linear and none of its pieces reaches past the
/// diagonal (causal, a causal window, causal with a score_mod).
bool Transfer::maskImpliesCausal() {
  auto nq = as.params.find("Nq"), nkv = as.params.find("Nkv");
  if (!inlinedMask || nq == as.params.end() || nkv == as.params.end())
    return false;
  Block *body = inlinedMask.getParentBlock();
  Value q = body->getArgument(3), kv = body->getArgument(4);
  SmallVector<Value> conjuncts = {inlinedMask};
  while (!conjuncts.empty()) {
    Value c = conjuncts.pop_back_val();
    if (auto both = c.getDefiningOp<arith::AndIOp>()) {
      conjuncts.append({both.getLhs(), both.getRhs()});
      continue;
    }
    std::optional<LinearMask> mask = analyzeLinearMask(c, q, kv);
    if (mask && !mask->pieces.empty() &&
        compareWithCausal(*mask, nq->second, nkv->second).insideCausal)
      return true;
  }
  return false;
}

/// The kernel keeps its causal instantiation: the flag becomes the constant
/// true, located at the flag (lowering reads it so: the manifest's
/// is_causal).
void Transfer::keepCausal() {
  use(Rewrite::Constant);
  BlockArgument causal = as.params["causal"];
  rewriter.setInsertionPointToStart(&kernel.getBody().front());
  Value on = arith::ConstantOp::create(
      rewriter, causal.getLoc(), rewriter.getIntegerAttr(causal.getType(), 1));
  rewriter.replaceAllUsesWith(causal, on);
}

/// select(d == 0, 0, d * x) at the builder's insertion point: an exact zero
/// (a hidden score's dS) stays zero whatever `x` is there.
static arith::SelectOp zeroKeepingProduct(OpBuilder &b, Location loc, Value d,
                                          Value x) {
  Value zero = arith::ConstantOp::create(
      b, loc,
      isa<RankedTensorType>(d.getType())
          ? TypedAttr(DenseElementsAttr::get(cast<ShapedType>(d.getType()),
                                             b.getF32FloatAttr(0)))
          : TypedAttr(b.getF32FloatAttr(0)));
  Value product = arith::MulFOp::create(b, loc, d, x);
  Value isZero =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, d, zero);
  return arith::SelectOp::create(b, loc, isZero, zero, product);
}

/// d score_mod / d score of the raw scores S, after dS: a cuir.elementwise
/// over S marked `cuir.score_derivative`. It has no mask: a hidden score's
/// P is 0, so its dS is 0 (or NaN from a non-finite dP), and the product
/// that keeps an exact zero gives the same whatever the derivative is there.
Value Transfer::insertScoreDerivative(BackwardSite &site, ScoreGradOp grad,
                                      ArrayRef<Value> at) {
  MLIRContext *ctx = kernel.getContext();
  Location loc = site.dScores->getLoc();
  rewriter.setInsertionPointAfter(site.dScores);
  ElementwiseOp ew = createScoreOp(site.score, at, loc);
  CuIRDialect::ScoreDerivativeAttrHelper(ctx).setAttr(
      ew, StringAttr::get(ctx, spec));
  Block *body = &ew.getBody().front();
  OpBuilder eb = OpBuilder::atBlockEnd(body);
  SmallVector<Value> args = {variantScore(eb, loc, body->getArgument(0))};
  llvm::append_range(args, body->getArguments().drop_front());
  IRMapping map = variantParamMap();
  SmallVector<Value> clamped;
  Value d = inlineMod(eb, body, grad, args, map, clamped)[1];
  YieldOp::create(eb, loc, d);
  eraseDeadBodyOps(body);
  return ew.getResult(0);
}

/// dS <- dS * derivative after dS and the derivative (a tile, or null for a
/// derivative that is 1 everywhere); an exact zero stays zero.
void Transfer::insertDerivative(BackwardSite &site, Value derivative) {
  if (!derivative)
    return;
  Value dS = site.dScores->getResult(0);
  Operation *def = derivative.getDefiningOp();
  rewriter.setInsertionPointAfter(
      def && def->getBlock() == site.dScores->getBlock() &&
              site.dScores->isBeforeInBlock(def)
          ? def
          : site.dScores);
  arith::SelectOp result =
      zeroKeepingProduct(rewriter, site.dScores->getLoc(), dS, derivative);
  Operation *product = result.getFalseValue().getDefiningOp();
  Operation *isZero = result.getCondition().getDefiningOp();
  rewriter.replaceUsesWithIf(dS, result, [&](OpOperand &use) {
    Operation *user = use.getOwner();
    return user != product && user != isZero;
  });
}

/// An fp32 buffer of the parameter's shape (role "grad:<name>") for every
/// float parameter of the variant whose elements the score_grad lists.
LogicalResult Transfer::addGradientBuffers(ScoreGradOp grad) {
  use(Rewrite::ParamGrad);
  MLIRContext *ctx = kernel.getContext();
  Block &vbody = variant.getBody().front();
  for (Value element : grad.getYield().getElements()) {
    auto param = cast<BlockArgument>(
        element.getDefiningOp<memref::LoadOp>().getMemRef());
    unsigned i = param.getArgNumber();
    if (gradBuffers.count(i))
      continue;
    StringRef name = variant.getParamName(i);
    std::string role = (kGradRolePrefix + name).str();
    if (llvm::any_of(llvm::seq(kernel.getNumArguments()),
                     [&](unsigned a) { return argRole(kernel, a) == role; }))
      return kernel.emitError() << "already has a gradient buffer '" << role
                                << "': transfer a variant once";
    auto type = cast<MemRefType>(param.getType());
    auto bufType =
        MemRefType::get(type.getShape(), Float32Type::get(ctx),
                        MemRefLayoutAttrInterface(), type.getMemorySpace());
    NamedAttrList attrs;
    attrs.set(CuIRDialect::ArgAttrHelper::getNameStr(),
              StringAttr::get(ctx, role));
    attrs.set(CuIRDialect::ChangeAttrHelper::getNameStr(),
              ChangeAttr::get(ctx, Rewrite::ParamGrad));
    auto argAttrs = cast<DictionaryAttr>(variant.getArgAttrsAttr()[i]);
    if (Attribute extent =
            argAttrs.get(CuIRDialect::ExtentAttrHelper::getNameStr()))
      attrs.set(CuIRDialect::ExtentAttrHelper::getNameStr(), extent);
    unsigned pos = kernel.getNumArguments();
    if (failed(kernel.insertArgument(pos, bufType, attrs.getDictionary(ctx),
                                     vbody.getArgument(i).getLoc())))
      return kernel.emitError()
             << "cannot add the gradient buffer of '" << name << "'";
    gradBuffers[i] = kernel.getArgument(pos);
  }
  return success();
}

/// The two candidate reference keys of row `q`: its diagonal aligned top-left
/// (kv = q, as FlexAttention's masks align) and bottom-right (kv = q + Nkv -
/// Nq, as the kernels' causal mask aligns), each clamped to the keys.
static std::pair<Value, Value> referenceKeys(OpBuilder &eb, Location loc,
                                             Value q, Value nq, Value nkv) {
  Value zero = arith::ConstantIndexOp::create(eb, loc, 0);
  Value one = arith::ConstantIndexOp::create(eb, loc, 1);
  Value last = arith::SubIOp::create(eb, loc, nkv, one);
  Value topLeft = arith::MinSIOp::create(eb, loc, q, last);
  Value shifted = arith::AddIOp::create(
      eb, loc, q, arith::SubIOp::create(eb, loc, nkv, nq));
  Value bottomRight = arith::MinSIOp::create(
      eb, loc, arith::MaxSIOp::create(eb, loc, shifted, zero), last);
  return {topLeft, bottomRight};
}

/// The variant parameters (argument numbers) whose gradients insertParamGrads
/// does not centre: one of their partials reads the score, or one of their
/// elements depends on kv_idx; all of them under a sigmoid (whose rows of
/// dS do not sum to 0) or without the kernel's Nq and Nkv.
llvm::SmallDenseSet<unsigned> Transfer::uncentredParams(ScoreGradOp grad) {
  GradYieldOp yield = grad.getYield();
  Block &body = grad.getBody().front();
  bool canCentre = variant.getNormalizer() != Normalizer::Sigmoid &&
                   as.params.count("Nq") && as.params.count("Nkv");
  llvm::SmallDenseSet<unsigned> params;
  for (auto [element, partial] :
       llvm::zip(yield.getElements(), yield.getPartials())) {
    auto load = element.getDefiningOp<memref::LoadOp>();
    bool readsKv = llvm::any_of(load.getIndices(), [&](Value index) {
      return readsArgument(index, body.getArguments().back());
    });
    if (!canCentre || readsKv || readsArgument(partial, body.getArgument(0)))
      params.insert(cast<BlockArgument>(load.getMemRef()).getArgNumber());
  }
  return params;
}

/// Per partial of the score_grad, a cuir.scatter_add after dS that adds
/// select(dS == 0, 0, dS * partial) into the gradient of the element's
/// parameter at the element's indices (computed, as the scores' loads, from
/// coordinates clamped to the sequences). A hidden or padded score has
/// dS = 0 exactly and adds nothing. A partial that reads the score takes
/// the raw scores S as a second input (the kernel has overwritten its S
/// tile with P by dS); the others read the coordinates only.
///
/// Under softmax a row's dS sum to 0, so a per-row constant may be taken
/// from a partial without changing the sum. The kernel's dS do not sum to 0
/// exactly (D comes from the 16-bit O), and a partial with a large per-row
/// part (a distance when every key is far from the row) amplifies that
/// rounding. So a parameter whose elements do not depend on kv_idx (a
/// per-head slope) and whose partials do not read the score is centred:
/// its scatters add dS * (partial - partial at the row's reference key: of
/// its top-left and bottom-right diagonals, the one where the partial is
/// smaller) and are marked `cuir.row_centred`. An element indexed by kv_idx
/// (a table of q - kv) is not: its reference element would collect every
/// row's rounding in one place.
void Transfer::insertParamGrads(BackwardSite &site, ScoreGradOp grad,
                                ArrayRef<Value> at) {
  use(Rewrite::ParamGrad);
  GradYieldOp yield = grad.getYield();
  Value dS = site.dScores->getResult(0);
  Location loc = site.dScores->getLoc();
  size_t n = yield.getElements().size();
  llvm::SmallDenseSet<unsigned> notCentred = uncentredParams(grad);
  for (size_t i = 0; i < n; ++i) {
    auto load = yield.getElements()[i].getDefiningOp<memref::LoadOp>();
    unsigned param = cast<BlockArgument>(load.getMemRef()).getArgNumber();
    bool readsScore =
        readsArgument(yield.getPartials()[i], grad.getBody().getArgument(0));
    bool centred = !notCentred.contains(param);
    SmallVector<Value> inputs = {dS};
    if (readsScore)
      inputs.push_back(site.score);
    rewriter.setInsertionPointAfter(site.dScores);
    auto op = ScatterAddOp::create(rewriter, loc, inputs, at[0], at[1], at[2],
                                   at[3], gradBuffers.lookup(param));
    if (centred)
      CuIRDialect::RowCentredAttrHelper(kernel.getContext())
          .setAttr(op, rewriter.getUnitAttr());
    Block *body = new Block();
    op.getBody().push_back(body);
    Type f32 = rewriter.getF32Type();
    for (size_t k = 0; k < inputs.size(); ++k)
      body->addArgument(f32, loc);
    for (int c = 0; c < 4; ++c)
      body->addArgument(rewriter.getIndexType(), loc);
    OpBuilder eb = OpBuilder::atBlockEnd(body);
    // The element's indices and partial from the coordinates and, where the
    // partial reads it, the score as the variant sees it.
    Value score =
        readsScore
            ? variantScore(eb, loc, body->getArgument(1))
            : arith::ConstantOp::create(eb, loc, eb.getF32FloatAttr(0));
    auto partialAt = [&](ValueRange coords, IRMapping &map) {
      SmallVector<Value> args = {score};
      llvm::append_range(args, coords);
      SmallVector<Value> clamped;
      return inlineMod(eb, body, grad, args, map, clamped)[2 + n + i];
    };
    SmallVector<Value> coords(body->getArguments().take_back(4));
    IRMapping map = variantParamMap();
    Value partial = partialAt(coords, map);
    if (centred) {
      // Of the two diagonals, the one where the partial is smaller: a
      // distance's own diagonal (its zero), whichever way it aligns.
      auto [topLeft, bottomRight] =
          referenceKeys(eb, loc, coords[2], as.params.lookup("Nq"),
                        as.params.lookup("Nkv"));
      coords[3] = topLeft;
      IRMapping tlMap = variantParamMap(), brMap = variantParamMap();
      Value atTopLeft = partialAt(coords, tlMap);
      coords[3] = bottomRight;
      Value atBottomRight = partialAt(coords, brMap);
      Value smaller = arith::CmpFOp::create(
          eb, loc, arith::CmpFPredicate::OLE,
          math::AbsFOp::create(eb, loc, atTopLeft),
          math::AbsFOp::create(eb, loc, atBottomRight));
      Value reference =
          arith::SelectOp::create(eb, loc, smaller, atTopLeft, atBottomRight);
      partial = arith::SubFOp::create(eb, loc, partial, reference);
    }
    auto element = map.lookup(load.getResult()).getDefiningOp<memref::LoadOp>();
    Value value = zeroKeepingProduct(eb, loc, body->getArgument(0), partial);
    SmallVector<Value> yielded(element.getIndices());
    yielded.push_back(value);
    YieldOp::create(eb, loc, yielded);
    // The score_grad's other results (the score, its derivative, other
    // partials) are not needed here.
    eraseDeadBodyOps(body);
  }
}

/// The variant's scores after S; then, where dS is formed, its derivative
/// into dS and the gradients of its trained parameters.
LogicalResult Transfer::insertBackwardScores(BackwardSite &site,
                                             ScoreGradOp grad) {
  use(Rewrite::Scores);
  SmallVector<Value> at = {site.batch, site.head, site.qBase, site.kvBase};
  FailureOr<Operation *> point = scoresInsertionPoint(site, at);
  if (failed(point))
    return failure();
  rewriter.setInsertionPointAfter(*point);
  insertScores(site.score, at);
  if (!grad)
    return success();
  std::optional<double> constant = constantDerivative(grad);
  Value d;
  if (!constant) {
    d = insertScoreDerivative(site, grad, at);
  } else if (*constant != 1.0) {
    rewriter.setInsertionPointAfter(site.dScores);
    d = arith::ConstantOp::create(
        rewriter, site.dScores->getLoc(),
        DenseElementsAttr::get(
            cast<ShapedType>(site.dScores->getResult(0).getType()),
            rewriter.getF32FloatAttr(*constant)));
  }
  insertDerivative(site, d);
  insertParamGrads(site, grad, at);
  return success();
}

/// The sigmoid normaliser's backward: P = sigmoid(x) of the variant's
/// (scaled, masked) scores x instead of the softmax weights, and
/// dS = P * (dP * (1 - P)) instead of P * (dP - D): no LSE, no row sums.
LogicalResult Transfer::useSigmoidBackward(BackwardSite &site) {
  use(Rewrite::Normalizer);
  auto logits = site.weights->getOperand(0).getDefiningOp<math::FmaOp>();
  // The scores the weights read: the variant's (and the kernel's own mask).
  Value scores = logits ? logits.getA() : Value();
  auto dS = dyn_cast<arith::MulFOp>(site.dScores);
  Value p = site.weights->getResult(0);
  Value other = dS ? (dS.getLhs() == p ? dS.getRhs() : dS.getLhs()) : Value();
  auto dpMinusD =
      other ? other.getDefiningOp<arith::SubFOp>() : arith::SubFOp();
  if (!scores || !dpMinusD)
    return site.weights->emitError()
           << "computes the weights in a form the sigmoid backward does not "
              "know: expected exp2(fma(scores, scale, -LSE)) and "
              "dS = P * (dP - D)";
  rewriter.setInsertionPointAfter(site.weights);
  Location loc = site.weights->getLoc();
  Value one = onesLike(p, loc);
  Value sig = sigmoidTile(scores, one, loc);
  rewriter.replaceAllUsesWith(p, sig);
  rewriter.setInsertionPoint(dS);
  Location dloc = dS.getLoc();
  Value rest = arith::SubFOp::create(rewriter, dloc, one, sig);
  Value grad = arith::MulFOp::create(rewriter, dloc, dpMinusD.getLhs(), rest);
  rewriter.modifyOpInPlace(
      dS, [&] { dS->setOperand(dS.getLhs() == sig ? 1 : 0, grad); });
  return success();
}

LogicalResult Transfer::runBackward() {
  FailureOr<BackwardStructure> analysis = analyzeBackward(kernel);
  if (failed(analysis))
    return failure();
  MLIRContext *ctx = kernel.getContext();
  auto markVariant = [&] {
    CuIRDialect::VariantAttrHelper(ctx).setAttr(kernel,
                                                StringAttr::get(ctx, spec));
    CuIRDialect::NormalizerAttrHelper(ctx).setAttr(
        kernel, NormalizerAttr::get(ctx, variant.getNormalizer()));
  };
  // The preprocessing and the conversion of dQ compute no scores.
  if (analysis->sites.empty()) {
    markVariant();
    return success();
  }
  bool sigmoid = variant.getNormalizer() == Normalizer::Sigmoid;
  as.kernel = kernel;
  as.params = std::move(analysis->params);
  if (failed(addParameters()))
    return failure();
  ScoreGradOp grad;
  if (variant.getScoreMod()) {
    if (!sigmoid && failed(checkLargeScoreConstants(variant.getScoreMod())))
      return failure();
    FailureOr<ScoreGradOp> derived = differentiateScoreMod(variant);
    if (failed(derived))
      return failure();
    grad = *derived;
    if (failed(addGradientBuffers(grad)))
      return failure();
  }
  if (variant.getScoreMod() || sigmoid) {
    auto inWeights = [&](OpOperand &use) {
      return llvm::any_of(analysis->sites, [&](BackwardSite &site) {
        return llvm::any_of(use.getOwner()->getResults(),
                            [&](Value r) { return reaches(r, site.weights); });
      });
    };
    if (failed(foldScale(inWeights)))
      return failure();
  }
  for (BackwardSite &site : analysis->sites)
    if (failed(insertBackwardScores(site, grad)) ||
        (sigmoid && failed(useSigmoidBackward(site))))
      return failure();
  // What only the softmax weights read (LSE, D, scale * log2 e) goes with
  // them, recorded as the normaliser's.
  if (sigmoid)
    rewriter.eraseDeadOps();
  if (as.params.count("causal") && maskImpliesCausal())
    keepCausal();
  else
    switchOffCausal();
  rewriter.eraseDeadOps();
  markVariant();
  return success();
}
