//===- Extract.cpp - The MLIR of an LLM answer ----------------------------===//

#include "cuir/Lift/Extract.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

using namespace llvm;

namespace {

/// A fence line: up to three spaces, then at least three backticks or
/// tildes, then the info string (CommonMark).
struct Fence {
  char marker;
  size_t length;
  StringRef info;
};

std::optional<Fence> parseFence(StringRef line) {
  size_t indent = line.find_first_not_of(' ');
  if (indent == StringRef::npos || indent > 3)
    return std::nullopt;
  line = line.drop_front(indent);
  char marker = line.empty() ? 0 : line.front();
  if (marker != '`' && marker != '~')
    return std::nullopt;
  size_t length = line.find_first_not_of(marker);
  if (length == StringRef::npos)
    length = line.size();
  if (length < 3)
    return std::nullopt;
  StringRef info = line.drop_front(length).trim();
  // A backtick fence's info string may not contain backticks.
  if (marker == '`' && info.contains('`'))
    return std::nullopt;
  return Fence{marker, length, info};
}

struct Block {
  std::string info;
  std::string text;
  unsigned line;
  bool closed = false;
};

} // namespace

Expected<std::string> mlir::cuir::lift::extractMLIR(StringRef answer,
                                                    StringRef keyOp,
                                                    StringRef what) {
  SmallVector<Block> blocks;
  std::optional<Fence> open;
  unsigned lineNo = 0;
  while (!answer.empty()) {
    auto [line, rest] = answer.split('\n');
    answer = rest;
    ++lineNo;
    line = line.rtrim('\r');
    std::optional<Fence> fence = parseFence(line);
    if (!open) {
      if (fence) {
        open = fence;
        StringRef lang = fence->info.split(' ').first;
        blocks.push_back({lang.lower(), "", lineNo});
      }
      continue;
    }
    // A closing fence: same marker, at least as long, no info string.
    if (fence && fence->marker == open->marker &&
        fence->length >= open->length && fence->info.empty()) {
      blocks.back().closed = true;
      open.reset();
      continue;
    }
    blocks.back().text += line;
    blocks.back().text += '\n';
  }

  SmallVector<const Block *> mlirBlocks;
  for (const Block &block : blocks)
    if (block.info == "mlir")
      mlirBlocks.push_back(&block);
  if (mlirBlocks.empty()) {
    std::string others;
    for (const Block &block : blocks)
      others += (others.empty() ? "" : ", ") + (block.info.empty()
                                                    ? std::string("unlabelled")
                                                    : "'" + block.info + "'");
    std::string message = "the answer has no ```mlir code block";
    if (!others.empty())
      message += " (its code blocks: " + others + ")";
    message +=
        ("; put " + what + " in one block that starts with ```mlir").str();
    return createStringError(message);
  }
  // Analysis that quotes a snippet besides the answer: the answer is the
  // one block with its key op in it.
  if (mlirBlocks.size() > 1) {
    SmallVector<const Block *> kernels;
    for (const Block *block : mlirBlocks)
      if (StringRef(block->text).contains(keyOp))
        kernels.push_back(block);
    if (kernels.size() == 1)
      mlirBlocks = kernels;
  }
  if (mlirBlocks.size() > 1)
    return createStringError("the answer has " + Twine(mlirBlocks.size()) +
                             " ```mlir code blocks (starting on lines " +
                             Twine(mlirBlocks[0]->line) + " and " +
                             Twine(mlirBlocks[1]->line) + "); put " + what +
                             " in exactly one");
  const Block &block = *mlirBlocks.front();
  if (!block.closed)
    return createStringError("the ```mlir code block that starts on line " +
                             Twine(block.line) +
                             " is never closed (was the answer cut off?)");
  if (StringRef(block.text).trim().empty())
    return createStringError("the ```mlir code block on line " +
                             Twine(block.line) + " is empty");
  return block.text;
}
