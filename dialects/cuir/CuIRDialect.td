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
  // Attributes that passes share, named here (as upstream GPUBase.td names
  // its discardable attributes) so that no pass defines another's names.
  let discardableAttrs = (ins
    // Kernel argument: the parameter's role ("q", "lse", "Nq",
    // "param:<name>" for a variant parameter...).
    "::mlir::StringAttr":$arg,
    // Kernel argument of a variant parameter: its extent ("Hq", "B * Nkv")
    // and, for a value captured from Python, its default.
    "::mlir::StringAttr":$extent,
    "::mlir::StringAttr":$default,
    // Kernel argument of a scratch buffer (`workspace:<name>`): its shape,
    // an affine map of the problem's (B, Hq, Hkv, Nq, Nkv, d).
    "::mlir::AffineMapAttr":$shape,
    // Kernel: the causal (true) or non-causal (false) instantiation.
    "::mlir::BoolAttr":$causal,
    // Kernel: the variant it computes (transfer's spec); elementwise op:
    // the variant's scores (`cuir.variant_scores`).
    "::mlir::StringAttr":$variant,
    "::mlir::StringAttr":$variant_scores,
    // Elementwise op of a backward pass: the variant's d score_mod / d score
    // over the raw scores S, computed where dS is formed.
    "::mlir::StringAttr":$score_derivative,
    "::mlir::cuir::NormalizerAttr":$normalizer,
    // Wait of a score tile (cuir.gemm_wait): the source's score hook there
    // also runs at the start of its step, with this bool parameter of the
    // hook true, before the tile's GEMM; lowering issues the loads of
    // captured tensors that the scores read in that early call.
    "::mlir::StringAttr":$early_score_hook,
    // Kernel: the cuir.block_mask whose lists its KV loops walk.
    "::mlir::FlatSymbolRefAttr":$block_mask,
    // cuir.scatter_add of a parameter's gradient: its values are dS times
    // the partial minus the partial at the row's reference key
    // (of its top-left and bottom-right diagonals clamped to the keys, the
    // one where the partial is smaller), equal in exact arithmetic under
    // softmax, where a row's dS sum to 0.
    "::mlir::UnitAttr":$row_centred,
    // What transforms changed (see ChangeAttr and RemovedAttr).
    "::mlir::cuir::ChangeAttr":$change,
    "::mlir::ArrayAttr":$removed
  );
  let extraClassDeclaration = [{
    /// Version of the dialect's textual form; part of the lift-cache key.
    static constexpr unsigned kVersion = 1;
  }];
}

class CuIR_Op<string mnemonic, list<Trait> traits = []>
    : Op<CuIR_Dialect, mnemonic, traits>;

#endif // CUIR_DIALECT_TD
