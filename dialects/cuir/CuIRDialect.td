//===- CuIRDialect.td - CuIR dialect definition ------------*- tablegen -*-===//
//
// CuIR makes the execution orchestration of an expert attention kernel
// explicit: data movement, tensor-core compute, synchronisation and worker
// granularity. Upstream dialects (scf, arith, math, memref, tensor) carry
// everything else.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_DIALECT_TD
#define CUIR_DIALECT_TD

include "mlir/IR/OpBase.td"

def CuIR_Dialect : Dialect {
  let name = "cuir";
  let cppNamespace = "::mlir::cuir";
  let summary = "An executable IR of expert GPU attention kernels";
  let description = [{
    CuIR lifts a CUDA attention kernel into tile-level operations whose
    orchestration is explicit: which worker (block, warpgroup, warp) runs what,
    which copies and GEMMs are asynchronous and where they are waited, and how
    workers synchronise through barriers. Global and shared memory are memrefs
    in a `#cuir.mem<...>` memory space; register tiles are tensors whose
    encoding is a `#cuir.frag<...>` fragment layout, from which the exact
    thread and register of every element is known.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::math::MathDialect"
  ];
  let extraClassDeclaration = [{
    /// Version of the dialect's textual form; part of the lift-cache key.
    static constexpr unsigned kVersion = 1;
  }];
}

class CuIR_Op<string mnemonic, list<Trait> traits = []>
    : Op<CuIR_Dialect, mnemonic, traits>;

#endif // CUIR_DIALECT_TD
