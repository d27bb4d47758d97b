//===- InitCuIR.h - Register CuIR in another MLIR tool ----------*- C++ -*-===//
//
// Embedding CuIR: call registerCuIRDialects on your DialectRegistry and
// registerCuIRPasses once at start-up.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_INITCUIR_H
#define CUIR_INITCUIR_H

namespace mlir {
class DialectRegistry;
namespace cuir {

/// Registers the CuIR dialect and the upstream dialects CuIR programs use
/// (arith, math, memref, tensor, scf, func).
void registerCuIRDialects(DialectRegistry &registry);

/// Registers every CuIR pass and pipeline with the global pass registry, so that
/// `--cuir-...` pass flags and pass-pipeline strings can name them.
void registerAllCuIRPasses();

} // namespace cuir
} // namespace mlir

#endif // CUIR_INITCUIR_H
