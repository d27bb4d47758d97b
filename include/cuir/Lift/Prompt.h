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
// and for --transfer=llm:<reference.py>, a variant from a PyTorch reference:
//
//   lib/Lift/prompts/transfer-system.md  the model's role, what a variant
//                                        means, the rules, the dialect
//                                        reference, the built-in variants
//   lib/Lift/prompts/transfer.md         the task: the reference, the Source
//                                        CuIR and three steps
//   lib/Lift/prompts/transfer-repair.md  feedback after a rejected variant
//
// Templates name their inputs as {{NAME}} placeholders.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LIFT_PROMPT_H
#define CUIR_LIFT_PROMPT_H

#include "llvm/ADT/ArrayRef.h"
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

/// The system prompt of a transfer through an LLM: what a variant means, the
/// rules, the dialect reference and the built-in variants as examples.
llvm::Expected<std::string> buildTransferSystemPrompt();

/// The first user message of a transfer: the reference's text and the
/// Source CuIR (`kernelNames` of the module, `firstKernel` printed).
llvm::Expected<std::string> buildTransferPrompt(
    llvm::StringRef referenceName, llvm::StringRef referenceText,
    llvm::ArrayRef<std::string> kernelNames, llvm::StringRef firstKernel);

/// The user message after a rejected variant of round `round`.
llvm::Expected<std::string> buildTransferRepairPrompt(unsigned round,
                                                      unsigned maxRounds,
                                                      llvm::StringRef stage,
                                                      llvm::StringRef problems);

} // namespace mlir::cuir::lift

#endif // CUIR_LIFT_PROMPT_H
