//===- OptionLocation.h - Errors that point into pass options ---*- C++ -*-===//
//
// An error in a pass option points at the option itself: the location's
// "file" is the option as written on the command line, e.g.
// `--transfer=window{window_left=abc}`, line 1, and the column is that of
// the offending character in it:
//
//   --transfer=window{window_left=abc}:1:31: error: ...
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_SUPPORT_OPTIONLOCATION_H
#define CUIR_SUPPORT_OPTIONLOCATION_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::cuir {

/// The location of byte `offset` of `options`, the text of the pass option
/// `--<flag>=<options>`.
Location getOptionLoc(MLIRContext *context, llvm::StringRef flag,
                      llvm::StringRef options, size_t offset);

/// `loc` moved `offset` columns to the right, if it is a file:line:col.
Location shiftColumn(Location loc, size_t offset);

/// The offset in `options` ("B=1 params='a=1'") of the value of `key`, past
/// an opening quote or brace; std::nullopt when `key` is not given.
std::optional<size_t> findOptionValue(llvm::StringRef options,
                                      llvm::StringRef key);

/// One `key=value` of a pass's options, as the pass read it.
struct OptionEntry {
  llvm::StringRef key;
  llvm::StringRef value; // Quotes and braces kept.
  size_t valueOffset;    // Of `value` in the options.
};

/// The top-level `key=value` entries of `options`, in order: a key given
/// twice has two. Spaces inside quotes or braces do not separate entries.
llvm::SmallVector<OptionEntry> splitOptions(llvm::StringRef options);

} // namespace mlir::cuir

#endif // CUIR_SUPPORT_OPTIONLOCATION_H
