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
#include "cuir/Transfer/MaskAnalysis.h"
#include "cuir/Transfer/Transfer.h"

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
      if (ew->hasAttr(kVariantOpAttr))
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

} // namespace

LogicalResult mlir::cuir::splitFullPartial(KernelOp kernel) {
  FailureOr<AttentionStructure> as = analyzeAttention(kernel);
  if (failed(as))
    return failure();
  SmallVector<ScoreSite> &sites = as->sites;
  ElementwiseOp v0 = variantOpOf(sites.front());
  if (!v0)
    return kernel.emitError()
           << "has no variant scores to split (cuir.elementwise with '"
           << kVariantOpAttr << "'): run --transfer first";
  arith::SelectOp sel0 = maskSelect(v0);
  if (!sel0) {
    mlir::emitRemark(kernel.getLoc())
        << "the variant has no mask: the kernel's own split stays";
    return success();
  }

  // The key/value loops: masking steps, then unmasked steps, chained.
  if (sites.size() != 2 || sites[0].loop->getBlock() != sites[1].loop->getBlock() ||
      !sites[0].loop->isBeforeInBlock(sites[1].loop) ||
      sites[1].loop.getInitArgs() != ValueRange(sites[0].loop.getResults()))
    return kernel.emitError()
           << "has " << sites.size()
           << " key/value loop(s); the split expects the FA2 form: a loop of "
              "masking steps followed by a loop of unmasked steps, chained by "
              "their carried values";
  Value X = descendingTop(sites[0]), Y = descendingTop(sites[1]);
  if (!X || !Y)
    return sites[!X ? 0 : 1].loop.emitError()
           << "iterates key/value blocks in a form the split does not know: "
              "expected block n = (top - 1) - iv for iv from 0 step 1";
  ElementwiseOp v1 = variantOpOf(sites[1]);
  if (!v1)
    return sites[1].loop.emitError() << "has no variant scores";

  // The mask as one interval of keys per row.
  Block &body = v0.getBody().front();
  Value qArg = body.getArgument(v0.getInputs().size() + 2);
  Value kArg = body.getArgument(v0.getInputs().size() + 3);
  std::optional<KeyInterval> interval =
      analyzeKeyInterval(sel0.getCondition(), qArg, kArg);
  if (!interval) {
    mlir::emitRemark(v0.getLoc())
        << "the variant's mask is not one interval of keys per query row "
           "with affine bounds; every block stays masked";
    return success();
  }

  // The bounds, computed where the kernel computes its own.
  Operation *xDef = X.getDefiningOp(), *yDef = Y.getDefiningOp();
  if (!xDef || !yDef || xDef->getBlock() != yDef->getBlock())
    return kernel.emitError() << "computes its key/value block bounds in a "
                                 "form the split does not know";
  Operation *after = xDef->isBeforeInBlock(yDef) ? yDef : xDef;
  OpBuilder b(after->getContext());
  b.setInsertionPointAfter(after);
  Location loc = FusedLoc::get(b.getContext(), {after->getLoc()},
                               b.getStringAttr(kInsertedLocTag));
  ScoreSite &s = sites[0];
  Value nq = as->params.lookup("Nq"), nkv = as->params.lookup("Nkv");
  if (!nq || !nkv)
    return kernel.emitError() << "needs parameters with roles Nq and Nkv";
  auto cst = [&](int64_t c) {
    return arith::ConstantIndexOp::create(b, loc, c).getResult();
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
      b, loc, arith::AddIOp::create(b, loc, s.qBlockBase, bm), nq);
  Value qLast = arith::SubIOp::create(b, loc, qEnd, one);
  IRMapping outside;
  Block &vb = v0.getBody().front();
  outside.map(vb.getArgument(1), v0.getB());
  outside.map(vb.getArgument(2), v0.getH());
  auto bound = [&](ArrayRef<SmallVector<AffineBound, 2>> groups, Value q,
                   bool isLo) -> Value {
    // lo: max over groups of the min of alternatives, at least 0;
    // hi: min over groups of the max of alternatives, at most Nkv.
    Value r = isLo ? zero : nkv;
    for (auto &group : groups) {
      Value g;
      for (const AffineBound &a : group) {
        Value v = materializeBound(b, loc, a, q, outside, &v0.getBody());
        g = !g ? v
               : isLo ? arith::MinSIOp::create(b, loc, g, v).getResult()
                      : arith::MaxSIOp::create(b, loc, g, v).getResult();
      }
      r = isLo ? arith::MaxSIOp::create(b, loc, r, g).getResult()
               : arith::MinSIOp::create(b, loc, r, g).getResult();
    }
    return r;
  };
  auto floorDiv = [&](Value v) {
    return arith::DivSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, v, zero),
                                  bn)
        .getResult();
  };
  auto ceilDiv = [&](Value v) {
    return arith::CeilDivSIOp::create(
               b, loc, arith::MaxSIOp::create(b, loc, v, zero), bn)
        .getResult();
  };
  auto clamp = [&](Value v, Value lo, Value hi) {
    return arith::MinSIOp::create(b, loc,
                                  arith::MaxSIOp::create(b, loc, v, lo), hi)
        .getResult();
  };
  Operation *firstNew = nullptr;
  if (Operation *prev = after->getNextNode())
    firstNew = prev;
  Value loFirst = bound(interval->lo, qFirst, true);
  Value loLast = bound(interval->lo, qLast, true);
  Value hiFirst = bound(interval->hi, qFirst, false);
  Value hiLast = bound(interval->hi, qLast, false);
  Value nA = floorDiv(loFirst);
  Value nD = arith::MaxSIOp::create(b, loc, ceilDiv(hiLast), nA);
  Value nB = clamp(ceilDiv(loLast), nA, nD);
  Value nC = clamp(floorDiv(hiFirst), nB, nD);
  // A block of rows that sees nothing visits no block at all.
  Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, nD, nA);
  Value nMax = arith::SelectOp::create(b, loc, none, zero, nD);

  // Simplify the bound arithmetic (max(0, 0), x - 1 + 1, ...) so that it
  // reads well once lowered to the source.
  {
    SmallVector<Operation *> created;
    for (Operation *op = firstNew; op && op != nMax.getDefiningOp()->getNextNode();
         op = op->getNextNode())
      created.push_back(op);
    RewritePatternSet patterns(b.getContext());
    for (RegisteredOperationName name :
         b.getContext()->getRegisteredOperations())
      if (name.getDialectNamespace() == "arith")
        name.getCanonicalizationPatterns(patterns, b.getContext());
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    // A placeholder user keeps the bounds alive and tells their final form.
    auto keep = UnrealizedConversionCastOp::create(
        b, loc, TypeRange{b.getIndexType()}, ValueRange{nMax, nA, nB, nC});
    (void)applyOpPatternsGreedily(created, std::move(patterns), config);
    nMax = keep.getOperand(0);
    nA = keep.getOperand(1);
    nB = keep.getOperand(2);
    nC = keep.getOperand(3);
    keep.erase();
  }

  // The kernel's lowest block, when the unmasked steps stop at one (Y - Z
  // steps): the producer of a warp-specialized kernel loads down to it too.
  scf::ForOp unmasked = sites[1].loop;
  Value Z;
  if (auto sub = unmasked.getUpperBound().getDefiningOp<arith::SubIOp>())
    if (sub.getLhs() == Y)
      Z = sub.getRhs();

  SmallPtrSet<Operation *, 4> keep = {nMax.getDefiningOp()};
  X.replaceUsesWithIf(nMax, [&](OpOperand &use) {
    return !keep.contains(use.getOwner());
  });
  Y.replaceUsesWithIf(nC, [&](OpOperand &use) {
    return !keep.contains(use.getOwner());
  });
  // Unmasked steps over [B, C).
  b.setInsertionPoint(unmasked);
  unmasked.setUpperBound(arith::SubIOp::create(b, loc, nC, nB));

  // Masked steps below the full blocks, over [A, B), when the mask has a
  // left edge: a copy of the masking steps, carried on.
  if (!interval->lo.empty()) {
    // Every block below A is hidden: the visited blocks start at A.
    Operation *zDef = Z ? Z.getDefiningOp() : nullptr;
    if (Z && (!zDef || !isa<NameLoc>(zDef->getLoc())))
      return unmasked.emitError()
             << "stops its unmasked steps at a lowest block that is not a "
                "named value of the kernel; the split cannot raise it to the "
                "mask's left edge";
    if (Z)
      Z.replaceUsesWithIf(nA, [&](OpOperand &use) {
        return use.getOwner() != unmasked.getUpperBound().getDefiningOp();
      });
    b.setInsertionPointAfter(unmasked);
    IRMapping map;
    map.map(nMax, nB);
    auto low = cast<scf::ForOp>(b.clone(*sites[0].loop, map));
    low.setUpperBound(arith::SubIOp::create(b, loc, nB, nA));
    for (auto [init, res] : llvm::zip(low.getInitArgsMutable(),
                                      unmasked.getResults()))
      init.set(res);
    // Moving the new upper bound before the loop.
    low.getUpperBound().getDefiningOp()->moveBefore(low);
    unmasked.getResults().replaceUsesWithIf(
        low.getResults(), [&](OpOperand &use) { return use.getOwner() != low; });
  }

  // The unmasked steps see every key of their blocks: no mask there.
  if (arith::SelectOp sel1 = maskSelect(v1)) {
    sel1.getResult().replaceAllUsesWith(sel1.getTrueValue());
    if (v1.getBody().front().getTerminator()->getOperand(0) ==
        v1.getBody().front().getArgument(0)) {
      v1.getResult().replaceAllUsesWith(v1.getInputs()[0]);
      v1.erase();
    }
  }
  eraseDeadOps(kernel);
  kernel->setAttr("cuir.split", b.getUnitAttr());
  return success();
}
