//===- BlockMask.cpp - A kernel's mask as a cuir.block_mask ---------------===//

#include "cuir/Transfer/BlockMask.h"

#include "mlir/IR/OperationSupport.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::cuir;

namespace {

/// Whether a block mask can take a kernel argument of type `t`.
bool isMaskArgType(Type t) {
  if (auto memref = dyn_cast<MemRefType>(t)) {
    std::optional<MemorySpace> space = getMemorySpace(memref);
    return space && *space == MemorySpace::Global;
  }
  return t.isIndex() || t.isInteger(32) || t.isInteger(64) || t.isF32();
}

/// Whether `op`, outside the mask's region, is a computation on kernel
/// arguments and constants that the block mask may repeat: free of memory
/// effects, without regions, on scalars, and a constant if it reads nothing
/// (so that cuir.block_id, which depends on the block, is not one).
bool isRepeatable(Operation *op) {
  if (op->getNumRegions() != 0 || !isMemoryEffectFree(op))
    return false;
  if (op->getNumOperands() == 0 && !op->hasTrait<OpTrait::ConstantLike>())
    return false;
  return llvm::all_of(op->getResultTypes(),
                      [](Type t) { return t.isIntOrIndexOrFloat(); });
}

/// The backward slice of a mask condition: the ops to clone, in an order
/// that defines every value before its uses, and the kernel arguments read.
class MaskSlice {
public:
  MaskSlice(KernelOp kernel, Region &region, ArrayRef<Value> coords)
      : kernel(kernel), region(region), coords(coords) {}

  /// Adds `v`, read by `user`, and everything it is computed from.
  LogicalResult visit(Value v, Operation *user);

  SmallVector<Operation *> ops;
  llvm::SetVector<BlockArgument> args;

private:
  LogicalResult visitOp(Operation *op);
  LogicalResult visitKernelArg(BlockArgument arg, Operation *user);
  LogicalResult reject(Value v, Operation *user);

  KernelOp kernel;
  Region &region;
  ArrayRef<Value> coords;
  llvm::DenseSet<Operation *> seen;
};

LogicalResult MaskSlice::visit(Value v, Operation *user) {
  if (llvm::is_contained(coords, v))
    return success();
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() == &kernel.getBody().front())
      return visitKernelArg(arg, user);
    return reject(v, user);
  }
  Operation *def = v.getDefiningOp();
  if (region.isAncestor(def->getParentRegion()))
    return visitOp(region.front().findAncestorOpInBlock(*def));
  if (!isRepeatable(def))
    return reject(v, user);
  return visitOp(def);
}

LogicalResult MaskSlice::visitOp(Operation *op) {
  if (!seen.insert(op).second)
    return success();
  for (Value operand : op->getOperands())
    if (failed(visit(operand, op)))
      return failure();
  // Values that nested regions read from above, as operands.
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegions(), above);
  for (Value v : above)
    if (failed(visit(v, op)))
      return failure();
  ops.push_back(op);
  return success();
}

LogicalResult MaskSlice::visitKernelArg(BlockArgument arg, Operation *user) {
  StringRef role = argRole(kernel, arg.getArgNumber());
  if (role.empty())
    return user->emitError()
           << "the mask reads kernel argument #" << arg.getArgNumber()
           << ", which has no cuir.arg role";
  if (!isMaskArgType(arg.getType()))
    return user->emitError()
           << "the mask reads kernel argument '" << role << "' of type "
           << arg.getType()
           << "; a block mask takes index, i32, i64 and f32 scalars and "
              "memrefs in #cuir.mem<global>";
  args.insert(arg);
  return success();
}

LogicalResult MaskSlice::reject(Value v, Operation *user) {
  InFlightDiagnostic diag = user->emitError() << "the mask reads ";
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *owner = arg.getOwner()->getParentOp();
    diag << "argument #" << arg.getArgNumber() << " of a '" << owner->getName()
         << "' region";
    if (isa<ElementwiseOp>(owner) && arg.getOwner()->getParent() == &region)
      diag << " (an element of its input tiles)";
  } else {
    diag << "the result of '" << v.getDefiningOp()->getName() << "'";
  }
  diag << ", which is not a kernel argument; a runtime block mask can only "
          "compute from the coordinates, the kernel's arguments and "
          "constants";
  if (Operation *def = v.getDefiningOp())
    diag.attachNote(def->getLoc()) << "defined here";
  return diag;
}

/// The attributes of the block mask's argument for kernel argument `arg`.
DictionaryAttr maskArgAttrs(KernelOp kernel, BlockArgument arg) {
  MLIRContext *ctx = kernel.getContext();
  NamedAttrList attrs;
  unsigned i = arg.getArgNumber();
  for (StringRef name : {CuIRDialect::ArgAttrHelper::getNameStr(),
                         CuIRDialect::ExtentAttrHelper::getNameStr()})
    if (Attribute a = kernel.getArgAttr(i, name))
      attrs.set(name, a);
  return attrs.getDictionary(ctx);
}

/// `<kernel>_blocks`, or with a suffix that no symbol of the module has.
std::string uniqueSymbol(KernelOp kernel) {
  std::string base = (kernel.getSymName() + "_blocks").str();
  Operation *table = SymbolTable::getNearestSymbolTable(kernel);
  std::string name = base;
  for (int n = 1; table && SymbolTable::lookupSymbolIn(table, name); ++n)
    name = base + "_" + std::to_string(n);
  return name;
}

/// The op, detached: the slice cloned into its region.
BlockMaskOp cloneSlice(KernelOp kernel, const MaskSlice &slice, Value visible,
                       ArrayRef<Value> coords, int64_t blockM, int64_t blockN,
                       bool perKvHead) {
  OpBuilder builder(kernel.getContext());
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  for (BlockArgument arg : slice.args) {
    types.push_back(arg.getType());
    attrs.push_back(maskArgAttrs(kernel, arg));
  }
  Location loc = visible.getLoc();
  auto mask = BlockMaskOp::create(builder, loc, uniqueSymbol(kernel), types,
                                  attrs, blockM, blockN, MaskDims::None);
  IRMapping map;
  for (auto [i, c] : llvm::enumerate(coords))
    map.map(c, mask.getCoordArg(i));
  for (auto [arg, to] : llvm::zip(slice.args, mask.getMaskArgs()))
    map.map(arg, to);
  builder.setInsertionPointToStart(&mask.getBody().front());
  StringRef change = CuIRDialect::ChangeAttrHelper::getNameStr();
  for (Operation *op : slice.ops) {
    Operation *copy = builder.clone(*op, map);
    // The whole op is new; the records of what it was cloned from say
    // nothing about it.
    copy->walk([&](Operation *nested) { nested->removeAttr(change); });
  }
  YieldOp::create(builder, loc, ValueRange{map.lookupOrDefault(visible)});
  MaskDims deps = MaskDims::None;
  if (!mask.getCoordArg(0).use_empty())
    deps = deps | MaskDims::Batch;
  if (!mask.getCoordArg(1).use_empty())
    deps = deps | (perKvHead ? MaskDims::KvHeads : MaskDims::Heads);
  mask.setDependsAttr(MaskDimsAttr::get(kernel.getContext(), deps));
  return mask;
}

/// A block mask of `kernel`'s module that classifies as `mask` does, with
/// the same tiles and depends (another instantiation's), or null.
BlockMaskOp findTwin(KernelOp kernel, BlockMaskOp mask) {
  for (auto other :
       kernel->getParentOp()->getRegion(0).getOps<BlockMaskOp>())
    if (other.getBlockM() == mask.getBlockM() &&
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

FailureOr<BlockMaskOp>
mlir::cuir::buildBlockMask(RewriterBase &rewriter, KernelOp kernel,
                           Value visible, Value b, Value h, Value q, Value kv,
                           int64_t blockM, int64_t blockN, bool perKvHead) {
  SmallVector<Value, 4> coords = {b, h, q, kv};
  auto first = dyn_cast<BlockArgument>(b);
  Block *owner = first ? first.getOwner() : nullptr;
  if (!owner || !kernel->isProperAncestor(owner->getParentOp()) ||
      llvm::any_of(coords, [&](Value c) {
        auto arg = dyn_cast<BlockArgument>(c);
        return !arg || arg.getOwner() != owner || !c.getType().isIndex();
      }))
    return kernel.emitError() << "the block mask's coordinates must be index "
                                 "arguments of one region in the kernel";
  if (!visible.getType().isInteger(1))
    return emitError(visible.getLoc())
           << "the mask condition must be i1, not " << visible.getType();
  Region &region = *owner->getParent();
  MaskSlice slice(kernel, region, coords);
  Operation *user = visible.getDefiningOp();
  if (failed(slice.visit(visible, user ? user : owner->getParentOp())))
    return failure();
  BlockMaskOp mask =
      cloneSlice(kernel, slice, visible, coords, blockM, blockN, perKvHead);
  if (failed(verify(mask))) {
    mask->erase();
    return failure();
  }
  if (BlockMaskOp twin = findTwin(kernel, mask)) {
    mask->erase();
    mask = twin;
  } else {
    rewriter.setInsertionPointAfter(kernel);
    rewriter.insert(mask);
  }
  rewriter.modifyOpInPlace(kernel, [&] {
    kernel->setAttr(CuIRDialect::BlockMaskAttrHelper::getNameStr(),
                    FlatSymbolRefAttr::get(mask.getSymNameAttr()));
  });
  return mask;
}
