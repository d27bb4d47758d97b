//===- SourcePatch.h - Line-level edits of a source file --------*- C++ -*-===//
//
// Lowering edits the expert kernel the way a careful person would: it finds
// the statement an op comes from and inserts, replaces or deletes whole
// lines, or substitutes text inside them. Edits are collected, checked for
// conflicts (two different edits of one place), and applied at once.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LOWER_SOURCEPATCH_H
#define CUIR_LOWER_SOURCEPATCH_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::cuir {

/// A source file as lines (1-based), with the C++ structure lowering needs.
class SourceText {
public:
  explicit SourceText(llvm::StringRef text);
  unsigned numLines() const { return lines.size(); }
  llvm::StringRef line(unsigned n) const { return lines[n - 1]; }
  /// Leading whitespace of line `n`.
  llvm::StringRef indent(unsigned n) const;
  /// First and last line of the statement that contains line `n`: a
  /// simple statement up to its ';', or a statement with a block ({...},
  /// as loops and ifs) up to its closing brace.
  std::pair<unsigned, unsigned> statement(unsigned n) const;
  /// First and last line of the statement whose block ({...}) is the
  /// innermost one around line `n` (a lambda's declaration, a loop), or
  /// nullopt at top level.
  std::optional<std::pair<unsigned, unsigned>>
  enclosingStatement(unsigned n) const;
  /// First line of the declaration (template header included) that line
  /// `n` belongs to.
  /// The first line of the top-level declaration (a function, with its
  /// template header and comment-free lead-in) that contains line `n`.
  unsigned topLevelStart(unsigned n) const;
  unsigned declarationStart(unsigned n) const;
  /// Whether the source text ends with a newline.
  bool endsWithNewline() const { return trailingNewline; }

private:
  std::vector<std::string> lines;
  bool trailingNewline = true;
};

/// One edit. Lines are 1-based; inserted and replacing text is whole lines
/// (without the final newline).
struct SourceEdit {
  enum Kind { InsertAfter, InsertBefore, ReplaceLines, ReplaceText } kind;
  unsigned first = 0, last = 0;
  std::string text;     // inserted or replacing lines
  std::string from, to; // ReplaceText: within lines [first, last]
  /// An insertion that goes ahead of the other insertions at its line,
  /// which it does not conflict with: what must read a statement's result
  /// before another patcher's insertion changes it (the parameter
  /// gradients read dS before the score derivative's product).
  bool leading = false;
  bool operator==(const SourceEdit &o) const {
    return kind == o.kind && first == o.first && last == o.last &&
           text == o.text && from == o.from && to == o.to &&
           leading == o.leading;
  }
};

class SourcePatch {
public:
  explicit SourcePatch(const SourceText &src) : src(src) {}
  /// Adds an edit; identical edits (one per instantiation of a template)
  /// are kept once. Returns false with `conflict` set when the edit clashes
  /// with another edit of the same lines.
  bool add(SourceEdit edit, std::string &conflict);
  bool empty() const { return edits.empty(); }
  /// Lines [first, last] with the edits inside them applied.
  std::string render(unsigned first, unsigned last) const;
  /// The whole patched file.
  std::string render() const;

private:
  const SourceText &src;
  std::vector<SourceEdit> edits;
};

} // namespace mlir::cuir

#endif // CUIR_LOWER_SOURCEPATCH_H
