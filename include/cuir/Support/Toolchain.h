//===- Toolchain.h - The external tools CuIR runs ---------------*- C++ -*-===//
//
// The programs the passes run (clang++ with the CUDA front end, the CUDA
// toolkit's ptxas and fatbinary, a Python with torch, diff) are found, not
// fixed in code: an explicit pass option first, then the environment, then
// PATH, then the usual install location. Each finder returns the path or an
// error that says what it tried and which variable to set; the caller names
// its option. Nothing is kept between calls except whether a Python
// imports torch, checked once per interpreter and process.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_SUPPORT_TOOLCHAIN_H
#define CUIR_SUPPORT_TOOLCHAIN_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir::cuir {

/// What discovery reads: the environment and the directories of PATH.
/// Tests give their own; `fromProcess` reads this process's.
struct ToolEnvironment {
  /// The value of an environment variable; std::nullopt when unset.
  std::function<std::optional<std::string>(llvm::StringRef)> getEnv;
  /// The directories programs are looked up in, in order.
  std::vector<std::string> path;

  static ToolEnvironment fromProcess();
};

/// clang++ with the CUDA front end and NVPTX: `explicitPath` if given (a
/// path, or a name looked up on PATH), else $CUIR_CLANG, else clang++-22 on
/// PATH, else /usr/lib/llvm-22/bin/clang++.
llvm::Expected<std::string> findClang(llvm::StringRef explicitPath,
                                      const ToolEnvironment &env);

/// The CUDA toolkit's root: `explicitPath` if given, else $CUDA_PATH, else
/// $CUDA_HOME, else the parent of the directory of ptxas on PATH, else
/// /usr/local/cuda. The root must hold bin/ptxas.
llvm::Expected<std::string> findCudaToolkit(llvm::StringRef explicitPath,
                                            const ToolEnvironment &env);

/// `name` (ptxas, fatbinary) in the toolkit's bin directory.
llvm::Expected<std::string> findCudaTool(llvm::StringRef toolkit,
                                         llvm::StringRef name);

/// A Python that can `import torch`: `explicitPath` if given, else
/// $CUIR_PYTHON, else the first of python3 on PATH and /usr/bin/python3
/// that imports torch. Each interpreter is asked once per process, with a
/// time limit.
llvm::Expected<std::string> findPythonWithTorch(llvm::StringRef explicitPath,
                                                const ToolEnvironment &env);

/// diff on PATH.
llvm::Expected<std::string> findDiff(const ToolEnvironment &env);

} // namespace mlir::cuir

#endif // CUIR_SUPPORT_TOOLCHAIN_H
