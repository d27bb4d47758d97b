//===- BackwardSplit.cpp - A backward kernel's query steps over lists -----===//
//
// A backward kernel's thread block owns one KV tile and steps over query
// tiles and the query heads of its GQA group (either loop inside the
// other): masking steps over [m_begin, m_unmasked_begin), then unmasked
// steps up to m_end. For a variant's mask the steps visit the query tiles
// that the transposed lists of a runtime block mask give for that KV tile:
// the masking steps the partial tiles, the unmasked steps the full ones
// (whose scores and score derivative lose the mask), nobody the empty ones.
// The bounds become the lists' lengths (virtual blocks [0, np) partial,
// [np, np + nf) full) and every virtual block that becomes a query
// coordinate (m * BLOCK_M) reads its tile from the lists; the kernel's
// pipeline, barriers and dQ accumulation stay as they are.
//
// A mask that reads the query head gets a row of lists per KV head, the
// classes of its GQA group's query heads merged (`kv_heads`): one thread
// block walks every head of a group with one range of steps, each head's
// partial steps masked with its own mask. The kernel's loop over the heads
// must be the group's, [g * G, g * G + G) with G = Hq / Hkv; g is the row.
//
// Left dense, with a remark: a mask equal to the kernel's own causal mask
// (the causal steps are the mask's tiles already; block-mask=runtime lists
// it anyway), and a mask that reads the query head in a kernel whose head
// loop is not so.
//
//===----------------------------------------------------------------------===//

#include "cuir/Transfer/Split.h"

#include "cuir/Transfer/AttentionAnalysis.h"
#include "cuir/Transfer/BackwardAnalysis.h"
#include "cuir/Transfer/BlockList.h"
#include "cuir/Transfer/BlockMask.h"
#include "cuir/Transfer/ChangeRecorder.h"
#include "cuir/Transfer/MaskAnalysis.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// The yield of a variant elementwise when it is select(visible, x, c).
arith::SelectOp yieldedSelect(ElementwiseOp ew) {
  Value y = ew.getBody().front().getTerminator()->getOperand(0);
  auto sel = y.getDefiningOp<arith::SelectOp>();
  if (!sel || !matchPattern(sel.getFalseValue(), m_Constant()))
    return {};
  return sel;
}

/// Whether `v` is the integer constant `c`.
bool isConstant(Value v, int64_t c) {
  APInt value;
  return matchPattern(v, m_ConstantInt(&value)) && value.getSExtValue() == c;
}

class BackwardSplitter {
public:
  BackwardSplitter(KernelOp kernel, BlockMaskMode mode)
      : kernel(kernel), mode(mode), rewriter(kernel, Rewrite::Blocks) {}
  LogicalResult run();

private:
  FailureOr<ElementwiseOp> variantScores(BackwardSite &site);
  LogicalResult findLoops();
  bool equalsKernelCausal(Value visible, Block &body);
  LogicalResult readLists(BlockMaskOp mask);
  Value groupKvHead();
  void replaceBounds();
  LogicalResult mapQueryCoordinates(int64_t blockM);
  Value tileOf(Value m, Location loc);
  void unmask(ElementwiseOp ew);
  Value index(Location loc, int64_t c) {
    return arith::ConstantIndexOp::create(rewriter, loc, c);
  }
  bool isNew(Operation *op) const { return newOps.contains(op); }

  KernelOp kernel;
  BlockMaskMode mode;
  RecordingRewriter rewriter;
  BackwardStructure bs;
  /// Per site, the variant's scores (and derivative, if it has one).
  SmallVector<ElementwiseOp, 2> siteScores;
  /// The masking and the unmasked query loops and the bounds they read.
  scf::ForOp masked, unmasked;
  Value begin, unmaskedBegin, end;
  /// The bounds are all computed once this op ran.
  Operation *after = nullptr;
  /// q_num_blocks, q_indices, full_q_num_blocks, full_q_indices.
  SmallVector<Value, 4> lists;
  /// The first virtual block (a constant 0 of its own), the lists' lengths
  /// and this KV tile's row offset in the index lists.
  Value first, numPartial, numFull, total, rowOffset;
  /// The KV head g of the thread block's GQA group, for lists per KV head.
  Value kvHead;
  llvm::SmallPtrSet<Operation *, 16> newOps;
};

} // namespace

/// The variant's elementwise over the site's scores: its first result
/// becomes the weights P, its second (if any) is the score derivative.
FailureOr<ElementwiseOp> BackwardSplitter::variantScores(BackwardSite &site) {
  for (Operation *user : site.score.getUsers())
    if (auto ew = dyn_cast<ElementwiseOp>(user);
        ew && CuIRDialect::VariantScoresAttrHelper(kernel.getContext())
                  .isAttrPresent(ew))
      return ew;
  return site.gemm->emitError()
         << "computes S, but no variant scores read it: run --transfer "
            "before the split";
}

/// The FA2 backward form: a loop of masking steps, then a loop of unmasked
/// steps from where it stops, chained by their carried values, with bounds
/// computed in the kernel's entry block.
LogicalResult BackwardSplitter::findLoops() {
  if (bs.sites.size() == 2) {
    masked = queryLoop(bs.sites[0]);
    unmasked = queryLoop(bs.sites[1]);
  }
  Block *entry = &kernel.getBody().front();
  if (!masked || !unmasked || masked->getBlock() != unmasked->getBlock() ||
      !masked->isBeforeInBlock(unmasked) ||
      masked.getUpperBound() != unmasked.getLowerBound() ||
      unmasked.getInitArgs() != ValueRange(masked.getResults()))
    return kernel.emitError()
           << "has " << bs.sites.size()
           << " score recomputation(s); the backward split expects the FA2 "
              "form: a loop of masking query steps followed by a loop of "
              "unmasked steps from its upper bound, chained by their carried "
              "values";
  begin = masked.getLowerBound();
  unmaskedBegin = masked.getUpperBound();
  end = unmasked.getUpperBound();
  if (begin == unmaskedBegin || unmaskedBegin == end || begin == end)
    return masked.emitError()
           << "steps over query blocks whose bounds share a value: the block "
              "lists give each bound its own";
  for (Value v : {begin, unmaskedBegin, end}) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != entry)
      return masked.emitError()
             << "steps over query blocks whose bounds are not computed in "
                "the kernel's entry block: the block lists cannot replace "
                "them";
    if (!after || after->isBeforeInBlock(def))
      after = def;
  }
  return success();
}

/// Whether the mask is the kernel's own (bottom-right aligned) causal mask.
bool BackwardSplitter::equalsKernelCausal(Value visible, Block &body) {
  auto nq = bs.params.find("Nq"), nkv = bs.params.find("Nkv");
  if (nq == bs.params.end() || nkv == bs.params.end())
    return false;
  unsigned n = body.getNumArguments();
  std::optional<LinearMask> mask = analyzeLinearMask(
      visible, body.getArgument(n - 2), body.getArgument(n - 1));
  if (!mask)
    return false;
  CausalComparison c = compareWithCausal(*mask, nq->second, nkv->second);
  return c.insideCausal && c.coversCausal;
}

/// The KV head g of the sites' GQA group (findGroupKvHead), where it is
/// defined in the entry block before the bounds; else null.
Value BackwardSplitter::groupKvHead() {
  Value g = findGroupKvHead(bs);
  Block *entry = &kernel.getBody().front();
  Operation *def = g ? g.getDefiningOp() : nullptr;
  if (g && !isa<BlockArgument>(g) &&
      (!def || def->getBlock() != entry ||
       !(def == after || def->isBeforeInBlock(after))))
    return {};
  return g;
}

/// The list arguments and, once the bounds are computed, this KV tile's
/// lengths: row ((b' * H' + g) * kv_blocks + n_block), b' = b where the mask
/// reads the batch, else 0; g the KV head where the lists are per KV head
/// (H' = Hkv), else 0.
LogicalResult BackwardSplitter::readLists(BlockMaskOp mask) {
  SmallVector<StringRef, 4> roles(std::begin(kBlockMaskTransposedListRoles),
                                  std::end(kBlockMaskTransposedListRoles));
  if (failed(addBlockListArguments(kernel, roles, lists)))
    return failure();
  const BackwardSite &site = bs.sites.front();
  int64_t blockM = cast<RankedTensorType>(site.score.getType()).getDimSize(0);
  int64_t blockN = site.kvTileKeys;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(after);
  Location loc = after->getLoc();
  auto constant = [&](int64_t c) {
    Value named = findIndexConstant(kernel, c);
    return named ? named : index(loc, c);
  };
  // The KV tile: the block id that its first key is a multiple of, else
  // that key over BLOCK_N.
  Value nBlock;
  if (auto mul = site.kvTile.getDefiningOp<arith::MulIOp>())
    for (unsigned i : {0u, 1u})
      if (isConstant(mul->getOperand(1 - i), blockN))
        nBlock = mul->getOperand(i);
  if (!nBlock)
    nBlock =
        arith::DivUIOp::create(rewriter, loc, site.kvTile, constant(blockN));
  Value kvBlocks = arith::CeilDivUIOp::create(
      rewriter, loc, bs.params.lookup("Nkv"), constant(blockN));
  Value qBlocks = arith::CeilDivUIOp::create(
      rewriter, loc, bs.params.lookup("Nq"), constant(blockM));
  Value bh;
  if (mask.dependsOnBatch())
    bh = site.batch;
  if (mask.listsPerKvHead())
    bh = bh ? arith::AddIOp::create(
                  rewriter, loc,
                  arith::MulIOp::create(rewriter, loc, bh,
                                        bs.params.lookup("Hkv")),
                  kvHead)
                  .getResult()
            : kvHead;
  Value row = nBlock;
  if (bh)
    row = arith::AddIOp::create(
        rewriter, loc, arith::MulIOp::create(rewriter, loc, bh, kvBlocks),
        nBlock);
  numPartial = readListEntry(rewriter, loc, lists[0], row);
  numFull = readListEntry(rewriter, loc, lists[2], row);
  total = arith::AddIOp::create(rewriter, loc, numPartial, numFull);
  rowOffset = arith::MulIOp::create(rewriter, loc, row, qBlocks);
  first = index(loc, 0);
  for (Operation *op = after->getNextNode(); op; op = op->getNextNode()) {
    newOps.insert(op);
    if (op == first.getDefiningOp())
      break;
  }
  return success();
}

/// The uses of the kernel's bounds once they are computed read the lists'
/// lengths; what only computed the bounds dies.
void BackwardSplitter::replaceBounds() {
  Block *entry = &kernel.getBody().front();
  auto afterBounds = [&](OpOperand &use) {
    Operation *user = entry->findAncestorOpInBlock(*use.getOwner());
    return user && !isNew(use.getOwner()) && after->isBeforeInBlock(user);
  };
  rewriter.replaceUsesWithIf(end, total, afterBounds);
  rewriter.replaceUsesWithIf(unmaskedBegin, numPartial, afterBounds);
  rewriter.replaceUsesWithIf(begin, first, afterBounds);
}

/// Query tile of virtual block m: partial[m] for m < np, else
/// full[m - np], in this KV tile's row of the transposed lists.
Value BackwardSplitter::tileOf(Value m, Location loc) {
  Value partial = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::slt, m, numPartial);
  auto read = [&](Value list, bool full) {
    return [&, list, full](OpBuilder &b, Location l) {
      Value pos =
          full ? arith::SubIOp::create(b, l, m, numPartial).getResult() : m;
      Value at = arith::AddIOp::create(b, l, rowOffset, pos);
      scf::YieldOp::create(b, l, readListEntry(b, l, list, at));
    };
  };
  auto select = scf::IfOp::create(rewriter, loc, partial, read(lists[1], false),
                                  read(lists[3], true));
  return select.getResult(0);
}

/// Each m * BLOCK_M of a virtual block m becomes tile(m) * BLOCK_M.
LogicalResult BackwardSplitter::mapQueryCoordinates(int64_t blockM) {
  llvm::SetVector<Value> blocks =
      collectVirtualBlocks(kernel, {first, numPartial, total},
                           [&](Operation *op) { return isNew(op); });
  SmallVector<std::pair<Operation *, unsigned>> coordinates;
  kernel.walk([&](arith::MulIOp mul) {
    if (isNew(mul))
      return;
    for (unsigned i : {0u, 1u})
      if (blocks.contains(mul->getOperand(i)) &&
          isConstant(mul->getOperand(1 - i), blockM))
        coordinates.push_back({mul, i});
  });
  if (coordinates.empty())
    return kernel.emitError()
           << "computes no query coordinate m * " << blockM
           << " from its query block numbers: the block list has nothing to "
              "map";
  for (auto [mul, i] : coordinates) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(mul);
    Value tile = tileOf(mul->getOperand(i), mul->getLoc());
    rewriter.modifyOpInPlace(
        mul, [&, mul = mul, i = i] { mul->setOperand(i, tile); });
  }
  return success();
}

/// The unmasked steps visit full tiles only: their scores and derivative
/// need no mask (the selects on the scores' visibility go).
void BackwardSplitter::unmask(ElementwiseOp ew) {
  arith::SelectOp sel0 = yieldedSelect(ew);
  if (!sel0)
    return;
  Value visible = sel0.getCondition();
  Block &body = ew.getBody().front();
  for (Value y : body.getTerminator()->getOperands())
    if (auto sel = y.getDefiningOp<arith::SelectOp>();
        sel && sel.getCondition() == visible &&
        matchPattern(sel.getFalseValue(), m_Constant()))
      rewriter.replaceAllUsesWith(sel.getResult(), sel.getTrueValue());
  if (ew.getNumResults() == 1 &&
      body.getTerminator()->getOperand(0) == body.getArgument(0))
    rewriter.replaceOp(ew, ew.getInputs()[0]);
}

LogicalResult BackwardSplitter::run() {
  FailureOr<BackwardStructure> analysis = analyzeBackward(kernel);
  if (failed(analysis))
    return failure();
  bs = std::move(*analysis);
  // The preprocessing and the conversion of dQ step over no KV tile.
  if (bs.sites.empty() || mode == BlockMaskMode::Dense)
    return success();
  for (BackwardSite &site : bs.sites) {
    FailureOr<ElementwiseOp> ew = variantScores(site);
    if (failed(ew))
      return failure();
    siteScores.push_back(*ew);
  }
  ElementwiseOp v0 = siteScores.front();
  arith::SelectOp sel0 = yieldedSelect(v0);
  if (!sel0) {
    mlir::emitRemark(kernel.getLoc())
        << "the variant has no mask: the backward's query steps stay";
    return success();
  }
  if (failed(findLoops()))
    return failure();
  Block &body = v0.getBody().front();
  unsigned n = v0.getInputs().size();
  Value visible = sel0.getCondition();
  if (readsInputElements(visible, v0)) {
    mlir::emitRemark(v0.getLoc())
        << "the variant's mask reads the score: the backward visits every "
           "query tile, masked";
    return success();
  }
  bool readsHead = readsArgument(visible, body.getArgument(n + 1));
  if (readsHead && !(kvHead = groupKvHead())) {
    if (mode == BlockMaskMode::Runtime)
      return v0.emitError()
             << "block-mask=runtime: the variant's mask reads the query "
                "head, and a thread block of the backward steps over query "
                "heads that are not one GQA group's [g * G, g * G + G)";
    mlir::emitRemark(v0.getLoc())
        << "the variant's mask reads the query head, and the backward's "
           "head loop is not one GQA group's: it visits every query tile, "
           "masked";
    return success();
  }
  if (mode == BlockMaskMode::Auto && equalsKernelCausal(visible, body)) {
    mlir::emitRemark(v0.getLoc())
        << "the variant's mask is the kernel's causal mask: the backward's "
           "causal query steps stay";
    return success();
  }
  // Tiles of the thread block's steps: the score tile's query rows, every
  // key of the block's KV tile (the score tile may hold some of them).
  int64_t blockM =
      cast<RankedTensorType>(bs.sites.front().score.getType()).getDimSize(0);
  int64_t blockN = bs.sites.front().kvTileKeys;
  FailureOr<BlockMaskOp> mask = buildBlockMask(
      rewriter, kernel, visible, body.getArgument(n), body.getArgument(n + 1),
      body.getArgument(n + 2), body.getArgument(n + 3), blockM, blockN,
      /*perKvHead=*/readsHead);
  if (failed(mask) || failed(readLists(*mask)))
    return failure();
  replaceBounds();
  if (failed(mapQueryCoordinates(blockM)))
    return failure();
  unmask(siteScores[1]);
  rewriter.eraseDeadOps();
  mlir::emitRemark(v0.getLoc())
      << "the backward's query tiles come from a runtime block mask's "
         "transposed lists ("
      << kernel->getAttr("cuir.block_mask") << ", " << blockM << " x "
      << blockN << " tiles)";
  return success();
}

LogicalResult mlir::cuir::splitBackward(KernelOp kernel, BlockMaskMode mode) {
  return BackwardSplitter(kernel, mode).run();
}
