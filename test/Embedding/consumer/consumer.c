/* Uses CuIR through MLIR's C API only: loads the dialect from its handle,
 * parses a kernel, verifies it, and runs a CuIR pass created through the
 * generated pass C API. */
#include "cuir-c/Dialects.h"

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#include <stdio.h>

static const char *kKernel =
    "module {\n"
    "cuir.kernel @k(%n: index) grid (n) -> (n) threads 128 arch \"sm_80\" {\n"
    "  %s = cuir.alloc : memref<64x64xbf16, #cuir.mem<shared>>\n"
    "  cuir.barrier.sync\n"
    "}\n"
    "}\n";

static void print(MlirStringRef s, void *unused) {
  (void)unused;
  fwrite(s.data, 1, s.length, stdout);
}

int main(void) {
  MlirContext ctx = mlirContextCreate();
  MlirDialectHandle cuir = mlirGetDialectHandle__cuir__();
  mlirDialectHandleRegisterDialect(cuir, ctx);
  mlirDialectHandleLoadDialect(cuir, ctx);
  /* The upstream dialects CuIR uses are loaded as its dependencies. */

  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kKernel));
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "parse failed\n");
    return 1;
  }
  MlirOperation op = mlirModuleGetOperation(module);
  if (!mlirOperationVerify(op)) {
    fprintf(stderr, "verify failed\n");
    return 1;
  }
  MlirAttribute shared = cuirMemorySpaceAttrGet(ctx, CuIRMemorySpaceShared);
  printf("memory space attr: %d\n", cuirAttributeIsAMemorySpace(shared));
  mlirAttributePrint(shared, print, NULL);
  printf("\n");

  MlirPassManager pm = mlirPassManagerCreate(ctx);
  mlirPassManagerAddOwnedPass(pm, mlirCreateCuIRCheckLocations());
  MlirLogicalResult result = mlirPassManagerRunOnOp(pm, op);
  printf("pass: %s\n", mlirLogicalResultIsSuccess(result) ? "ok" : "failed");
  mlirOperationPrint(op, print, NULL);
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return mlirLogicalResultIsSuccess(result) ? 0 : 1;
}
