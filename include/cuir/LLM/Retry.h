//===- Retry.h - When and how long to wait before retrying ------*- C++ -*-===//
//
// The retry policy of the LLM client, kept free of I/O so that it can be
// unit-tested: which failures are worth another attempt, how long to back
// off, and how to read a server's Retry-After.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LLM_RETRY_H
#define CUIR_LLM_RETRY_H

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <optional>

namespace mlir::cuir::llm {

/// Retries with exponential backoff: the n-th retry (1-based) waits
/// min(baseDelay * 2^(n-1), maxDelay), or what the server's Retry-After
/// asks for.
struct RetryPolicy {
  unsigned maxRetries = 4;
  std::chrono::milliseconds baseDelay{1000};
  std::chrono::milliseconds maxDelay{60000};
};

/// True for HTTP statuses that say "try again later": 408, 409, 429 and
/// every 5xx (Anthropic's 529 "overloaded" included).
bool isRetryableStatus(long status);

/// Parses a Retry-After header value: delay-seconds ("120", "1.5") or an
/// HTTP-date ("Wed, 21 Oct 2015 07:28:00 GMT", relative to `now`). Nothing
/// for anything else.
std::optional<std::chrono::milliseconds>
parseRetryAfter(llvm::StringRef value,
                std::chrono::system_clock::time_point now =
                    std::chrono::system_clock::now());

/// What to do before retry number `retry` (1-based).
struct RetryDecision {
  enum Kind {
    Wait,    ///< Wait `delay`, then retry.
    GiveUp,  ///< No retries left.
    TooLong, ///< The server's Retry-After exceeds maxDelay.
  } kind;
  std::chrono::milliseconds delay{0};
  bool fromServer = false; ///< The delay is the server's Retry-After.
};

RetryDecision decideRetry(const RetryPolicy &policy, unsigned retry,
                          std::optional<std::chrono::milliseconds> retryAfter);

} // namespace mlir::cuir::llm

#endif // CUIR_LLM_RETRY_H
