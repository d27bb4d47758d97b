//===- Split.cpp - Full / partial split of the key/value loops ------------===//
//
// The source kernels iterate key/value blocks downwards in two loops:
// "masking steps" over [n_unmasked, n_max) and "unmasked steps" over
// [0, n_unmasked). For a variant whose mask gives every query row one
// interval of keys [lo(q), hi(q)), a block of rows [q0, q1] needs
//   n_max = ceil(hi(q1) / BN)      first block nobody sees, from above
//   n_min = floor(lo(q0) / BN)     last block before anybody sees a key
//   full blocks [ceil(lo(q1) / BN), floor(hi(q0) / BN))
// so the split runs masked steps over [C, D), unmasked steps over [B, C)
// and, when the mask has a left edge, masked steps again over [A, B).
//
//===----------------------------------------------------------------------===//

#include "cuir/Transfer/Split.h"

#include "cuir/Transfer/AttentionAnalysis.h"
#include "cuir/Transfer/BackwardAnalysis.h"
#include "cuir/Transfer/BlockList.h"
#include "cuir/Transfer/ChangeRecorder.h"
#include "cuir/Transfer/MaskAnalysis.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// The loop's variant op (inserted by transfer) applied to `score`.
ElementwiseOp variantOpOf(const ScoreSite &site) {
  for (Operation *user : site.score.getUsers())
    if (auto ew = dyn_cast<ElementwiseOp>(user))
      if (CuIRDialect::VariantScoresAttrHelper(ew->getContext())
              .isAttrPresent(ew))
        return ew;
  return {};
}

/// The mask of a variant op: its yield is select(visible, x, -inf).
arith::SelectOp maskSelect(ElementwiseOp ew) {
  Value y = ew.getBody().front().getTerminator()->getOperand(0);
  auto sel = y.getDefiningOp<arith::SelectOp>();
  if (!sel)
    return {};
  APFloat ninf(0.0f);
  if (!matchPattern(sel.getFalseValue(), m_ConstantFloat(&ninf)) ||
      !ninf.isInfinity() || !ninf.isNegative())
    return {};
  return sel;
}

/// For a loop whose block index is (X - 1) - iv, from 0 with step 1: X.
Value descendingTop(const ScoreSite &site) {
  scf::ForOp loop = site.loop;
  if (!matchPattern(loop.getLowerBound(), m_Zero()) ||
      !matchPattern(loop.getStep(), m_One()))
    return {};
  auto sub = site.kvBlock.getDefiningOp<arith::SubIOp>();
  if (!sub || sub.getRhs() != loop.getInductionVar())
    return {};
  auto top = sub.getLhs().getDefiningOp<arith::SubIOp>();
  if (!top || !matchPattern(top.getRhs(), m_One()))
    return {};
  return top.getLhs();
}

/// The block bounds of the split: masked steps over [C, max), unmasked over
/// [B, C), masked again over [A, B).
struct SplitBounds {
  Value nMax, nA, nB, nC;
};

/// Splits the two key/value loops of one kernel; every op it inserts is
/// recorded as the split's.
class Splitter {
public:
  Splitter(KernelOp kernel, BlockMaskMode mode)
      : kernel(kernel), mode(mode), rewriter(kernel, Rewrite::Split) {}
  LogicalResult run();

private:
  LogicalResult checkLoops(Value &X, Value &Y);
  FailureOr<SplitBounds> buildBounds(const KeyInterval &interval,
                                     ElementwiseOp v0, Operation *after);
  Value bound(Location loc, ArrayRef<SmallVector<AffineBound, 2>> groups,
              Value q, bool isLo, ElementwiseOp v0, IRMapping &outside,
              Value zero, Value nkv);
  void simplify(Operation *after, SplitBounds &bounds);
  LogicalResult visitOnlyNeededBlocks(const SplitBounds &bounds, Value X,
                                      Value Y, bool leftEdge);
  void unmaskFullBlocks(ElementwiseOp v1);
  LogicalResult visitListedBlocks(ElementwiseOp v0, arith::SelectOp sel0,
                                  Value X, Value Y);

  KernelOp kernel;
  BlockMaskMode mode;
  AttentionStructure as;
  RecordingRewriter rewriter;
  /// The index casts of the bounds' integer terms, one per term.
  DenseMap<Value, Value> indexCasts;
};

} // namespace

LogicalResult Splitter::checkLoops(Value &X, Value &Y) {
  SmallVector<ScoreSite> &sites = as.sites;
  // The key/value loops: masking steps, then unmasked steps, chained.
  if (sites.size() != 2 ||
      sites[0].loop->getBlock() != sites[1].loop->getBlock() ||
      !sites[0].loop->isBeforeInBlock(sites[1].loop) ||
      sites[1].loop.getInitArgs() != ValueRange(sites[0].loop.getResults()))
    return kernel.emitError()
           << "has " << sites.size()
           << " key/value loop(s); the split expects the FA2 form: a loop of "
              "masking steps followed by a loop of unmasked steps, chained by "
              "their carried values";
  X = descendingTop(sites[0]);
  Y = descendingTop(sites[1]);
  if (!X || !Y)
    return sites[!X ? 0 : 1].loop.emitError()
           << "iterates key/value blocks in a form the split does not know: "
              "expected block n = (top - 1) - iv for iv from 0 step 1";
  return success();
}

/// lo: the maximum over groups of the minimum of alternatives, at least 0;
/// hi: the minimum over groups of the maximum of alternatives, at most Nkv.
Value Splitter::bound(Location loc,
                      ArrayRef<SmallVector<AffineBound, 2>> groups, Value q,
                      bool isLo, ElementwiseOp v0, IRMapping &outside,
                      Value zero, Value nkv) {
  Value r = isLo ? zero : nkv;
  for (auto &group : groups) {
    Value g;
    for (const AffineBound &a : group) {
      Value v = materializeBound(rewriter, loc, a, q, outside, &v0.getBody(),
                                 &indexCasts);
      g = !g    ? v
          : isLo ? arith::MinSIOp::create(rewriter, loc, g, v).getResult()
                 : arith::MaxSIOp::create(rewriter, loc, g, v).getResult();
    }
    r = isLo ? arith::MaxSIOp::create(rewriter, loc, r, g).getResult()
             : arith::MinSIOp::create(rewriter, loc, r, g).getResult();
  }
  return r;
}

/// The bounds, computed right after `after` (where the kernel computes its
/// own), at the location of `after`.
FailureOr<SplitBounds> Splitter::buildBounds(const KeyInterval &interval,
                                             ElementwiseOp v0,
                                             Operation *after) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(after);
  Location loc = after->getLoc();
  ScoreSite &s = as.sites[0];
  Value nq = as.params.lookup("Nq"), nkv = as.params.lookup("Nkv");
  if (!nq || !nkv)
    return kernel.emitError() << "needs parameters with roles Nq and Nkv";
  auto cst = [&](int64_t c) {
    return arith::ConstantIndexOp::create(rewriter, loc, c).getResult();
  };
  auto named = [&](int64_t c) {
    Value v = findIndexConstant(kernel, c);
    return v ? v : cst(c);
  };
  Value zero = named(0), one = named(1);
  Value bn = findBlockNConstant(s), bm = findBlockMConstant(s);
  if (!bn)
    bn = cst(s.blockN);
  if (!bm)
    bm = cst(s.blockM);
  // The bounds are the thread block's: its warpgroups share them.
  Value qFirst = s.qBlockBase;
  Value qEnd = arith::MinSIOp::create(
      rewriter, loc, arith::AddIOp::create(rewriter, loc, s.qBlockBase, bm),
      nq);
  Value qLast = arith::SubIOp::create(rewriter, loc, qEnd, one);
  IRMapping outside;
  Block &vb = v0.getBody().front();
  outside.map(vb.getArgument(1), v0.getB());
  outside.map(vb.getArgument(2), v0.getH());
  auto blocks = [&](Value v, bool ceil) -> Value {
    Value nonNeg = arith::MaxSIOp::create(rewriter, loc, v, zero);
    if (ceil)
      return arith::CeilDivSIOp::create(rewriter, loc, nonNeg, bn);
    return arith::DivSIOp::create(rewriter, loc, nonNeg, bn);
  };
  auto clamp = [&](Value v, Value lo, Value hi) -> Value {
    return arith::MinSIOp::create(
        rewriter, loc, arith::MaxSIOp::create(rewriter, loc, v, lo), hi);
  };
  auto rowBound = [&](bool isLo, Value q) {
    return bound(loc, isLo ? interval.lo : interval.hi, q, isLo, v0, outside,
                 zero, nkv);
  };
  Value loFirst = rowBound(true, qFirst), loLast = rowBound(true, qLast);
  Value hiFirst = rowBound(false, qFirst), hiLast = rowBound(false, qLast);
  SplitBounds r;
  r.nA = blocks(loFirst, /*ceil=*/false);
  Value nD = arith::MaxSIOp::create(rewriter, loc, blocks(hiLast, true), r.nA);
  r.nB = clamp(blocks(loLast, true), r.nA, nD);
  r.nC = clamp(blocks(hiFirst, false), r.nB, nD);
  // A block of rows that sees nothing visits no block at all.
  Value none = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle,
                                     nD, r.nA);
  r.nMax = arith::SelectOp::create(rewriter, loc, none, zero, nD);
  return r;
}

/// Simplifies the bound arithmetic (max(0, 0), x - 1 + 1, ...) with arith's
/// canonicalisations, so that it reads well once lowered to the source.
void Splitter::simplify(Operation *after, SplitBounds &bounds) {
  SmallVector<Operation *> created;
  for (Operation *op = after->getNextNode(); op; op = op->getNextNode()) {
    created.push_back(op);
    if (op == bounds.nMax.getDefiningOp())
      break;
  }
  MLIRContext *ctx = kernel.getContext();
  RewritePatternSet patterns(ctx);
  for (RegisteredOperationName name : ctx->getRegisteredOperations())
    if (name.getDialectNamespace() == "arith")
      name.getCanonicalizationPatterns(patterns, ctx);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  config.setListener(&rewriter.getRecorder());
  // A placeholder user keeps the bounds alive and tells their final form.
  OpBuilder b(ctx);
  b.setInsertionPointAfter(bounds.nMax.getDefiningOp());
  auto keep = UnrealizedConversionCastOp::create(
      b, after->getLoc(), TypeRange{b.getIndexType()},
      ValueRange{bounds.nMax, bounds.nA, bounds.nB, bounds.nC});
  (void)applyOpPatternsGreedily(created, std::move(patterns), config);
  bounds = {keep.getOperand(0), keep.getOperand(1), keep.getOperand(2),
            keep.getOperand(3)};
  keep.erase();
}

/// The loops visit only the blocks the mask needs: masked steps over
/// [C, max), unmasked steps over [B, C) and, when the mask has a left edge,
/// masked steps again over [A, B), a copy of the masking steps carried on.
LogicalResult Splitter::visitOnlyNeededBlocks(const SplitBounds &bounds,
                                              Value X, Value Y,
                                              bool leftEdge) {
  // The kernel's lowest block, when the unmasked steps stop at one (Y - Z
  // steps): the producer of a warp-specialized kernel loads down to it too.
  scf::ForOp unmasked = as.sites[1].loop;
  Value Z;
  if (auto sub = unmasked.getUpperBound().getDefiningOp<arith::SubIOp>())
    if (sub.getLhs() == Y)
      Z = sub.getRhs();
  Operation *maxDef = bounds.nMax.getDefiningOp();
  rewriter.replaceUsesWithIf(X, bounds.nMax, [&](OpOperand &use) {
    return use.getOwner() != maxDef;
  });
  rewriter.replaceUsesWithIf(Y, bounds.nC, [&](OpOperand &use) {
    return use.getOwner() != maxDef;
  });
  rewriter.setInsertionPoint(unmasked);
  Location loc = unmasked.getLoc();
  Value steps = arith::SubIOp::create(rewriter, loc, bounds.nC, bounds.nB);
  rewriter.modifyOpInPlace(unmasked, [&] { unmasked.setUpperBound(steps); });
  if (!leftEdge)
    return success();
  // Every block below A is hidden: the visited blocks start at A.
  Operation *zDef = Z ? Z.getDefiningOp() : nullptr;
  if (Z && (!zDef || !isa<NameLoc>(zDef->getLoc())))
    return unmasked.emitError()
           << "stops its unmasked steps at a lowest block that is not a "
              "named value of the kernel; the split cannot raise it to the "
              "mask's left edge";
  if (Z)
    rewriter.replaceUsesWithIf(Z, bounds.nA, [&](OpOperand &use) {
      return use.getOwner() != steps.getDefiningOp();
    });
  rewriter.setInsertionPointAfter(unmasked);
  Value lowSteps = arith::SubIOp::create(rewriter, loc, bounds.nB, bounds.nA);
  IRMapping map;
  map.map(bounds.nMax, bounds.nB);
  auto low = cast<scf::ForOp>(rewriter.clone(*as.sites[0].loop, map));
  low.setUpperBound(lowSteps);
  for (auto [init, res] :
       llvm::zip(low.getInitArgsMutable(), unmasked.getResults()))
    init.set(res);
  rewriter.replaceUsesWithIf(
      unmasked.getResults(), low.getResults(),
      [&](OpOperand &use) { return use.getOwner() != low; });
  return success();
}

/// The unmasked steps see every key of their blocks: no mask there.
void Splitter::unmaskFullBlocks(ElementwiseOp v1) {
  arith::SelectOp sel1 = maskSelect(v1);
  if (!sel1)
    return;
  rewriter.replaceAllUsesWith(sel1.getResult(), sel1.getTrueValue());
  Block &body = v1.getBody().front();
  if (body.getTerminator()->getOperand(0) == body.getArgument(0))
    rewriter.replaceOp(v1, v1.getInputs()[0]);
}

/// Names a term of a linear mask: a kernel argument by its role, an
/// argument of the variant's body by the coordinate it is, an op by name.
static void nameTerm(raw_ostream &os, Value v, ElementwiseOp v0) {
  while (isa_and_nonnull<arith::IndexCastOp, arith::ExtSIOp>(v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg) {
    os << "'" << v.getDefiningOp()->getName() << "'";
    return;
  }
  if (auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp()))
    if (auto role =
            fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "cuir.arg")) {
      os << role.getValue();
      return;
    }
  unsigned coordinate = arg.getArgNumber() - v0.getInputs().size();
  if (arg.getOwner() == &v0.getBody().front() && coordinate < 2)
    os << (coordinate == 0 ? "b" : "h");
  else
    os << "arg" << arg.getArgNumber();
}

/// Says why the mask stays in every block: not linear (which op), or linear
/// but not one interval of keys per row (its pieces).
static void remarkNotAnInterval(ElementwiseOp v0, Value visible, Value q,
                                Value k, const MaskDiagnosis &why,
                                StringRef outcome) {
  InFlightDiagnostic d = mlir::emitRemark(v0.getLoc());
  if (why.nonLinearOp) {
    d << "the variant's mask is "
      << (why.tooLarge ? "too large to read as linear constraints"
                       : "not linear in (q_idx, kv_idx)")
      << ": '" << why.nonLinearOp->getName() << "' " << why.reason;
  } else {
    d << "the variant's mask is linear in (q_idx, kv_idx) but not one "
         "interval of keys per query row with bounds q_idx + c or c: "
      << why.reason << " (" << why.numPieces << " convex piece"
      << (why.numPieces == 1 ? "" : "s");
    if (std::optional<LinearMask> mask = analyzeLinearMask(visible, q, k)) {
      d << ": ";
      std::string text;
      llvm::raw_string_ostream os(text);
      printLinearMask(os, *mask,
                      [&](raw_ostream &o, Value v) { nameTerm(o, v, v0); });
      d << text;
    }
    d << ")";
  }
  d << "; " << outcome;
  if (why.nonLinearOp)
    d.attachNote(why.nonLinearOp->getLoc()) << "this operation";
}

LogicalResult Splitter::run() {
  FailureOr<AttentionStructure> analysis = analyzeAttention(kernel);
  if (failed(analysis))
    return failure();
  as = std::move(*analysis);
  ElementwiseOp v0 = variantOpOf(as.sites.front());
  if (!v0)
    return kernel.emitError()
           << "has no variant scores to split (cuir.elementwise with '"
           << CuIRDialect::VariantScoresAttrHelper::getNameStr()
           << "'): run --transfer first";
  arith::SelectOp sel0 = maskSelect(v0);
  if (!sel0) {
    mlir::emitRemark(kernel.getLoc())
        << "the variant has no mask: the kernel's own split stays";
    return success();
  }
  Value X, Y;
  if (failed(checkLoops(X, Y)))
    return failure();
  ElementwiseOp v1 = variantOpOf(as.sites[1]);
  if (!v1)
    return as.sites[1].loop.emitError() << "has no variant scores";

  // A mask that reads the score decides per element: no tile can be
  // skipped or unmasked from the coordinates.
  if (readsInputElements(sel0.getCondition(), v0)) {
    mlir::emitRemark(v0.getLoc())
        << "the variant's mask reads the score: every block stays masked";
    return success();
  }

  // The mask as one interval of keys per row.
  Block &body = v0.getBody().front();
  Value qArg = body.getArgument(v0.getInputs().size() + 2);
  Value kArg = body.getArgument(v0.getInputs().size() + 3);
  MaskDiagnosis why;
  std::optional<KeyInterval> interval =
      analyzeKeyInterval(sel0.getCondition(), qArg, kArg, &why);
  if (!interval && mode != BlockMaskMode::Runtime)
    remarkNotAnInterval(v0, sel0.getCondition(), qArg, kArg, why,
                        mode == BlockMaskMode::Auto
                            ? "its tiles come from a runtime block mask"
                            : "every block stays masked (block-mask=dense)");
  if (mode == BlockMaskMode::Runtime ||
      (!interval && mode == BlockMaskMode::Auto)) {
    if (failed(visitListedBlocks(v0, sel0, X, Y)))
      return failure();
    unmaskFullBlocks(v1);
    rewriter.getRecorder().setRewrite(Rewrite::Blocks);
    rewriter.eraseDeadOps();
    return success();
  }
  if (!interval)
    return success();
  Operation *xDef = X.getDefiningOp(), *yDef = Y.getDefiningOp();
  if (!xDef || !yDef || xDef->getBlock() != yDef->getBlock())
    return kernel.emitError() << "computes its key/value block bounds in a "
                                 "form the split does not know";
  Operation *after = xDef->isBeforeInBlock(yDef) ? yDef : xDef;
  FailureOr<SplitBounds> bounds = buildBounds(*interval, v0, after);
  if (failed(bounds))
    return failure();
  simplify(after, *bounds);
  if (failed(visitOnlyNeededBlocks(*bounds, X, Y, !interval->lo.empty())))
    return failure();
  unmaskFullBlocks(v1);
  rewriter.eraseDeadOps();
  return success();
}

/// The steps visit the tiles of a runtime block mask (BlockList.cpp).
LogicalResult Splitter::visitListedBlocks(ElementwiseOp v0,
                                          arith::SelectOp sel0, Value X,
                                          Value Y) {
  Operation *xDef = X.getDefiningOp(), *yDef = Y.getDefiningOp();
  if (!xDef || !yDef || xDef->getBlock() != yDef->getBlock())
    return kernel.emitError() << "computes its key/value block bounds in a "
                                 "form the block list does not know";
  ListedBounds bounds{X, Y, {}, xDef->isBeforeInBlock(yDef) ? yDef : xDef};
  if (auto sub = as.sites[1].loop.getUpperBound().getDefiningOp<arith::SubIOp>())
    bounds.lowest = sub.getRhs();
  rewriter.getRecorder().setRewrite(Rewrite::Blocks);
  if (failed(cuir::visitListedBlocks(kernel, as, rewriter, v0,
                                     sel0.getCondition(), bounds)))
    return failure();
  rewriter.getRecorder().setRewrite(Rewrite::Split);
  if (mode == BlockMaskMode::Runtime)
    mlir::emitRemark(v0.getLoc())
        << "block-mask=runtime: the key/value tiles come from a runtime "
           "block mask ("
        << kernel->getAttr("cuir.block_mask") << ")";
  return success();
}

LogicalResult mlir::cuir::splitFullPartial(KernelOp kernel,
                                           BlockMaskMode mode) {
  if (isPartOfBackwardPass(kernel))
    return splitBackward(kernel, mode);
  return Splitter(kernel, mode).run();
}
