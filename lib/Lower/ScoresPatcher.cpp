//===- ScoresPatcher.cpp - The variant's scores and mask ------------------===//
//
// A cuir.elementwise that applies the variant's scores to a score tile
// becomes a call, after the statement that completes the tile, of a helper
// that walks the accumulator fragment with the layout's exact element
// coordinates and rewrites each score in place. The helper's body is the
// elementwise region, printed by printScoreBody. The ops that compute the
// call's arguments (the first key of the block, the natural scale) are
// written into the call as expressions.
//
//===----------------------------------------------------------------------===//

#include "FragmentWalk.h"
#include "Patcher.h"
#include "ScoreHelper.h"

#include "cuir/Lower/CppEmitter.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

class ScoresPatcher : public Patcher {
public:
  Rewrite getRewrite() const override { return Rewrite::Scores; }

  LogicalResult patch(ArrayRef<Difference> differences,
                      PatchContext &ctx) override {
    for (const Difference &d : differences)
      if (d.kind == Difference::Kind::Inserted)
        if (auto ew = dyn_cast<ElementwiseOp>(d.target))
          if (failed(lowerScores(ew, ctx)))
            return failure();
    for (const Difference &d : differences)
      if (d.kind == Difference::Kind::Operand &&
          !written.contains(d.getTargetValue().getDefiningOp()))
        return emitError(d.getLoc())
               << "reads a value of the variant's scores that lowering did "
                  "not write";
    return checkAllWritten(differences, written);
  }

private:
  LogicalResult lowerScores(ElementwiseOp ew, PatchContext &ctx);
  FailureOr<std::string> expr(Value v, Location loc);
  std::string helperText(const FragmentWalk &fw,
                         const ScoreBody &body, MmaInstr instr,
                         const PatchContext &ctx);
  /// `v`'s inserted ops, written as part of an expression.
  void markWritten(Value v);

  llvm::DenseSet<Operation *> written;
};

void ScoresPatcher::markWritten(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !getChange(def) || !written.insert(def).second)
    return;
  for (Value operand : def->getOperands())
    markWritten(operand);
}

/// A KV tile read from a runtime block mask's lists (the block list's
/// scf.if) is, at the scores' call, the source's own block variable: the
/// kernels pass their score hooks kv_tiles(n), the listed tile.
static void nameListedTiles(Value v, CppEmitter &em) {
  Operation *def = v.getDefiningOp();
  if (!def || em.names.count(v))
    return;
  auto tile = dyn_cast<scf::IfOp>(def);
  auto partial = tile ? tile.getCondition().getDefiningOp<arith::CmpIOp>()
                      : arith::CmpIOp();
  if (tile && getChange(tile) &&
      getChange(tile).getRewrite() == Rewrite::Blocks && partial) {
    std::string why;
    if (FailureOr<std::string> n = em.expr(partial.getLhs(), why);
        succeeded(n))
      em.names[v] = *n;
    return;
  }
  for (Value operand : def->getOperands())
    nameListedTiles(operand, em);
}

FailureOr<std::string> ScoresPatcher::expr(Value v, Location loc) {
  std::string why;
  CppEmitter em;
  nameListedTiles(v, em);
  FailureOr<std::string> e = em.expr(v, why);
  if (failed(e))
    return emitError(loc) << "cannot write " << why << " in the source";
  markWritten(v);
  return e;
}

std::string ScoresPatcher::helperText(const FragmentWalk &fw,
                                      const ScoreBody &body, MmaInstr instr,
                                      const PatchContext &ctx) {
  std::string ind = fw.bodyIndent("  ");
  std::string loopBody =
      ind + "const int q_off = " + fw.qOff + ", q_idx = row0 + q_off;\n" + ind +
      "const int kv_off = " + fw.kvOff + ", kv_idx = col0 + kv_off;\n" + ind +
      "const float s = " + fw.element + ";\n" + body.stmts + ind + fw.element +
      " = " + body.assign + ";\n";
  return "// ---- cuir: the scores of the variant '" + ctx.variantSpec +
         "' (generated from the Target CuIR): each\n"
         "//      score s of an " +
         stringifyMmaInstr(instr).str() +
         " accumulator tile becomes score_mod(s), or -inf where the\n"
         "//      mask hides it (MASK: partial blocks only). row0/col0: this "
         "thread's first query and key. ----\n"
         "template <bool MASK, " +
         fw.templateParams +
         ">\n"
         "__device__ __forceinline__ void cuir_variant_scores(" +
         fw.param +
         ", const cuir_attention_params &params,\n"
         "                                                    int b, int h, "
         "int row0, int col0) {\n"
         "  (void)params, (void)b, (void)h;\n" +
         body.hoisted + fw.walk("  ", loopBody) + "}\n";
}

LogicalResult ScoresPatcher::lowerScores(ElementwiseOp ew, PatchContext &ctx) {
  Location loc = ew.getLoc();
  Value in = ew.getInputs()[0];
  FragmentLayoutAttr layout = getFragmentLayout(in.getType());
  if (!layout || layout.getKind() != FragmentKind::Acc ||
      (layout.getInstr() == MmaInstr::WgmmaM64NK16 &&
       layout.getWarps() != ArrayRef<int64_t>{1, 1}))
    return emitError(loc) << "lowering writes variant scores over "
                             "mma.m16n8k16 accumulators and over one "
                             "warpgroup's wgmma accumulator; this tile is "
                          << in.getType();
  FragmentWalk fw = FragmentWalk::of(layout.getInstr());
  auto frag = expr(in, loc), b = expr(ew.getB(), loc), h = expr(ew.getH(), loc),
       q0 = expr(ew.getQBase(), loc), k0 = expr(ew.getKvBase(), loc);
  if (failed(frag) || failed(b) || failed(h) || failed(q0) || failed(k0))
    return failure();
  // Values the body reads from around it (the natural scale).
  ew.walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!ew->isAncestor(v.getParentBlock()->getParentOp()))
        markWritten(v);
  });
  bool halve = ctx.normalizer == Normalizer::Sigmoid;
  FailureOr<ScoreBody> body =
      printScoreBody(ew, halve, "  ", fw.bodyIndent("  "));
  if (failed(body))
    return failure();
  if (halve)
    ++ctx.halvedScoreSites;
  std::string helper = helperText(fw, *body, layout.getInstr(), ctx);
  if (helper.find(kTanhApproxName) != std::string::npos)
    ctx.addHelper("tanh", kTanhApproxHelper);
  ctx.addHelper("variant_scores", helper);

  // The call, right after the statement that completes the score tile.
  unsigned anchor = ctx.lineOf(loc);
  if (!anchor)
    return emitError(loc) << "the variant's scores have no anchor in the "
                             "source";
  auto [first, last] = ctx.src.statement(anchor);
  std::string indent = ctx.src.indent(first).str();
  auto shape = cast<RankedTensorType>(in.getType()).getShape();
  int64_t rowsPerWarp = shape[0] / layout.getWarps()[0];
  int64_t colsPerWarp = shape[1] / layout.getWarps()[1];
  int64_t warpsN = layout.getWarps()[1];
  std::string lane = "(threadIdx.x % 32)", warp = "(threadIdx.x / 32)";
  if (layout.getInstr() == MmaInstr::WgmmaM64NK16) {
    // Warp w of a warpgroup holds rows [16w, 16w + 16) of its 64.
    warp = "(threadIdx.x / 32 % 4)";
    rowsPerWarp = 16;
  }
  std::string row0 =
      *q0 + " + " +
      (warpsN == 1 ? warp : "(" + warp + " / " + std::to_string(warpsN) + ")") +
      " * " + std::to_string(rowsPerWarp) + " + " + lane + " / 4";
  std::string col0 =
      *k0 +
      (warpsN == 1 ? std::string()
                   : " + (" + warp + " % " + std::to_string(warpsN) + ") * " +
                         std::to_string(colsPerWarp)) +
      " + " + lane + " % 4 * 2";
  std::string call =
      indent + "// ---- cuir: the variant's " +
      (body->masked ? "scores and mask" : "scores") + " ----\n" + indent +
      "cuir_variant_scores<" + (body->masked ? "true" : "false") + ">(" +
      *frag + ", params, " + *b + ", " + *h + ", " + row0 + ", " + col0 + ");";
  written.insert(ew);
  ctx.noteCall(last);
  return ctx.edit({SourceEdit::InsertAfter, last, last, call, "", ""}, loc);
}

} // namespace

std::unique_ptr<Patcher> mlir::cuir::createScoresPatcher() {
  return std::make_unique<ScoresPatcher>();
}
