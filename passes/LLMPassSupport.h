//===- LLMPassSupport.h - What --lift and --transfer=llm: share -*- C++ -*-===//
//
// Private to passes/: --lift and --transfer declare the same LLM options
// (LLMOptions in Passes.td) and run the same closed loop; this turns the
// options into a client and reports the loop's prompts and failures.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_PASSES_LLMPASSSUPPORT_H
#define CUIR_PASSES_LLMPASSSUPPORT_H

#include "cuir/LLM/Client.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

namespace mlir::cuir {

/// The client settings of a pass with the LLMOptions. Negative (or zero,
/// for the times and the token limit) numbers defer to the environment, then
/// to the defaults; a negative time is an error. A pass grants access with
/// `friend llm::ClientOptions getLLMClientOptions<>(const ThePass &);`.
template <typename PassT>
llm::ClientOptions getLLMClientOptions(const PassT &pass) {
  llm::ClientOptions options;
  options.provider = pass.provider;
  options.endpoint = pass.endpoint;
  options.model = pass.model;
  options.replayFile = pass.replayFile;
  options.recordFile = pass.recordFile;
  if (pass.temperature >= 0)
    options.temperature = pass.temperature;
  // Times other than 0 are checked by resolveClientConfig: a negative, NaN
  // or infinite one is an error, not a default.
  if (pass.timeout != 0)
    options.timeoutSeconds = pass.timeout;
  if (pass.deadline != 0)
    options.deadlineSeconds = pass.deadline;
  if (pass.progressInterval != 0)
    options.progressIntervalSeconds = pass.progressInterval;
  options.allowInsecureHttp = pass.allowInsecureHttp;
  if (pass.maxTokens > 0)
    options.maxTokens = pass.maxTokens;
  if (pass.maxRetries >= 0)
    options.maxRetries = pass.maxRetries;
  if (pass.backoffMs >= 0)
    options.backoffMs = pass.backoffMs;
  if (pass.maxBackoffMs >= 0)
    options.maxBackoffMs = pass.maxBackoffMs;
  return options;
}

/// The prompts of a closed loop: an error names `what` if one could not be
/// built; written to `dumpPath` ("<<<< system >>>>", "<<<< user >>>>") when
/// given.
LogicalResult preparePrompts(Location loc, llvm::StringRef what,
                             llvm::Expected<std::string> &system,
                             llvm::Expected<std::string> &first,
                             llvm::StringRef dumpPath);

/// The client a pass's LLM options configure. `noneConfigured` reports the
/// error when no provider is set (it says what was looked for and how to
/// configure one); progress lines of the client go to `progress`, indented.
FailureOr<std::unique_ptr<llm::Client>>
createPassClient(Location loc, const llm::ClientOptions &options,
                 llvm::function_ref<void()> noneConfigured,
                 void (*progress)(const llvm::Twine &));

/// Reports a closed loop that ended without an accepted answer: `prefix`
/// ("lift of 'x.cu' failed"), the last failure and its details.
void reportLoopFailure(Location loc, const llvm::Twine &prefix,
                       llvm::Error error);

} // namespace mlir::cuir

#endif // CUIR_PASSES_LLMPASSSUPPORT_H
