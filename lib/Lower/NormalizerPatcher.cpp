//===- NormalizerPatcher.cpp - Sigmoid weights instead of a softmax -------===//
//
// The normaliser's rewrite inserts the sigmoid weights where the online
// softmax computed its probabilities, reads O without the softmax's rescale
// and without the division by the row sum, and removes the log-sum-exp
// stores. In the source: the softmax call becomes a call of
// cuir_sigmoid_weights (the ops the call stood for go with it), a rescale
// called apart from the softmax goes, the row normaliser becomes 1, and the
// log-sum-exp stores go.
//
// In a backward pass the weights' call (scores_to_probs) becomes the same
// cuir_sigmoid_weights, and the dS call (probs_to_dscores) a call of
// cuir_sigmoid_dscores: dS = P * dP * (1 - P), no row sums.
//
//===----------------------------------------------------------------------===//

#include "FragmentWalk.h"
#include "Patcher.h"

#include "cuir/Lower/CppEmitter.h"
#include "cuir/Transfer/AttentionAnalysis.h"
#include "cuir/Transfer/BackwardAnalysis.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

class NormalizerPatcher : public Patcher {
public:
  Rewrite getRewrite() const override { return Rewrite::Normalizer; }

  LogicalResult patch(ArrayRef<Difference> differences,
                      PatchContext &ctx) override;

private:
  LogicalResult readSourceSites(PatchContext &ctx);
  LogicalResult replaceSoftmaxCall(Operation *neg, PatchContext &ctx);
  LogicalResult replaceDScoresCall(Operation *grad, PatchContext &ctx);
  LogicalResult patchRemoved(Operation *op, PatchContext &ctx);
  LogicalResult patchReadWithout(Operation *removed, Location loc,
                                 PatchContext &ctx);
  LogicalResult addHelpers(PatchContext &ctx);
  /// The first line of the statement that calls the function `loc` is in,
  /// if it is a call.
  std::optional<unsigned> callStatement(Location loc, PatchContext &ctx) {
    while (auto name = dyn_cast<NameLoc>(loc))
      loc = name.getChildLoc();
    if (!isa<CallSiteLoc>(loc))
      return std::nullopt;
    unsigned line = ctx.lineOf(loc, /*caller=*/true);
    if (!line)
      return std::nullopt;
    return ctx.src.statement(line).first;
  }
  bool inReplacedCall(Operation *op, PatchContext &ctx) {
    std::optional<unsigned> call = callStatement(op->getLoc(), ctx);
    return call && replacedCalls.count(*call);
  }

  /// The Source's score tiles, their weights and (backward) dS ops.
  struct SourceSite {
    Value score;
    Operation *weights, *dScores;
  };
  std::optional<SmallVector<SourceSite>> sourceSites;
  LocationCanonicalizer locations;
  std::set<unsigned> replacedCalls;
  std::optional<FragmentWalk> walk;
  unsigned sites = 0;
};

/// The softmax call becomes the sigmoid weights over the score tile.
LogicalResult NormalizerPatcher::replaceSoftmaxCall(Operation *neg,
                                                    PatchContext &ctx) {
  // The tile the weights are computed in place of: the score tile of the
  // Source's softmax that the weights stand for.
  if (failed(readSourceSites(ctx)))
    return failure();
  Value tile;
  for (SourceSite &site : *sourceSites)
    if (site.weights && locations.same(site.weights->getLoc(), neg->getLoc()))
      tile = site.score;
  if (!tile)
    return emitError(neg->getLoc())
           << "are sigmoid weights that stand for no softmax of the Source "
              "CuIR";
  FragmentLayoutAttr layout = getFragmentLayout(tile.getType());
  std::optional<unsigned> call = callStatement(neg->getLoc(), ctx);
  std::string why;
  FailureOr<std::string> frag = CppEmitter().expr(tile, why);
  if (!layout || !call || failed(frag))
    return emitError(neg->getLoc())
           << "cannot find the softmax's call and score tile in the source";
  walk = FragmentWalk::of(layout.getInstr());
  ++sites;
  if (!replacedCalls.insert(*call).second)
    return success();
  auto [first, last] = ctx.src.statement(*call);
  ctx.noteCall(first);
  return ctx.edit({SourceEdit::ReplaceLines, first, last,
                   ctx.src.indent(first).str() + "cuir_sigmoid_weights(" +
                       *frag +
                       ");  // cuir: sigmoid weights: no row max, row sum or "
                       "rescale",
                   "", ""},
                  neg->getLoc());
}

LogicalResult NormalizerPatcher::readSourceSites(PatchContext &ctx) {
  if (sourceSites)
    return success();
  sourceSites.emplace();
  if (isPartOfBackwardPass(ctx.diff->source)) {
    FailureOr<BackwardStructure> bs = analyzeBackward(ctx.diff->source);
    if (failed(bs))
      return failure();
    for (BackwardSite &site : bs->sites)
      sourceSites->push_back({site.score, site.weights, site.dScores});
    return success();
  }
  FailureOr<AttentionStructure> as = analyzeAttention(ctx.diff->source);
  if (failed(as))
    return failure();
  for (ScoreSite &site : as->sites)
    sourceSites->push_back({site.score, site.weights, nullptr});
  return success();
}

/// A backward's dS call becomes dS = P * dP * (1 - P) over the Source's dS
/// and weights tiles (`grad` is the inserted dP * (1 - P)).
LogicalResult NormalizerPatcher::replaceDScoresCall(Operation *grad,
                                                    PatchContext &ctx) {
  if (failed(readSourceSites(ctx)))
    return failure();
  Operation *dS = grad->hasOneUse() ? *grad->getUsers().begin() : nullptr;
  const SourceSite *site = nullptr;
  for (const SourceSite &s : *sourceSites)
    if (dS && s.dScores && locations.same(s.dScores->getLoc(), dS->getLoc()))
      site = &s;
  std::optional<unsigned> call =
      dS ? callStatement(dS->getLoc(), ctx) : std::nullopt;
  std::string why;
  FailureOr<std::string> ds =
      site ? CppEmitter().expr(site->dScores->getResult(0), why)
           : FailureOr<std::string>(failure());
  FailureOr<std::string> p = site ? CppEmitter().expr(site->score, why)
                                  : FailureOr<std::string>(failure());
  if (!site || !call || failed(ds) || failed(p))
    return emitError(grad->getLoc())
           << "is the sigmoid's dP * (1 - P), but the dS call and tiles of "
              "the Source's backward are not found in the source";
  if (!replacedCalls.insert(*call).second)
    return success();
  auto [first, last] = ctx.src.statement(*call);
  ctx.noteCall(first);
  ctx.addHelper("sigmoid_dscores",
                "// ---- cuir: the sigmoid's dS = P * dP * (1 - P), in place "
                "of dP (no row sums) ----\n"
                "template <class Tile>\n"
                "__device__ __forceinline__ void cuir_sigmoid_dscores(Tile "
                "&dp, const Tile &p) {\n"
                "  float *d = reinterpret_cast<float *>(&dp);\n"
                "  const float *w = reinterpret_cast<const float *>(&p);\n"
                "#pragma unroll\n"
                "  for (int i = 0; i < int(sizeof(Tile) / sizeof(float)); "
                "++i) d[i] = w[i] * d[i] * (1.f - w[i]);\n"
                "}\n");
  return ctx.edit({SourceEdit::ReplaceLines, first, last,
                   ctx.src.indent(first).str() + "cuir_sigmoid_dscores(" + *ds +
                       ", " + *p + ");  // cuir: the sigmoid's dS",
                   "", ""},
                  grad->getLoc());
}

/// A Source op that went: a log-sum-exp store's statement goes; an op
/// without effects needs no edit of its own (what read it changed too).
LogicalResult NormalizerPatcher::patchRemoved(Operation *op,
                                              PatchContext &ctx) {
  if (inReplacedCall(op, ctx) || isMemoryEffectFree(op))
    return success();
  if (!isa<StoreOp>(op))
    return op->emitError() << "was removed by the normaliser's rewrite, "
                              "which lowering patches only for stores";
  unsigned line = ctx.lineOf(op->getLoc());
  if (!line)
    return op->emitError() << "has no source line to patch";
  auto [first, last] = ctx.src.statement(line);
  return ctx.edit({SourceEdit::ReplaceLines, first, last, "", "", ""},
                  op->getLoc());
}

/// An op reads a value without the normaliser's `removed` op: the rescale
/// inside the softmax call goes with it; a rescale called apart goes; the
/// row normaliser O * broadcast(1 / row sum) becomes O * 1.
LogicalResult NormalizerPatcher::patchReadWithout(Operation *removed,
                                                  Location loc,
                                                  PatchContext &ctx) {
  if (inReplacedCall(removed, ctx))
    return success();
  if (std::optional<unsigned> call = callStatement(removed->getLoc(), ctx)) {
    auto [first, last] = ctx.src.statement(*call);
    return ctx.edit({SourceEdit::ReplaceLines, first, last, "", "", ""},
                    removed->getLoc());
  }
  auto mul = dyn_cast<arith::MulFOp>(removed);
  auto bc = mul ? mul.getRhs().getDefiningOp<BroadcastRowsOp>() : nullptr;
  Operation *norm = bc ? bc.getInput().getDefiningOp() : nullptr;
  unsigned line = norm ? ctx.lineOf(norm->getLoc()) : 0;
  if (!line)
    return emitError(loc) << "reads O without the normaliser's "
                          << removed->getName()
                          << ", which lowering cannot patch";
  auto [first, last] = ctx.src.statement(line);
  std::string text = ctx.src.line(first).str();
  size_t eq = text.find(" = ");
  if (eq == std::string::npos || first != last)
    return emitError(norm->getLoc())
           << "expects the row normaliser as one assignment in the source";
  return ctx.edit({SourceEdit::ReplaceLines, first, last,
                   text.substr(0, eq) +
                       " = 1.f;  // cuir: sigmoid weights are not normalised",
                   "", ""},
                  norm->getLoc());
}

LogicalResult NormalizerPatcher::patch(ArrayRef<Difference> differences,
                                       PatchContext &ctx) {
  // The weights (one exp(-s) a score tile) replace the softmax calls; what
  // was inserted there is written by the call.
  for (const Difference &d : differences)
    if (d.kind == Difference::Kind::Inserted && isa<arith::NegFOp>(d.target) &&
        failed(replaceSoftmaxCall(d.target, ctx)))
      return failure();
  // A backward's dP * (1 - P) replaces its dS call.
  for (const Difference &d : differences)
    if (d.kind == Difference::Kind::Inserted && isa<arith::MulFOp>(d.target) &&
        isPartOfBackwardPass(ctx.diff->target) &&
        failed(replaceDScoresCall(d.target, ctx)))
      return failure();
  llvm::DenseSet<Operation *> written;
  for (const Difference &d : differences)
    if (d.kind == Difference::Kind::Inserted && inReplacedCall(d.target, ctx))
      written.insert(d.target);
  for (const Difference &d : differences) {
    if (d.kind == Difference::Kind::Removed &&
        failed(patchRemoved(d.source, ctx)))
      return failure();
    if (d.kind != Difference::Kind::Operand)
      continue;
    if (Operation *def = d.getTargetValue().getDefiningOp();
        def && written.contains(def))
      continue;
    Operation *removed = d.getSourceValue().getDefiningOp();
    if (!removed || !ctx.diff->removedBy.count(removed))
      return emitError(d.getLoc()) << "reads a value of the normaliser's "
                                      "rewrite that lowering did not write";
    if (failed(patchReadWithout(removed, d.getLoc(), ctx)))
      return failure();
  }
  if (failed(checkAllWritten(differences, written)))
    return failure();
  return addHelpers(ctx);
}

/// sigmoid(s) = (1 + tanh(s / 2)) / 2: one SFU op, no division. Where the
/// variant's scores are written, they come as s / 2 already.
LogicalResult NormalizerPatcher::addHelpers(PatchContext &ctx) {
  if (!walk)
    return success();
  if (ctx.halvedScoreSites && ctx.halvedScoreSites != sites)
    return emitError(ctx.diff->target.getLoc())
           << "the variant's scores cover " << ctx.halvedScoreSites
           << " of the " << sites << " score tiles the sigmoid weights read";
  bool halved = ctx.halvedScoreSites != 0;
  const FragmentWalk &fw = *walk;
  ctx.addHelper("tanh", kTanhApproxHelper);
  ctx.addHelper(
      "sigmoid",
      "// ---- cuir: sigmoid weights, p = 1 / (1 + exp(-s)) = (1 + "
      "tanh(s / 2)) / 2, in place over an accumulator tile" +
          std::string(halved ? " of s / 2\n"
                               "//      (the variant's scores halve "
                               "their affine terms, no multiply per "
                               "score) ----\n"
                             : " ----\n") +
          "template <" + fw.templateParams +
          ">\n"
          "__device__ __forceinline__ void cuir_sigmoid_weights(" +
          fw.param() + ") {\n" +
          fw.walk("  ", fw.bodyIndent("  ") + fw.element() +
                            " = 0.5f * cuir_tanh_approx(" +
                            (halved ? fw.element() : "0.5f * " + fw.element()) +
                            ") + 0.5f;\n") +
          "}\n");
  return success();
}

} // namespace

std::unique_ptr<Patcher> mlir::cuir::createNormalizerPatcher() {
  return std::make_unique<NormalizerPatcher>();
}
