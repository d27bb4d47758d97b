//===- Http.cpp - HTTP POST over libcurl ----------------------------------===//

#include "Http.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
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

/// Calls the request's onWaiting every waitingInterval seconds.
struct WaitReporter {
  const HttpRequest &request;
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
  double nextReport = request.waitingInterval;
};

int onTransferInfo(void *user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto *reporter = static_cast<WaitReporter *>(user);
  std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - reporter->start;
  if (elapsed.count() >= reporter->nextReport) {
    reporter->request.onWaiting(elapsed.count());
    while (reporter->nextReport <= elapsed.count())
      reporter->nextReport += reporter->request.waitingInterval;
  }
  return 0; // Go on: the timeout is curl's.
}

} // namespace

HttpResult mlir::cuir::llm::httpPost(const HttpRequest &request) {
  static std::once_flag initOnce;
  std::call_once(initOnce, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });

  HttpResult result;
  CURL *curl = curl_easy_init();
  if (!curl) {
    result.error = "cannot initialise libcurl";
    return result;
  }
  curl_slist *headerList = nullptr;
  for (const std::string &header : request.headers)
    headerList = curl_slist_append(headerList, header.c_str());
  // No "Expect: 100-continue" round trip for large prompts.
  headerList = curl_slist_append(headerList, "Expect:");

  Transfer transfer;
  std::string urlText = request.url.str();
  // The configuration bounds the timeout; this keeps the cast defined
  // whatever the caller passes (NaN included).
  double timeoutSeconds = request.timeoutSeconds;
  if (!(timeoutSeconds >= 0.001))
    timeoutSeconds = 0.001;
  timeoutSeconds = std::min(timeoutSeconds, 1e7);
  long timeoutMs = static_cast<long>(timeoutSeconds * 1000);
  char errorBuffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_URL, urlText.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                   static_cast<curl_off_t>(request.body.size()));
  // Never another protocol, not even through a redirect (none is followed).
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headerList);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onData);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeoutMs);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   std::min(timeoutMs, 30000L));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  // A loopback endpoint never goes through a proxy (which would see the key
  // in clear over plain http); otherwise libcurl follows the environment's
  // http_proxy, https_proxy and no_proxy.
  if (request.direct)
    curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  WaitReporter reporter{request};
  if (request.onWaiting && request.waitingInterval > 0) {
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, onTransferInfo);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &reporter);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  }
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
    result.error =
        "no complete answer within " +
        llvm::formatv("{0}", llvm::format("%g", timeoutSeconds)).str() +
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
