//===- Secrets.h - Keeping the LLM client's secrets -------------*- C++ -*-===//
//
// What the client must never print, log, cache or record: the API key and
// the credentials an endpoint URL may carry (user info, query values). The
// endpoint is taken apart with libcurl's URL API, so that it can be shown
// without them and so that a key is sent over plain http only to loopback.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LLM_SECRETS_H
#define CUIR_LLM_SECRETS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::cuir::llm {

/// Secrets shorter than this are not searched for in texts: they would match
/// by chance and mangle answers (a local server's placeholder key "x"), and a
/// secret that short protects nothing.
inline constexpr size_t kMinRedactedLength = 4;

/// Replaces every known secret in a text by "[redacted]". Everything the
/// client prints, logs, records or returns goes through one of these, before
/// any truncation, so that no part of a secret survives a cut.
class Redactor {
public:
  /// Adds a secret (ignored if shorter than kMinRedactedLength).
  void add(llvm::StringRef secret);
  std::string redact(llvm::StringRef text) const;
  /// Redacts, then keeps at most `maxBytes` bytes of the result (cut at a
  /// UTF-8 character boundary; "..." appended when cut).
  std::string redactAndTruncate(llvm::StringRef text, size_t maxBytes) const;

private:
  std::vector<std::string> secrets; ///< Longest first.
};

/// The longest prefix of `text` of at most `maxBytes` bytes that does not
/// end inside a UTF-8 character.
llvm::StringRef takeUtf8Prefix(llvm::StringRef text, size_t maxBytes);

/// An endpoint URL taken apart by libcurl's URL API.
struct Endpoint {
  /// Where requests go: the chat path appended to the path, the query kept,
  /// the fragment dropped.
  std::string url;
  /// For messages and the lift cache: `url` without user info, each query
  /// value replaced by "[redacted]".
  std::string display;
  /// The host as the URL names it (an IPv6 address in brackets).
  std::string host;
  bool https = false;
  /// The host is a loopback address by its text alone (isLoopbackHost).
  bool loopback = false;
  /// The URL carries a user name, a password or a query: credentials, as far
  /// as the client can tell.
  bool hasCredentials = false;
  /// Those credentials, as written and percent-decoded, for a Redactor.
  std::vector<std::string> secrets;
};

/// Parses an http:// or https:// endpoint and completes it to the chat URL:
/// a path ending in `chatPath` ("/chat/completions", "/messages") is kept, a
/// path ending in "/v1" gets `chatPath` appended, any other "/v1" and
/// `chatPath`. Errors never quote the URL's credentials.
llvm::Expected<Endpoint> parseEndpoint(llvm::StringRef url,
                                       llvm::StringRef chatPath);

/// True for "localhost", 127.0.0.0/8 and ::1 (also IPv4-mapped 127.0.0.0/8),
/// decided from the text alone, without DNS: "localhost.example.com" and
/// names that merely resolve to 127.0.0.1 are not loopback.
bool isLoopbackHost(llvm::StringRef host);

} // namespace mlir::cuir::llm

#endif // CUIR_LLM_SECRETS_H
