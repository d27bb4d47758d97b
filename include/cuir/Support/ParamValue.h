//===- ParamValue.h - Values of variant parameters as text ------*- C++ -*-===//
//
// A variant parameter's value is written as text in three places: the
// interpreter's params=, --transfer's {name=value} defaults (cuir.default)
// and check-params=. The forms are
//   3.5              a number (broadcast over an array parameter)
//   50,120           one number per batch element, head or token
//   runs:37,80,11    document ids in runs of those lengths (arrays)
// and every number must be finite and fit the parameter's type.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_SUPPORT_PARAMVALUE_H
#define CUIR_SUPPORT_PARAMVALUE_H

#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>

namespace mlir::cuir {

/// An error at byte `offset` of the text that was parsed.
struct TextError {
  size_t offset = 0;
  std::string message;
};

struct ParamValue {
  /// `runs:` lengths rather than values.
  bool runs = false;
  SmallVector<double> numbers;
  /// Where each number starts in the text, and how it is written there.
  SmallVector<size_t> offsets;
  SmallVector<std::string> texts;
};

/// Parses `text` strictly: no empty element, every element a finite number;
/// runs are positive integers.
FailureOr<ParamValue> parseParamValue(llvm::StringRef text, TextError &error);

/// Checks that `value` fits a parameter of `type`: one number for a scalar;
/// integers within range for iN and index; values that f32 represents for
/// floats; runs only for arrays.
LogicalResult checkParamValue(const ParamValue &value, Type type,
                              TextError &error);

/// Parses `name=value;name=value` (params=, check-params=). Names are
/// identifiers, each given once, values non-empty; a value that starts with
/// a number must be a valid one (as parseParamValue reads it). Other values,
/// such as `variant=softcap,alibi`, pass as strings. `valueOffsets`, if
/// given, receives where each value starts in `text`.
LogicalResult
parseParamList(llvm::StringRef text, std::map<std::string, std::string> &params,
               TextError &error,
               std::map<std::string, size_t> *valueOffsets = nullptr);

/// True if every comma-separated element of `text` reads as a number
/// (including nan and inf, which parseParamValue then refuses).
bool looksNumeric(llvm::StringRef text);

} // namespace mlir::cuir

#endif // CUIR_SUPPORT_PARAMVALUE_H
