//===- OptionLocation.cpp - Errors that point into pass options ----------===//

#include "cuir/Support/OptionLocation.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
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

std::optional<size_t> cuir::findOptionValue(StringRef options, StringRef key) {
  std::string needle = (key + "=").str();
  for (size_t pos = options.find(needle); pos != StringRef::npos;
       pos = options.find(needle, pos + 1)) {
    if (pos != 0 && !llvm::isSpace(options[pos - 1]))
      continue;
    size_t value = pos + needle.size();
    if (value < options.size() && StringRef("'\"{").contains(options[value]))
      ++value;
    return value;
  }
  return std::nullopt;
}
