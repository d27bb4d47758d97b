//===- SourceFile.cpp - CUDA sources carried by a module ------------------===//

#include "cuir/Support/SourceFile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

bool mlir::cuir::isCudaSourcePath(StringRef path) {
  // Case-blind, so that -o X.CU is taken for CUDA and told what --lower
  // writes instead of being read as an MLIR output.
  std::string ext = sys::path::extension(path).lower();
  return ext == ".cu" || ext == ".cuh" || ext == ".h" || ext == ".hpp";
}

std::unique_ptr<MemoryBuffer>
mlir::cuir::wrapCudaSource(StringRef path, const MemoryBuffer &source) {
  std::string text;
  raw_string_ostream os(text);
  // printEscapedString writes quotes and non-printables as \XX, which MLIR's
  // string literals accept.
  os << "module attributes {" << kSourcePathAttr << " = \"";
  printEscapedString(path, os);
  os << "\", " << kSourceTextAttr << " = \"";
  printEscapedString(source.getBuffer(), os);
  // Line 0: diagnostics about the whole source name the file without
  // quoting the wrapper's one long line.
  os << "\"} {\n} loc(\"";
  printEscapedString(path, os);
  os << "\":0:0)\n";
  return MemoryBuffer::getMemBufferCopy(text, path);
}

std::vector<StringRef> mlir::cuir::splitSourceLines(StringRef text) {
  std::vector<StringRef> lines;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    lines.push_back(line);
    text = rest;
  }
  return lines;
}

mlir::LogicalResult mlir::cuir::checkRangeInSource(Operation *op,
                                                   FileLineColRange range,
                                                   ArrayRef<StringRef> lines) {
  StringRef file = range.getFilename();
  unsigned numLines = lines.size();
  unsigned startLine = range.getStartLine(), endLine = range.getEndLine();
  if (startLine < 1 || endLine > numLines || startLine > endLine)
    return op->emitOpError()
           << "names lines " << startLine << "-" << endLine << " of '" << file
           << "', which has " << numLines << " lines";
  unsigned startCol = range.getStartColumn();
  unsigned endCol = range.getEndColumn();
  // Columns are 1-based; the end column may point one past the last char.
  if (startCol < 1 || startCol > lines[startLine - 1].size() + 1 ||
      endCol > lines[endLine - 1].size() + 1)
    return op->emitOpError() << "names columns " << startCol << "-" << endCol
                             << " of '" << file << "' lines " << startLine
                             << "-" << endLine << ", outside the lines' text";
  return success();
}
