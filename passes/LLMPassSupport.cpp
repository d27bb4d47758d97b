//===- LLMPassSupport.cpp - What --lift and --transfer=llm: share ---------===//

#include "LLMPassSupport.h"

#include "cuir/Lift/LiftCache.h"
#include "cuir/Lift/Lifter.h"

using namespace mlir;
using namespace mlir::cuir;

LogicalResult mlir::cuir::preparePrompts(Location loc, llvm::StringRef what,
                                         llvm::Expected<std::string> &system,
                                         llvm::Expected<std::string> &first,
                                         llvm::StringRef dumpPath) {
  bool ok = true;
  for (llvm::Expected<std::string> *prompt : {&system, &first}) {
    if (*prompt)
      continue;
    emitError(loc) << "cannot build the " << what
                   << " prompt: " << llvm::toString(prompt->takeError());
    ok = false;
  }
  if (!ok)
    return failure();
  if (dumpPath.empty())
    return success();
  std::string dump =
      "<<<< system >>>>\n" + *system + "\n<<<< user >>>>\n" + *first;
  if (llvm::Error err = lift::writeFileAtomically(dumpPath, dump))
    return emitError(loc) << "cannot write the prompt: "
                          << llvm::toString(std::move(err));
  return success();
}

FailureOr<std::unique_ptr<llm::Client>>
mlir::cuir::createPassClient(Location loc, const llm::ClientOptions &options,
                             llvm::function_ref<void()> noneConfigured,
                             void (*progress)(const llvm::Twine &)) {
  llvm::Expected<llm::ClientConfig> config =
      llm::resolveClientConfig(options, llm::getEnvironmentVariable);
  if (!config)
    return emitError(loc) << "cannot configure the LLM: "
                          << llvm::toString(config.takeError());
  if (config->provider == llm::Provider::None) {
    noneConfigured();
    return failure();
  }
  llvm::Expected<std::unique_ptr<llm::Client>> client = llm::createClient(
      *config, [progress](const llvm::Twine &line) { progress("  " + line); });
  if (!client)
    return emitError(loc) << "cannot create the LLM client: "
                          << llvm::toString(client.takeError());
  return std::move(*client);
}

void mlir::cuir::reportLoopFailure(Location loc, const llvm::Twine &prefix,
                                   llvm::Error error) {
  llvm::handleAllErrors(
      std::move(error),
      [&](const lift::LiftFailure &failure) {
        InFlightDiagnostic diag = emitError(loc)
                                  << prefix << ": " << failure.summary;
        if (!failure.details.empty())
          diag.attachNote(loc) << failure.details;
      },
      [&](const llvm::ErrorInfoBase &e) {
        emitError(loc) << prefix << ": " << e.message();
      });
}
