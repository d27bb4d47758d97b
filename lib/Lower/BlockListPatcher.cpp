//===- BlockListPatcher.cpp - Key/value loops over a runtime block mask ---===//
//
// The block list's rewrite (Transfer/BlockList.cpp) reads the list lengths in
// place of the kernel's block bounds and maps every key coordinate of a
// virtual block through the lists. The expert kernels route every such
// coordinate through their block-iteration point (cuir/kv_tiles.cuh):
//   const cuir_kernels::DenseKvTiles kv_tiles{};
// so the patch is that one statement: a ListedKvTiles over this query
// block's lists, and the bounds assigned from it.
//
//===----------------------------------------------------------------------===//

#include "Patcher.h"

#include "cuir/Lower/CppEmitter.h"
#include "cuir/Transfer/AttentionAnalysis.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

constexpr StringLiteral kIterationPoint = "cuir_kernels::DenseKvTiles kv_tiles";

class BlockListPatcher : public Patcher {
public:
  Rewrite getRewrite() const override { return Rewrite::Blocks; }
  LogicalResult patch(ArrayRef<Difference> differences,
                      PatchContext &ctx) override;

private:
  LogicalResult readSource(PatchContext &ctx);
  LogicalResult checkTilesRouted(ArrayRef<Difference> differences,
                                 PatchContext &ctx);
  FailureOr<unsigned> findIterationPoint(PatchContext &ctx);
  LogicalResult writeLists(PatchContext &ctx, unsigned line);
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

LogicalResult BlockListPatcher::readSource(PatchContext &ctx) {
  KernelOp target = ctx.diff->target;
  auto sym = target->getAttrOfType<FlatSymbolRefAttr>("cuir.block_mask");
  mask = sym ? SymbolTable::lookupNearestSymbolFrom<BlockMaskOp>(target, sym)
             : BlockMaskOp();
  if (!mask)
    return target.emitError()
           << "iterates a block list but names no cuir.block_mask";
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
/// a kv_tile taken from it. Otherwise the patch would miss that coordinate.
LogicalResult
BlockListPatcher::checkTilesRouted(ArrayRef<Difference> differences,
                                   PatchContext &ctx) {
  for (const Difference &d : differences) {
    if (d.kind != Difference::Kind::Inserted || !isa<scf::IfOp>(d.target))
      continue;
    bool routed = false;
    d.target->getLoc()->walk([&](Location l) {
      auto range = dyn_cast<FileLineColRange>(l);
      if (!range || routed)
        return WalkResult::advance();
      auto [first, last] = ctx.src.statement(range.getStartLine());
      for (unsigned line = first; first && line <= last; ++line)
        routed |= ctx.src.line(line).contains("kv_tile");
      return WalkResult::advance();
    });
    if (!routed)
      return d.target->emitError()
             << "reads a listed key/value tile where the source computes a "
                "key coordinate without its block-iteration point "
                "(kv_tiles(n))";
  }
  return success();
}

/// The line of the kernel's one `const cuir_kernels::DenseKvTiles kv_tiles`.
FailureOr<unsigned> BlockListPatcher::findIterationPoint(PatchContext &ctx) {
  unsigned found = 0;
  for (unsigned l = 1; l <= ctx.src.numLines(); ++l) {
    if (!ctx.src.line(l).contains(kIterationPoint))
      continue;
    if (found)
      return ctx.diff->source.emitError()
             << "has two block-iteration points ('" << kIterationPoint
             << "', lines " << found << " and " << l << ")";
    found = l;
  }
  if (!found)
    return ctx.diff->source.emitError()
           << "has no block-iteration point: the block list replaces the "
              "kernel's '"
           << kIterationPoint << "{};' (cuir/kv_tiles.cuh)";
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
      in + "// ---- cuir: the tiles of the runtime block mask: masked steps "
           "visit this query block's\n" +
      in + "//      partial tiles, unmasked steps its full ones, nobody the "
           "rest ----\n" + in +
      "const cuir_kernels::ListedKvTiles kv_tiles(\n" + in +
      "    params.cuir_kv_num_blocks, params.cuir_kv_indices, "
      "params.cuir_full_kv_num_blocks, params.cuir_full_kv_indices,\n" +
      in + "    cuir_kernels::ListedKvTiles::row_of(" + batch + ", " + head +
      ", " + qBlockBase + " / " + blockM + ", " +
      flag(mask.dependsOnBatch()) + ", " + flag(mask.dependsOnHeads()) +
      ", params.num_heads_q,\n" + in + "                                        " +
      qBlocks + "),\n" + in + "    " + kvBlocks + ");\n";
  if (!lowest.empty())
    code += in + lowest + " = 0;\n";
  code += in + unmaskedTop + " = kv_tiles.num_full;\n";
  code += in + top + " = kv_tiles.num_blocks();";
  // The declaration is one line (its braces are the initializer, not a
  // block: no statement scan).
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
  if (failed(readSource(ctx)) || failed(checkTilesRouted(differences, ctx)) ||
      failed(checkCovered(differences)))
    return failure();
  FailureOr<unsigned> line = findIterationPoint(ctx);
  if (failed(line))
    return failure();
  return writeLists(ctx, *line);
}

} // namespace

std::unique_ptr<Patcher> mlir::cuir::createBlockListPatcher() {
  return std::make_unique<BlockListPatcher>();
}
