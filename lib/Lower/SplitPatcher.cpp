//===- SplitPatcher.cpp - The full/partial split of the key/value loops ---===//
//
// The split's rewrite computes new block bounds after the kernel computes
// its own and makes the loops read them; for a mask with a left edge it adds
// a copy of the masking steps below the full blocks. In the source: the
// bounds are assigned after the statements that compute the kernel's own
// (temporaries for values used more than once), the unmasked steps stop at
// cuir_n_full_min, and the masking loop's text is copied after the unmasked
// loop with its lower bound changed.
//
//===----------------------------------------------------------------------===//

#include "Patcher.h"

#include "cuir/Lower/CppEmitter.h"
#include "cuir/Transfer/AttentionAnalysis.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// (lhs, rhs) of a loop's upper bound lhs - rhs.
std::pair<Value, Value> upperBoundParts(scf::ForOp loop) {
  if (auto sub = loop.getUpperBound().getDefiningOp<arith::SubIOp>())
    return {sub.getLhs(), sub.getRhs()};
  return {};
}

/// Whether `copy` is the same loop as `loop` (the split copies the masking
/// steps whole).
bool isCopyOf(scf::ForOp copy, scf::ForOp loop) {
  SmallVector<Operation *> a, b;
  copy.getBody()->walk([&](Operation *op) { a.push_back(op); });
  loop.getBody()->walk([&](Operation *op) { b.push_back(op); });
  return a.size() == b.size() &&
         llvm::all_of(llvm::zip(a, b), [](auto pair) {
           auto [x, y] = pair;
           return x->getName() == y->getName() && x->getLoc() == y->getLoc() &&
                  x->getAttrDictionary() == y->getAttrDictionary();
         });
}

class SplitPatcher : public Patcher {
public:
  Rewrite getRewrite() const override { return Rewrite::Split; }
  LogicalResult patch(ArrayRef<Difference> differences,
                      PatchContext &ctx) override;

private:
  LogicalResult readBounds(PatchContext &ctx);
  LogicalResult assignBounds(PatchContext &ctx);
  LogicalResult stopUnmaskedSteps(PatchContext &ctx);
  LogicalResult copyMaskingSteps(PatchContext &ctx);
  LogicalResult checkCovered(ArrayRef<Difference> differences);

  AttentionStructure ts, ss;
  /// Target bounds: masked steps from nMax down to nC, unmasked down to nB,
  /// masked again down to nA (with a left edge).
  Value nMax, nC, nB, nA;
  /// The Source's bounds: the masking steps' top and the unmasked steps'
  /// top and lowest block.
  Value sX, sY, sZ;
  std::optional<std::string> xName, yName, zName;
  std::string blockMin;
  llvm::DenseSet<Operation *> written;
};

LogicalResult SplitPatcher::readBounds(PatchContext &ctx) {
  FailureOr<AttentionStructure> t = analyzeAttention(ctx.diff->target);
  FailureOr<AttentionStructure> s = analyzeAttention(ctx.diff->source);
  if (failed(t) || failed(s))
    return failure();
  ts = std::move(*t);
  ss = std::move(*s);
  if (ss.sites.size() != 2 || ts.sites.size() < 2)
    return ctx.diff->target.emitError()
           << "lowering of the split expects the source's two loops of "
              "key/value blocks";
  Value nC2;
  std::tie(nMax, nC) = upperBoundParts(ts.sites[0].loop);
  std::tie(nC2, nB) = upperBoundParts(ts.sites[1].loop);
  if (ts.sites.size() == 3)
    nA = upperBoundParts(ts.sites[2].loop).second;
  std::tie(sX, sY) = upperBoundParts(ss.sites[0].loop);
  sZ = upperBoundParts(ss.sites[1].loop).second;
  if (sZ)
    if (Operation *zDef = sZ.getDefiningOp())
      zName = sourceNameOf(zDef->getLoc());
  if (!nMax || !nB || !sX || !sY || (ts.sites.size() == 3 && !nA))
    return ctx.diff->target.emitError()
           << "cannot read the split's block bounds";
  Operation *xDef = sX.getDefiningOp(), *yDef = sY.getDefiningOp();
  xName = xDef ? sourceNameOf(xDef->getLoc()) : std::nullopt;
  yName = yDef ? sourceNameOf(yDef->getLoc()) : std::nullopt;
  if (!xName || !yName)
    return ctx.diff->target.emitError()
           << "the source's block bounds have no names";
  blockMin = zName ? *zName : "cuir_n_block_min";
  for (ScoreSite &site : ts.sites)
    if (Operation *ub = site.loop.getUpperBound().getDefiningOp();
        ub && getChange(ub))
      written.insert(ub);
  return success();
}

/// The bounds as C++ statements, after the source computes its own.
LogicalResult SplitPatcher::assignBounds(PatchContext &ctx) {
  Operation *xDef = sX.getDefiningOp(), *yDef = sY.getDefiningOp();
  Operation *later = xDef->isBeforeInBlock(yDef) ? yDef : xDef;
  auto [first, last] = ctx.src.statement(ctx.lineOf(later->getLoc()));
  std::string indent = ctx.src.indent(first).str();
  CppEmitter em;
  std::string why;
  // Temporaries for values used more than once, in order.
  llvm::SetVector<Operation *> slice;
  std::function<void(Value)> collect = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || !getChange(def) || slice.contains(def))
      return;
    for (Value o : def->getOperands())
      collect(o);
    slice.insert(def);
  };
  for (Value v : {nMax, nC, nB, nA})
    if (v)
      collect(v);
  std::string code = indent +
                     "// ---- cuir: the key/value blocks the variant's mask "
                     "needs, split into masked and unmasked steps ----\n";
  int temps = 0;
  for (Operation *op : slice) {
    written.insert(op);
    if (isa<arith::ConstantOp>(op) || op->getResult(0).hasOneUse())
      continue;
    FailureOr<std::string> e = em.expr(op->getResult(0), why);
    FailureOr<std::string> type = em.typeOf(op->getResult(0));
    if (failed(e) || failed(type))
      return emitError(op->getLoc())
             << "cannot write the split in C++: "
             << (failed(e) ? why : "a value without a C++ type");
    std::string name = "cuir_t" + std::to_string(++temps);
    code += indent + "const " + *type + " " + name + " = " + *e + ";\n";
    em.names[op->getResult(0)] = name;
  }
  // The bounds go to the source's int block counters.
  auto emit = [&](Value v) -> FailureOr<std::string> {
    FailureOr<std::string> e = em.expr(v, why);
    if (failed(e))
      return emitError(v.getLoc()) << "cannot write the split in C++: " << why;
    if (!em.fitsInt(v))
      return emitError(v.getLoc())
             << "cannot write the split in C++: a block bound that an int "
                "may not hold";
    return e;
  };
  auto eMax = emit(nMax), eC = emit(nC), eB = emit(nB);
  if (failed(eMax) || failed(eC) || failed(eB))
    return failure();
  code += indent + *xName + " = " + *eMax + ";\n";
  code += indent + *yName + " = " + *eC + ";\n";
  code += indent + "const int cuir_n_full_min = " + *eB +
          ";  // unmasked steps: blocks [cuir_n_full_min, " + *yName + ")";
  if (nA) {
    auto eA = emit(nA);
    if (failed(eA))
      return failure();
    code += "\n" + indent + (zName ? "" : "const int ") + blockMin + " = " +
            *eA + ";  // masked steps again: blocks [" + blockMin +
            ", cuir_n_full_min)";
  }
  return ctx.edit({SourceEdit::InsertAfter, last, last, code, "", ""},
                  later->getLoc());
}

/// The unmasked steps stop at cuir_n_full_min: the loop statement (found
/// through its location) tests `>= Z` or `>= 0`.
LogicalResult SplitPatcher::stopUnmaskedSteps(PatchContext &ctx) {
  scf::ForOp unmasked = ss.sites[1].loop;
  auto [first, last] = ctx.src.statement(ctx.lineOf(unmasked.getLoc()));
  std::string cond = ">= " + (zName ? *zName : std::string("0")) + ";";
  if (ctx.src.line(first).find(cond) == StringRef::npos)
    return unmasked.emitError()
           << "expects the unmasked steps as 'for (; n " << cond << " --n)'";
  return ctx.edit(
      {SourceEdit::ReplaceText, first, first, "", cond, ">= cuir_n_full_min;"},
      unmasked.getLoc());
}

/// The masking steps again below the full blocks: a copy of their loop.
LogicalResult SplitPatcher::copyMaskingSteps(PatchContext &ctx) {
  scf::ForOp copy = ts.sites[2].loop, masked = ts.sites[0].loop;
  if (!getChange(copy) || !isCopyOf(copy, masked))
    return copy.emitError() << "is a third loop of key/value blocks that is "
                               "not the split's copy of the masking steps";
  written.insert(copy);
  auto [mfirst, mlast] = ctx.src.statement(ctx.lineOf(masked.getLoc()));
  std::string cond = ">= " + *yName + ";";
  if (ctx.src.line(mfirst).find(cond) == StringRef::npos)
    return masked.emitError()
           << "expects the masking steps as 'for (; n " << cond << " --n)'";
  unsigned after = ctx.src.statement(ctx.lineOf(ss.sites[1].loop.getLoc())).second;
  ctx.addCopy({mfirst, mlast, after, cond, ">= " + blockMin + ";",
               ctx.src.indent(mfirst).str() +
                   "// =============================== masking steps "
                   "below the full blocks (cuir) "
                   "===============================",
               copy.getLoc()});
  return success();
}

/// Every difference of the split is one of the bounds' reads.
LogicalResult SplitPatcher::checkCovered(ArrayRef<Difference> differences) {
  llvm::DenseSet<Value> reassigned = {sX, sY, ss.sites[1].loop.getUpperBound()};
  if (sZ)
    reassigned.insert(sZ);
  for (Value r : ss.sites[1].loop.getResults())
    reassigned.insert(r);
  for (const Difference &d : differences) {
    if (d.kind == Difference::Kind::Operand &&
        !reassigned.contains(d.getSourceValue()))
      return emitError(d.getLoc())
             << "reads a value of the split that lowering did not write";
    if (d.kind == Difference::Kind::Removed && !isMemoryEffectFree(d.source))
      return d.source->emitError()
             << "was removed by the split, which lowering cannot patch";
  }
  return checkAllWritten(differences, written);
}

LogicalResult SplitPatcher::patch(ArrayRef<Difference> differences,
                                  PatchContext &ctx) {
  if (differences.empty())
    return success();
  if (failed(readBounds(ctx)) || failed(assignBounds(ctx)) ||
      failed(stopUnmaskedSteps(ctx)) ||
      (nA && failed(copyMaskingSteps(ctx))))
    return failure();
  return checkCovered(differences);
}

} // namespace

std::unique_ptr<Patcher> mlir::cuir::createSplitPatcher() {
  return std::make_unique<SplitPatcher>();
}
