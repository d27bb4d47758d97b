//===- SourcePatch.cpp - Line-level edits of a source file ----------------===//

#include "cuir/Lower/SourcePatch.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace mlir::cuir;

SourceText::SourceText(StringRef text) {
  trailingNewline = text.ends_with("\n");
  if (trailingNewline)
    text = text.drop_back();
  SmallVector<StringRef> parts;
  text.split(parts, '\n');
  for (StringRef p : parts)
    lines.push_back(p.str());
}

StringRef SourceText::indent(unsigned n) const {
  StringRef l = line(n);
  return l.take_front(l.size() - l.ltrim().size());
}

/// The code of a line without its // comment.
static StringRef code(StringRef l) {
  size_t c = l.find("//");
  return (c == StringRef::npos ? l : l.take_front(c)).rtrim();
}

std::pair<unsigned, unsigned> SourceText::statement(unsigned n) const {
  // Back to the line after the previous statement's end.
  unsigned start = n;
  while (start > 1) {
    StringRef prev = code(line(start - 1)).trim();
    if (prev.empty() || prev.ends_with(";") || prev.ends_with("{") ||
        prev.ends_with("}") || prev.starts_with("#") ||
        line(start - 1).trim().starts_with("//"))
      break;
    --start;
  }
  // Forward to its end: ';' outside parentheses, or the brace closing a
  // block the statement opens.
  int paren = 0, brace = 0;
  bool opened = false;
  for (unsigned l = start; l <= numLines(); ++l) {
    StringRef c = code(line(l));
    for (char ch : c) {
      if (ch == '(')
        ++paren;
      else if (ch == ')')
        --paren;
      else if (ch == '{') {
        ++brace;
        opened = true;
      } else if (ch == '}')
        --brace;
    }
    StringRef t = c.trim();
    if (opened && brace <= 0 && t.ends_with("}") && paren <= 0) {
      // "} else {" continues the statement.
      if (l < numLines() && code(line(l + 1)).trim().starts_with("else"))
        continue;
      return {start, l};
    }
    if (!opened && paren <= 0 && t.ends_with(";"))
      return {start, l};
  }
  return {start, numLines()};
}

std::optional<std::pair<unsigned, unsigned>>
SourceText::enclosingStatement(unsigned n) const {
  // Back to the line whose '{' is not closed before line n.
  int depth = 0;
  for (unsigned l = n; l > 1; --l) {
    StringRef c = code(line(l - 1));
    for (char ch : llvm::reverse(c)) {
      if (ch == '}')
        ++depth;
      else if (ch == '{' && --depth < 0)
        return statement(l - 1);
    }
  }
  return std::nullopt;
}

unsigned SourceText::declarationStart(unsigned n) const {
  unsigned start = n;
  while (start > 1) {
    StringRef prev = line(start - 1).trim();
    if (prev.empty() || prev.starts_with("//") || prev.ends_with(";") ||
        prev.ends_with("}") || prev.ends_with("{"))
      break;
    --start;
  }
  return start;
}

unsigned SourceText::topLevelStart(unsigned n) const {
  // Back to the nearest line that starts at column 0 with code (not a
  // closing brace, comment or directive): the declaration's head.
  unsigned l = n;
  while (l > 1) {
    StringRef t = line(l);
    if (!t.empty() && !isSpace(t.front()) && t.front() != '}' &&
        t.front() != '#' && !t.starts_with("//"))
      break;
    --l;
  }
  return declarationStart(l);
}

bool SourcePatch::add(SourceEdit edit, std::string &conflict) {
  for (const SourceEdit &e : edits) {
    if (e == edit)
      return true;
    bool overlap = edit.first <= e.last && e.first <= edit.last;
    if (!overlap)
      continue;
    // Text inserted after a replaced statement, or before it, follows or
    // precedes the replacement.
    auto besideReplacement = [](const SourceEdit &r, const SourceEdit &i) {
      return r.kind == SourceEdit::ReplaceLines &&
             ((i.kind == SourceEdit::InsertAfter && i.first == r.last) ||
              (i.kind == SourceEdit::InsertBefore && i.first == r.first));
    };
    bool replacing = (e.kind == SourceEdit::ReplaceLines ||
                      edit.kind == SourceEdit::ReplaceLines) &&
                     !besideReplacement(e, edit) && !besideReplacement(edit, e);
    bool sameInsert = e.kind == edit.kind && e.first == edit.first &&
                      e.leading == edit.leading &&
                      (e.kind == SourceEdit::InsertAfter ||
                       e.kind == SourceEdit::InsertBefore);
    if (replacing || sameInsert) {
      conflict = "lines " + std::to_string(edit.first) + "-" +
                 std::to_string(edit.last) +
                 " need two different edits (instantiations of the kernel "
                 "differ there?):\n" +
                 e.text + "\n---\n" + edit.text;
      return false;
    }
  }
  edits.push_back(std::move(edit));
  return true;
}

std::string SourcePatch::render(unsigned first, unsigned last) const {
  std::string out;
  for (unsigned l = first; l <= last; ++l) {
    for (const SourceEdit &e : edits)
      if (e.kind == SourceEdit::InsertBefore && e.first == l)
        out += e.text + "\n";
    const SourceEdit *replace = nullptr;
    for (const SourceEdit &e : edits)
      if (e.kind == SourceEdit::ReplaceLines && e.first <= l && l <= e.last)
        replace = &e;
    if (replace) {
      if (l == replace->first && !replace->text.empty())
        out += replace->text + "\n";
    } else {
      std::string text = src.line(l).str();
      for (const SourceEdit &e : edits)
        if (e.kind == SourceEdit::ReplaceText && e.first <= l && l <= e.last) {
          size_t pos = 0;
          while ((pos = text.find(e.from, pos)) != std::string::npos) {
            text.replace(pos, e.from.size(), e.to);
            pos += e.to.size();
          }
        }
      out += text + "\n";
    }
    for (bool leading : {true, false})
      for (const SourceEdit &e : edits)
        if (e.kind == SourceEdit::InsertAfter && e.first == l &&
            e.leading == leading)
          out += e.text + "\n";
  }
  return out;
}

std::string SourcePatch::render() const {
  std::string out = render(1, src.numLines());
  if (!src.endsWithNewline() && !out.empty())
    out.pop_back();
  return out;
}
