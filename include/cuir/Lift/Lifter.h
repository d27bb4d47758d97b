//===- Lifter.h - The closed lift loop --------------------------*- C++ -*-===//
//
// Asks the model for a lift, checks the answer, and sends the diagnostics
// back until an answer passes or the rounds run out.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LIFT_LIFTER_H
#define CUIR_LIFT_LIFTER_H

#include "cuir/LLM/Client.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>

namespace mlir::cuir::lift {

/// The outcome of checking one candidate.
struct Verdict {
  bool accepted = false;
  /// Where it failed, as a phrase: "it does not parse", ...
  std::string stage;
  /// The diagnostics or report, as the model will see them; for an
  /// accepted candidate, the warnings and remarks of the checks, if any.
  std::string problems;
};

/// Checks the MLIR extracted from the answer of round `round` (1-based).
using CandidateCheck =
    llvm::function_ref<Verdict(llvm::StringRef mlir, unsigned round)>;

struct LiftResult {
  /// The accepted MLIR text.
  std::string mlir;
  /// The round that produced it.
  unsigned round = 0;
};

/// Why the loop ended without a lift. `summary` is one line; `details` holds
/// the last problems (may be empty).
class LiftFailure : public llvm::ErrorInfo<LiftFailure> {
public:
  static char ID;
  LiftFailure(std::string summary, std::string details)
      : summary(std::move(summary)), details(std::move(details)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  std::string summary;
  std::string details;
};

/// Builds the user message after a rejected answer of round `round`.
using RepairPromptBuilder = std::function<llvm::Expected<std::string>(
    unsigned round, unsigned maxRounds, llvm::StringRef stage,
    llvm::StringRef problems)>;

/// What one closed loop asks for; the defaults are the lift's. The transfer
/// through an LLM asks for a cuir.variant instead of a kernel.
struct LoopSpec {
  /// Picks the answer's block among several ```mlir blocks.
  std::string keyOp = "cuir.kernel";
  /// What the block must hold, in the feedback on a missing block.
  std::string what = "the complete lifted module";
  /// The repair message; empty: buildRepairPrompt (lib/Lift/prompts/repair.md).
  RepairPromptBuilder repair;
};

/// Runs up to `maxRounds` rounds: round 1 sends `system` and `firstPrompt`;
/// each later round adds the previous answer and the repair prompt built
/// from its verdict. An answer over 256 KiB or diagnostics over 32 KiB go
/// back as their start and end only, so that requests stay bounded. Reports
/// each round through `progress`. Fails with a LiftFailure: when the client
/// fails (at once: its deadline bounds the whole loop), or when no answer
/// passed.
llvm::Expected<LiftResult>
runLiftLoop(llm::Client &client, llvm::StringRef system,
            llvm::StringRef firstPrompt, unsigned maxRounds,
            CandidateCheck check,
            llvm::function_ref<void(const llvm::Twine &)> progress,
            const LoopSpec &spec = LoopSpec());

} // namespace mlir::cuir::lift

#endif // CUIR_LIFT_LIFTER_H
