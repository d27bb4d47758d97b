//===- Nesting.h - Refusing MLIR text nested too deeply ---------*- C++ -*-===//
//
// MLIR's parser, printer and walks recurse once per nested region,
// attribute, type, location or parenthesis, and once per operator of an
// affine expression: text a few thousand levels deep overflows the stack.
// Text from users, caches and LLMs is therefore scanned before it is parsed
// and refused with an error at the first place beyond the limits.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_SUPPORT_NESTING_H
#define CUIR_SUPPORT_NESTING_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <optional>
#include <string>

namespace mlir::cuir {

/// How deep brackets ( [ { < may nest. The bundled kernels nest 9 deep; a
/// module at this depth parses, prints and runs through every pass on an
/// 8 MiB stack with a wide margin (test/cuir-opt/nesting-at-limit.test).
inline constexpr unsigned kMaxNestingDepth = 256;

/// How many operators (+ - * mod floordiv ceildiv) one expression may
/// chain between two delimiters: the affine parser recurses per operator.
inline constexpr unsigned kMaxExpressionOperators = 1000;

/// Where text first goes beyond a limit (1-based line and byte column).
struct NestingExcess {
  size_t offset;
  unsigned line, column;
  std::string message;
};

/// The first place where `text` nests brackets deeper than `maxDepth` or
/// chains more than `maxOperators` operators, or std::nullopt. String
/// literals and `//` comments are skipped; `->` is an arrow, and a `>` that
/// closes no `<` (as in `>=`) is a comparison.
std::optional<NestingExcess>
findExcessiveNesting(llvm::StringRef text,
                     unsigned maxDepth = kMaxNestingDepth,
                     unsigned maxOperators = kMaxExpressionOperators);

/// Fails with an error on `context` at the buffer's file:line:col of the
/// excess, before the text is parsed.
LogicalResult checkNesting(const llvm::MemoryBuffer &buffer,
                           MLIRContext *context);

/// The same, printed to `os` as the parser prints its errors: for tools
/// that have no context yet.
LogicalResult checkNesting(const llvm::MemoryBuffer &buffer,
                           llvm::raw_ostream &os);

/// Checks the file at `path`; a file that cannot be read passes, for the
/// parser to report.
LogicalResult checkFileNesting(llvm::StringRef path, MLIRContext *context);

} // namespace mlir::cuir

#endif // CUIR_SUPPORT_NESTING_H
