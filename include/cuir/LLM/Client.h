//===- Client.h - Chat-completion client for the lift -----------*- C++ -*-===//
//
// A small client for the chat APIs that the lift talks to:
//
//   - OpenAI-compatible chat completions (`POST .../chat/completions`), which
//     also covers local servers such as vLLM and llama.cpp's server;
//   - Anthropic's messages API (`POST .../v1/messages`);
//   - a replay provider that answers from a file of recorded exchanges, for
//     tests and reproducible runs.
//
// Settings come from explicit options, else the environment (CUIR_LLM_*),
// else defaults. The API key comes only from the environment; it and the
// credentials of the endpoint URL are never printed, logged, cached or
// recorded, and go over plain http only to a loopback address.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LLM_CLIENT_H
#define CUIR_LLM_CLIENT_H

#include "cuir/LLM/Retry.h"
#include "cuir/LLM/Secrets.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::cuir::llm {

enum class Provider { None, OpenAI, Anthropic, Replay };

/// "openai", "anthropic", "replay" or "none".
llvm::StringRef getProviderName(Provider provider);
/// Parses a provider name (case-insensitive); nothing if unknown.
std::optional<Provider> parseProvider(llvm::StringRef name);

/// Settings given explicitly, e.g. as pass options. Unset fields fall back to
/// the environment, then to the defaults documented in docs/Lift.md.
struct ClientOptions {
  std::string provider;
  std::string endpoint;
  std::string model;
  std::optional<double> temperature;
  std::optional<double> timeoutSeconds;
  std::optional<double> deadlineSeconds;
  std::optional<double> progressIntervalSeconds;
  std::optional<unsigned> maxTokens;
  std::optional<unsigned> maxRetries;
  std::optional<unsigned> backoffMs;
  std::optional<unsigned> maxBackoffMs;
  std::string replayFile;
  std::string recordFile;
  /// Send secrets over plain http to a host that is not loopback. Also set
  /// by CUIR_LLM_ALLOW_INSECURE_HTTP=1.
  bool allowInsecureHttp = false;
};

/// A fully resolved configuration.
struct ClientConfig {
  Provider provider = Provider::None;
  /// Full URL of the chat endpoint, credentials included: only for sending.
  std::string endpoint;
  /// The endpoint for messages: no user info, query values redacted.
  std::string displayEndpoint;
  /// Its host is loopback: never sent through a proxy.
  bool loopbackEndpoint = false;
  std::string model;
  double temperature = 0;
  /// The longest one HTTP request may take.
  double timeoutSeconds = 600;
  /// The longest all requests of one client may take together, from its
  /// first request, retries and the waits between them included.
  double deadlineSeconds = 1800;
  /// How often a request that is still waiting says so.
  double progressIntervalSeconds = 30;
  /// Maximum tokens of an answer; 0 means "do not send" (OpenAI-compatible
  /// servers then use their own limit). Anthropic always needs one.
  unsigned maxTokens = 0;
  RetryPolicy retry;
  /// From the environment only. Never print it.
  std::string apiKey;
  /// The variable the key came from, for messages.
  std::string apiKeyVariable;
  std::string replayFile;
  std::string recordFile;
  /// Knows the API key and the endpoint's credentials.
  Redactor redactor;
};

/// Reads an environment variable; empty values count as unset.
using EnvLookup =
    llvm::function_ref<std::optional<std::string>(llvm::StringRef)>;
std::optional<std::string> getEnvironmentVariable(llvm::StringRef name);

/// Resolves explicit options, the environment and defaults into a
/// configuration. Provider::None (nothing configured) is not an error: the
/// caller decides what that means. Malformed values are errors, and so is a
/// configuration that would send the API key or URL credentials over plain
/// http to a host that is not loopback (unless allowInsecureHttp).
llvm::Expected<ClientConfig> resolveClientConfig(const ClientOptions &options,
                                                 EnvLookup env);

/// Lines that say how to configure an endpoint, for error messages. The
/// pass-option example reads `--<pass>="<leadingOptions>provider=openai ..."`.
std::vector<std::string>
getConfigurationHelp(llvm::StringRef pass = "lift",
                     llvm::StringRef leadingOptions = "");

struct Message {
  enum class Role { User, Assistant } role;
  std::string content;
};

/// A chat request: a system prompt and the conversation so far.
struct Request {
  std::string system;
  std::vector<Message> messages;
};

/// A complete, untruncated answer.
struct Response {
  std::string text;
  /// The provider's reason for stopping ("stop", "end_turn", ...).
  std::string finishReason;
};

/// SHA-256 (hex) of a request's content: system prompt, roles and messages.
/// Recorded exchanges carry it so that a replay can tell whether it is asked
/// the same question.
std::string hashRequest(const Request &request);

/// Receives progress lines (retries, long waits), without a trailing newline.
using ProgressFn = std::function<void(const llvm::Twine &)>;

class Client {
public:
  virtual ~Client();
  /// Sends the request, retrying transient failures, and returns the answer
  /// (with any secret it echoes redacted), or an error that says what went
  /// wrong (never containing a secret).
  virtual llvm::Expected<Response> complete(const Request &request) = 0;
  /// One line naming the provider, model and endpoint (no secret).
  virtual std::string describe() const = 0;
};

/// Creates the client for a configuration; Provider::None is an error.
llvm::Expected<std::unique_ptr<Client>>
createClient(const ClientConfig &config, ProgressFn progress = nullptr);

} // namespace mlir::cuir::llm

#endif // CUIR_LLM_CLIENT_H
