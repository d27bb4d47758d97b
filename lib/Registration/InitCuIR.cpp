//===- InitCuIR.cpp - Register CuIR in another MLIR tool ------------------===//

#include "cuir/InitCuIR.h"

#include "cuir/Dialect/CuIR.h"
#include "cuir/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::cuir::registerCuIRDialects(DialectRegistry &registry) {
  registry.insert<CuIRDialect, arith::ArithDialect, math::MathDialect,
                  memref::MemRefDialect, tensor::TensorDialect,
                  scf::SCFDialect, func::FuncDialect>();
}

void mlir::cuir::registerAllCuIRPasses() { registerCuIRPasses(); }
