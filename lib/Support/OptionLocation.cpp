//===- OptionLocation.cpp - Errors that point into pass options ----------===//

#include "cuir/Support/OptionLocation.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using llvm::SmallVector;
using llvm::StringRef;

Location cuir::getOptionLoc(MLIRContext *context, StringRef flag,
                            StringRef options, size_t offset) {
  std::string written = ("--" + flag + "=" + options).str();
  unsigned column = flag.size() + 3 + std::min(offset, options.size()) + 1;
  return FileLineColLoc::get(context, written, /*line=*/1, column);
}

Location cuir::shiftColumn(Location loc, size_t offset) {
  auto fileLoc = dyn_cast<FileLineColLoc>(loc);
  if (!fileLoc)
    return loc;
  return FileLineColLoc::get(fileLoc.getFilename(), fileLoc.getLine(),
                             fileLoc.getColumn() + offset);
}

SmallVector<cuir::OptionEntry> cuir::splitOptions(StringRef options) {
  SmallVector<OptionEntry> entries;
  size_t pos = 0, n = options.size();
  while (pos < n) {
    while (pos < n && llvm::isSpace(options[pos]))
      ++pos;
    size_t start = pos, equals = StringRef::npos;
    char quote = 0;
    int braces = 0;
    for (; pos < n; ++pos) {
      char c = options[pos];
      if (quote) {
        quote = c == quote ? 0 : quote;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '{') {
        ++braces;
      } else if (c == '}') {
        braces -= braces > 0;
      } else if (braces == 0 && llvm::isSpace(c)) {
        break;
      } else if (c == '=' && equals == StringRef::npos && braces == 0) {
        equals = pos;
      }
    }
    if (equals == StringRef::npos)
      continue;
    entries.push_back({options.slice(start, equals),
                       options.slice(equals + 1, pos), equals + 1});
  }
  return entries;
}

std::optional<size_t> cuir::findOptionValue(StringRef options, StringRef key) {
  for (const OptionEntry &entry : splitOptions(options)) {
    if (entry.key != key)
      continue;
    bool opens =
        !entry.value.empty() && StringRef("'\"{").contains(entry.value[0]);
    return entry.valueOffset + (opens ? 1 : 0);
  }
  return std::nullopt;
}
