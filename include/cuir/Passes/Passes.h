//===- Passes.h - CuIR passes -----------------------------------*- C++ -*-===//

#ifndef CUIR_PASSES_PASSES_H
#define CUIR_PASSES_PASSES_H

#include "cuir/Dialect/CuIR.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::cuir {

#define GEN_PASS_DECL
#include "cuir/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuir/Passes/Passes.h.inc"

} // namespace mlir::cuir

#endif // CUIR_PASSES_PASSES_H
