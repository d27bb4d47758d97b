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
