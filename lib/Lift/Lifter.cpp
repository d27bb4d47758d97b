//===- Lifter.cpp - The closed lift loop ----------------------------------===//

#include "cuir/Lift/Lifter.h"
#include "cuir/LLM/Secrets.h"
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

/// A rejected answer goes back to the model in the next round, and so do the
/// diagnostics; beyond these sizes only their start and end go back, so that
/// a request stays bounded whatever the model answered (a real lift answer
/// is about 125 KB).
constexpr size_t kMaxEchoedAnswerBytes = 256 << 10;
constexpr size_t kMaxEchoedProblemBytes = 32 << 10;

/// `text` if it has at most `maxBytes` bytes; else its first and last
/// maxBytes / 2 bytes (cut at UTF-8 character boundaries) around a line that
/// says how much of `what` was left out.
static std::string elideMiddle(StringRef text, size_t maxBytes,
                               StringRef what) {
  if (text.size() <= maxBytes)
    return text.str();
  StringRef head = llm::takeUtf8Prefix(text, maxBytes / 2);
  StringRef tail = text.take_back(maxBytes / 2);
  while (!tail.empty() && (static_cast<unsigned char>(tail[0]) & 0xC0) == 0x80)
    tail = tail.drop_front();
  size_t omitted = text.size() - head.size() - tail.size();
  return (head + "\n[... " + llvm::Twine(omitted) + " bytes of " + what +
          " left out ...]\n" + tail)
      .str();
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
    last.problems =
        elideMiddle(last.problems, kMaxEchoedProblemBytes, "the diagnostics");
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
        {llm::Message::Role::Assistant,
         elideMiddle(response->text, kMaxEchoedAnswerBytes, "your answer")});
    request.messages.push_back({llm::Message::Role::User, std::move(*repair)});
  }
  return llvm::make_error<LiftFailure>(
      "no valid CuIR after " + std::to_string(maxRounds) + " round" +
          (maxRounds == 1 ? "" : "s") + "; the last answer was rejected, " +
          last.stage + ":",
      last.problems);
}
