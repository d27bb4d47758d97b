//===- Lifter.cpp - The closed lift loop ----------------------------------===//

#include "cuir/Lift/Lifter.h"
#include "cuir/Lift/Extract.h"
#include "cuir/Lift/Prompt.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::cuir;
using namespace mlir::cuir::lift;
using llvm::StringRef;

char LiftFailure::ID = 0;

void LiftFailure::log(llvm::raw_ostream &os) const {
  os << summary;
  if (!details.empty())
    os << "\n" << details;
}

/// The first line of a report, for progress lines.
static StringRef firstLine(StringRef text) {
  StringRef line = text.trim().split('\n').first;
  return line.size() > 160 ? line.take_front(160) : line;
}

llvm::Expected<LiftResult> mlir::cuir::lift::runLiftLoop(
    llm::Client &client, StringRef system, StringRef firstPrompt,
    unsigned maxRounds, CandidateCheck check,
    llvm::function_ref<void(const llvm::Twine &)> progress,
    const LoopSpec &spec) {
  llm::Request request;
  request.system = system.str();
  request.messages.push_back({llm::Message::Role::User, firstPrompt.str()});
  Verdict last;
  for (unsigned round = 1; round <= maxRounds; ++round) {
    std::string tag =
        "round " + std::to_string(round) + "/" + std::to_string(maxRounds);
    progress(tag + ": asking " + client.describe());
    llvm::Expected<llm::Response> response = client.complete(request);
    if (!response)
      return llvm::make_error<LiftFailure>(
          "the LLM request of " + tag +
              " failed: " + llvm::toString(response.takeError()),
          "");

    llvm::Expected<std::string> mlir =
        extractMLIR(response->text, spec.keyOp, spec.what);
    if (mlir) {
      last = check(*mlir, round);
    } else {
      last.accepted = false;
      last.stage = "its MLIR could not be taken from the answer";
      last.problems = llvm::toString(mlir.takeError());
    }
    if (last.accepted) {
      progress(tag + ": accepted");
      // What the checks had to say (e.g. the interpreter's error bounds).
      for (StringRef line : llvm::split(StringRef(last.problems).trim(), '\n'))
        if (!line.trim().empty())
          progress("  " + line);
      return LiftResult{std::move(*mlir), round};
    }
    progress(tag + ": rejected, " + last.stage + ": " +
             firstLine(last.problems));
    if (round == maxRounds)
      break;
    llvm::Expected<std::string> repair =
        spec.repair
            ? spec.repair(round, maxRounds, last.stage, last.problems)
            : buildRepairPrompt(round, maxRounds, last.stage, last.problems);
    if (!repair)
      return llvm::make_error<LiftFailure>(
          "cannot build the repair prompt: " +
              llvm::toString(repair.takeError()),
          "");
    request.messages.push_back(
        {llm::Message::Role::Assistant, std::move(response->text)});
    request.messages.push_back({llm::Message::Role::User, std::move(*repair)});
  }
  return llvm::make_error<LiftFailure>(
      "no valid CuIR after " + std::to_string(maxRounds) + " round" +
          (maxRounds == 1 ? "" : "s") + "; the last answer was rejected, " +
          last.stage + ":",
      last.problems);
}
