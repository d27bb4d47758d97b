//===- Prompt.h - The lift prompt -------------------------------*- C++ -*-===//
//
// The prompt is assembled from files a person can review, embedded into the
// library at build time:
//
//   lib/Lift/prompts/system.md     the model's role, the output rules, the
//                                  dialect reference and a worked example
//   lib/Lift/prompts/lift.md       the task: the three subtasks over the source
//   lib/Lift/prompts/repair.md     feedback after a rejected answer
//   lib/Lift/prompts/example.cu    the worked example's source ...
//   lib/Lift/prompts/example.cuir.mlir  ... and its lift (tested to verify)
//   docs/generated/CuIR{Ops,Attrs,Types}.md, docs/ExecutionSemantics.md
//
// Templates name their inputs as {{NAME}} placeholders.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LIFT_PROMPT_H
#define CUIR_LIFT_PROMPT_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::cuir::lift {

/// Replaces each {{NAME}} (NAME of A-Z, 0-9 and _) by its value. Inserted
/// text is not scanned again. A placeholder without a value is an error.
llvm::Expected<std::string>
renderTemplate(llvm::StringRef tmpl,
               const llvm::StringMap<std::string> &values);

/// The text with right-aligned line numbers: "  12| code".
std::string numberLines(llvm::StringRef text);

/// The system prompt: rules, dialect reference, execution semantics and the
/// worked example.
llvm::Expected<std::string> buildSystemPrompt();

/// The first user message: the source (numbered) and the three subtasks.
llvm::Expected<std::string> buildLiftPrompt(llvm::StringRef sourceName,
                                            llvm::StringRef sourceText);

/// The user message after a rejected answer of round `round`.
llvm::Expected<std::string> buildRepairPrompt(unsigned round,
                                              unsigned maxRounds,
                                              llvm::StringRef stage,
                                              llvm::StringRef problems);

} // namespace mlir::cuir::lift

#endif // CUIR_LIFT_PROMPT_H
