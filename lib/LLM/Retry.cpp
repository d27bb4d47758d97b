//===- Retry.cpp - When and how long to wait before retrying --------------===//

#include "cuir/LLM/Retry.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <ctime>

using namespace mlir::cuir::llm;
using llvm::StringRef;
using std::chrono::milliseconds;

bool mlir::cuir::llm::isRetryableStatus(long status) {
  return status == 408 || status == 409 || status == 429 ||
         (status >= 500 && status <= 599);
}

std::optional<milliseconds>
mlir::cuir::llm::parseRetryAfter(StringRef value,
                                 std::chrono::system_clock::time_point now) {
  value = value.trim();
  if (value.empty())
    return std::nullopt;
  // delay-seconds; fractions are not in RFC 9110 but some servers send them.
  double seconds;
  if (!value.getAsDouble(seconds)) {
    if (!std::isfinite(seconds) || seconds < 0)
      return std::nullopt;
    return milliseconds(static_cast<long long>(std::ceil(seconds * 1000)));
  }
  // HTTP-date (IMF-fixdate).
  std::tm tm = {};
  std::string text = value.str();
  const char *end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end || *end != '\0')
    return std::nullopt;
  std::time_t at = timegm(&tm);
  if (at == static_cast<std::time_t>(-1))
    return std::nullopt;
  auto when = std::chrono::system_clock::from_time_t(at);
  if (when <= now)
    return milliseconds(0);
  return std::chrono::duration_cast<milliseconds>(when - now);
}

RetryDecision
mlir::cuir::llm::decideRetry(const RetryPolicy &policy, unsigned retry,
                             std::optional<milliseconds> retryAfter) {
  if (retry == 0 || retry > policy.maxRetries)
    return {RetryDecision::GiveUp};
  if (retryAfter) {
    if (*retryAfter > policy.maxDelay)
      return {RetryDecision::TooLong, *retryAfter, true};
    return {RetryDecision::Wait, *retryAfter, true};
  }
  // base * 2^(retry-1), saturating at maxDelay.
  milliseconds delay = policy.baseDelay;
  for (unsigned i = 1; i < retry && delay < policy.maxDelay; ++i)
    delay *= 2;
  return {RetryDecision::Wait, std::min(delay, policy.maxDelay), false};
}
