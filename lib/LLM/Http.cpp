//===- Http.cpp - HTTP POST over libcurl ----------------------------------===//

#include "Http.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"

#include <curl/curl.h>

#include <mutex>

using namespace mlir::cuir::llm;
using llvm::StringRef;

namespace {

/// Answers larger than this are not an LLM answer.
constexpr size_t kMaxBodyBytes = 64 << 20;

struct Transfer {
  std::string body;
  std::optional<std::string> retryAfter, retryAfterMs;
  bool tooLarge = false;
};

size_t onData(char *data, size_t size, size_t count, void *user) {
  auto *transfer = static_cast<Transfer *>(user);
  size_t bytes = size * count;
  if (transfer->body.size() + bytes > kMaxBodyBytes) {
    transfer->tooLarge = true;
    return 0; // Aborts the transfer.
  }
  transfer->body.append(data, bytes);
  return bytes;
}

size_t onHeader(char *data, size_t size, size_t count, void *user) {
  auto *transfer = static_cast<Transfer *>(user);
  StringRef line(data, size * count);
  auto [name, value] = line.split(':');
  name = name.trim();
  value = value.trim();
  // A new response (after a redirect or 100-continue) starts afresh.
  if (line.starts_with("HTTP/")) {
    transfer->retryAfter.reset();
    transfer->retryAfterMs.reset();
  } else if (name.equals_insensitive("retry-after")) {
    transfer->retryAfter = value.str();
  } else if (name.equals_insensitive("retry-after-ms")) {
    transfer->retryAfterMs = value.str();
  }
  return size * count;
}

/// The proxy exclusions of the environment plus the loopback addresses: a
/// local model server must not be sent through a proxy.
std::string noProxyList() {
  std::string list;
  for (const char *var : {"no_proxy", "NO_PROXY"})
    if (std::optional<std::string> value = llvm::sys::Process::GetEnv(var))
      if (!value->empty()) {
        list = *value;
        break;
      }
  if (list == "*")
    return list;
  if (!list.empty())
    list += ",";
  return list + "localhost,127.0.0.1,::1";
}

} // namespace

HttpResult mlir::cuir::llm::httpPost(StringRef url,
                                     const std::vector<std::string> &headers,
                                     StringRef body, double timeoutSeconds) {
  static std::once_flag initOnce;
  std::call_once(initOnce, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });

  HttpResult result;
  CURL *curl = curl_easy_init();
  if (!curl) {
    result.error = "cannot initialise libcurl";
    return result;
  }
  curl_slist *headerList = nullptr;
  for (const std::string &header : headers)
    headerList = curl_slist_append(headerList, header.c_str());
  // No "Expect: 100-continue" round trip for large prompts.
  headerList = curl_slist_append(headerList, "Expect:");

  Transfer transfer;
  std::string urlText = url.str();
  std::string noProxy = noProxyList();
  long timeoutMs = static_cast<long>(timeoutSeconds * 1000);
  if (timeoutMs < 1)
    timeoutMs = 1;
  char errorBuffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_URL, urlText.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                   static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headerList);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onData);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeoutMs);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   std::min(timeoutMs, 30000L));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_NOPROXY, noProxy.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errorBuffer);
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, ""); // Any it supports.
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "cuir-opt-lift/1");

  CURLcode code = curl_easy_perform(curl);
  std::string detail = errorBuffer[0] ? errorBuffer : curl_easy_strerror(code);
  switch (code) {
  case CURLE_OK:
    result.kind = HttpResult::Ok;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result.status);
    result.body = std::move(transfer.body);
    result.retryAfter = std::move(transfer.retryAfter);
    result.retryAfterMs = std::move(transfer.retryAfterMs);
    break;
  case CURLE_OPERATION_TIMEDOUT:
    result.kind = HttpResult::Timeout;
    result.error = "no complete answer within " +
                   llvm::formatv("{0}", llvm::format("%g", timeoutSeconds))
                       .str() +
                   " s (timeout; " + detail + ")";
    break;
  case CURLE_COULDNT_CONNECT:
  case CURLE_GOT_NOTHING:
  case CURLE_RECV_ERROR:
  case CURLE_SEND_ERROR:
  case CURLE_PARTIAL_FILE:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
    result.kind = HttpResult::Connection;
    result.error = "connection failed: " + detail;
    break;
  case CURLE_WRITE_ERROR:
    if (transfer.tooLarge) {
      result.error =
          "the answer exceeds " + std::to_string(kMaxBodyBytes >> 20) + " MiB";
      break;
    }
    [[fallthrough]];
  default:
    result.error = detail;
    break;
  }
  curl_slist_free_all(headerList);
  curl_easy_cleanup(curl);
  return result;
}
