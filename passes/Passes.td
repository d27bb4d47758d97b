//===- Passes.td - CuIR passes -----------------------------*- tablegen -*-===//

#ifndef CUIR_PASSES_TD
#define CUIR_PASSES_TD

include "mlir/Pass/PassBase.td"

def CheckLocations : Pass<"cuir-check-locations", "::mlir::ModuleOp"> {
  let summary = "Checks that every op's location names real lines of its CUDA source";
  let description = [{
    Lowering patches the expert kernel through the source locations that the
    lift attached to every op: a `NameLoc` of the CUDA variable over a
    `file:line:col to line:col` range. This pass checks that every such
    range lies inside the named file: the lines exist and the columns lie
    within them. Files are looked up under `source-root` (default: the
    directory of the module's `cuir.source_path`, else the current
    directory). With `require-all`, ops inside a `cuir.kernel` that carry no
    file location at all are reported too, constants excepted.
  }];
  let options = [
    Option<"sourceRoot", "source-root", "std::string", /*default=*/"\"\"",
           "Directory against which relative source paths are resolved">,
    Option<"requireAll", "require-all", "bool", /*default=*/"false",
           "Report kernel ops that carry no source location">
  ];
}

def Interpret : Pass<"cuir-interpret", "::mlir::ModuleOp"> {
  let summary = "Runs CuIR kernels on the CPU and compares them with a reference";
  let description = [{
    Executes every `cuir.kernel` of the module (or the one named by `kernel`)
    on random inputs of the given shapes, block by block, in the element
    types the kernel uses, and compares its output (and log-sum-exp, when
    both sides have one) with a reference: the built-in standard attention,
    or `reference(q, k, v, scale, **params)` from a PyTorch file, run by
    `python` on the same inputs. Parameters are bound by their `cuir.arg`
    role (see docs/ExecutionSemantics.md).

    Asynchronous hazards (reading an async copy's destination or an async
    GEMM's result before its wait, overwriting an in-flight copy's source, a
    wait whose `pending` count does not cover what it waits for) and
    deadlocks are errors that name both ops. A mismatch reports the maximum
    absolute error, the relative error and the first mismatching element
    with its coordinates. Success is reported as a remark on the kernel.

    ```
    cuir-opt k.cuir.mlir --cuir-interpret="Nq=1000 Nkv=777 Hq=4 Hkv=2 causal=1"
    ```
  }];
  let options = [
    Option<"kernelName", "kernel", "std::string", /*default=*/"\"\"",
           "Kernel to run (default: every kernel of the module)">,
    Option<"batch", "B", "int64_t", /*default=*/"1", "Batch size">,
    Option<"headsQ", "Hq", "int64_t", /*default=*/"1", "Query heads">,
    Option<"headsKV", "Hkv", "int64_t", /*default=*/"1", "Key/value heads">,
    Option<"seqQ", "Nq", "int64_t", /*default=*/"128", "Query length">,
    Option<"seqKV", "Nkv", "int64_t", /*default=*/"128", "Key/value length">,
    Option<"headDim", "d", "int64_t", /*default=*/"128", "Head dimension">,
    Option<"causal", "causal", "bool", /*default=*/"false",
           "Causal masking (bottom-right aligned), for the kernel and the "
           "built-in reference">,
    Option<"seed", "seed", "uint64_t", /*default=*/"0",
           "Seed of the random inputs and of the block sample">,
    Option<"sampleBlocks", "blocks", "int64_t", /*default=*/"0",
           "Run only this many thread blocks, chosen at random (0: all)">,
    Option<"tolerance", "tolerance", "double", /*default=*/"1e-2",
           "Largest accepted relative error of the output">,
    Option<"reference", "reference", "std::string", /*default=*/"\"builtin\"",
           "'builtin', or a PyTorch file defining reference(q, k, v, scale, "
           "**params) over [B, H, N, d] tensors">,
    Option<"params", "params", "std::string", /*default=*/"\"\"",
           "Variant parameters: 'name=value;name=v0,v1,...'">,
    Option<"dump", "dump", "std::string", /*default=*/"\"\"",
           "Directory to write inputs and outputs to as .npy files">,
    Option<"python", "python", "std::string",
           /*default=*/"\"/usr/bin/python3\"",
           "Python interpreter with torch and numpy for PyTorch references">
  ];
}

#endif // CUIR_PASSES_TD
