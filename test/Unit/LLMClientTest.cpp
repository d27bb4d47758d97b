//===- LLMClientTest.cpp - Pure parts of the LLM client -------------------===//
//
// Retry policy, wire formats and configuration of the lift's LLM client. The
// HTTP path itself is tested against a real local server in test/LLM.
//
//===----------------------------------------------------------------------===//

#include "cuir/LLM/Client.h"
#include "cuir/LLM/Retry.h"
#include "cuir/LLM/WireFormat.h"

#include "llvm/ADT/StringMap.h"
#include "gtest/gtest.h"

#include <ctime>

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
  EXPECT_EQ(redact("key sk-1 and sk-1 again", "sk-1"),
            "key [redacted] and [redacted] again");
  EXPECT_EQ(redact("nothing", ""), "nothing");
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
  EXPECT_EQ(config->maxTokens, 0u);
  EXPECT_EQ(config->retry.maxRetries, 4u);
  EXPECT_EQ(config->retry.baseDelay, milliseconds(1000));
  EXPECT_EQ(config->apiKey, "sk-1");
  EXPECT_EQ(config->apiKeyVariable, "OPENAI_API_KEY");
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
}

} // namespace
