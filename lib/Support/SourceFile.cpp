//===- SourceFile.cpp - CUDA sources carried by a module ------------------===//

#include "cuir/Support/SourceFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

bool mlir::cuir::isCudaSourcePath(StringRef path) {
  StringRef ext = sys::path::extension(path);
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
