//===- Http.h - HTTP POST over libcurl --------------------------*- C++ -*-===//

#ifndef CUIR_LIB_LLM_HTTP_H
#define CUIR_LIB_LLM_HTTP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

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

/// One POST.
struct HttpRequest {
  llvm::StringRef url;
  /// Header lines ("Name: value").
  llvm::ArrayRef<std::string> headers;
  llvm::StringRef body;
  double timeoutSeconds = 600;
  /// Never through a proxy (a loopback endpoint); else the environment's
  /// proxy settings apply.
  bool direct = false;
  /// Called with the seconds elapsed every `waitingInterval` seconds while
  /// the exchange lasts.
  llvm::function_ref<void(double)> onWaiting = nullptr;
  double waitingInterval = 30;
};

/// Sends the request; any failure is in the result.
HttpResult httpPost(const HttpRequest &request);

} // namespace mlir::cuir::llm

#endif // CUIR_LIB_LLM_HTTP_H
