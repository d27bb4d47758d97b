//===- ParamValue.cpp - Values of variant parameters as text --------------===//

#include "cuir/Support/ParamValue.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using llvm::StringRef;

namespace {

/// Runs longer than this cannot be exact in a double, nor useful.
constexpr double kMaxRunLength = 1e15;

LogicalResult fail(cuir::TextError &error, size_t offset,
                   const llvm::Twine &message) {
  error = {offset, message.str()};
  return failure();
}

/// The number `text` reads as, nan and inf included.
std::optional<double> readNumber(StringRef text) {
  double d;
  if (text.empty() || text.getAsDouble(d))
    return std::nullopt;
  return d;
}

bool isIdentifier(StringRef name) {
  auto isWordChar = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  return !name.empty() && !llvm::isDigit(name[0]) &&
         llvm::all_of(name, isWordChar);
}

/// Whether `x` fits the integer type `type` (index: 64 bits; i1: 0 or 1).
bool fitsInteger(double x, Type type) {
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  if (width == 1)
    return x == 0 || x == 1;
  double bound = std::ldexp(1.0, width - 1);
  return x >= -bound && x < bound;
}

} // namespace

bool cuir::looksNumeric(StringRef text) {
  StringRef first = text.split(',').first.trim();
  return readNumber(first).has_value();
}

FailureOr<cuir::ParamValue> cuir::parseParamValue(StringRef text,
                                                  TextError &error) {
  ParamValue value;
  size_t base = 0;
  if (text.starts_with("runs:")) {
    value.runs = true;
    base = 5;
  }
  SmallVector<StringRef> parts;
  text.drop_front(base).split(parts, ',');
  for (auto [n, part] : llvm::enumerate(parts)) {
    size_t offset = part.data() - text.data();
    StringRef item = part.ltrim();
    offset += part.size() - item.size();
    item = item.rtrim();
    std::string which = parts.size() > 1
                            ? "element " + std::to_string(n + 1) + " "
                            : std::string();
    if (item.empty()) {
      (void)fail(error, offset, which + "is empty: expected a number");
      return failure();
    }
    std::optional<double> number = readNumber(item);
    if (!number) {
      (void)fail(error, offset, "'" + item + "' is not a number");
      return failure();
    }
    if (!std::isfinite(*number)) {
      (void)fail(error, offset, "'" + item + "' is not a finite number");
      return failure();
    }
    if (value.runs &&
        (*number < 1 || *number != std::trunc(*number) ||
         *number > kMaxRunLength)) {
      (void)fail(error, offset,
                 "run length '" + item + "' is not a positive whole number");
      return failure();
    }
    value.numbers.push_back(*number);
    value.offsets.push_back(offset);
    value.texts.push_back(item.str());
  }
  return value;
}

LogicalResult cuir::checkParamValue(const ParamValue &value, Type type,
                                    TextError &error) {
  auto memref = dyn_cast<MemRefType>(type);
  Type element = memref ? memref.getElementType() : type;
  if (!memref && value.runs)
    return fail(error, 0, "runs: gives arrays; this parameter is a " +
                              llvm::Twine(element.isIndex() ? "index"
                                                            : "scalar"));
  if (!memref && value.numbers.size() != 1)
    return fail(error, value.offsets[1],
                "this parameter takes one number, not a list");
  if (value.runs)
    return success();
  std::string typeName;
  llvm::raw_string_ostream(typeName) << element;
  for (auto [x, offset, text] :
       llvm::zip(value.numbers, value.offsets, value.texts)) {
    if (element.isIntOrIndex()) {
      if (x != std::trunc(x))
        return fail(error, offset,
                    "'" + text + "' is not a whole number");
      if (!fitsInteger(x, element))
        return fail(error, offset,
                    "'" + text + "' is out of the range of " + typeName);
    } else if (auto floatType = dyn_cast<FloatType>(element)) {
      double largest =
          llvm::APFloat::getLargest(floatType.getFloatSemantics())
              .convertToDouble();
      if (std::fabs(x) > largest)
        return fail(error, offset,
                    "'" + text + "' is out of the range of " + typeName);
    }
  }
  return success();
}

LogicalResult
cuir::parseParamList(StringRef text, std::map<std::string, std::string> &params,
                     TextError &error,
                     std::map<std::string, size_t> *valueOffsets) {
  SmallVector<StringRef> entries;
  text.split(entries, ';');
  for (StringRef entry : entries) {
    size_t offset = entry.data() - text.data();
    if (entry.trim().empty())
      continue;
    auto [rawName, rawValue] = entry.split('=');
    StringRef name = rawName.trim();
    size_t nameOffset = offset + (rawName.size() - rawName.ltrim().size());
    if (!entry.contains('='))
      return fail(error, nameOffset,
                  "'" + entry.trim() + "' is not name=value");
    if (!isIdentifier(name))
      return fail(error, nameOffset,
                  "'" + name + "' is not a parameter name (letters, digits "
                               "and '_')");
    StringRef value = rawValue.trim();
    size_t valueOffset = rawValue.data() - text.data() +
                         (rawValue.size() - rawValue.ltrim().size());
    if (value.empty())
      return fail(error, nameOffset, "'" + name + "' has no value");
    if (params.count(name.str()))
      return fail(error, nameOffset, "'" + name + "' is given twice");
    if (looksNumeric(value) || value.starts_with("runs:")) {
      TextError inner;
      if (failed(parseParamValue(value, inner)))
        return fail(error, valueOffset + inner.offset,
                    "'" + name + "': " + inner.message);
    }
    params[name.str()] = value.str();
    if (valueOffsets)
      (*valueOffsets)[name.str()] = valueOffset;
  }
  return success();
}
