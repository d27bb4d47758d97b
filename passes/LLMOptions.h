//===- LLMOptions.h - The LLM options of a pass -----------------*- C++ -*-===//
//
// Private to passes/: --lift and --transfer declare the same LLM options
// (LLMOptions in Passes.td); this turns them into the client's settings.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_PASSES_LLMOPTIONS_H
#define CUIR_PASSES_LLMOPTIONS_H

#include "cuir/LLM/Client.h"

namespace mlir::cuir {

/// The client settings of a pass with the LLMOptions. Negative (or zero,
/// for the timeout and token limit) numbers defer to the environment, then
/// to the defaults. A pass grants access with
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
  if (pass.timeout > 0)
    options.timeoutSeconds = pass.timeout;
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

} // namespace mlir::cuir

#endif // CUIR_PASSES_LLMOPTIONS_H
