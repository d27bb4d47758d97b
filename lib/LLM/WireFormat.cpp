//===- WireFormat.cpp - JSON bodies of the chat APIs ----------------------===//
//
// LLVM builds without exceptions, so nlohmann::json is used only in ways that
// cannot throw: parse() with allow_exceptions = false, type checks before
// every get, find() instead of at(), and dump() that replaces invalid UTF-8.
//
//===----------------------------------------------------------------------===//

#include "cuir/LLM/WireFormat.h"
#include "cuir/LLM/Secrets.h"

#include "llvm/ADT/Twine.h"

#include <nlohmann/json.hpp>

using namespace mlir::cuir::llm;
using llvm::StringRef;
using json = nlohmann::json;

namespace {

std::string dumpJson(const json &value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false,
                    json::error_handler_t::replace);
}

const json *member(const json &object, const char *key) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::optional<std::string> stringMember(const json &object, const char *key) {
  const json *value = member(object, key);
  if (!value || !value->is_string())
    return std::nullopt;
  return value->get<std::string>();
}

llvm::Error malformed(StringRef api, const llvm::Twine &what, StringRef body) {
  std::string head = takeUtf8Prefix(body, 200).str();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 api + " answer is malformed: " + what +
                                     " (body starts: '" + head + "')");
}

llvm::Expected<Response> decodeOpenAI(const json &root, StringRef body) {
  const json *choices = member(root, "choices");
  if (!choices || !choices->is_array() || choices->empty())
    return malformed("the chat-completions", "no \"choices\"", body);
  const json &choice = (*choices)[0];
  const json *message = member(choice, "message");
  if (!message || !message->is_object())
    return malformed("the chat-completions", "choice 0 has no \"message\"",
                     body);
  Response response;
  response.finishReason = stringMember(choice, "finish_reason").value_or("");
  if (response.finishReason == "length")
    return llvm::createStringError(
        "the answer was cut off at the token limit (finish_reason "
        "\"length\"); raise max-tokens (or CUIR_LLM_MAX_TOKENS)");
  if (response.finishReason == "content_filter")
    return llvm::createStringError(
        "the answer was withheld by the server's content filter "
        "(finish_reason \"content_filter\")");
  if (auto refusal = stringMember(*message, "refusal"))
    if (!refusal->empty())
      return llvm::createStringError("the model refused: " + *refusal);
  const json *content = member(*message, "content");
  if (content && content->is_string()) {
    response.text = content->get<std::string>();
  } else if (content && content->is_array()) {
    // Some servers send content parts: [{"type": "text", "text": ...}].
    for (const json &part : *content)
      if (auto text = stringMember(part, "text"))
        response.text += *text;
  } else if (content && !content->is_null()) {
    return malformed("the chat-completions",
                     "\"message.content\" is neither a string nor a list",
                     body);
  }
  if (StringRef(response.text).trim().empty())
    return llvm::createStringError(
        "the model's answer is empty (finish_reason \"" +
        response.finishReason + "\")");
  return response;
}

llvm::Expected<Response> decodeAnthropic(const json &root, StringRef body) {
  if (stringMember(root, "type").value_or("") == "error")
    return llvm::createStringError("the messages API reported an error: " +
                                   describeErrorBody(body));
  const json *content = member(root, "content");
  if (!content || !content->is_array())
    return malformed("the messages-API", "no \"content\" list", body);
  Response response;
  response.finishReason = stringMember(root, "stop_reason").value_or("");
  if (response.finishReason == "max_tokens")
    return llvm::createStringError(
        "the answer was cut off at the token limit (stop_reason "
        "\"max_tokens\"); raise max-tokens (or CUIR_LLM_MAX_TOKENS)");
  if (response.finishReason == "refusal")
    return llvm::createStringError(
        "the model refused to answer (stop_reason \"refusal\")");
  // Text blocks only; thinking and tool-use blocks are not the answer.
  for (const json &block : *content)
    if (stringMember(block, "type").value_or("") == "text")
      if (auto text = stringMember(block, "text"))
        response.text += *text;
  if (StringRef(response.text).trim().empty())
    return llvm::createStringError(
        "the model's answer is empty (stop_reason \"" + response.finishReason +
        "\")");
  return response;
}

} // namespace

std::string mlir::cuir::llm::encodeRequest(Provider provider,
                                           const ClientConfig &config,
                                           const Request &request) {
  json messages = json::array();
  auto role = [](Message::Role r) {
    return r == Message::Role::User ? "user" : "assistant";
  };
  json body = json::object();
  body["model"] = config.model;
  if (provider == Provider::Anthropic) {
    body["max_tokens"] = config.maxTokens;
    if (!request.system.empty())
      body["system"] = request.system;
  } else {
    if (config.maxTokens)
      body["max_tokens"] = config.maxTokens;
    if (!request.system.empty())
      messages.push_back({{"role", "system"}, {"content", request.system}});
  }
  body["temperature"] = config.temperature;
  for (const Message &message : request.messages)
    messages.push_back(
        {{"role", role(message.role)}, {"content", message.content}});
  body["messages"] = std::move(messages);
  return dumpJson(body);
}

llvm::Expected<Response> mlir::cuir::llm::decodeResponse(Provider provider,
                                                         StringRef body) {
  json root = json::parse(body.begin(), body.end(), /*cb=*/nullptr,
                          /*allow_exceptions=*/false);
  StringRef api = provider == Provider::Anthropic ? "the messages-API"
                                                  : "the chat-completions";
  if (root.is_discarded())
    return malformed(api, "not valid JSON", body);
  if (!root.is_object())
    return malformed(api, "not a JSON object", body);
  if (provider == Provider::Anthropic)
    return decodeAnthropic(root, body);
  return decodeOpenAI(root, body);
}

std::string mlir::cuir::llm::describeErrorBody(StringRef body,
                                               size_t maxLength) {
  json root = json::parse(body.begin(), body.end(), nullptr, false);
  std::string text;
  if (!root.is_discarded()) {
    if (const json *error = member(root, "error")) {
      if (error->is_string())
        text = error->get<std::string>();
      else if (auto message = stringMember(*error, "message"))
        text = *message;
      if (auto type = stringMember(*error, "type"))
        text = *type + ": " + text;
    } else if (auto message = stringMember(root, "message")) {
      text = *message;
    }
  }
  if (text.empty())
    text = body.trim().str();
  if (text.size() > maxLength)
    text = takeUtf8Prefix(text, maxLength).str() + "...";
  return text;
}
