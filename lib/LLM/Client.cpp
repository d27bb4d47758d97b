//===- Client.cpp - Chat-completion client for the lift -------------------===//

#include "cuir/LLM/Client.h"
#include "cuir/LLM/WireFormat.h"

#include "Http.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/LineIterator.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <thread>

using namespace mlir::cuir::llm;
using llvm::StringRef;
using json = nlohmann::json;

Client::~Client() = default;

//===----------------------------------------------------------------------===//
// Configuration
//===----------------------------------------------------------------------===//

StringRef mlir::cuir::llm::getProviderName(Provider provider) {
  switch (provider) {
  case Provider::None:
    return "none";
  case Provider::OpenAI:
    return "openai";
  case Provider::Anthropic:
    return "anthropic";
  case Provider::Replay:
    return "replay";
  }
  llvm_unreachable("unknown provider");
}

std::optional<Provider> mlir::cuir::llm::parseProvider(StringRef name) {
  std::string lower = name.trim().lower();
  if (lower == "openai")
    return Provider::OpenAI;
  if (lower == "anthropic")
    return Provider::Anthropic;
  if (lower == "replay")
    return Provider::Replay;
  if (lower == "none")
    return Provider::None;
  return std::nullopt;
}

std::optional<std::string>
mlir::cuir::llm::getEnvironmentVariable(StringRef name) {
  std::optional<std::string> value = llvm::sys::Process::GetEnv(name);
  if (!value || value->empty())
    return std::nullopt;
  return value;
}

std::vector<std::string>
mlir::cuir::llm::getConfigurationHelp(StringRef pass,
                                      StringRef leadingOptions) {
  std::string option = ("--" + pass + "=\"" + leadingOptions).str();
  return {
      "to use an OpenAI-compatible server (OpenAI, vLLM, llama.cpp's "
      "server): CUIR_LLM_PROVIDER=openai CUIR_LLM_MODEL=<model> "
      "[CUIR_LLM_ENDPOINT=<url>, default "
      "https://api.openai.com/v1/chat/completions] and the key in "
      "OPENAI_API_KEY (or CUIR_LLM_API_KEY; local servers need none)",
      "to use Anthropic: CUIR_LLM_PROVIDER=anthropic CUIR_LLM_MODEL=<model> "
      "and the key in ANTHROPIC_API_KEY (or CUIR_LLM_API_KEY)",
      "the same settings as pass options: " + option +
          "provider=openai endpoint=http://localhost:8000/v1 "
          "model=<model>\" (the API key only from the environment)",
      "to replay a recorded session: " + option +
          "provider=replay replay-file=<file.jsonl>\" (record one with "
          "record-file=<file>)",
  };
}

namespace {

template <typename T>
llvm::Error parseNumber(EnvLookup env, StringRef var, std::optional<T> option,
                        T &out) {
  if (option) {
    out = *option;
    return llvm::Error::success();
  }
  std::optional<std::string> text = env(var);
  if (!text)
    return llvm::Error::success();
  if constexpr (std::is_floating_point_v<T>) {
    double value;
    if (StringRef(*text).trim().getAsDouble(value) || !std::isfinite(value) ||
        value < 0)
      return llvm::createStringError(var + "='" + *text +
                                     "' is not a non-negative number");
    out = value;
  } else {
    unsigned value;
    if (StringRef(*text).trim().getAsInteger(10, value))
      return llvm::createStringError(var + "='" + *text +
                                     "' is not a non-negative integer");
    out = value;
  }
  return llvm::Error::success();
}

/// A yes/no setting of the environment; nothing if unset.
llvm::Expected<bool> parseFlag(EnvLookup env, StringRef var) {
  std::optional<std::string> text = env(var);
  if (!text)
    return false;
  std::string value = StringRef(*text).trim().lower();
  if (value == "1" || value == "true" || value == "yes")
    return true;
  if (value == "0" || value == "false" || value == "no")
    return false;
  return llvm::createStringError(var + "='" + *text +
                                 "' is not 1, true, yes, 0, false or no");
}

/// Seconds settings must be finite (an option may be "inf" or "nan") and
/// at most a week, so that deadlines and curl's milliseconds stay defined.
llvm::Error checkSeconds(StringRef what, double seconds) {
  constexpr double kWeek = 7 * 24 * 3600;
  if (std::isfinite(seconds) && seconds > 0 && seconds <= kWeek)
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::formatv("the LLM {0} ({1}) must be positive and at most {2} s "
                    "(a week)",
                    what, llvm::format("%g", seconds),
                    llvm::format("%g", kWeek))
          .str());
}

/// Refuses to send secrets in clear: over plain http, the API key and the
/// URL's credentials go only to a loopback address, unless allowed.
llvm::Error checkTransport(const ClientConfig &config, const Endpoint &endpoint,
                           bool allowInsecureHttp) {
  if (endpoint.https || endpoint.loopback || allowInsecureHttp)
    return llvm::Error::success();
  std::string what;
  if (!config.apiKey.empty())
    what = "the API key (from " + config.apiKeyVariable + ")";
  if (endpoint.hasCredentials)
    what += (what.empty() ? "" : " and ") +
            std::string("the credentials in the endpoint URL (user info, "
                        "query)");
  if (what.empty())
    return llvm::Error::success();
  return llvm::createStringError(
      "refusing to send " + what + " in clear over plain http to '" +
      endpoint.host + "', which is not a loopback address (" +
      endpoint.display +
      "): use an https:// endpoint, or allow-insecure-http=true (or "
      "CUIR_LLM_ALLOW_INSECURE_HTTP=1) if every network on the way is "
      "trusted");
}

} // namespace

llvm::Expected<ClientConfig>
mlir::cuir::llm::resolveClientConfig(const ClientOptions &options,
                                     EnvLookup env) {
  auto pick = [&](const std::string &option,
                  StringRef var) -> std::optional<std::string> {
    if (!option.empty())
      return option;
    return env(var);
  };

  ClientConfig config;
  std::optional<std::string> providerName =
      pick(options.provider, "CUIR_LLM_PROVIDER");
  std::optional<std::string> endpoint =
      pick(options.endpoint, "CUIR_LLM_ENDPOINT");
  if (providerName) {
    std::optional<Provider> provider = parseProvider(*providerName);
    if (!provider)
      return llvm::createStringError(
          "unknown LLM provider '" + *providerName + "' (from " +
          (options.provider.empty() ? "CUIR_LLM_PROVIDER" : "provider=") +
          "); expected openai, anthropic, replay or none");
    config.provider = *provider;
  } else if (endpoint) {
    // An endpoint without a provider: the OpenAI wire format, which local
    // servers speak.
    config.provider = Provider::OpenAI;
  }

  config.model = pick(options.model, "CUIR_LLM_MODEL").value_or("");
  config.replayFile =
      pick(options.replayFile, "CUIR_LLM_REPLAY_FILE").value_or("");
  config.recordFile =
      pick(options.recordFile, "CUIR_LLM_RECORD_FILE").value_or("");

  unsigned backoffMs = 1000, maxBackoffMs = 60000;
  if (llvm::Error err = parseNumber(env, "CUIR_LLM_TEMPERATURE",
                                    options.temperature, config.temperature))
    return std::move(err);
  if (llvm::Error err =
          parseNumber(env, "CUIR_LLM_TIMEOUT", options.timeoutSeconds,
                      config.timeoutSeconds))
    return std::move(err);
  if (llvm::Error err =
          parseNumber(env, "CUIR_LLM_DEADLINE", options.deadlineSeconds,
                      config.deadlineSeconds))
    return std::move(err);
  if (llvm::Error err = parseNumber(env, "CUIR_LLM_PROGRESS_INTERVAL",
                                    options.progressIntervalSeconds,
                                    config.progressIntervalSeconds))
    return std::move(err);
  if (llvm::Error err = parseNumber(env, "CUIR_LLM_MAX_TOKENS",
                                    options.maxTokens, config.maxTokens))
    return std::move(err);
  if (llvm::Error err =
          parseNumber(env, "CUIR_LLM_MAX_RETRIES", options.maxRetries,
                      config.retry.maxRetries))
    return std::move(err);
  if (llvm::Error err =
          parseNumber(env, "CUIR_LLM_BACKOFF_MS", options.backoffMs, backoffMs))
    return std::move(err);
  if (llvm::Error err = parseNumber(env, "CUIR_LLM_MAX_BACKOFF_MS",
                                    options.maxBackoffMs, maxBackoffMs))
    return std::move(err);
  for (auto [what, seconds] :
       {std::pair<StringRef, double>{"timeout", config.timeoutSeconds},
        {"deadline", config.deadlineSeconds},
        {"progress interval", config.progressIntervalSeconds}})
    if (llvm::Error err = checkSeconds(what, seconds))
      return std::move(err);
  if (!std::isfinite(config.temperature) || config.temperature < 0)
    return llvm::createStringError(
        llvm::formatv("the LLM temperature ({0}) must be a non-negative "
                      "number",
                      llvm::format("%g", config.temperature))
            .str());
  llvm::Expected<bool> insecureFromEnv =
      parseFlag(env, "CUIR_LLM_ALLOW_INSECURE_HTTP");
  if (!insecureFromEnv)
    return insecureFromEnv.takeError();
  bool allowInsecureHttp = options.allowInsecureHttp || *insecureFromEnv;
  config.retry.baseDelay = std::chrono::milliseconds(backoffMs);
  config.retry.maxDelay =
      std::chrono::milliseconds(std::max(maxBackoffMs, backoffMs));

  switch (config.provider) {
  case Provider::None:
    return config;
  case Provider::Replay:
    if (config.replayFile.empty())
      return llvm::createStringError(
          "provider replay needs a file of recorded exchanges: "
          "replay-file=<file.jsonl> (or CUIR_LLM_REPLAY_FILE)");
    return config;
  case Provider::OpenAI:
  case Provider::Anthropic:
    break;
  }

  bool anthropic = config.provider == Provider::Anthropic;
  llvm::Expected<Endpoint> parsed =
      parseEndpoint(endpoint.value_or(anthropic ? "https://api.anthropic.com"
                                                : "https://api.openai.com"),
                    anthropic ? "/messages" : "/chat/completions");
  if (!parsed)
    return parsed.takeError();
  config.endpoint = parsed->url;
  config.displayEndpoint = parsed->display;
  config.loopbackEndpoint = parsed->loopback;
  for (const std::string &secret : parsed->secrets)
    config.redactor.add(secret);
  if (config.model.empty())
    return llvm::createStringError(
        "no model configured for provider " + getProviderName(config.provider) +
        ": set CUIR_LLM_MODEL or the model=<name> option");
  if (anthropic && config.maxTokens == 0)
    config.maxTokens = 16384;
  StringRef keyVar = anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  for (StringRef var : {StringRef("CUIR_LLM_API_KEY"), keyVar})
    if (std::optional<std::string> key = env(var)) {
      config.apiKey = *key;
      config.apiKeyVariable = var.str();
      break;
    }
  config.redactor.add(config.apiKey);
  if (llvm::Error err = checkTransport(config, *parsed, allowInsecureHttp))
    return std::move(err);
  return config;
}

std::string mlir::cuir::llm::hashRequest(const Request &request) {
  llvm::SHA256 hash;
  auto add = [&](StringRef tag, StringRef text) {
    hash.update(tag);
    hash.update(std::to_string(text.size()));
    hash.update(":");
    hash.update(text);
  };
  add("system", request.system);
  for (const Message &message : request.messages)
    add(message.role == Message::Role::User ? "user" : "assistant",
        message.content);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

//===----------------------------------------------------------------------===//
// HTTP providers
//===----------------------------------------------------------------------===//

namespace {

using Clock = std::chrono::steady_clock;

std::string formatSeconds(double seconds) {
  return llvm::formatv("{0}", llvm::format("%g", seconds)).str();
}

class HttpClient : public Client {
public:
  HttpClient(ClientConfig config, ProgressFn progress)
      : config(std::move(config)), progress(std::move(progress)) {}

  std::string describe() const override {
    return (getProviderName(config.provider) + " model '" + config.model +
            "' at " + config.displayEndpoint)
        .str();
  }

  llvm::Expected<Response> complete(const Request &request) override {
    if (!deadline)
      deadline = Clock::now() +
                 std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(config.deadlineSeconds));
    std::string body = encodeRequest(config.provider, config, request);
    std::vector<std::string> headers = getHeaders();
    unsigned attempts = config.retry.maxRetries + 1;
    for (unsigned attempt = 1;; ++attempt) {
      double remaining = secondsLeft();
      if (remaining <= 0)
        return fail("the " + describeDeadline() + " has passed");
      // The last request before the deadline gets only what is left.
      bool clipped = remaining < config.timeoutSeconds;
      HttpResult result =
          send(body, headers, std::min(config.timeoutSeconds, remaining));
      std::string problem;
      std::optional<std::chrono::milliseconds> retryAfter;
      if (result.kind == HttpResult::Ok && result.status >= 200 &&
          result.status < 300) {
        llvm::Expected<Response> response =
            decodeResponse(config.provider, result.body);
        if (!response)
          return fail(llvm::toString(response.takeError()));
        // Again after decoding: JSON escapes may have hidden a secret.
        response->text = config.redactor.redact(response->text);
        return response;
      }
      if (result.kind == HttpResult::Ok) {
        problem = "HTTP " + std::to_string(result.status) + ": " +
                  describeErrorBody(result.body);
        if (!isRetryableStatus(result.status))
          return fail(problem + hintFor(result.status));
        if (result.retryAfterMs)
          if (unsigned ms;
              !StringRef(*result.retryAfterMs).getAsInteger(10, ms))
            retryAfter = std::chrono::milliseconds(ms);
        if (!retryAfter && result.retryAfter)
          retryAfter = parseRetryAfter(*result.retryAfter);
      } else if (result.kind == HttpResult::Timeout && clipped) {
        return fail("no complete answer before the " + describeDeadline() +
                    " passed");
      } else if (result.kind == HttpResult::Fatal) {
        return fail(result.error);
      } else {
        problem = result.error;
      }

      RetryDecision decision = decideRetry(config.retry, attempt, retryAfter);
      if (decision.kind == RetryDecision::GiveUp)
        return fail(llvm::formatv("gave up after {0} attempt{1}; last: {2}",
                                  attempt, attempt == 1 ? "" : "s", problem)
                        .str());
      if (decision.kind == RetryDecision::TooLong)
        return fail(llvm::formatv("{0}; the server asks to retry after {1} "
                                  "ms, more than max-backoff-ms ({2} ms)",
                                  problem, decision.delay.count(),
                                  config.retry.maxDelay.count())
                        .str());
      if (decision.delay.count() >= secondsLeft() * 1000)
        return fail(llvm::formatv("{0}; not retried: waiting {1} ms would "
                                  "pass the {2}",
                                  problem, decision.delay.count(),
                                  describeDeadline())
                        .str());
      report(llvm::formatv("{0}; retrying in {1} ms{2} (attempt {3} of {4})",
                           problem, decision.delay.count(),
                           decision.fromServer ? " (Retry-After)" : "",
                           attempt + 1, attempts)
                 .str());
      std::this_thread::sleep_for(decision.delay);
    }
  }

private:
  std::vector<std::string> getHeaders() const {
    std::vector<std::string> headers = {"Content-Type: application/json",
                                        "Accept: application/json"};
    if (config.provider == Provider::Anthropic) {
      headers.push_back("anthropic-version: 2023-06-01");
      if (!config.apiKey.empty())
        headers.push_back("x-api-key: " + config.apiKey);
    } else if (!config.apiKey.empty()) {
      headers.push_back("Authorization: Bearer " + config.apiKey);
    }
    return headers;
  }

  /// One POST, whose answer is redacted before anything reads it.
  HttpResult send(StringRef body, llvm::ArrayRef<std::string> headers,
                  double timeoutSeconds) {
    HttpRequest http;
    http.url = config.endpoint;
    http.headers = headers;
    http.body = body;
    http.timeoutSeconds = timeoutSeconds;
    http.direct = config.loopbackEndpoint;
    auto onWaiting = [&](double elapsed) {
      report(llvm::formatv("still waiting for the answer: {0} s of at most "
                           "{1} s",
                           static_cast<long long>(elapsed),
                           formatSeconds(timeoutSeconds))
                 .str());
    };
    if (progress)
      http.onWaiting = onWaiting;
    http.waitingInterval = config.progressIntervalSeconds;
    HttpResult result = httpPost(http);
    result.body = config.redactor.redact(result.body);
    result.error = config.redactor.redact(result.error);
    return result;
  }

  double secondsLeft() const {
    return std::chrono::duration<double>(*deadline - Clock::now()).count();
  }

  std::string describeDeadline() const {
    return "deadline of " + formatSeconds(config.deadlineSeconds) +
           " s for the LLM's answers (deadline=, CUIR_LLM_DEADLINE)";
  }

  void report(const std::string &line) const {
    if (progress)
      progress(config.redactor.redact(line));
  }

  llvm::Error fail(const std::string &what) const {
    return llvm::createStringError(
        config.redactor.redact(config.displayEndpoint + ": " + what));
  }

  std::string hintFor(long status) const {
    if (status == 401 || status == 403) {
      if (config.apiKey.empty())
        return config.provider == Provider::Anthropic
                   ? " (no API key is set: ANTHROPIC_API_KEY or "
                     "CUIR_LLM_API_KEY)"
                   : " (no API key is set: OPENAI_API_KEY or "
                     "CUIR_LLM_API_KEY)";
      return " (check the API key in " + config.apiKeyVariable + ")";
    }
    if (status == 404)
      return " (check the endpoint URL and the model name)";
    return "";
  }

  ClientConfig config;
  ProgressFn progress;
  /// Set by the first request.
  std::optional<Clock::time_point> deadline;
};

//===----------------------------------------------------------------------===//
// Replay and recording
//===----------------------------------------------------------------------===//

struct Exchange {
  std::string promptHash; ///< Empty: answer whatever is asked.
  Response response;
  unsigned line;
};

class ReplayClient : public Client {
public:
  static llvm::Expected<std::unique_ptr<Client>> create(StringRef path) {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    if (!buffer)
      return llvm::createStringError("cannot read the replay file '" + path +
                                     "': " + buffer.getError().message());
    auto client = std::make_unique<ReplayClient>();
    client->path = path.str();
    for (llvm::line_iterator it(**buffer, /*SkipBlanks=*/true); !it.is_at_eof();
         ++it) {
      StringRef line = *it;
      int64_t lineNo = it.line_number();
      if (line.trim().empty())
        continue;
      json entry = json::parse(line.begin(), line.end(), nullptr, false);
      auto bad = [&](StringRef what) {
        return llvm::createStringError(path + ":" + llvm::Twine(lineNo) + ": " +
                                       what);
      };
      if (entry.is_discarded() || !entry.is_object())
        return bad("not a JSON object");
      auto response = entry.find("response");
      if (response == entry.end() || !response->is_object())
        return bad("no \"response\" object");
      auto answer = response->find("text");
      if (answer == response->end() || !answer->is_string())
        return bad("\"response\" has no string \"text\"");
      Exchange exchange;
      exchange.line = lineNo;
      exchange.response.text = answer->get<std::string>();
      auto finish = response->find("finish_reason");
      if (finish != response->end() && finish->is_string())
        exchange.response.finishReason = finish->get<std::string>();
      auto request = entry.find("request");
      if (request != entry.end() && request->is_object()) {
        auto hash = request->find("prompt_sha256");
        if (hash != request->end() && hash->is_string())
          exchange.promptHash = hash->get<std::string>();
      }
      client->exchanges.push_back(std::move(exchange));
    }
    return std::unique_ptr<Client>(std::move(client));
  }

  std::string describe() const override {
    return "replay of " + path + " (" + std::to_string(exchanges.size()) +
           " exchanges)";
  }

  llvm::Expected<Response> complete(const Request &request) override {
    if (next >= exchanges.size())
      return llvm::createStringError(
          path + ": the lift asked for exchange " + llvm::Twine(next + 1) +
          ", but the file records only " + llvm::Twine(exchanges.size()));
    const Exchange &exchange = exchanges[next++];
    if (!exchange.promptHash.empty() &&
        exchange.promptHash != hashRequest(request))
      return llvm::createStringError(
          path + ":" + llvm::Twine(exchange.line) +
          ": this exchange was recorded for a different request (its "
          "prompt_sha256 differs): the prompt, the source or the feedback "
          "changed since it was recorded; record it again, or remove "
          "\"prompt_sha256\" to replay it regardless");
    StringRef finish = exchange.response.finishReason;
    if (finish == "length" || finish == "max_tokens")
      return llvm::createStringError(
          path + ":" + llvm::Twine(exchange.line) +
          ": the recorded answer was cut off at the token limit "
          "(finish_reason \"" +
          finish + "\")");
    if (StringRef(exchange.response.text).trim().empty())
      return llvm::createStringError(path + ":" + llvm::Twine(exchange.line) +
                                     ": the recorded answer is empty");
    return exchange.response;
  }

private:
  std::string path;
  std::vector<Exchange> exchanges;
  size_t next = 0;
};

/// Appends every answered exchange to a JSON-lines file that the replay
/// provider reads. Headers (and so the API key) are never part of it.
class RecordingClient : public Client {
public:
  RecordingClient(std::unique_ptr<Client> inner, ClientConfig config)
      : inner(std::move(inner)), config(std::move(config)) {}

  std::string describe() const override {
    return inner->describe() + ", recording to " + config.recordFile;
  }

  llvm::Expected<Response> complete(const Request &request) override {
    llvm::Expected<Response> response = inner->complete(request);
    if (!response)
      return response.takeError();
    json entry;
    entry["request"] = {
        {"provider", getProviderName(config.provider).str()},
        {"model", config.model},
        {"messages", request.messages.size()},
        {"prompt_sha256", hashRequest(request)},
        {"last_message_head", request.messages.empty()
                                  ? std::string()
                                  : config.redactor.redactAndTruncate(
                                        request.messages.back().content, 300)}};
    entry["response"] = {{"text", response->text},
                         {"finish_reason", response->finishReason}};
    std::error_code ec;
    llvm::raw_fd_ostream os(config.recordFile, ec, llvm::sys::fs::OF_Append);
    if (ec)
      return llvm::createStringError("cannot append to the record file '" +
                                     config.recordFile + "': " + ec.message());
    os << config.redactor.redact(
              entry.dump(-1, ' ', false, json::error_handler_t::replace))
       << "\n";
    os.flush();
    if (os.has_error())
      return llvm::createStringError("cannot write the record file '" +
                                     config.recordFile +
                                     "': " + os.error().message());
    return response;
  }

private:
  std::unique_ptr<Client> inner;
  ClientConfig config;
};

} // namespace

llvm::Expected<std::unique_ptr<Client>>
mlir::cuir::llm::createClient(const ClientConfig &config, ProgressFn progress) {
  std::unique_ptr<Client> client;
  switch (config.provider) {
  case Provider::None:
    return llvm::createStringError("no LLM provider is configured");
  case Provider::Replay: {
    auto replay = ReplayClient::create(config.replayFile);
    if (!replay)
      return replay.takeError();
    client = std::move(*replay);
    break;
  }
  case Provider::OpenAI:
  case Provider::Anthropic:
    client = std::make_unique<HttpClient>(config, std::move(progress));
    break;
  }
  if (!config.recordFile.empty())
    client = std::make_unique<RecordingClient>(std::move(client), config);
  return client;
}
