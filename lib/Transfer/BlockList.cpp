//===- BlockList.cpp - Key/value loops over a runtime block mask ----------===//
//
// For a mask whose visible keys the static analysis cannot bound, the KV
// steps visit the tiles a runtime block mask lists (FlexAttention's layout,
// computed by the kernel's cuir.block_mask): the masking steps the partial
// tiles, the unmasked steps the full ones, nobody the empty ones. The kernel
// keeps its loops, its pipeline and its barriers. Its block bounds become the
// list lengths, virtual blocks [nf, nf + np) being the partial tiles and
// [0, nf) the full ones, and every virtual block that becomes a key
// coordinate (n * BLOCK_N) reads its tile from the lists. Ring stages and
// visit counts stay virtual. The query blocks run heavy-first: the grid's
// query block coordinate becomes a rank in the mask's q_order list.
//
//===----------------------------------------------------------------------===//

#include "cuir/Transfer/BlockList.h"

#include "cuir/Transfer/AttentionAnalysis.h"
#include "cuir/Transfer/BlockMask.h"
#include "cuir/Transfer/ChangeRecorder.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

class BlockLister {
public:
  BlockLister(KernelOp kernel, AttentionStructure &as,
              RecordingRewriter &rewriter)
      : kernel(kernel), as(as), rewriter(rewriter) {}

  LogicalResult run(ElementwiseOp scores, Value visible,
                    const ListedBounds &bounds);

private:
  LogicalResult addListArguments();
  Value queryBlockCount(Location loc);
  Value rowBase(Location loc, BlockMaskOp mask, Value qBlocks);
  LogicalResult orderQueryBlocks(BlockMaskOp mask);
  Value listRow(Location loc, BlockMaskOp mask);
  void readListLengths(Location loc, BlockMaskOp mask);
  void replaceBounds(const ListedBounds &bounds);
  llvm::SetVector<Value> virtualBlocks();
  LogicalResult mapKeyCoordinates(const llvm::SetVector<Value> &blocks);
  Value tileOf(Value n, Location loc);
  Value index(Location loc, int64_t c) {
    return arith::ConstantIndexOp::create(rewriter, loc, c);
  }
  bool isNew(Operation *op) const { return newOps.contains(op); }

  KernelOp kernel;
  AttentionStructure &as;
  RecordingRewriter &rewriter;
  /// partial count, partial indices, full count, full indices, q_order.
  Value lists[std::size(kBlockMaskListRoles) + 1];
  static constexpr unsigned kOrderList = std::size(kBlockMaskListRoles);
  /// The lists' row offset of this query block, the list lengths.
  Value rowOffset, numPartial, numFull, total;
  llvm::SmallPtrSet<Operation *, 16> newOps;
};

} // namespace

/// The list arguments, recorded as new kernel parameters.
LogicalResult BlockLister::addListArguments() {
  SmallVector<StringRef, 5> roles(std::begin(kBlockMaskListRoles),
                                  std::end(kBlockMaskListRoles));
  roles.push_back(kBlockMaskOrderRole);
  SmallVector<Value> added;
  if (failed(addBlockListArguments(kernel, roles, added)))
    return failure();
  llvm::copy(added, std::begin(lists));
  return success();
}

/// ceil(Nq / BLOCK_M): the query blocks of a (b', h').
Value BlockLister::queryBlockCount(Location loc) {
  const ScoreSite &s = as.sites.front();
  Value bm = findBlockMConstant(s);
  if (!bm)
    bm = index(loc, s.blockM);
  return arith::CeilDivUIOp::create(rewriter, loc, as.params.lookup("Nq"), bm);
}

/// The first row of this thread block's (b', h') in lists of `qBlocks`
/// rows per (b', h'): (b' * H' + h') * qBlocks, where b' and h' are 0 (and
/// H' 1) when the mask reads no batch or no head.
Value BlockLister::rowBase(Location loc, BlockMaskOp mask, Value qBlocks) {
  const ScoreSite &s = as.sites.front();
  Value zero = index(loc, 0), one = index(loc, 1);
  Value b = mask.dependsOnBatch() ? s.batch : zero;
  Value h = mask.dependsOnHeads() ? s.head : zero;
  Value heads = mask.dependsOnHeads() ? Value(as.params.lookup("Hq")) : one;
  Value bh = arith::AddIOp::create(
      rewriter, loc, arith::MulIOp::create(rewriter, loc, b, heads), h);
  return arith::MulIOp::create(rewriter, loc, bh, qBlocks);
}

/// The grid's query block coordinate m (cuir.block_id, with the tile base
/// m * BLOCK_M) becomes a rank: the block computes query block
/// q_order[row(b', h') + m], so that the blocks seeing the most tiles run
/// first. Any order computes the same output.
LogicalResult BlockLister::orderQueryBlocks(BlockMaskOp mask) {
  const ScoreSite &s = as.sites.front();
  auto base = s.qBlockBase.getDefiningOp<arith::MulIOp>();
  BlockIdOp rank;
  for (Value v : base ? base->getOperands() : ValueRange())
    if (auto id = v.getDefiningOp<BlockIdOp>())
      rank = id;
  if (!rank)
    return kernel.emitError()
           << "computes its query tile's first row other than as a "
              "cuir.block_id times BLOCK_M: its query blocks cannot be "
              "ordered heavy-first";
  // After the block's coordinates, which the row reads.
  Operation *after = rank;
  for (Value v : {s.batch, s.head})
    if (Operation *def = v.getDefiningOp();
        def && def->getBlock() == after->getBlock() &&
        after->isBeforeInBlock(def))
      after = def;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(after);
  Location loc = rank.getLoc();
  Value at = arith::AddIOp::create(
      rewriter, loc, rowBase(loc, mask, queryBlockCount(loc)), rank);
  Value m =
      memref::LoadOp::create(rewriter, loc, lists[kOrderList], ValueRange{at});
  Value ordered =
      arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), m);
  for (Operation *op = after->getNextNode(); op; op = op->getNextNode()) {
    newOps.insert(op);
    if (op == ordered.getDefiningOp())
      break;
  }
  rewriter.replaceUsesWithIf(
      rank, ordered, [&](OpOperand &use) { return !isNew(use.getOwner()); });
  return success();
}

/// The lists' row of this thread block's query block: rowBase + m.
Value BlockLister::listRow(Location loc, BlockMaskOp mask) {
  const ScoreSite &s = as.sites.front();
  Value bm = findBlockMConstant(s);
  if (!bm)
    bm = index(loc, s.blockM);
  Value m = arith::DivUIOp::create(rewriter, loc, s.qBlockBase, bm);
  return arith::AddIOp::create(rewriter, loc,
                               rowBase(loc, mask, queryBlockCount(loc)), m);
}

/// The list lengths of this query block and its rows' offset in the index
/// lists (rows of ceil(Nkv / BLOCK_N) entries).
void BlockLister::readListLengths(Location loc, BlockMaskOp mask) {
  Value row = listRow(loc, mask);
  numPartial = readListEntry(rewriter, loc, lists[0], row);
  numFull = readListEntry(rewriter, loc, lists[2], row);
  total = arith::AddIOp::create(rewriter, loc, numPartial, numFull);
  const ScoreSite &s = as.sites.front();
  Value bn = findBlockNConstant(s);
  if (!bn)
    bn = index(loc, s.blockN);
  Value kvBlocks =
      arith::CeilDivUIOp::create(rewriter, loc, as.params.lookup("Nkv"), bn);
  rowOffset = arith::MulIOp::create(rewriter, loc, row, kvBlocks);
}

/// Every use of the kernel's own bounds reads the lists' lengths instead;
/// what only computed the kernel's bounds dies.
void BlockLister::replaceBounds(const ListedBounds &bounds) {
  auto notNew = [&](OpOperand &use) { return !isNew(use.getOwner()); };
  rewriter.replaceUsesWithIf(bounds.top, total, notNew);
  rewriter.replaceUsesWithIf(bounds.unmaskedTop, numFull, notNew);
  if (bounds.lowest && !matchPattern(bounds.lowest, m_Zero()))
    rewriter.replaceUsesWithIf(bounds.lowest,
                               index(total.getLoc(), 0), notNew);
}

llvm::SetVector<Value> BlockLister::virtualBlocks() {
  return collectVirtualBlocks(kernel, {total, numFull},
                              [&](Operation *op) { return isNew(op); });
}

/// The KV tile of virtual block n: partial tile (np + nf - 1) - n for
/// n >= nf (the partial list from its first entry down), else full tile
/// (nf - 1) - n.
Value BlockLister::tileOf(Value n, Location loc) {
  Value partial = arith::CmpIOp::create(rewriter, loc,
                                        arith::CmpIPredicate::sge, n, numFull);
  auto read = [&](Value top, Value list) {
    return [&, top, list](OpBuilder &b, Location l) {
      Value last = arith::SubIOp::create(b, l, top, index(l, 1));
      Value pos = arith::SubIOp::create(b, l, last, n);
      Value at = arith::AddIOp::create(b, l, rowOffset, pos);
      scf::YieldOp::create(b, l, readListEntry(b, l, list, at));
    };
  };
  auto select = scf::IfOp::create(rewriter, loc, partial,
                                  read(total, lists[1]),
                                  read(numFull, lists[3]));
  return select.getResult(0);
}

/// Each n * BLOCK_N of a virtual block n becomes tile(n) * BLOCK_N.
LogicalResult
BlockLister::mapKeyCoordinates(const llvm::SetVector<Value> &blocks) {
  int64_t blockN = as.sites.front().blockN;
  SmallVector<std::pair<Operation *, unsigned>> coordinates;
  kernel.walk([&](arith::MulIOp mul) {
    if (isNew(mul))
      return;
    for (unsigned i : {0u, 1u}) {
      APInt c;
      if (blocks.contains(mul->getOperand(i)) &&
          matchPattern(mul->getOperand(1 - i), m_ConstantInt(&c)) &&
          c.getSExtValue() == blockN)
        coordinates.push_back({mul, i});
    }
  });
  if (coordinates.empty())
    return kernel.emitError()
           << "computes no key coordinate n * " << blockN
           << " from its key/value block numbers: the block list has nothing "
              "to map";
  for (auto [op, operand] : coordinates) {
    Operation *mul = op;
    unsigned i = operand;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(mul);
    Value tile = tileOf(mul->getOperand(i), mul->getLoc());
    rewriter.modifyOpInPlace(mul, [&] { mul->setOperand(i, tile); });
  }
  return success();
}

LogicalResult BlockLister::run(ElementwiseOp scores, Value visible,
                               const ListedBounds &bounds) {
  const ScoreSite &s = as.sites.front();
  Block &body = scores.getBody().front();
  unsigned n = scores.getInputs().size();
  FailureOr<BlockMaskOp> mask = buildBlockMask(
      rewriter, kernel, visible, body.getArgument(n), body.getArgument(n + 1),
      body.getArgument(n + 2), body.getArgument(n + 3), s.blockM, s.blockN);
  if (failed(mask) || failed(addListArguments()) ||
      failed(orderQueryBlocks(*mask)))
    return failure();
  Operation *after = bounds.after;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(after);
  readListLengths(after->getLoc(), *mask);
  for (Operation *op = after->getNextNode(); op; op = op->getNextNode()) {
    newOps.insert(op);
    if (op == rowOffset.getDefiningOp())
      break;
  }
  replaceBounds(bounds);
  return mapKeyCoordinates(virtualBlocks());
}

LogicalResult mlir::cuir::visitListedBlocks(KernelOp kernel,
                                            AttentionStructure &as,
                                            RecordingRewriter &rewriter,
                                            ElementwiseOp scores,
                                            Value visible,
                                            const ListedBounds &bounds) {
  return BlockLister(kernel, as, rewriter).run(scores, visible, bounds);
}

LogicalResult mlir::cuir::addBlockListArguments(KernelOp kernel,
                                                ArrayRef<StringRef> roles,
                                                SmallVectorImpl<Value> &lists) {
  MLIRContext *ctx = kernel.getContext();
  auto type = MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 32),
                              MemRefLayoutAttrInterface(),
                              MemorySpaceAttr::get(ctx, MemorySpace::Global));
  for (StringRef name : roles) {
    if (llvm::any_of(kernel.getArguments(), [&](BlockArgument a) {
          return argRole(kernel, a.getArgNumber()) == name;
        }))
      return kernel.emitError() << "already iterates a block mask ('" << name
                                << "'): split a kernel once";
    NamedAttrList attrs;
    attrs.set(CuIRDialect::ArgAttrHelper::getNameStr(),
              StringAttr::get(ctx, name));
    attrs.set(CuIRDialect::ChangeAttrHelper::getNameStr(),
              ChangeAttr::get(ctx, Rewrite::Parameter));
    unsigned pos = kernel.getNumArguments();
    if (failed(kernel.insertArgument(pos, type, attrs.getDictionary(ctx),
                                     kernel.getLoc())))
      return kernel.emitError() << "cannot add the argument '" << name << "'";
    lists.push_back(kernel.getArgument(pos));
  }
  return success();
}

llvm::SetVector<Value>
mlir::cuir::collectVirtualBlocks(KernelOp kernel, ArrayRef<Value> seeds,
                                 function_ref<bool(Operation *)> isNew) {
  llvm::SetVector<Value> blocks(seeds.begin(), seeds.end());
  auto isBlockOrConstant = [&](Value v) {
    return blocks.contains(v) || matchPattern(v, m_Constant());
  };
  for (bool grew = true; grew;) {
    size_t before = blocks.size();
    kernel.walk([&](Operation *op) {
      if (isNew(op))
        return;
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        if (blocks.contains(loop.getUpperBound()) ||
            blocks.contains(loop.getLowerBound()))
          blocks.insert(loop.getInductionVar());
        return;
      }
      ValueRange operands = op->getOperands();
      if (auto sel = dyn_cast<arith::SelectOp>(op))
        operands = operands.drop_front(); // the condition is no block
      else if (!isa<arith::AddIOp, arith::SubIOp>(op))
        return;
      if (llvm::all_of(operands, isBlockOrConstant) &&
          llvm::any_of(operands, [&](Value v) { return blocks.contains(v); }))
        blocks.insert(op->getResult(0));
    });
    grew = blocks.size() != before;
  }
  return blocks;
}

Value mlir::cuir::readListEntry(OpBuilder &b, Location loc, Value list,
                                Value at) {
  Value v = memref::LoadOp::create(b, loc, list, ValueRange{at});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}
