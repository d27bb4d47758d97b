//===- Transfer.cpp - Give a kernel the semantics of a variant ------------===//

#include "cuir/Transfer/Transfer.h"

#include "cuir/Interpreter/Interpreter.h"
#include "cuir/Transfer/AttentionAnalysis.h"
#include "cuir/Variants/Variants.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::cuir;

void mlir::cuir::eraseDeadOps(Operation *root) {
  bool changed = true;
  while (changed) {
    changed = false;
    root->walk<WalkOrder::PostOrder>([&](Operation *op) {
      if (op != root && isOpTriviallyDead(op)) {
        op->erase();
        changed = true;
      }
    });
  }
}

/// A location for an op a transform inserts after `anchor`.
static Location insertedLoc(Location anchor) {
  MLIRContext *ctx = anchor.getContext();
  return FusedLoc::get(ctx, {anchor}, StringAttr::get(ctx, kInsertedLocTag));
}

LogicalResult mlir::cuir::transferKernel(KernelOp kernel, VariantOp variant,
                                         StringRef spec) {
  if (auto done = kernel->getAttrOfType<StringAttr>("cuir.variant"))
    return kernel.emitError()
           << "already computes the variant '" << done.getValue()
           << "'; transfer the source kernel once, with a composition such "
              "as --transfer="
           << done.getValue() << "," << spec;
  FailureOr<AttentionStructure> as = analyzeAttention(kernel);
  if (failed(as))
    return failure();
  MLIRContext *ctx = kernel.getContext();
  Block &entry = kernel.getBody().front();
  Location kloc = kernel.getLoc();
  OpBuilder b(ctx);

  // The variant's parameters: sizes bind to the kernel's, the rest become
  // new kernel parameters.
  Block &vbody = variant.getBody().front();
  SmallVector<Value> paramValues;
  for (unsigned i = 0, e = vbody.getNumArguments(); i < e; ++i) {
    StringRef name = variant.getParamName(i);
    if (isSizeParam(name)) {
      auto it = as->params.find(name);
      if (it == as->params.end())
        return kernel.emitError() << "variant '" << variant.getSymName()
                                  << "' reads the size " << name
                                  << ", but the kernel has no parameter with "
                                     "that role";
      paramValues.push_back(it->second);
      continue;
    }
    if (as->params.count(("param:" + name).str()))
      return kernel.emitError() << "already has a parameter '" << name
                                << "': transfer a variant once";
    Type t = vbody.getArgument(i).getType();
    NamedAttrList attrs(cast<DictionaryAttr>(variant.getArgAttrsAttr()[i]));
    attrs.erase("cuir.param");
    attrs.set(kArgRoleAttr, StringAttr::get(ctx, "param:" + name));
    unsigned pos = kernel.getNumArguments();
    if (failed(kernel.insertArgument(pos, t, attrs.getDictionary(ctx),
                                     insertedLoc(kloc))))
      return kernel.emitError() << "cannot add the parameter '" << name << "'";
    paramValues.push_back(kernel.getArgument(pos));
  }

  bool needsScale = variant.getScoreMod() ||
                    variant.getNormalizer() == Normalizer::Sigmoid;
  b.setInsertionPointToStart(&entry);

  // The variant's mask replaces the kernel's causal mask.
  if (auto it = as->params.find("causal"); it != as->params.end()) {
    BlockArgument causal = it->second;
    Value off = arith::ConstantOp::create(
        b, insertedLoc(causal.getLoc()), b.getIntegerAttr(causal.getType(), 0));
    causal.replaceAllUsesWith(off);
  }
  kernel->removeAttr(kCausalAttr);

  // Score functions see scaled scores: fold the scale into the new op and
  // run the softmax on scale 1.
  Value naturalScale;
  if (needsScale) {
    BlockArgument scale;
    bool log2 = false;
    if (auto it = as->params.find("softmax_scale"); it != as->params.end())
      scale = it->second;
    else if (auto it = as->params.find("softmax_scale_log2");
             it != as->params.end())
      scale = it->second, log2 = true;
    if (!scale)
      return kernel.emitError()
             << "has no 'softmax_scale' parameter: the variant's score "
                "function needs the scaled scores";
    Location sloc = insertedLoc(scale.getLoc());
    Value unit = arith::ConstantOp::create(
        b, sloc, b.getF32FloatAttr(log2 ? float(M_LOG2E) : 1.0f));
    naturalScale = scale;
    if (log2) {
      Value ln2 = arith::ConstantOp::create(b, sloc, b.getF32FloatAttr(M_LN2));
      naturalScale = arith::MulFOp::create(b, sloc, scale, ln2);
    }
    scale.replaceUsesWithIf(unit, [&](OpOperand &use) {
      return use.getOwner() != naturalScale.getDefiningOp();
    });
  }

  Type f32 = b.getF32Type(), idx = b.getIndexType();
  for (ScoreSite &site : as->sites) {
    Operation *def = site.score.getDefiningOp();
    b.setInsertionPointAfter(def);
    Location loc = insertedLoc(def->getLoc());
    Value bn = findBlockNConstant(site);
    if (!bn)
      bn = arith::ConstantIndexOp::create(b, loc, site.blockN);
    Value kvBase = arith::MulIOp::create(b, loc, site.kvBlock, bn);
    auto scoreType = cast<RankedTensorType>(site.score.getType());
    auto ew = ElementwiseOp::create(b, loc, scoreType, ValueRange{site.score},
                                    site.batch, site.head, site.qBase, kvBase);
    ew->setAttr(kVariantOpAttr, StringAttr::get(ctx, spec));
    Block *body = new Block();
    ew.getBody().push_back(body);
    body->addArgument(f32, loc);
    for (int i = 0; i < 4; ++i)
      body->addArgument(idx, loc);
    OpBuilder eb = OpBuilder::atBlockEnd(body);
    Value x = body->getArgument(0);
    if (naturalScale)
      x = arith::MulFOp::create(eb, loc, x, naturalScale);
    IRMapping map;
    for (unsigned i = 0, e = vbody.getNumArguments(); i < e; ++i)
      map.map(vbody.getArgument(i), paramValues[i]);
    auto inlineMod = [&](Operation *mod, ValueRange args) {
      Block &src = mod->getRegion(0).front();
      for (auto [from, to] : llvm::zip(src.getArguments(), args))
        map.map(from, to);
      for (Operation &op : src.without_terminator()) {
        Operation *clone = eb.clone(op, map);
        clone->setLoc(loc);
      }
      return map.lookup(src.getTerminator()->getOperand(0));
    };
    ValueRange coords = body->getArguments().drop_front();
    if (ScoreModOp s = variant.getScoreMod()) {
      SmallVector<Value> args = {x};
      args.append(coords.begin(), coords.end());
      x = inlineMod(s, args);
    }
    if (MaskModOp m = variant.getMaskMod()) {
      Value visible = inlineMod(m, coords);
      Value ninf = arith::ConstantOp::create(
          eb, loc, eb.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
      x = arith::SelectOp::create(eb, loc, visible, x, ninf);
    }
    YieldOp::create(eb, loc, x);
    site.score.replaceUsesWithIf(ew.getResult(), [&](OpOperand &use) {
      return use.getOwner() != ew;
    });

    if (variant.getNormalizer() != Normalizer::Sigmoid)
      continue;
    if (!site.weights)
      return site.rowMax.emitError()
             << "is a row maximum of scores, but no exp/exp2 of the scores "
                "relative to it was found: the sigmoid normaliser replaces "
                "an online softmax";
    // Sigmoid: P = 1 / (1 + exp(-s)) over the masked scores; no rescale.
    b.setInsertionPointAfter(site.weights);
    Location wloc = insertedLoc(site.weights->getLoc());
    Value s = site.rowMax.getInput();
    auto tile = cast<RankedTensorType>(s.getType());
    Value one = arith::ConstantOp::create(
        b, wloc, DenseElementsAttr::get(tile, b.getF32FloatAttr(1.0f)));
    Value neg = arith::NegFOp::create(b, wloc, s);
    Value e = math::ExpOp::create(b, wloc, neg);
    Value den = arith::AddFOp::create(b, wloc, one, e);
    Value p = arith::DivFOp::create(b, wloc, one, den);
    site.weights->getResult(0).replaceAllUsesWith(p);
    if (!site.carriedAcc)
      return site.pvGemm->emitError()
             << "accumulates into a value that is not the rescaled "
                "loop-carried output: cannot remove the softmax rescale for "
                "a sigmoid normaliser";
    site.rescaledAcc.replaceAllUsesWith(site.carriedAcc);
  }

  if (variant.getNormalizer() == Normalizer::Sigmoid) {
    // The output is the weighted sum itself: drop the division by the row
    // sum after the loops, and the log-sum-exp, which a sigmoid lacks.
    // A software-pipelined kernel rescales O once more and adds its last
    // P V after the loops: follow O through those GEMMs and their waits.
    for (ScoreSite &site : as->sites) {
      auto arg = dyn_cast<BlockArgument>(site.carriedAcc);
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
              mul.getResult().replaceAllUsesWith(o);
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
    if (auto it = as->params.find("lse"); it != as->params.end()) {
      SmallVector<Operation *> stores;
      kernel.walk([&](StoreOp store) {
        Value dst = store.getDst();
        while (auto sub = dst.getDefiningOp<memref::SubViewOp>())
          dst = sub.getSource();
        if (dst == it->second)
          stores.push_back(store);
      });
      for (Operation *s : stores)
        s->erase();
    }
  }
  kernel->setAttr("cuir.variant", StringAttr::get(ctx, spec));
  kernel->setAttr("cuir.normalizer",
                  StringAttr::get(ctx, stringifyNormalizer(variant.getNormalizer())));
  eraseDeadOps(kernel);
  return success();
}
