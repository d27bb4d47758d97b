//===- LLMClientTest.cpp - Pure parts of the LLM client -------------------===//
//
// Retry policy, wire formats and configuration of the lift's LLM client. The
// HTTP path itself is tested against a real local server in test/LLM.
//
//===----------------------------------------------------------------------===//

#include "cuir/LLM/Client.h"
#include "cuir/LLM/Retry.h"
#include "cuir/LLM/Secrets.h"
#include "cuir/LLM/WireFormat.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "gtest/gtest.h"

#include <ctime>
#include <limits>

using namespace mlir::cuir::llm;
using std::chrono::milliseconds;

namespace {

//===----------------------------------------------------------------------===//
// Retry policy
//===----------------------------------------------------------------------===//

TEST(RetryPolicyTest, RetryableStatuses) {
  for (long status : {408L, 409L, 429L, 500L, 502L, 503L, 504L, 529L})
    EXPECT_TRUE(isRetryableStatus(status)) << status;
  for (long status : {200L, 400L, 401L, 403L, 404L, 413L, 422L})
    EXPECT_FALSE(isRetryableStatus(status)) << status;
}

TEST(RetryPolicyTest, RetryAfterSeconds) {
  EXPECT_EQ(parseRetryAfter("0"), milliseconds(0));
  EXPECT_EQ(parseRetryAfter(" 2 "), milliseconds(2000));
  EXPECT_EQ(parseRetryAfter("0.25"), milliseconds(250));
  EXPECT_EQ(parseRetryAfter(""), std::nullopt);
  EXPECT_EQ(parseRetryAfter("soon"), std::nullopt);
  EXPECT_EQ(parseRetryAfter("-3"), std::nullopt);
}

TEST(RetryPolicyTest, RetryAfterHttpDate) {
  std::tm tm = {};
  tm.tm_year = 2015 - 1900;
  tm.tm_mon = 9;
  tm.tm_mday = 21;
  tm.tm_hour = 7;
  tm.tm_min = 28;
  auto now = std::chrono::system_clock::from_time_t(timegm(&tm));
  EXPECT_EQ(parseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", now),
            milliseconds(30000));
  // A date in the past means "now".
  EXPECT_EQ(parseRetryAfter("Wed, 21 Oct 2015 07:00:00 GMT", now),
            milliseconds(0));
  EXPECT_EQ(parseRetryAfter("Wed, 21 Oct 2015 07:28:30", now), std::nullopt);
}

TEST(RetryPolicyTest, ExponentialBackoffWithCap) {
  RetryPolicy policy{/*maxRetries=*/5, milliseconds(100), milliseconds(350)};
  EXPECT_EQ(decideRetry(policy, 0, std::nullopt).kind, RetryDecision::GiveUp);
  RetryDecision first = decideRetry(policy, 1, std::nullopt);
  EXPECT_EQ(first.kind, RetryDecision::Wait);
  EXPECT_EQ(first.delay, milliseconds(100));
  EXPECT_FALSE(first.fromServer);
  EXPECT_EQ(decideRetry(policy, 2, std::nullopt).delay, milliseconds(200));
  EXPECT_EQ(decideRetry(policy, 3, std::nullopt).delay, milliseconds(350));
  EXPECT_EQ(decideRetry(policy, 5, std::nullopt).delay, milliseconds(350));
  EXPECT_EQ(decideRetry(policy, 6, std::nullopt).kind, RetryDecision::GiveUp);
}

TEST(RetryPolicyTest, ServerDelayWinsUpToTheCap) {
  RetryPolicy policy{/*maxRetries=*/2, milliseconds(100), milliseconds(5000)};
  RetryDecision wait = decideRetry(policy, 1, milliseconds(3000));
  EXPECT_EQ(wait.kind, RetryDecision::Wait);
  EXPECT_EQ(wait.delay, milliseconds(3000));
  EXPECT_TRUE(wait.fromServer);
  // Retry-After: 0 means at once, not "use the backoff".
  EXPECT_EQ(decideRetry(policy, 1, milliseconds(0)).delay, milliseconds(0));
  RetryDecision tooLong = decideRetry(policy, 1, milliseconds(60000));
  EXPECT_EQ(tooLong.kind, RetryDecision::TooLong);
  EXPECT_EQ(tooLong.delay, milliseconds(60000));
  // No retries left: the server's wish does not matter.
  EXPECT_EQ(decideRetry(policy, 3, milliseconds(10)).kind,
            RetryDecision::GiveUp);
}

//===----------------------------------------------------------------------===//
// Wire formats
//===----------------------------------------------------------------------===//

Request makeRequest() {
  Request request;
  request.system = "be precise";
  request.messages = {{Message::Role::User, "lift \"this\"\n"},
                      {Message::Role::Assistant, "```mlir\n```"},
                      {Message::Role::User, "again"}};
  return request;
}

TEST(WireFormatTest, OpenAIRequest) {
  ClientConfig config;
  config.model = "m1";
  config.temperature = 0;
  std::string body = encodeRequest(Provider::OpenAI, config, makeRequest());
  EXPECT_EQ(body, R"({"messages":[{"content":"be precise","role":"system"},)"
                  R"({"content":"lift \"this\"\n","role":"user"},)"
                  R"({"content":"```mlir\n```","role":"assistant"},)"
                  R"({"content":"again","role":"user"}],"model":"m1",)"
                  R"("temperature":0.0})");
  config.maxTokens = 100;
  body = encodeRequest(Provider::OpenAI, config, makeRequest());
  EXPECT_NE(body.find(R"("max_tokens":100)"), std::string::npos);
}

TEST(WireFormatTest, AnthropicRequest) {
  ClientConfig config;
  config.model = "claude";
  config.maxTokens = 16384;
  config.temperature = 0.5;
  std::string body = encodeRequest(Provider::Anthropic, config, makeRequest());
  EXPECT_EQ(body, R"({"max_tokens":16384,"messages":[)"
                  R"({"content":"lift \"this\"\n","role":"user"},)"
                  R"({"content":"```mlir\n```","role":"assistant"},)"
                  R"({"content":"again","role":"user"}],"model":"claude",)"
                  R"("system":"be precise","temperature":0.5})");
}

TEST(WireFormatTest, InvalidUtf8IsReplacedNotFatal) {
  ClientConfig config;
  config.model = "m";
  Request request;
  request.messages = {{Message::Role::User, "caf\xe9 latin-1"}};
  std::string body = encodeRequest(Provider::OpenAI, config, request);
  EXPECT_NE(body.find("caf\xef\xbf\xbd latin-1"), std::string::npos);
}

TEST(WireFormatTest, OpenAIAnswers) {
  auto ok = decodeResponse(
      Provider::OpenAI,
      R"({"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]})");
  ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
  EXPECT_EQ(ok->text, "hi");
  EXPECT_EQ(ok->finishReason, "stop");

  auto parts = decodeResponse(
      Provider::OpenAI,
      R"({"choices":[{"message":{"content":[)"
      R"({"type":"text","text":"a"},{"type":"text","text":"b"}]}}]})");
  ASSERT_TRUE(bool(parts)) << llvm::toString(parts.takeError());
  EXPECT_EQ(parts->text, "ab");

  auto expectError = [](llvm::StringRef body, llvm::StringRef what) {
    auto response = decodeResponse(Provider::OpenAI, body);
    ASSERT_FALSE(bool(response)) << body.str();
    std::string message = llvm::toString(response.takeError());
    EXPECT_NE(message.find(what.str()), std::string::npos) << message;
  };
  expectError("not json{", "not valid JSON");
  expectError("[1, 2]", "not a JSON object");
  expectError(R"({"choices":[]})", "no \"choices\"");
  expectError(R"({"choices":[{"finish_reason":"stop"}]})", "no \"message\"");
  expectError(
      R"({"choices":[{"message":{"content":"half"},"finish_reason":"length"}]})",
      "cut off at the token limit");
  expectError(
      R"({"choices":[{"message":{"content":"  \n"},"finish_reason":"stop"}]})",
      "answer is empty");
  expectError(R"({"choices":[{"message":{"content":null,"refusal":"no"}}]})",
              "refused");
  expectError(R"({"choices":[{"message":{"content":"x"},)"
              R"("finish_reason":"content_filter"}]})",
              "content filter");
}

TEST(WireFormatTest, AnthropicAnswers) {
  auto ok = decodeResponse(
      Provider::Anthropic,
      R"({"type":"message","content":[{"type":"thinking","thinking":"hmm"},)"
      R"({"type":"text","text":"x"},{"type":"text","text":"y"}],)"
      R"("stop_reason":"end_turn"})");
  ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
  EXPECT_EQ(ok->text, "xy");
  EXPECT_EQ(ok->finishReason, "end_turn");

  auto truncated = decodeResponse(
      Provider::Anthropic,
      R"({"content":[{"type":"text","text":"x"}],"stop_reason":"max_tokens"})");
  ASSERT_FALSE(bool(truncated));
  EXPECT_NE(llvm::toString(truncated.takeError()).find("stop_reason"),
            std::string::npos);

  auto error = decodeResponse(
      Provider::Anthropic,
      R"({"type":"error","error":{"type":"overloaded_error","message":"busy"}})");
  ASSERT_FALSE(bool(error));
  EXPECT_NE(llvm::toString(error.takeError()).find("overloaded_error: busy"),
            std::string::npos);
}

TEST(WireFormatTest, ErrorBodiesAndRedaction) {
  EXPECT_EQ(
      describeErrorBody(R"({"error":{"message":"bad key","type":"auth"}})"),
      "auth: bad key");
  EXPECT_EQ(describeErrorBody(R"({"error":"plain"})"), "plain");
  EXPECT_EQ(describeErrorBody("  <html>oops</html>\n"), "<html>oops</html>");
  EXPECT_EQ(describeErrorBody(std::string(1000, 'x'), 10), "xxxxxxxxxx...");
  // Cut at a character boundary: "é" is two bytes.
  EXPECT_EQ(describeErrorBody("ab\u00e9cd", 3), "ab...");
}

//===----------------------------------------------------------------------===//
// Secrets
//===----------------------------------------------------------------------===//

TEST(RedactorTest, EverySecretEverywhere) {
  Redactor redactor;
  redactor.add("sk-1");
  redactor.add("tok-secret");
  redactor.add("x"); // Too short to search for.
  redactor.add("");
  EXPECT_EQ(redactor.redact("key sk-1 and sk-1, token tok-secret, x"),
            "key [redacted] and [redacted], token [redacted], x");
  EXPECT_EQ(redactor.redact("nothing"), "nothing");
  EXPECT_EQ(Redactor().redact("sk-1"), "sk-1");
}

TEST(RedactorTest, LongestSecretFirst) {
  Redactor redactor;
  redactor.add("abcd");
  redactor.add("abcdefgh");
  EXPECT_EQ(redactor.redact("abcdefgh abcd"), "[redacted] [redacted]");
}

TEST(RedactorTest, RedactsBeforeCutting) {
  Redactor redactor;
  redactor.add("sk-SECRET-1234");
  // A cut at 12 bytes would keep "sk-SECRE" if it came first.
  EXPECT_EQ(redactor.redactAndTruncate("key: sk-SECRET-1234 bad", 12),
            "key: [redact...");
  EXPECT_EQ(redactor.redactAndTruncate("short", 12), "short");
  EXPECT_EQ(takeUtf8Prefix("a\xe2\x82\xac", 3), "a");
  EXPECT_EQ(takeUtf8Prefix("a\xe2\x82\xac", 4), "a\xe2\x82\xac");
}

TEST(EndpointTest, LoopbackHosts) {
  for (const char *host : {"localhost", "LocalHost", "127.0.0.1", "127.255.0.9",
                           "[::1]", "[0:0:0:0:0:0:0:1]", "[::ffff:127.0.0.1]"})
    EXPECT_TRUE(isLoopbackHost(host)) << host;
  for (const char *host :
       {"localhost.evil.com", "evil-localhost", "localhost.", "128.0.0.1",
        "10.0.0.1", "[::2]", "::1", "[::ffff:10.0.0.1]", "127.0.0.1.nip.io",
        "llm.example.invalid", ""})
    EXPECT_FALSE(isLoopbackHost(host)) << host;
}

TEST(EndpointTest, QueryKeptAndHidden) {
  auto endpoint = parseEndpoint(
      "http://me:p%40ss-word@127.0.0.1:8000/v1?token=tok-SECRET&v=2#x",
      "/chat/completions");
  ASSERT_TRUE(bool(endpoint)) << llvm::toString(endpoint.takeError());
  EXPECT_EQ(endpoint->url, "http://me:p%40ss-word@127.0.0.1:8000/v1/chat/"
                           "completions?token=tok-SECRET&v=2");
  EXPECT_EQ(endpoint->display, "http://127.0.0.1:8000/v1/chat/completions?"
                               "token=[redacted]&v=[redacted]");
  EXPECT_EQ(endpoint->host, "127.0.0.1");
  EXPECT_TRUE(endpoint->loopback);
  EXPECT_FALSE(endpoint->https);
  EXPECT_TRUE(endpoint->hasCredentials);
  for (const char *secret : {"me", "p%40ss-word", "p@ss-word", "tok-SECRET"})
    EXPECT_TRUE(llvm::is_contained(endpoint->secrets, secret)) << secret;
}

TEST(EndpointTest, PlainEndpoints) {
  auto endpoint = parseEndpoint("https://api.example.com/", "/messages");
  ASSERT_TRUE(bool(endpoint));
  EXPECT_EQ(endpoint->url, "https://api.example.com/v1/messages");
  EXPECT_EQ(endpoint->display, endpoint->url);
  EXPECT_TRUE(endpoint->https);
  EXPECT_FALSE(endpoint->loopback);
  EXPECT_FALSE(endpoint->hasCredentials);
  EXPECT_TRUE(endpoint->secrets.empty());
  // libcurl normalises numeric hosts; the decision follows the address.
  auto numeric = parseEndpoint("http://2130706433:9/v1", "/chat/completions");
  ASSERT_TRUE(bool(numeric));
  EXPECT_TRUE(numeric->loopback);
}

TEST(EndpointTest, ErrorsDoNotQuoteCredentials) {
  for (const char *url :
       {"ftp://user:pw-SECRET@host/?key=k-SECRET", "localhost:8000/v1",
        "http://user:pw-SECRET@exa mple/?key=k-SECRET"}) {
    auto endpoint = parseEndpoint(url, "/chat/completions");
    ASSERT_FALSE(bool(endpoint)) << url;
    std::string message = llvm::toString(endpoint.takeError());
    EXPECT_EQ(message.find("SECRET"), std::string::npos) << message;
    EXPECT_NE(message.find("the LLM endpoint"), std::string::npos) << message;
  }
}

TEST(WireFormatTest, RequestHash) {
  Request a = makeRequest();
  Request b = makeRequest();
  EXPECT_EQ(hashRequest(a), hashRequest(b));
  EXPECT_EQ(hashRequest(a).size(), 64u);
  b.messages[1].role = Message::Role::User;
  EXPECT_NE(hashRequest(a), hashRequest(b));
  // Moving text between messages changes the hash.
  Request c;
  c.messages = {{Message::Role::User, "ab"}};
  Request d;
  d.messages = {{Message::Role::User, "a"}, {Message::Role::User, "b"}};
  EXPECT_NE(hashRequest(c), hashRequest(d));
}

//===----------------------------------------------------------------------===//
// Configuration
//===----------------------------------------------------------------------===//

class ConfigTest : public ::testing::Test {
protected:
  llvm::Expected<ClientConfig> resolve(const ClientOptions &options) {
    return resolveClientConfig(
        options, [&](llvm::StringRef name) -> std::optional<std::string> {
          auto it = env.find(name);
          if (it == env.end())
            return std::nullopt;
          return it->second;
        });
  }
  std::string error(const ClientOptions &options) {
    auto config = resolve(options);
    if (config)
      return "";
    return llvm::toString(config.takeError());
  }
  llvm::StringMap<std::string> env;
};

TEST_F(ConfigTest, NothingConfigured) {
  env["OPENAI_API_KEY"] = "sk-not-enough";
  auto config = resolve({});
  ASSERT_TRUE(bool(config));
  EXPECT_EQ(config->provider, Provider::None);
}

TEST_F(ConfigTest, EnvironmentAndDefaults) {
  env["CUIR_LLM_PROVIDER"] = "OpenAI";
  env["CUIR_LLM_MODEL"] = "gpt-x";
  env["OPENAI_API_KEY"] = "sk-1";
  auto config = resolve({});
  ASSERT_TRUE(bool(config)) << llvm::toString(config.takeError());
  EXPECT_EQ(config->provider, Provider::OpenAI);
  EXPECT_EQ(config->endpoint, "https://api.openai.com/v1/chat/completions");
  EXPECT_EQ(config->temperature, 0.0);
  EXPECT_EQ(config->timeoutSeconds, 600.0);
  EXPECT_EQ(config->deadlineSeconds, 1800.0);
  EXPECT_EQ(config->progressIntervalSeconds, 30.0);
  EXPECT_EQ(config->maxTokens, 0u);
  EXPECT_EQ(config->retry.maxRetries, 4u);
  EXPECT_EQ(config->retry.baseDelay, milliseconds(1000));
  EXPECT_EQ(config->apiKey, "sk-1");
  EXPECT_EQ(config->apiKeyVariable, "OPENAI_API_KEY");
  EXPECT_EQ(config->redactor.redact("sk-1"), "[redacted]");
}

TEST_F(ConfigTest, OptionsOverrideEnvironment) {
  env["CUIR_LLM_PROVIDER"] = "anthropic";
  env["CUIR_LLM_MODEL"] = "from-env";
  env["CUIR_LLM_TEMPERATURE"] = "0.7";
  env["CUIR_LLM_MAX_RETRIES"] = "9";
  env["ANTHROPIC_API_KEY"] = "a-key";
  env["CUIR_LLM_API_KEY"] = "generic-key";
  ClientOptions options;
  options.model = "from-option";
  options.temperature = 0.25;
  options.backoffMs = 5;
  auto config = resolve(options);
  ASSERT_TRUE(bool(config)) << llvm::toString(config.takeError());
  EXPECT_EQ(config->provider, Provider::Anthropic);
  EXPECT_EQ(config->endpoint, "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(config->model, "from-option");
  EXPECT_EQ(config->temperature, 0.25);
  EXPECT_EQ(config->retry.maxRetries, 9u);
  EXPECT_EQ(config->retry.baseDelay, milliseconds(5));
  EXPECT_EQ(config->maxTokens, 16384u); // Anthropic needs one.
  EXPECT_EQ(config->apiKey, "generic-key");
  EXPECT_EQ(config->apiKeyVariable, "CUIR_LLM_API_KEY");
}

TEST_F(ConfigTest, EndpointCompletion) {
  env["CUIR_LLM_MODEL"] = "m";
  auto endpointFor = [&](const char *provider, const char *url) {
    ClientOptions options;
    options.provider = provider;
    options.endpoint = url;
    auto config = resolve(options);
    return config ? config->endpoint : llvm::toString(config.takeError());
  };
  EXPECT_EQ(endpointFor("openai", "http://localhost:8000/v1"),
            "http://localhost:8000/v1/chat/completions");
  EXPECT_EQ(endpointFor("openai", "http://localhost:8000/"),
            "http://localhost:8000/v1/chat/completions");
  EXPECT_EQ(endpointFor("openai", "http://h/x/chat/completions"),
            "http://h/x/chat/completions");
  EXPECT_EQ(endpointFor("anthropic", "https://proxy/v1"),
            "https://proxy/v1/messages");
  EXPECT_EQ(endpointFor("anthropic", "https://proxy/v1/messages/"),
            "https://proxy/v1/messages");
  // An endpoint alone means the OpenAI wire format.
  ClientOptions options;
  options.endpoint = "http://127.0.0.1:9/v1";
  auto config = resolve(options);
  ASSERT_TRUE(bool(config));
  EXPECT_EQ(config->provider, Provider::OpenAI);
  EXPECT_EQ(config->apiKey, "");
}

TEST_F(ConfigTest, Errors) {
  ClientOptions unknown;
  unknown.provider = "gemini";
  EXPECT_NE(error(unknown).find("unknown LLM provider 'gemini'"),
            std::string::npos);
  ClientOptions noModel;
  noModel.provider = "openai";
  EXPECT_NE(error(noModel).find("set CUIR_LLM_MODEL"), std::string::npos);
  ClientOptions replay;
  replay.provider = "replay";
  EXPECT_NE(error(replay).find("replay-file="), std::string::npos);
  env["CUIR_LLM_MODEL"] = "m";
  ClientOptions badUrl;
  badUrl.provider = "openai";
  badUrl.endpoint = "ftp://x";
  EXPECT_NE(error(badUrl).find("not an http"), std::string::npos);
  env["CUIR_LLM_TIMEOUT"] = "soon";
  ClientOptions good;
  good.provider = "openai";
  EXPECT_NE(error(good).find("CUIR_LLM_TIMEOUT='soon'"), std::string::npos);
  env["CUIR_LLM_TIMEOUT"] = "nan";
  EXPECT_NE(error(good).find("CUIR_LLM_TIMEOUT='nan'"), std::string::npos);
  env.erase("CUIR_LLM_TIMEOUT");
  ClientOptions forever = good;
  forever.deadlineSeconds = std::numeric_limits<double>::infinity();
  EXPECT_NE(error(forever).find("deadline (inf) must be positive"),
            std::string::npos)
      << error(forever);
  ClientOptions tooLong = good;
  tooLong.timeoutSeconds = 1e300;
  EXPECT_NE(error(tooLong).find("at most 604800 s"), std::string::npos);
  env["CUIR_LLM_ALLOW_INSECURE_HTTP"] = "maybe";
  EXPECT_NE(error(good).find("CUIR_LLM_ALLOW_INSECURE_HTTP='maybe'"),
            std::string::npos);
}

TEST_F(ConfigTest, DeadlineAndProgressFromEnvironment) {
  env["CUIR_LLM_PROVIDER"] = "openai";
  env["CUIR_LLM_MODEL"] = "m";
  env["CUIR_LLM_DEADLINE"] = "90";
  env["CUIR_LLM_PROGRESS_INTERVAL"] = "2.5";
  auto config = resolve({});
  ASSERT_TRUE(bool(config)) << llvm::toString(config.takeError());
  EXPECT_EQ(config->deadlineSeconds, 90.0);
  EXPECT_EQ(config->progressIntervalSeconds, 2.5);
  ClientOptions options;
  options.deadlineSeconds = 5;
  config = resolve(options);
  ASSERT_TRUE(bool(config));
  EXPECT_EQ(config->deadlineSeconds, 5.0);
}

TEST_F(ConfigTest, KeyOverPlainHttpOnlyToLoopback) {
  env["CUIR_LLM_MODEL"] = "m";
  auto withEndpoint = [](const char *url) {
    ClientOptions options;
    options.endpoint = url;
    return options;
  };
  // No key, no URL credentials: a plain-http server on the network is fine.
  EXPECT_EQ(error(withEndpoint("http://gpu-box:8000/v1")), "");
  env["OPENAI_API_KEY"] = "sk-test-SECRET";
  for (const char *url : {"http://127.0.0.1:8000/v1", "http://localhost/v1",
                          "http://[::1]/v1", "https://llm.example.invalid/v1"})
    EXPECT_EQ(error(withEndpoint(url)), "") << url;
  std::string refused = error(withEndpoint("http://llm.example.invalid/v1"));
  EXPECT_NE(refused.find("refusing to send the API key (from OPENAI_API_KEY) "
                         "in clear over plain http to 'llm.example.invalid'"),
            std::string::npos)
      << refused;
  EXPECT_NE(refused.find("allow-insecure-http=true"), std::string::npos);
  EXPECT_EQ(refused.find("SECRET"), std::string::npos);
  EXPECT_NE(error(withEndpoint("http://localhost.evil.com/v1")), "");
  // The explicit opt-in, as an option or from the environment.
  ClientOptions allowed = withEndpoint("http://llm.example.invalid/v1");
  allowed.allowInsecureHttp = true;
  EXPECT_EQ(error(allowed), "");
  env["CUIR_LLM_ALLOW_INSECURE_HTTP"] = "1";
  EXPECT_EQ(error(withEndpoint("http://llm.example.invalid/v1")), "");
}

TEST_F(ConfigTest, UrlCredentialsAreSecrets) {
  env["CUIR_LLM_MODEL"] = "m";
  ClientOptions options;
  options.endpoint = "http://user:pw-SECRET@llm.example.invalid/v1";
  std::string refused = error(options);
  EXPECT_NE(refused.find("the credentials in the endpoint URL"),
            std::string::npos)
      << refused;
  EXPECT_EQ(refused.find("SECRET"), std::string::npos) << refused;
  options.endpoint = "http://llm.example.invalid/v1?key=k-SECRET";
  EXPECT_NE(error(options).find("credentials"), std::string::npos);

  options.endpoint =
      "https://user:pw-SECRET@llm.example.invalid/v1?key=k-SECRET";
  auto config = resolve(options);
  ASSERT_TRUE(bool(config)) << llvm::toString(config.takeError());
  EXPECT_EQ(config->displayEndpoint,
            "https://llm.example.invalid/v1/chat/completions?key=[redacted]");
  EXPECT_EQ(config->redactor.redact("user pw-SECRET, k-SECRET"),
            "[redacted] [redacted], [redacted]");
  auto client = createClient(*config);
  ASSERT_TRUE(bool(client));
  EXPECT_EQ((*client)->describe(),
            "openai model 'm' at "
            "https://llm.example.invalid/v1/chat/completions?key=[redacted]");
}

} // namespace
