//===- Http.h - HTTP POST over libcurl --------------------------*- C++ -*-===//

#ifndef CUIR_LIB_LLM_HTTP_H
#define CUIR_LIB_LLM_HTTP_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::cuir::llm {

/// The outcome of one HTTP exchange.
struct HttpResult {
  enum Kind {
    Ok,         ///< An HTTP response arrived (any status).
    Timeout,    ///< No complete response within the timeout.
    Connection, ///< Refused, reset or dropped: worth retrying.
    Fatal,      ///< Bad URL, unresolvable host, TLS set-up, ...
  } kind = Fatal;
  long status = 0;
  std::string body;
  std::optional<std::string> retryAfter;   ///< Retry-After header.
  std::optional<std::string> retryAfterMs; ///< retry-after-ms header.
  /// What went wrong, for kinds other than Ok.
  std::string error;
};

/// POSTs `body` to `url` with the given header lines ("Name: value").
HttpResult httpPost(llvm::StringRef url,
                    const std::vector<std::string> &headers,
                    llvm::StringRef body, double timeoutSeconds);

} // namespace mlir::cuir::llm

#endif // CUIR_LIB_LLM_HTTP_H
