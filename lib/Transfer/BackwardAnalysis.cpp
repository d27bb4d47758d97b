//===- BackwardAnalysis.cpp - The attention structure of a backward kernel ===//

#include "cuir/Transfer/BackwardAnalysis.h"

#include "cuir/Transfer/AttentionAnalysis.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::cuir;

bool mlir::cuir::isPartOfBackwardPass(KernelOp kernel) {
  if (isBackwardKernel(kernel))
    return true;
  auto module = kernel->getParentOfType<ModuleOp>();
  if (!module)
    return false;
  for (auto seq : module.getOps<LaunchSequenceOp>())
    if (llvm::is_contained(seq.getKernelOps(), kernel))
      return true;
  return false;
}

namespace {

bool isScoreTile(Operation *op) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && type.getRank() == 2;
}

/// The score tile a GEMM produces: its result, or that of its wait.
Value completedResult(Operation *gemm) {
  Value result = gemm->getResult(0);
  if (!isa<GemmAsyncOp>(gemm))
    return result;
  for (Operation *user : result.getUsers())
    if (auto wait = dyn_cast<GemmWaitOp>(user))
      return wait.getResult();
  return {};
}

/// Whether `v` is computed from the result of a GEMM other than `exclude`,
/// through register ops of one step.
bool derivesFromOtherGemm(Value v, Operation *exclude) {
  SmallVector<Value> work = {v};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (isa<GemmOp, GemmAsyncOp>(def))
      return def != exclude;
    if (isa<GemmWaitOp>(def) || def->getNumRegions() == 0)
      llvm::append_range(work, def->getOperands());
  }
  return false;
}

/// The buffer `v` views, and the subviews on the way.
Value viewedBuffer(Value v, SmallVectorImpl<memref::SubViewOp> &views) {
  while (auto sub = v.getDefiningOp<memref::SubViewOp>()) {
    views.push_back(sub);
    v = sub.getSource();
  }
  return v;
}

/// The ops reachable from `v` through register values and through the
/// shared buffers it is stored into (the GEMMs and loads that read them).
void followThroughShared(Value v, Region &scope,
                         SmallVectorImpl<Operation *> &out) {
  SmallVector<Value> work = {v};
  llvm::SmallPtrSet<Operation *, 32> seen;
  while (!work.empty()) {
    SmallVector<Operation *> chain;
    Value cur = work.pop_back_val();
    for (OpOperand &use : cur.getUses()) {
      Operation *user = use.getOwner();
      if (!scope.isAncestor(user->getParentRegion()) ||
          !seen.insert(user).second)
        continue;
      out.push_back(user);
      if (auto store = dyn_cast<StoreOp>(user)) {
        SmallVector<memref::SubViewOp> views;
        Value buf = viewedBuffer(store.getDst(), views);
        if (getMemorySpace(buf.getType()) == MemorySpace::Shared)
          for (Operation *reader : buf.getUsers())
            if (reader != user && reader->getNumResults() == 1 &&
                scope.isAncestor(reader->getParentRegion()))
              work.push_back(reader->getResult(0));
        continue;
      }
      if (isa<scf::YieldOp>(user))
        continue;
      for (Value r : user->getResults())
        work.push_back(r);
    }
  }
}

/// The value of coordinate `dim` of an access at `indices` of a view made
/// by `views` (outermost last): the view's offset on that dimension, or the
/// access's index where the view keeps it and offsets it by zero.
Value coordinateOf(ArrayRef<memref::SubViewOp> views, ValueRange indices,
                   unsigned dim) {
  if (views.size() != 1)
    return {};
  memref::SubViewOp sub = views.front();
  llvm::SmallBitVector dropped = sub.getDroppedDims();
  OpFoldResult offset = sub.getMixedOffsets()[dim];
  if (dropped.test(dim))
    return dyn_cast<Value>(offset);
  unsigned kept = 0;
  for (unsigned i = 0; i < dim; ++i)
    kept += !dropped.test(i);
  if (kept >= indices.size())
    return {};
  std::optional<int64_t> cst = getConstantIntValue(offset);
  if (!cst || *cst != 0)
    return {};
  return indices[kept];
}

/// The dimensions of a dQ buffer: batch, query head and query row. A
/// workspace says them in its `cuir.shape`; `dq` itself is [B, Nq, Hq, d].
std::optional<std::array<unsigned, 3>> dqDims(KernelOp kernel,
                                              BlockArgument buf) {
  StringRef role = argRole(kernel, buf.getArgNumber());
  if (role == "dq")
    return std::array<unsigned, 3>{0, 2, 1};
  if (!role.starts_with(kWorkspaceRolePrefix))
    return std::nullopt;
  auto map = kernel.getArgAttrOfType<AffineMapAttr>(
      buf.getArgNumber(), CuIRDialect::ShapeAttrHelper::getNameStr());
  if (!map)
    return std::nullopt;
  // kWorkspaceShapeDims: B, Hq, Hkv, Nq, Nkv, d. A dimension that is a
  // function of one size alone is that size's (rows padded to whole tiles
  // are still rows).
  std::array<int, 3> found = {-1, -1, -1};
  constexpr unsigned kSizeOfSlot[] = {0, 1, 3};
  for (auto [i, e] : llvm::enumerate(map.getValue().getResults()))
    for (unsigned slot = 0; slot < 3; ++slot) {
      bool onlyThatSize = e.isFunctionOfDim(kSizeOfSlot[slot]);
      for (unsigned other = 0; other < map.getValue().getNumDims(); ++other)
        if (other != kSizeOfSlot[slot] && e.isFunctionOfDim(other))
          onlyThatSize = false;
      if (onlyThatSize)
        found[slot] = i;
    }
  if (llvm::is_contained(found, -1))
    return std::nullopt;
  return std::array<unsigned, 3>{unsigned(found[0]), unsigned(found[1]),
                                 unsigned(found[2])};
}

/// The query tile's batch, head and first row: those of the dQ tile that
/// the site's dS accumulates into, where the step adds it to dQ itself.
bool findQueryTileFromDq(BackwardSite &site, KernelOp kernel, Region &scope) {
  SmallVector<Operation *> reached;
  followThroughShared(site.dScores->getResult(0), scope, reached);
  for (Operation *op : reached) {
    auto add = dyn_cast<AtomicAddOp>(op);
    if (!add)
      continue;
    SmallVector<memref::SubViewOp> views;
    auto buf = dyn_cast<BlockArgument>(viewedBuffer(add.getDst(), views));
    if (!buf)
      continue;
    std::optional<std::array<unsigned, 3>> dims = dqDims(kernel, buf);
    if (!dims)
      continue;
    site.batch = coordinateOf(views, add.getIndices(), (*dims)[0]);
    site.head = coordinateOf(views, add.getIndices(), (*dims)[1]);
    site.qBase = coordinateOf(views, add.getIndices(), (*dims)[2]);
    if (site.batch && site.head && site.qBase)
      return true;
  }
  return false;
}

/// The coordinates that the kernel's own elementwise over S (its mask)
/// names: the step's batch, query head, first query row and first key.
bool findTileFromKernelMask(BackwardSite &site) {
  for (Operation *user : site.score.getUsers()) {
    auto ew = dyn_cast<ElementwiseOp>(user);
    if (!ew || ew.getInputs().size() != 1)
      continue;
    site.batch = ew.getB();
    site.head = ew.getH();
    site.qBase = ew.getQBase();
    site.kvBase = ew.getKvBase();
    return true;
  }
  return false;
}

/// `v` of `from`'s step as `to`'s step computes it. `from` and `to` are the
/// steps' loop nests, innermost first, of the same depth: `v` itself where
/// it is defined outside `from`, `to`'s induction variable for `from`'s at
/// the same depth, else the op of `to`'s body at that depth that applies the
/// same operation to the corresponding operands; null if `to` computes none.
Value correspondingValue(Value v, ArrayRef<scf::ForOp> from,
                         ArrayRef<scf::ForOp> to) {
  for (auto [f, t] : llvm::zip_equal(from, to))
    if (v == scf::ForOp(f).getInductionVar())
      return scf::ForOp(t).getInductionVar();
  if (!from.back()->isAncestor(v.getParentBlock()->getParentOp()))
    return v;
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumResults() != 1 || def->getNumRegions() != 0 ||
      !isMemoryEffectFree(def))
    return {};
  auto depth = llvm::find_if(
      from, [&](scf::ForOp loop) { return def->getBlock() == loop.getBody(); });
  if (depth == from.end())
    return {};
  SmallVector<Value> operands;
  for (Value operand : def->getOperands()) {
    Value mapped = correspondingValue(operand, from, to);
    if (!mapped)
      return {};
    operands.push_back(mapped);
  }
  scf::ForOp target = to[depth - from.begin()];
  for (Operation &op : target.getBody()->without_terminator())
    if (op.getName() == def->getName() &&
        op.getAttrDictionary() == def->getAttrDictionary() &&
        op.getResultTypes() == def->getResultTypes() &&
        llvm::equal(op.getOperands(), operands))
      return op.getResult(0);
  return {};
}

/// The `depth` loops around `op`, innermost first (fewer where there are
/// not so many).
SmallVector<scf::ForOp> enclosingLoops(Operation *op, size_t depth) {
  SmallVector<scf::ForOp> loops;
  for (auto loop = op->getParentOfType<scf::ForOp>();
       loop && loops.size() < depth; loop = loop->getParentOfType<scf::ForOp>())
    loops.push_back(loop);
  return loops;
}

/// The loops of a site's step up to its query loop, innermost first.
SmallVector<scf::ForOp> stepLoops(const BackwardSite &site) {
  SmallVector<scf::ForOp> loops;
  scf::ForOp query = queryLoop(site);
  for (auto loop = site.gemm->getParentOfType<scf::ForOp>(); query && loop;
       loop = loop->getParentOfType<scf::ForOp>()) {
    loops.push_back(loop);
    if (loop == query)
      break;
  }
  return loops;
}

/// The root buffers a GEMM's two operands view.
std::pair<Value, Value> gemmBuffers(Operation *gemm) {
  SmallVector<memref::SubViewOp> views;
  Value a = viewedBuffer(gemm->getOperand(0), views);
  Value b = viewedBuffer(gemm->getOperand(1), views);
  return {a, b};
}

/// A step that neither adds its dQ itself nor masks (a warp-specialized
/// kernel's unmasked step) has the coordinates of a masking step over the
/// same buffers, as its own loop computes them.
LogicalResult findTileFromSibling(BackwardSite &site,
                                  ArrayRef<BackwardSite> known) {
  for (const BackwardSite &other : known) {
    SmallVector<scf::ForOp> from = stepLoops(other);
    SmallVector<scf::ForOp> to = enclosingLoops(site.gemm, from.size());
    if (from.empty() || to.size() != from.size() || from == to ||
        gemmBuffers(other.gemm) != gemmBuffers(site.gemm))
      continue;
    site.batch = correspondingValue(other.batch, from, to);
    site.head = correspondingValue(other.head, from, to);
    site.qBase = correspondingValue(other.qBase, from, to);
    site.kvBase = correspondingValue(other.kvBase, from, to);
    if (site.batch && site.head && site.qBase && site.kvBase)
      return success();
  }
  return site.dScores->emitError()
         << "computes dS, but transfer finds no coordinates of its score "
            "tile: no cuir.atomic_add of the dQ it contributes to names the "
            "query tile (a view at [b, .., h, ..] of 'dq' or of a workspace "
            "whose cuir.shape has the dimensions B, Hq and Nq, at the tile's "
            "first row), no elementwise of the kernel over S names them "
            "(cuir.elementwise ... at [b, h, q, kv]), and no such step over "
            "the same buffers has coordinates that this step's loop computes "
            "alike";
}

/// The KV tile: the row of K that the copy into the GEMM's B buffer starts
/// at, from a [b, :, h, :] view of 'k', and the buffer's rows.
LogicalResult findKeyTile(BackwardSite &site, BlockArgument k) {
  SmallVector<memref::SubViewOp> bViews;
  Value bBuf = viewedBuffer(site.gemm->getOperand(1), bViews);
  site.kvTileKeys = cast<MemRefType>(bBuf.getType()).getDimSize(0);
  for (Operation *user : bBuf.getUsers()) {
    auto copy = dyn_cast<CopyAsyncOp>(user);
    if (!copy || copy.getSrcIndices().empty())
      continue;
    SmallVector<memref::SubViewOp> views;
    Value dst = viewedBuffer(copy.getDst(), views);
    if (dst != bBuf || viewedBuffer(copy.getSrc(), views) != k)
      continue;
    site.kvTile = copy.getSrcIndices()[0];
    // The score tile's keys start there unless the GEMM reads some rows.
    if (bViews.empty() && !site.kvBase)
      site.kvBase = site.kvTile;
    return success();
  }
  return site.gemm->emitError()
         << "reads K from a buffer that no cuir.copy_async from a view of "
            "the 'k' parameter fills: transfer needs the score tile's first "
            "key";
}

/// The product P * (dP - D): a multiplication of the weights by a value
/// derived from another GEMM (dP = dO V^T).
Operation *findDScores(Operation *weights, Operation *scoreGemm,
                       Region &scope) {
  SmallVector<Operation *> chain;
  forwardChain(weights->getResult(0), scope, chain);
  for (Operation *op : chain) {
    auto mul = dyn_cast<arith::MulFOp>(op);
    if (!mul || !isScoreTile(mul))
      continue;
    for (Value operand : mul->getOperands())
      if (derivesFromOtherGemm(operand, scoreGemm))
        return mul;
  }
  return nullptr;
}

FailureOr<BackwardSite> analyzeSite(Operation *gemm, Value score,
                                    Operation *weights, KernelOp kernel,
                                    Region &scope, BlockArgument k) {
  BackwardSite site;
  site.gemm = gemm;
  site.score = score;
  site.weights = weights;
  site.dScores = findDScores(weights, gemm, scope);
  if (!site.dScores)
    return weights->emitError()
           << "turns scores into weights, but no product of the weights "
              "with the gradient of another GEMM (dS = P * (dP - D)) reads "
              "them: transfer expects a backward kernel's dS";
  if (failed(findKeyTile(site, k)))
    return failure();
  if (!findQueryTileFromDq(site, kernel, scope))
    findTileFromKernelMask(site);
  return site;
}

} // namespace

FailureOr<BackwardStructure> mlir::cuir::analyzeBackward(KernelOp kernel) {
  BackwardStructure bs;
  bs.kernel = kernel;
  for (BlockArgument arg : kernel.getBody().getArguments())
    if (StringRef role = argRole(kernel, arg.getArgNumber()); !role.empty())
      bs.params[role] = arg;
  SmallVector<Operation *> gemms;
  kernel.walk([&](Operation *op) {
    if (isa<GemmOp, GemmAsyncOp>(op))
      gemms.push_back(op);
  });
  // Score GEMMs: their result reaches an exponential (the weights).
  for (Operation *gemm : gemms) {
    Value score = completedResult(gemm);
    if (!score)
      continue;
    Region &scope = *gemm->getParentRegion();
    SmallVector<Operation *> chain;
    forwardChain(score, scope, chain);
    auto weights = llvm::find_if(chain, [](Operation *op) {
      return isa<math::ExpOp, math::Exp2Op>(op) && isScoreTile(op);
    });
    if (weights == chain.end())
      continue;
    if (!bs.params.count("k"))
      return kernel.emitError()
             << "has no parameter with role 'k': transfer needs the keys' "
                "coordinates";
    FailureOr<BackwardSite> site =
        analyzeSite(gemm, score, *weights, kernel, scope, bs.params["k"]);
    if (failed(site))
      return failure();
    bs.sites.push_back(*site);
  }
  // Steps without coordinates of their own take a sibling's.
  SmallVector<BackwardSite> known;
  for (BackwardSite &site : bs.sites)
    if (site.qBase && site.kvBase)
      known.push_back(site);
  for (BackwardSite &site : bs.sites)
    if ((!site.qBase || !site.kvBase) &&
        failed(findTileFromSibling(site, known)))
      return failure();
  return bs;
}

scf::ForOp mlir::cuir::queryLoop(const BackwardSite &site) {
  for (auto loop = site.gemm->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>())
    if (!site.head || loop.getInductionVar() != site.head)
      return loop;
  return {};
}

Value mlir::cuir::findGroupKvHead(const BackwardStructure &s) {
  auto hq = s.params.find("Hq"), hkv = s.params.find("Hkv");
  if (hq == s.params.end() || hkv == s.params.end())
    return {};
  auto isGroupSize = [&](Value v) {
    auto div = v.getDefiningOp<arith::DivUIOp>();
    return div && div.getLhs() == hq->second && div.getRhs() == hkv->second;
  };
  // The other operand of a commutative `op` whose one operand is `is`.
  auto other = [](Operation *op, function_ref<bool(Value)> is) -> Value {
    if (!op || op->getNumOperands() != 2)
      return {};
    for (unsigned i : {0u, 1u})
      if (is(op->getOperand(i)))
        return op->getOperand(1 - i);
    return {};
  };
  Value g;
  for (const BackwardSite &site : s.sites) {
    auto iv = dyn_cast<BlockArgument>(site.head);
    auto loop = iv ? dyn_cast<scf::ForOp>(iv.getOwner()->getParentOp())
                   : scf::ForOp();
    if (!loop || loop.getInductionVar() != iv ||
        !matchPattern(loop.getStep(), m_One()))
      return {};
    Value lb = loop.getLowerBound();
    auto lbMul = lb.getDefiningOp<arith::MulIOp>();
    auto ubAdd = loop.getUpperBound().getDefiningOp<arith::AddIOp>();
    Value head = lbMul ? other(lbMul, isGroupSize) : Value();
    Value size = ubAdd ? other(ubAdd, [&](Value v) { return v == lb; })
                       : Value();
    if (!head || !size || !isGroupSize(size) || (g && head != g))
      return {};
    g = head;
  }
  return g;
}

bool mlir::cuir::readsArgument(Value v, BlockArgument arg) {
  SmallVector<Value> work = {v};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (x == arg)
      return true;
    Operation *def = x.getDefiningOp();
    if (def &&
        arg.getOwner()->getParent()->isAncestor(def->getParentRegion()) &&
        seen.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  return false;
}

bool mlir::cuir::readsInputElements(Value v, ElementwiseOp ew) {
  Block &body = ew.getBody().front();
  return llvm::any_of(
      body.getArguments().take_front(ew.getInputs().size()),
      [&](BlockArgument input) { return readsArgument(v, input); });
}
