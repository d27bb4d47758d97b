//===- AttentionAnalysis.cpp - Find the attention structure of a kernel ---===//

#include "cuir/Transfer/AttentionAnalysis.h"


#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// Follows `v` back through views and register loads to the buffer it reads.
Value underlyingBuffer(Value v) {
  while (true) {
    Operation *def = v.getDefiningOp();
    if (auto load = dyn_cast_or_null<LoadOp>(def))
      v = load.getSrc();
    else if (auto sub = dyn_cast_or_null<memref::SubViewOp>(def))
      v = sub.getSource();
    else
      return v;
  }
}

/// For a B operand that is stage `n mod S` of a shared ring buffer, returns n.
/// A ring indexed by visit order, stage `(top - n) mod S` with `top` fixed
/// outside `loop` (blocks visited downwards from top), also names block n.
Value ringBlockIndex(Value b, scf::ForOp loop) {
  auto sub = b.getDefiningOp<memref::SubViewOp>();
  if (!sub)
    return {};
  auto offsets = sub.getMixedOffsets();
  if (offsets.empty())
    return {};
  auto stage = dyn_cast<Value>(offsets[0]);
  if (!stage)
    return {};
  Value n;
  if (auto rem = stage.getDefiningOp<arith::RemUIOp>())
    n = rem.getLhs();
  else if (auto rem = stage.getDefiningOp<arith::RemSIOp>())
    n = rem.getLhs();
  if (auto visit = n ? n.getDefiningOp<arith::SubIOp>() : nullptr)
    if (!loop->isAncestor(visit.getLhs().getParentRegion()->getParentOp()) &&
        loop->isAncestor(visit.getRhs().getParentRegion()->getParentOp()))
      return visit.getRhs();
  return n;
}

/// Follows `v` back through views to the buffer it reads, collecting the
/// views' dynamic row offsets.
Value rowViewOf(Value v, SmallVectorImpl<Value> &rowOffsets) {
  while (auto sub = v.getDefiningOp<memref::SubViewOp>()) {
    if (auto off = dyn_cast<Value>(sub.getMixedOffsets()[0]))
      rowOffsets.push_back(off);
    v = sub.getSource();
  }
  return v;
}

} // namespace

void mlir::cuir::forwardChain(Value v, Region &scope,
                              SmallVectorImpl<Operation *> &out) {
  SmallVector<Value> work = {v};
  llvm::SmallPtrSet<Operation *, 32> seen;
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    for (OpOperand &use : cur.getUses()) {
      Operation *user = use.getOwner();
      if (!scope.isAncestor(user->getParentRegion()) ||
          !seen.insert(user).second)
        continue;
      out.push_back(user);
      if (isa<GemmOp, GemmAsyncOp, scf::YieldOp>(user))
        continue;
      for (Value r : user->getResults())
        work.push_back(r);
    }
  }
}

Value mlir::cuir::findIndexConstant(KernelOp kernel, int64_t value) {
  Value found;
  for (auto cst : kernel.getBody().front().getOps<arith::ConstantIndexOp>()) {
    if (cst.value() != value)
      continue;
    // A lower-case name is a variable that starts at this value (a block
    // bound a rewrite may raise), not a constant of the source.
    if (auto name = dyn_cast<NameLoc>(cst.getLoc())) {
      if (llvm::isLower(name.getName().strref().front()))
        continue;
      return cst;
    }
    if (!found)
      found = cst;
  }
  return found;
}

Value mlir::cuir::findBlockNConstant(const ScoreSite &site) {
  // The kernel's own n * BLOCK_N: a product of the block index (or n - c)
  // with a constant of the block size.
  Value found;
  scf::ForOp loop = site.loop;
  loop.walk([&](arith::MulIOp mul) {
    for (int i = 0; i < 2 && !found; ++i) {
      Value idx = mul->getOperand(i), c = mul->getOperand(1 - i);
      APInt v;
      if (!matchPattern(c, m_ConstantInt(&v)) || v != site.blockN)
        continue;
      auto sub = idx.getDefiningOp<arith::SubIOp>();
      if (idx == site.kvBlock || (sub && sub.getLhs() == site.kvBlock))
        found = c;
    }
  });
  return found;
}

Value mlir::cuir::findBlockMConstant(const ScoreSite &site) {
  if (auto mul = site.qBlockBase.getDefiningOp<arith::MulIOp>())
    for (Value c : mul->getOperands()) {
      APInt v;
      if (matchPattern(c, m_ConstantInt(&v)) && v == site.blockM)
        return c;
    }
  return {};
}

/// The kernel's parameters by role; q, k, v and o must be there.
static LogicalResult collectRoleParams(KernelOp kernel,
                                       AttentionStructure &as) {
  for (BlockArgument arg : kernel.getBody().getArguments())
    if (auto role =
            kernel.getArgAttrOfType<StringAttr>(arg.getArgNumber(), CuIRDialect::ArgAttrHelper::getNameStr()))
      as.params[role.getValue()] = arg;
  for (StringRef needed : {"q", "k", "v", "o"})
    if (!as.params.count(needed))
      return kernel.emitError()
             << "has no parameter with role '" << needed
             << "' ({cuir.arg = \"" << needed
             << "\"}): transfer needs to know the attention's operands";
  return success();
}

/// The score tile a GEMM produces: its result, or that of its wait; null
/// for an async GEMM nobody waits for.
static Value getCompletedResult(Operation *gemm) {
  Value score = gemm->getResult(0);
  if (!isa<GemmAsyncOp>(gemm))
    return score;
  Value waited;
  for (Operation *user : score.getUsers())
    if (auto wait = dyn_cast<GemmWaitOp>(user))
      waited = wait.getResult();
  return waited;
}

/// The key/value block the score GEMM reads: B is stage n of a ring.
static LogicalResult findKVBlock(ScoreSite &site) {
  Operation *gemm = site.gemm;
  Value b = gemm->getOperand(1);
  site.kvBlock = ringBlockIndex(b, site.loop);
  if (!site.kvBlock)
    return gemm->emitError()
           << "reads K from a buffer whose key/value block cannot be "
              "determined: expected a memref.subview of a shared ring at "
              "stage 'n mod stages' (arith.remui)";
  auto bType = cast<MemRefType>(b.getType());
  site.blockN = bType.getShape()[0];
  if (!gemm->hasAttr("transpose_b"))
    site.blockN = bType.getShape()[1];
  return success();
}

/// Sets the query tile's coordinates from the copy that fills `aBuf` from
/// a view of `q` at [b, 0, h, 0], if there is one.
static void findQueryCopy(ScoreSite &site, Value aBuf, Value q) {
  for (Operation *user : aBuf.getUsers()) {
    Value src, dst;
    ValueRange srcIdx;
    if (auto c = dyn_cast<CopyAsyncOp>(user)) {
      src = c.getSrc(), dst = c.getDst(), srcIdx = c.getSrcIndices();
    } else if (auto c = dyn_cast<CopyOp>(user)) {
      src = c.getSrc(), dst = c.getDst(), srcIdx = c.getSrcIndices();
    } else {
      continue;
    }
    if (dst != aBuf || srcIdx.empty())
      continue;
    auto sub = src.getDefiningOp<memref::SubViewOp>();
    if (!sub || sub.getSource() != q)
      continue;
    auto offs = sub.getMixedOffsets();
    auto asValue = [&](OpFoldResult ofr) -> Value {
      if (auto v = dyn_cast<Value>(ofr))
        return v;
      OpBuilder b(sub);
      return arith::ConstantIndexOp::create(
          b, sub.getLoc(), cast<IntegerAttr>(cast<Attribute>(ofr)).getInt());
    };
    site.qBlockBase = site.qBase = srcIdx[0];
    site.blockM = cast<MemRefType>(dst.getType()).getShape()[0];
    site.batch = asValue(offs[0]);
    site.head = asValue(offs[2]);
  }
}

/// The query tile: the copy that fills A's buffer names its first row; the
/// copy's source is a view of q at [b, 0, h, 0]. A score tile of some of
/// its rows reads a view of it.
static LogicalResult findQueryTile(ScoreSite &site, Value q) {
  Operation *gemm = site.gemm;
  SmallVector<Value> rowOffsets;
  Value aBuf = rowViewOf(gemm->getOperand(0), rowOffsets);
  if (!isa<MemRefType>(aBuf.getType()))
    aBuf = underlyingBuffer(gemm->getOperand(0));
  findQueryCopy(site, aBuf, q);
  if (site.qBase && rowOffsets.size() > 1)
    return gemm->emitError() << "reads Q through more than one view with a "
                                "row offset; transfer needs the tile's "
                                "first query row";
  if (site.qBase && !rowOffsets.empty()) {
    // The tile's first row: the kernel's own block row + view offset.
    Value tileRow;
    for (Operation *user : site.qBlockBase.getUsers())
      if (auto add = dyn_cast<arith::AddIOp>(user))
        if (llvm::is_contained(add->getOperands(), rowOffsets[0]) &&
            add->getParentRegion()->isAncestor(gemm->getParentRegion()))
          tileRow = add;
    if (!tileRow)
      return gemm->emitError()
             << "reads rows of the query tile from a row offset, but the "
                "kernel computes no 'block row + offset' that names the "
                "tile's first query row";
    site.qBase = tileRow;
  }
  if (!site.qBase)
    return gemm->emitError()
           << "reads Q from a buffer that no copy from a [b, :, h, :] view "
              "of the 'q' parameter fills; transfer needs the query "
              "tile's coordinates";
  return success();
}

/// The weights: the exponential that reads both the score chain and the
/// row maximum.
static void findWeights(ScoreSite &site, Region &scope,
                        const llvm::SmallPtrSetImpl<Operation *> &fromScore) {
  SmallVector<Operation *> maxChain;
  forwardChain(site.rowMax.getResult(), scope, maxChain);
  for (Operation *op : maxChain)
    if (isa<math::ExpOp, math::Exp2Op>(op) && fromScore.contains(op) &&
        isa<RankedTensorType>(op->getResult(0).getType()) &&
        cast<RankedTensorType>(op->getResult(0).getType()).getRank() == 2) {
      site.weights = op;
      break;
    }
}

/// O += P V: the next GEMM downstream of the scores; in a software
/// pipeline, in the next step, reached through the loop-carried P. Then
/// the accumulator it adds to, and the loop-carried one rescaled into it.
static LogicalResult
findPVGemm(ScoreSite &site, ArrayRef<Operation *> chain,
           const llvm::SmallPtrSetImpl<Operation *> &fromScore) {
  Operation *gemm = site.gemm;
  scf::ForOp loop = site.loop;
  for (Operation *op : chain)
    if (isa<GemmOp, GemmAsyncOp>(op) && op != gemm) {
      site.pvGemm = op;
      break;
    }
  if (!site.pvGemm) {
    Operation *yield = loop.getBody()->getTerminator();
    for (OpOperand &carried : yield->getOpOperands()) {
      Operation *def = carried.get().getDefiningOp();
      if (!def || !fromScore.contains(def))
        continue;
      SmallVector<Operation *> next;
      forwardChain(loop.getRegionIterArgs()[carried.getOperandNumber()],
                   loop.getRegion(), next);
      for (Operation *op : next)
        if (isa<GemmOp, GemmAsyncOp>(op) && op != gemm && !site.pvGemm)
          site.pvGemm = op;
    }
  }
  if (!site.pvGemm)
    return gemm->emitError()
           << "computes a score tile, but no GEMM consumes the weights "
              "derived from it: transfer expects O += P V";
  site.rescaledAcc = site.pvGemm->getOperand(2);
  if (auto mul = site.rescaledAcc.getDefiningOp<arith::MulFOp>()) {
    for (Value operand : mul->getOperands())
      if (isa<BlockArgument>(operand))
        site.carriedAcc = operand;
  }
  return success();
}

/// The site of a score GEMM, whose completed result `score` reaches
/// `rowMax` through `chain`, inside `loop`.
static FailureOr<ScoreSite> analyzeScoreSite(Operation *gemm, Value score,
                                             ReduceRowsOp rowMax,
                                             scf::ForOp loop,
                                             ArrayRef<Operation *> chain,
                                             Value q) {
  ScoreSite site;
  site.gemm = gemm;
  site.score = score;
  site.rowMax = rowMax;
  if (!loop)
    return gemm->emitError()
           << "computes a score tile outside any loop over key/value "
              "blocks; transfer expects the score GEMM inside an scf.for";
  site.loop = loop;
  if (failed(findKVBlock(site)) || failed(findQueryTile(site, q)))
    return failure();
  llvm::SmallPtrSet<Operation *, 32> fromScore(chain.begin(), chain.end());
  findWeights(site, loop.getRegion(), fromScore);
  if (failed(findPVGemm(site, chain, fromScore)))
    return failure();
  return site;
}

FailureOr<AttentionStructure> mlir::cuir::analyzeAttention(KernelOp kernel) {
  AttentionStructure as;
  as.kernel = kernel;
  if (failed(collectRoleParams(kernel, as)))
    return failure();

  // Score GEMMs: GEMMs whose result (after its wait) reaches a row maximum.
  SmallVector<Operation *> gemms;
  kernel.walk([&](Operation *op) {
    if (isa<GemmOp, GemmAsyncOp>(op))
      gemms.push_back(op);
  });
  for (Operation *gemm : gemms) {
    Value score = getCompletedResult(gemm);
    if (!score)
      continue;
    auto loop = gemm->getParentOfType<scf::ForOp>();
    Region &scope = loop ? loop.getRegion() : kernel.getBody();
    SmallVector<Operation *> chain;
    forwardChain(score, scope, chain);
    ReduceRowsOp rowMax;
    for (Operation *op : chain)
      if (auto red = dyn_cast<ReduceRowsOp>(op);
          red && red.getKind() == ReduceKind::Max && !rowMax)
        rowMax = red;
    if (!rowMax)
      continue; // The P V GEMM, or some other product.
    FailureOr<ScoreSite> site =
        analyzeScoreSite(gemm, score, rowMax, loop, chain, as.params["q"]);
    if (failed(site))
      return failure();
    as.sites.push_back(*site);
  }
  if (as.sites.empty())
    return kernel.emitError()
           << "has no score GEMM feeding a row maximum (an online softmax): "
              "cannot find the attention structure to transfer";
  return as;
}
