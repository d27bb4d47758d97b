//===- BlockListPatcher.cpp - Key/value loops over a runtime block mask ---===//
//
// The block list's rewrite (Transfer/BlockList.cpp) reads the list lengths in
// place of the kernel's block bounds and maps every key coordinate of a
// virtual block through the lists. The expert kernels route every such
// coordinate through their block-iteration point (cuir/kv_tiles.cuh):
//   const cuir_kernels::DenseKvTiles kv_tiles{};
// so the patch is that one statement: a ListedKvTiles over this query
// block's lists, and the bounds assigned from it. A kernel that takes its
// query blocks in the mask's q_order has its query-order point
//   const cuir_kernels::ExpertQueryOrder query_order{};
// replaced by a ListedQueryOrder over that list.
//
// A backward kernel's query steps (BackwardSplit.cpp) go through its
// query-block point
//   const cuir_kernels::DenseQTiles q_tiles{};
// whose range(...) its step range passes through: the patch is a
// ListedQTiles over this KV tile's transposed lists.
//
//===----------------------------------------------------------------------===//

#include "Patcher.h"

#include "cuir/Lower/CppEmitter.h"
#include "cuir/Transfer/AttentionAnalysis.h"
#include "cuir/Transfer/BackwardAnalysis.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Regex.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

constexpr StringLiteral kIterationPoint = "cuir_kernels::DenseKvTiles kv_tiles";
constexpr StringLiteral kQueryOrderPoint =
    "cuir_kernels::ExpertQueryOrder query_order";
constexpr StringLiteral kQueryIterationPoint =
    "cuir_kernels::DenseQTiles q_tiles";

class BlockListPatcher : public Patcher {
public:
  Rewrite getRewrite() const override { return Rewrite::Blocks; }
  LogicalResult patch(ArrayRef<Difference> differences,
                      PatchContext &ctx) override;

private:
  LogicalResult readMask(PatchContext &ctx);
  LogicalResult readSource(PatchContext &ctx);
  LogicalResult readBackwardSource(PatchContext &ctx);
  LogicalResult checkTilesRouted(ArrayRef<Difference> differences,
                                 PatchContext &ctx, StringRef point);
  LogicalResult writeQueryLists(PatchContext &ctx, unsigned line);
  FailureOr<unsigned> findPoint(PatchContext &ctx, StringRef point);
  LogicalResult writeLists(PatchContext &ctx, unsigned line);
  LogicalResult writeQueryOrder(PatchContext &ctx);
  LogicalResult checkCovered(ArrayRef<Difference> differences);

  BlockMaskOp mask;
  AttentionStructure ss;
  /// Source names: the bounds, the block's coordinates, the tile sizes.
  std::string top, unmaskedTop, lowest, batch, head, qBlockBase, blockM,
      blockN;
};

/// The source's name of `v` (its defining op's or argument's location).
std::optional<std::string> nameOf(Value v) {
  if (!v)
    return std::nullopt;
  Operation *def = v.getDefiningOp();
  return sourceNameOf(def ? def->getLoc() : v.getLoc());
}

LogicalResult BlockListPatcher::readMask(PatchContext &ctx) {
  KernelOp target = ctx.diff->target;
  auto sym = target->getAttrOfType<FlatSymbolRefAttr>("cuir.block_mask");
  mask = sym ? SymbolTable::lookupNearestSymbolFrom<BlockMaskOp>(target, sym)
             : BlockMaskOp();
  if (!mask)
    return target.emitError()
           << "iterates a block list but names no cuir.block_mask";
  return success();
}

LogicalResult BlockListPatcher::readSource(PatchContext &ctx) {
  FailureOr<AttentionStructure> s = analyzeAttention(ctx.diff->source);
  if (failed(s))
    return failure();
  ss = std::move(*s);
  const ScoreSite &site = ss.sites.front();
  auto x = ss.sites[0].loop.getUpperBound().getDefiningOp<arith::SubIOp>();
  auto y = ss.sites[1].loop.getUpperBound().getDefiningOp<arith::SubIOp>();
  Value sY = y ? y.getLhs() : ss.sites[1].loop.getUpperBound();
  auto names = {nameOf(x ? x.getLhs() : Value()), nameOf(sY),
                nameOf(site.batch), nameOf(site.head),
                nameOf(site.qBlockBase), nameOf(findBlockMConstant(site)),
                nameOf(findBlockNConstant(site))};
  std::string *out[] = {&top,  &unmaskedTop, &batch, &head,
                        &qBlockBase, &blockM, &blockN};
  for (auto [name, dst] : llvm::zip(names, out)) {
    if (!name)
      return ctx.diff->source.emitError()
             << "names no source variable for a value the block list needs "
                "(bounds, block coordinates, tile sizes)";
    *dst = *name;
  }
  if (y)
    if (std::optional<std::string> z = nameOf(y.getRhs());
        z && !matchPattern(y.getRhs(), m_Zero()))
      lowest = *z;
  return success();
}

/// Every tile the lists give replaces a key coordinate that the source
/// computes through its block-iteration point: a statement of the
/// coordinate's location (the callee's or a call site's) names kv_tiles or
/// a tile variable taken from it, or the tile is the variant scores' (the
/// score hook's argument). Otherwise the patch would miss that coordinate.
LogicalResult
BlockListPatcher::checkTilesRouted(ArrayRef<Difference> differences,
                                   PatchContext &ctx, StringRef point) {
  // The point's call itself (kv_tiles(...), q_tiles(...)), or a tile
  // variable the source takes from it (kv_tile, k_tile, v_tile, q_tile).
  llvm::Regex tileVariable(point.str() + "\\(|_tile([^A-Za-z0-9_]|$)");
  for (const Difference &d : differences) {
    if (d.kind != Difference::Kind::Inserted || !isa<scf::IfOp>(d.target))
      continue;
    // The variant's scores take the tile from the score hook's argument,
    // which the kernels pass as kv_tiles(n) (the scores patcher's).
    bool routed = llvm::all_of(d.target->getUsers(), [](Operation *user) {
      ChangeAttr change = getChange(user);
      return change && change.getRewrite() == Rewrite::Scores;
    });
    d.target->getLoc()->walk([&](Location l) {
      auto range = dyn_cast<FileLineColRange>(l);
      if (!range || routed)
        return WalkResult::advance();
      auto [first, last] = ctx.src.statement(range.getStartLine());
      for (unsigned line = first; first && line <= last; ++line)
        routed |= tileVariable.match(ctx.src.line(line));
      return WalkResult::advance();
    });
    if (!routed)
      return d.target->emitError()
             << "reads a listed tile where the source computes a coordinate "
                "without its block-iteration point ("
             << point << "(n))";
  }
  return success();
}

/// The line of the kernel's one declaration `point` (its block-iteration or
/// query-order point).
FailureOr<unsigned> BlockListPatcher::findPoint(PatchContext &ctx,
                                                StringRef point) {
  unsigned found = 0;
  for (unsigned l = 1; l <= ctx.src.numLines(); ++l) {
    if (!ctx.src.line(l).contains(point))
      continue;
    if (found)
      return ctx.diff->source.emitError()
             << "has two declarations '" << point << "' (lines " << found
             << " and " << l << ")";
    found = l;
  }
  if (!found)
    return ctx.diff->source.emitError()
           << "has no '" << point
           << "{};', which the block list replaces (cuir/kv_tiles.cuh)";
  return found;
}

/// The ListedKvTiles of this query block, and the bounds it gives.
LogicalResult BlockListPatcher::writeLists(PatchContext &ctx, unsigned line) {
  std::string in = ctx.src.indent(line).str();
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  std::string qBlocks =
      "(params.seqlen_q + " + blockM + " - 1) / " + blockM;
  std::string kvBlocks =
      "(params.seqlen_kv + " + blockN + " - 1) / " + blockN;
  std::string code =
      in +
      "// ---- cuir: the tiles of the runtime block mask: masked steps "
      "visit this query block's\n" +
      in +
      "//      partial tiles, unmasked steps its full ones, nobody the "
      "rest ----\n" +
      in + "const cuir_kernels::ListedKvTiles kv_tiles(\n" + in +
      "    params.cuir_kv_num_blocks, params.cuir_kv_indices, "
      "params.cuir_full_kv_num_blocks, params.cuir_full_kv_indices,\n" +
      in + "    cuir_kernels::ListedKvTiles::row_of(" + batch + ", " + head +
      ", " + qBlockBase + " / " + blockM + ", " + flag(mask.dependsOnBatch()) +
      ", " + flag(mask.dependsOnHeads()) + ", params.num_heads_q,\n" + in +
      "                                        " + qBlocks + "),\n" + in +
      "    " + kvBlocks +
      (usesMaskBits(ctx.diff->target) ? ", params.cuir_" + kMaskBitsList.str() +
                                            ", " + blockM + ", " + blockN
                                      : std::string()) +
      ");\n";
  if (!lowest.empty())
    code += in + lowest + " = 0;\n";
  code += in + unmaskedTop + " = kv_tiles.num_full;\n";
  code += in + top + " = kv_tiles.num_blocks();";
  // The declaration is one line (its braces are the initializer, not a
  // block: no statement scan).
  return ctx.edit({SourceEdit::ReplaceLines, line, line, code, "", ""},
                  ctx.diff->target.getLoc());
}

/// The heavy-first order of a kernel that reads the mask's q_order.
LogicalResult BlockListPatcher::writeQueryOrder(PatchContext &ctx) {
  KernelOp target = ctx.diff->target;
  if (llvm::none_of(target.getArguments(), [&](BlockArgument a) {
        return argRole(target, a.getArgNumber()) == kBlockMaskOrderRole;
      }))
    return success();
  FailureOr<unsigned> line = findPoint(ctx, kQueryOrderPoint);
  if (failed(line))
    return failure();
  std::string in = ctx.src.indent(*line).str();
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  std::string code =
      in +
      "// ---- cuir: the runtime block mask's order: the query blocks "
      "with the most tiles first ----\n" +
      in + "const cuir_kernels::ListedQueryOrder query_order{params." +
      blockMaskFieldName(kBlockMaskOrderRole) + ", " +
      flag(mask.dependsOnBatch()) + ", " + flag(mask.dependsOnHeads()) + "};";
  return ctx.edit({SourceEdit::ReplaceLines, *line, *line, code, "", ""},
                  ctx.diff->target.getLoc());
}

/// The source names a backward list row needs: the batch, the KV tile
/// (the block id whose multiple of BLOCK_N is the KV tile's first key) and,
/// for lists per KV head, the KV head of the steps' GQA group.
LogicalResult BlockListPatcher::readBackwardSource(PatchContext &ctx) {
  FailureOr<BackwardStructure> s = analyzeBackward(ctx.diff->source);
  if (failed(s))
    return failure();
  if (s->sites.empty())
    return ctx.diff->source.emitError()
           << "walks block lists but recomputes no scores";
  // Tiles of the thread block's steps: the score tile's rows, the keys of
  // the block's KV tile (as the split classified them).
  const BackwardSite &site = s->sites.front();
  auto tile = cast<RankedTensorType>(site.score.getType());
  blockM = std::to_string(tile.getDimSize(0));
  blockN = std::to_string(site.kvTileKeys);
  Value nBlock;
  if (auto mul = site.kvTile.getDefiningOp<arith::MulIOp>())
    for (unsigned i : {0u, 1u})
      if (APInt c; matchPattern(mul->getOperand(1 - i), m_ConstantInt(&c)) &&
                   c.getSExtValue() == site.kvTileKeys)
        nBlock = mul->getOperand(i);
  std::optional<std::string> b = nameOf(site.batch), n = nameOf(nBlock);
  if (!b || !n)
    return ctx.diff->source.emitError()
           << "names no source variable for the batch or the KV tile of its "
              "steps (the block list's row)";
  batch = *b;
  qBlockBase = *n; // the KV tile, here
  head = "0";
  if (mask.listsPerKvHead()) {
    std::optional<std::string> g = nameOf(findGroupKvHead(*s));
    if (!g)
      return ctx.diff->source.emitError()
             << "walks lists per KV head, but names no source variable for "
                "the KV head of its GQA group's head loop";
    head = *g;
  }
  if (llvm::none_of(llvm::seq(1u, ctx.src.numLines() + 1), [&](unsigned l) {
        return ctx.src.line(l).contains("q_tiles.range(");
      }))
    return ctx.diff->source.emitError()
           << "steps over query blocks whose range does not go through "
              "q_tiles.range(...) (cuir/kv_tiles.cuh): the lists' lengths "
              "cannot replace it";
  return success();
}

/// The ListedQTiles of this KV tile: the transposed lists' row of
/// (b', g', n_block), at the kernel's tiles (g' the KV head for lists per KV
/// head, else 0).
LogicalResult BlockListPatcher::writeQueryLists(PatchContext &ctx,
                                                unsigned line) {
  std::string in = ctx.src.indent(line).str();
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  auto field = [](StringRef role) {
    return "params." + blockMaskFieldName(role);
  };
  const auto &roles = kBlockMaskTransposedListRoles;
  std::string code =
      in +
      "// ---- cuir: the query tiles of the runtime block mask (its "
      "transposed lists, " +
      blockM + " x " + blockN + " tiles): masked\n" + in +
      "//      steps visit this KV tile's partial query tiles, unmasked "
      "steps its full ones, nobody the rest ----\n" +
      in + "const cuir_kernels::ListedQTiles q_tiles(\n" + in + "    " +
      field(roles[0]) + ", " + field(roles[1]) + ", " + field(roles[2]) + ", " +
      field(roles[3]) + ",\n" + in + "    cuir_kernels::ListedQTiles::row_of(" +
      batch + ", " + head + ", " + qBlockBase + ", " +
      flag(mask.dependsOnBatch()) + ", " + flag(mask.listsPerKvHead()) +
      ", params.num_heads_kv,\n" + in +
      "                                       (params.seqlen_kv + " + blockN +
      " - 1) / " + blockN + "),\n" + in + "    (params.seqlen_q + " + blockM +
      " - 1) / " + blockM + ");";
  return ctx.edit({SourceEdit::ReplaceLines, line, line, code, "", ""},
                  ctx.diff->target.getLoc());
}

/// The rewrite's differences are its reads of the lists, the kernel's
/// bounds and coordinates reading them, and the dense bounds no longer
/// computed: all expressed by the one statement.
LogicalResult BlockListPatcher::checkCovered(ArrayRef<Difference> differences) {
  for (const Difference &d : differences) {
    if (d.kind == Difference::Kind::Removed && !isMemoryEffectFree(d.source))
      return d.source->emitError()
             << "was removed by the block list, which lowering cannot patch";
    if (d.kind == Difference::Kind::Inserted &&
        !isa<arith::ArithDialect, memref::MemRefDialect, scf::SCFDialect>(
            d.target->getDialect()))
      return d.target->emitError()
             << "was inserted by the block list, which lowering cannot patch";
  }
  return success();
}

LogicalResult BlockListPatcher::patch(ArrayRef<Difference> differences,
                                      PatchContext &ctx) {
  if (differences.empty())
    return success();
  if (failed(readMask(ctx)) || failed(checkCovered(differences)))
    return failure();
  if (isPartOfBackwardPass(ctx.diff->target)) {
    FailureOr<unsigned> line = findPoint(ctx, kQueryIterationPoint);
    if (failed(readBackwardSource(ctx)) ||
        failed(checkTilesRouted(differences, ctx, "q_tiles")) || failed(line))
      return failure();
    return writeQueryLists(ctx, *line);
  }
  if (failed(readSource(ctx)) ||
      failed(checkTilesRouted(differences, ctx, "kv_tiles")))
    return failure();
  FailureOr<unsigned> line = findPoint(ctx, kIterationPoint);
  if (failed(line) || failed(writeLists(ctx, *line)))
    return failure();
  return writeQueryOrder(ctx);
}

} // namespace

std::unique_ptr<Patcher> mlir::cuir::createBlockListPatcher() {
  return std::make_unique<BlockListPatcher>();
}
