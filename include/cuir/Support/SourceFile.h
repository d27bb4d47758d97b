//===- SourceFile.h - CUDA sources carried by a module ----------*- C++ -*-===//
//
// cuir-opt accepts a .cu file as input: it is wrapped into an empty module
// whose attributes carry the source's path and text, from which the lift
// pass starts.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_SUPPORT_SOURCEFILE_H
#define CUIR_SUPPORT_SOURCEFILE_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace mlir::cuir {

/// Module attribute holding the path of the CUDA source.
inline constexpr llvm::StringLiteral kSourcePathAttr = "cuir.source_path";
/// Module attribute holding the text of the CUDA source.
inline constexpr llvm::StringLiteral kSourceTextAttr = "cuir.source_text";

/// True for file names of CUDA sources and their headers (.cu, .cuh, .h,
/// .hpp).
bool isCudaSourcePath(llvm::StringRef path);

/// Wraps CUDA source text into the textual form of a module carrying it.
std::unique_ptr<llvm::MemoryBuffer>
wrapCudaSource(llvm::StringRef path, const llvm::MemoryBuffer &source);

/// Checks that `range`, a location of `op`, lies inside the text `lines`
/// (1-based lines of the file the range names): its lines exist and its
/// columns lie within them (an end column may point one past a line). The
/// error is at `op`.
LogicalResult checkRangeInSource(Operation *op, FileLineColRange range,
                                 llvm::ArrayRef<llvm::StringRef> lines);

/// The lines of `text`, split at '\n'.
std::vector<llvm::StringRef> splitSourceLines(llvm::StringRef text);

} // namespace mlir::cuir

#endif // CUIR_SUPPORT_SOURCEFILE_H
