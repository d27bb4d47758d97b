//===- CuIRDialect.cpp - CuIR dialect registration ------------------------===//

#include "cuir/Dialect/CuIR.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::cuir;

#include "cuir/Dialect/CuIRDialect.cpp.inc"
#include "cuir/Dialect/CuIREnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "cuir/Dialect/CuIRAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "cuir/Dialect/CuIRTypes.cpp.inc"

namespace {
/// Prints `#acc`, `#a`, `#shared`, ... aliases so register tiles and shared
/// buffers stay readable.
struct CuIROpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (auto frag = dyn_cast<FragmentLayoutAttr>(attr)) {
      os << stringifyFragmentKind(frag.getKind());
      return AliasResult::OverridableAlias;
    }
    if (auto space = dyn_cast<MemorySpaceAttr>(attr)) {
      os << stringifyMemorySpace(space.getValue());
      return AliasResult::OverridableAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void CuIRDialect::initialize() {
  addInterfaces<CuIROpAsmInterface>();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "cuir/Dialect/CuIRAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "cuir/Dialect/CuIRTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "cuir/Dialect/CuIROps.cpp.inc"
      >();
}

std::optional<MemorySpace> mlir::cuir::getMemorySpace(Type type) {
  auto memref = dyn_cast<BaseMemRefType>(type);
  if (!memref)
    return std::nullopt;
  if (auto space = dyn_cast_or_null<MemorySpaceAttr>(memref.getMemorySpace()))
    return space.getValue();
  return std::nullopt;
}

FragmentLayoutAttr mlir::cuir::getFragmentLayout(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return {};
  return dyn_cast_or_null<FragmentLayoutAttr>(tensor.getEncoding());
}

LogicalResult
MBarrierType::verify(function_ref<InFlightDiagnostic()> emitError,
                     int64_t size) {
  if (size <= 0)
    return emitError() << "an mbarrier array needs at least one barrier, got "
                       << size;
  return success();
}

static constexpr llvm::StringLiteral kParamRolePrefix = "param:";

std::string mlir::cuir::variantParamRole(StringRef name) {
  return (kParamRolePrefix + name).str();
}

std::optional<StringRef> mlir::cuir::variantParamName(StringRef role) {
  if (!role.consume_front(kParamRolePrefix))
    return std::nullopt;
  return role;
}

bool mlir::cuir::isBackwardKernel(KernelOp kernel) {
  for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i)
    if (llvm::is_contained(kBackwardOutputRoles, argRole(kernel, i)))
      return true;
  return false;
}

StringRef mlir::cuir::argRole(KernelOp kernel, unsigned index) {
  auto name = CuIRDialect::ArgAttrHelper::getNameStr();
  if (auto role = kernel.getArgAttrOfType<StringAttr>(index, name))
    return role.getValue();
  return {};
}

ChangeAttr mlir::cuir::getChange(Operation *op) {
  return op->getAttrOfType<ChangeAttr>(
      CuIRDialect::ChangeAttrHelper::getNameStr());
}

ChangeAttr mlir::cuir::getChange(Value value) {
  if (Operation *def = value.getDefiningOp())
    return getChange(def);
  auto arg = cast<BlockArgument>(value);
  auto kernel = dyn_cast<KernelOp>(arg.getOwner()->getParentOp());
  if (!kernel || arg.getOwner() != &kernel.getBody().front())
    return {};
  return kernel.getArgAttrOfType<ChangeAttr>(
      arg.getArgNumber(), CuIRDialect::ChangeAttrHelper::getNameStr());
}

ChangeAttr mlir::cuir::getEnclosingChange(Operation *op) {
  for (; op; op = op->getParentOp())
    if (ChangeAttr change = getChange(op))
      return change;
  return {};
}

void mlir::cuir::setChange(Operation *op, Rewrite rewrite) {
  op->setAttr(CuIRDialect::ChangeAttrHelper::getNameStr(),
              ChangeAttr::get(op->getContext(), rewrite));
}

void mlir::cuir::recordRemoved(Operation *kernel, Operation *op,
                               Rewrite rewrite) {
  MLIRContext *ctx = kernel->getContext();
  auto name = CuIRDialect::RemovedAttrHelper::getNameStr();
  SmallVector<Attribute> removed;
  if (auto old = kernel->getAttrOfType<ArrayAttr>(name))
    removed.assign(old.begin(), old.end());
  removed.push_back(RemovedAttr::get(
      ctx, rewrite, StringAttr::get(ctx, op->getName().getStringRef()),
      op->getLoc()));
  kernel->setAttr(name, ArrayAttr::get(ctx, removed));
}

SmallVector<RemovedAttr> mlir::cuir::getRemoved(Operation *kernel) {
  SmallVector<RemovedAttr> out;
  if (auto all = kernel->getAttrOfType<ArrayAttr>(
          CuIRDialect::RemovedAttrHelper::getNameStr()))
    for (Attribute a : all)
      if (auto r = dyn_cast<RemovedAttr>(a))
        out.push_back(r);
  return out;
}
