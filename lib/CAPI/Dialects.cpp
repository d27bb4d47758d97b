//===- Dialects.cpp - C API of the CuIR dialect ---------------------------===//

#include "cuir-c/Dialects.h"

#include "cuir/Dialect/CuIR.h"
#include "cuir/InitCuIR.h"
#include "cuir/Passes/Passes.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Registration.h"

using namespace mlir;
using namespace mlir::cuir;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(CuIR, cuir, CuIRDialect)

MlirAttribute cuirMemorySpaceAttrGet(MlirContext ctx, CuIRMemorySpace space) {
  return wrap(MemorySpaceAttr::get(unwrap(ctx),
                                   static_cast<MemorySpace>(space)));
}

bool cuirAttributeIsAMemorySpace(MlirAttribute attr) {
  return isa<MemorySpaceAttr>(unwrap(attr));
}

bool cuirAttributeIsAFragmentLayout(MlirAttribute attr) {
  return isa<FragmentLayoutAttr>(unwrap(attr));
}

int64_t cuirFragmentLayoutGetElementsPerThread(MlirAttribute layout,
                                               intptr_t rank,
                                               const int64_t *shape) {
  auto frag = dyn_cast<FragmentLayoutAttr>(unwrap(layout));
  if (!frag)
    return -1;
  return frag.getElementsPerThread(llvm::ArrayRef<int64_t>(shape, rank));
}

void cuirRegisterAllPasses(void) { registerAllCuIRPasses(); }

// mlirCreateCuIR<Pass>() and mlirRegisterCuIR<Pass>() for every pass.
#include "cuir/Passes/Passes.capi.cpp.inc"
