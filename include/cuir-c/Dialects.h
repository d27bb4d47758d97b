/*===- cuir-c/Dialects.h - C API of the CuIR dialect --------------*- C -*-===*\
|*                                                                            *|
|* The CuIR dialect handle for MLIR's C API, constructors of its memory-space *|
|* and fragment-layout attributes, and registration of its passes.            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef CUIR_C_DIALECTS_H
#define CUIR_C_DIALECTS_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mlirGetDialectHandle__cuir__(): register or load CuIR in a context. */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(CuIR, cuir);

/* Memory spaces of #cuir.mem<...>. */
typedef enum {
  CuIRMemorySpaceGlobal = 0,
  CuIRMemorySpaceShared = 1,
  CuIRMemorySpaceRegister = 2
} CuIRMemorySpace;

/* #cuir.mem<global|shared|register>. */
MLIR_CAPI_EXPORTED MlirAttribute cuirMemorySpaceAttrGet(MlirContext ctx,
                                                        CuIRMemorySpace space);

/* True if `attr` is a #cuir.mem<...> memory space. */
MLIR_CAPI_EXPORTED bool cuirAttributeIsAMemorySpace(MlirAttribute attr);

/* True if `attr` is a #cuir.frag<...> fragment layout. */
MLIR_CAPI_EXPORTED bool cuirAttributeIsAFragmentLayout(MlirAttribute attr);

/* Elements each thread holds of a tile of `shape` in fragment layout
 * `layout`; -1 if `layout` is not a fragment layout. */
MLIR_CAPI_EXPORTED int64_t cuirFragmentLayoutGetElementsPerThread(
    MlirAttribute layout, intptr_t rank, const int64_t *shape);

/* Registers every CuIR pass with the global pass registry. */
MLIR_CAPI_EXPORTED void cuirRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

#include "cuir/Passes/Passes.capi.h.inc"

#endif /* CUIR_C_DIALECTS_H */
