//===- Nesting.cpp - Refusing MLIR text nested too deeply -----------------===//

#include "cuir/Support/Nesting.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using llvm::StringRef;

namespace {

/// The offset of the closing quote of the string literal that opens at
/// `start`, or of the end of its line (where the lexer stops too).
size_t skipString(StringRef text, size_t start) {
  size_t i = start + 1;
  for (; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i)
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] != '\n')
      ++i;
  return i < text.size() && text[i] == '\n' ? i - 1 : i;
}

bool isIdentifierChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
}

char openerOf(char close) {
  return close == ')' ? '(' : close == ']' ? '[' : '{';
}

} // namespace

std::optional<cuir::NestingExcess>
cuir::findExcessiveNesting(StringRef text, unsigned maxDepth,
                           unsigned maxOperators) {
  llvm::SmallVector<char, 64> open;
  unsigned operators = 0, line = 1;
  size_t lineStart = 0;
  auto excess = [&](size_t i, std::string message) {
    return NestingExcess{i, line, unsigned(i - lineStart + 1),
                         std::move(message)};
  };
  auto countOperator = [&](size_t i) -> std::optional<NestingExcess> {
    if (++operators <= maxOperators)
      return std::nullopt;
    return excess(i, "an expression chains more than " +
                         std::to_string(maxOperators) +
                         " operators; longer ones are refused (the parser "
                         "recurses once per operator)");
  };
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      lineStart = i + 1;
      break;
    case '"':
      i = skipString(text, i);
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      open.push_back(c);
      operators = 0;
      if (open.size() > maxDepth)
        return excess(i, "nested deeper than " + std::to_string(maxDepth) +
                             " levels of brackets; deeper text is refused "
                             "(the parser recurses once per level)");
      break;
    case ')':
    case ']':
    case '}':
      // A '<' left open inside (a comparison) closes with its bracket.
      while (!open.empty() && open.back() == '<')
        open.pop_back();
      if (!open.empty() && open.back() == openerOf(c))
        open.pop_back();
      operators = 0;
      break;
    case '>':
      if (!open.empty() && open.back() == '<')
        open.pop_back();
      operators = 0;
      break;
    case ',':
    case '=':
    case ':':
    case ';':
      operators = 0;
      break;
    case '-':
      if (i + 1 < e && text[i + 1] == '>') {
        ++i; // an arrow
        operators = 0;
        break;
      }
      [[fallthrough]];
    case '+':
    case '*':
      if (auto tooMany = countOperator(i))
        return tooMany;
      break;
    default:
      if (!isIdentifierChar(c))
        break;
      size_t end = i;
      while (end < e && isIdentifierChar(text[end]))
        ++end;
      StringRef word = text.slice(i, end);
      if (word == "mod" || word == "floordiv" || word == "ceildiv")
        if (auto tooMany = countOperator(i))
          return tooMany;
      i = end - 1;
      break;
    }
  }
  return std::nullopt;
}

LogicalResult cuir::checkNesting(const llvm::MemoryBuffer &buffer,
                                 MLIRContext *context) {
  std::optional<NestingExcess> excess =
      findExcessiveNesting(buffer.getBuffer());
  if (!excess)
    return success();
  return emitError(FileLineColLoc::get(context, buffer.getBufferIdentifier(),
                                       excess->line, excess->column))
         << excess->message;
}

LogicalResult cuir::checkNesting(const llvm::MemoryBuffer &buffer,
                                 llvm::raw_ostream &os) {
  std::optional<NestingExcess> excess =
      findExcessiveNesting(buffer.getBuffer());
  if (!excess)
    return success();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(buffer.getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  sourceMgr.PrintMessage(
      os, llvm::SMLoc::getFromPointer(buffer.getBufferStart() + excess->offset),
      llvm::SourceMgr::DK_Error, excess->message);
  return failure();
}

LogicalResult cuir::checkFileNesting(StringRef path, MLIRContext *context) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  return buffer ? checkNesting(**buffer, context) : success();
}
