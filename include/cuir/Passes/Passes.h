//===- Passes.h - CuIR passes -----------------------------------*- C++ -*-===//

#ifndef CUIR_PASSES_PASSES_H
#define CUIR_PASSES_PASSES_H

#include "cuir/Dialect/CuIR.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::cuir {

class OutputTransaction;

#define GEN_PASS_DECL
#include "cuir/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cuir/Passes/Passes.h.inc"

/// Registers `--lift`, `--transfer` and `--lower`, cuir-opt's names of
/// `--cuir-lift`, `--cuir-transfer` and `--cuir-lower` (the same passes, with
/// the same options). For the cuir-opt driver only: a host compiler or
/// library embedding CuIR registers the prefixed names alone
/// (registerAllCuIRPasses), so that it gains no bare `--lower`.
void registerCuIROptShortPassNames();

/// For a driver that commits its outputs only once the whole pipeline has
/// succeeded: every top-level --lower pass of `pm` writes its set into a
/// directory staged in `outputs` beside its output (`defaultOutput` when the
/// pass names none). `done` receives the line to print once they are in
/// place, and `written`, if given, each pass's .cu output.
LogicalResult stageLowerOutputs(OpPassManager &pm,
                                llvm::StringRef defaultOutput,
                                OutputTransaction &outputs,
                                std::vector<std::string> &done,
                                std::vector<std::string> *written = nullptr);

} // namespace mlir::cuir

#endif // CUIR_PASSES_PASSES_H
