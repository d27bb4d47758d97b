//===- BlockMask.cpp - A kernel's runtime block mask ----------------------===//

#include "cuir/Transfer/BlockMask.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// What the mask condition reads: the ops to clone (in order) and the
/// kernel arguments, or the first value that is neither.
struct MaskSlice {
  llvm::SetVector<Operation *> ops;
  llvm::SetVector<BlockArgument> kernelArgs;
  Value foreign;
};

void collect(Value v, Region &scores, KernelOp kernel,
             ArrayRef<Value> coords, MaskSlice &slice) {
  if (slice.foreign || llvm::is_contained(coords, v))
    return;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() == &kernel.getBody().front())
      slice.kernelArgs.insert(arg);
    else
      slice.foreign = v;
    return;
  }
  Operation *def = v.getDefiningOp();
  if (slice.ops.contains(def))
    return;
  bool inside = scores.isAncestor(def->getParentRegion());
  if (!inside && (!isPure(def) || def->getNumRegions() != 0)) {
    slice.foreign = v;
    return;
  }
  for (Value operand : def->getOperands())
    collect(operand, scores, kernel, coords, slice);
  slice.ops.insert(def);
}

/// Whether any op of the slice reads `coord`.
bool reads(const MaskSlice &slice, Value coord) {
  return llvm::any_of(slice.ops, [&](Operation *op) {
    return llvm::is_contained(op->getOperands(), coord);
  });
}

/// An existing block mask of the module that is `mask` under another name.
BlockMaskOp findTwin(BlockMaskOp mask) {
  for (auto other : mask->getParentOp()->getRegion(0).getOps<BlockMaskOp>())
    if (other != mask && other.getBlockM() == mask.getBlockM() &&
        other.getBlockN() == mask.getBlockN() &&
        other.getDepends() == mask.getDepends() &&
        haveSamePredicate(other, mask))
      return other;
  return {};
}

} // namespace

bool mlir::cuir::haveSamePredicate(BlockMaskOp a, BlockMaskOp b) {
  return a.getFunctionType() == b.getFunctionType() &&
         a.getArgAttrsAttr() == b.getArgAttrsAttr() &&
         OperationEquivalence::isRegionEquivalentTo(
             &a.getBody(), &b.getBody(),
             OperationEquivalence::IgnoreLocations);
}

FailureOr<BlockMaskOp> mlir::cuir::buildBlockMask(KernelOp kernel,
                                                  Value visible, Value b,
                                                  Value h, Value q, Value kv,
                                                  int64_t blockM,
                                                  int64_t blockN) {
  Region *scores = cast<BlockArgument>(q).getOwner()->getParent();
  SmallVector<Value, 4> coords = {b, h, q, kv};
  MaskSlice slice;
  collect(visible, *scores, kernel, coords, slice);
  if (slice.foreign)
    return mlir::emitError(slice.foreign.getLoc())
           << "the variant's mask reads a value that is neither a kernel "
              "parameter nor computed from them: it cannot be classified "
              "per tile";
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  for (BlockArgument arg : slice.kernelArgs) {
    types.push_back(arg.getType());
    NamedAttrList named(kernel.getArgAttrDict(arg.getArgNumber()));
    named.erase(CuIRDialect::ChangeAttrHelper::getNameStr());
    attrs.push_back(named.getDictionary(kernel.getContext()));
  }
  MaskDims depends = MaskDims::None;
  if (reads(slice, b))
    depends = depends | MaskDims::Batch;
  if (reads(slice, h))
    depends = depends | MaskDims::Heads;

  // The op is the module's, not the kernel's: no change records.
  OpBuilder builder(kernel.getContext());
  builder.setInsertionPointAfter(kernel);
  auto mask = BlockMaskOp::create(builder, visible.getLoc(),
                                  (kernel.getSymName() + "_blocks").str(),
                                  types, attrs, blockM, blockN, depends);
  SymbolTable(kernel->getParentOp()).insert(mask);
  Block &body = mask.getBody().front();
  IRMapping map;
  for (auto [i, c] : llvm::enumerate(coords))
    map.map(c, body.getArgument(i));
  for (auto [i, arg] : llvm::enumerate(slice.kernelArgs))
    map.map(arg, body.getArgument(4 + i));
  builder.setInsertionPointToEnd(&body);
  for (Operation *op : slice.ops) {
    Operation *copy = builder.clone(*op, map);
    copy->removeAttr(CuIRDialect::ChangeAttrHelper::getNameStr());
  }
  YieldOp::create(builder, visible.getLoc(), map.lookup(visible));
  if (BlockMaskOp twin = findTwin(mask)) {
    mask.erase();
    mask = twin;
  }
  kernel->setAttr("cuir.block_mask",
                  FlatSymbolRefAttr::get(mask.getSymNameAttr()));
  return mask;
}
