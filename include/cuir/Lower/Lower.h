//===- Lower.h - Patch the expert kernel and compile it ---------*- C++ -*-===//

#ifndef CUIR_LOWER_LOWER_H
#define CUIR_LOWER_LOWER_H

#include "cuir/Dialect/CuIR.h"
#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::cuir {

struct LoweringOptions {
  /// The patched .cu; the .diff, manifest, PTX, cubins and library land
  /// beside it, named after its stem.
  std::string output;
  /// Target archs, e.g. sm_80 and sm_90.
  std::vector<std::string> archs = {"sm_80", "sm_90"};
  bool compile = true;
  bool keepLLVMIR = false;
  /// clang++ and the CUDA toolkit; empty: found as cuir/Support/Toolchain.h
  /// says ($CUIR_CLANG, $CUDA_PATH, PATH, ...).
  std::string clang;
  std::string cudaPath;
  /// Directory of the source kernel; relative source paths resolve here.
  std::string sourceRoot;
  /// Extra include directories for the compile.
  std::vector<std::string> includeDirs;
  /// Where to write the outputs when a driver commits them later (see
  /// stageLowerOutputs); empty: into place, at the end of the pass.
  std::string stagingDir;
  /// Checks that the CUDA source read from `path` is the text the kernels
  /// were lifted from (an error at `loc` if not); null: not checked beyond
  /// the locations lying inside the text.
  std::function<mlir::LogicalResult(mlir::Location loc, llvm::StringRef path,
                                    llvm::StringRef text)>
      verifySource;
};

/// The patched source and the derived files, in memory.
struct LoweredKernel {
  std::string sourcePath; // the expert source
  std::string patched;    // its patched text
  std::string headerPath; // the params header, if patched
  std::string headerName = "cuir/attention_params.h"; // its include name
  std::string headerPatched;
  std::string manifest; // JSON for Python loaders
};

/// Diffs `target` against `source` (its Source CuIR) and patches the CUDA
/// source their locations name. Fails with a diagnostic on any change it
/// cannot express as a patch.
FailureOr<LoweredKernel> lowerToSource(ModuleOp target, ModuleOp source,
                                       const LoweringOptions &options);

/// The programs lowering runs, found from the options and the environment.
struct CompileTools {
  std::string diff;
  /// Only when compiling.
  std::string clang, cudaPath, ptxas, fatbinary;
};

/// Finds the tools `options` need: diff, and clang++, ptxas and fatbinary
/// when it compiles. A missing one is an error at `loc` that names the
/// option and the environment variable that set it.
FailureOr<CompileTools> findCompileTools(const LoweringOptions &options,
                                         Location loc);

/// Writes the patched files, the unified diff and, if asked, the compiled
/// PTX, cubins and shared library; all or nothing.
LogicalResult writeAndCompile(const LoweredKernel &lowered,
                              const LoweringOptions &options, Location loc);

/// The costs ptxas reports that make a patched kernel slower than its expert
/// source: spills, a stack frame (a hook that was not inlined keeps its
/// captures in local memory) and wgmma serialised by accumulator reads.
struct PtxasCosts {
  unsigned maxSpillBytes = 0, maxStackBytes = 0, serializedWgmma = 0;
  bool any() const { return maxSpillBytes || maxStackBytes || serializedWgmma; }
};

/// Reads `ptxas -v`'s report: the largest stack frame and spill over the
/// kernel's instantiations, and how many of them serialise wgmma (C7514).
PtxasCosts readPtxasCosts(llvm::StringRef log);

} // namespace mlir::cuir

#endif // CUIR_LOWER_LOWER_H
