//===- WireFormat.h - JSON bodies of the chat APIs --------------*- C++ -*-===//
//
// Encoding of requests and decoding of answers for OpenAI-compatible chat
// completions and Anthropic's messages API. Pure functions, unit-tested.
// Answers and error bodies are quoted in errors, cut short: the caller
// redacts them first (Redactor in Secrets.h).
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LLM_WIREFORMAT_H
#define CUIR_LLM_WIREFORMAT_H

#include "cuir/LLM/Client.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::cuir::llm {

/// The JSON body of a chat request for `provider` (OpenAI or Anthropic).
std::string encodeRequest(Provider provider, const ClientConfig &config,
                          const Request &request);

/// Decodes a successful (2xx) answer. Malformed JSON, a missing answer, an
/// empty answer, a refusal and an answer cut off at the token limit
/// (finish_reason "length", stop_reason "max_tokens") are errors.
llvm::Expected<Response> decodeResponse(Provider provider,
                                        llvm::StringRef body);

/// The message of an error body ({"error": {"message": ...}} in both APIs),
/// else the start of the body; at most `maxLength` characters.
std::string describeErrorBody(llvm::StringRef body, size_t maxLength = 400);

} // namespace mlir::cuir::llm

#endif // CUIR_LLM_WIREFORMAT_H
