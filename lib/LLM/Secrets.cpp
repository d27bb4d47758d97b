//===- Secrets.cpp - Keeping the LLM client's secrets ---------------------===//

#include "cuir/LLM/Secrets.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <curl/curl.h>

#include <arpa/inet.h>

#include <memory>
#include <optional>

using namespace mlir::cuir::llm;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Redaction
//===----------------------------------------------------------------------===//

void Redactor::add(StringRef secret) {
  if (secret.size() < kMinRedactedLength || llvm::is_contained(secrets, secret))
    return;
  // Longest first, so that a secret that contains another goes whole.
  auto at = llvm::find_if(
      secrets, [&](const std::string &s) { return s.size() < secret.size(); });
  secrets.insert(at, secret.str());
}

std::string Redactor::redact(StringRef text) const {
  std::string out = text.str();
  for (const std::string &secret : secrets) {
    if (out.find(secret) == std::string::npos)
      continue;
    std::string replaced;
    StringRef rest = out;
    for (size_t at; (at = rest.find(secret)) != StringRef::npos;) {
      replaced += rest.take_front(at);
      replaced += "[redacted]";
      rest = rest.drop_front(at + secret.size());
    }
    replaced += rest;
    out = std::move(replaced);
  }
  return out;
}

std::string Redactor::redactAndTruncate(StringRef text, size_t maxBytes) const {
  std::string clean = redact(text);
  if (clean.size() <= maxBytes)
    return clean;
  return takeUtf8Prefix(clean, maxBytes).str() + "...";
}

StringRef mlir::cuir::llm::takeUtf8Prefix(StringRef text, size_t maxBytes) {
  if (text.size() <= maxBytes)
    return text;
  size_t end = maxBytes;
  // Back up over continuation bytes (10xxxxxx) to a character's first byte.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
    --end;
  return text.take_front(end);
}

//===----------------------------------------------------------------------===//
// Endpoints
//===----------------------------------------------------------------------===//

namespace {

using UrlHandle = std::unique_ptr<CURLU, decltype(&curl_url_cleanup)>;

/// A part of a URL, percent-decoded if asked; nothing if absent.
std::optional<std::string> getPart(CURLU *url, CURLUPart part,
                                   unsigned flags = 0) {
  char *text = nullptr;
  if (curl_url_get(url, part, &text, flags) != CURLUE_OK || !text)
    return std::nullopt;
  std::string value = text;
  curl_free(text);
  return value;
}

std::string percentDecode(StringRef text) {
  int length = 0;
  char *decoded = curl_easy_unescape(nullptr, text.data(),
                                     static_cast<int>(text.size()), &length);
  if (!decoded)
    return text.str();
  std::string value(decoded, length);
  curl_free(decoded);
  return value;
}

/// The URL as a message may quote it when libcurl cannot parse it: without
/// anything that might be user info, a query or a fragment.
std::string scrubUnparsedUrl(StringRef url) {
  url = url.take_until([](char c) { return c == '?' || c == '#'; });
  size_t scheme = url.find("://");
  size_t authority = scheme == StringRef::npos ? 0 : scheme + 3;
  size_t pathStart = url.find('/', authority);
  size_t at = url.take_front(pathStart).rfind('@');
  if (at != StringRef::npos && at >= authority)
    return (url.take_front(authority) + "[redacted]" + url.drop_front(at))
        .str();
  return url.str();
}

/// The path completed to the chat path.
std::string completePath(StringRef path, StringRef chatPath) {
  StringRef trimmed = path.rtrim('/');
  if (trimmed.ends_with(chatPath))
    return trimmed.str();
  if (trimmed.ends_with("/v1"))
    return (trimmed + chatPath).str();
  return (trimmed + "/v1" + chatPath).str();
}

/// Each query value (a parameter without "=" as a whole) is a secret; the
/// display keeps the parameter names only.
std::string redactQuery(StringRef query, std::vector<std::string> &secrets) {
  llvm::SmallVector<StringRef> parameters;
  query.split(parameters, '&', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  std::string shown;
  for (StringRef parameter : parameters) {
    auto [name, value] = parameter.split('=');
    bool named = parameter.contains('=');
    StringRef secret = named ? value : parameter;
    secrets.push_back(secret.str());
    secrets.push_back(percentDecode(secret));
    if (!shown.empty())
      shown += "&";
    shown += named ? (name + "=[redacted]").str() : "[redacted]";
  }
  return shown;
}

} // namespace

llvm::Expected<Endpoint> mlir::cuir::llm::parseEndpoint(StringRef text,
                                                        StringRef chatPath) {
  UrlHandle url(curl_url(), curl_url_cleanup);
  if (!url)
    return llvm::createStringError("cannot initialise libcurl's URL parser");
  std::string input = text.trim().str();
  if (CURLUcode rc = curl_url_set(url.get(), CURLUPART_URL, input.c_str(), 0))
    return llvm::createStringError(
        llvm::Twine("the LLM endpoint '") + scrubUnparsedUrl(input) +
        "' is not a valid URL: " + curl_url_strerror(rc));
  std::string scheme = getPart(url.get(), CURLUPART_SCHEME).value_or("");
  if (scheme != "http" && scheme != "https")
    return llvm::createStringError("the LLM endpoint '" +
                                   scrubUnparsedUrl(input) +
                                   "' is not an http:// or https:// URL");

  Endpoint endpoint;
  endpoint.https = scheme == "https";
  endpoint.host = getPart(url.get(), CURLUPART_HOST).value_or("");
  endpoint.loopback = isLoopbackHost(endpoint.host);
  std::string path = getPart(url.get(), CURLUPART_PATH).value_or("/");
  curl_url_set(url.get(), CURLUPART_PATH, completePath(path, chatPath).c_str(),
               0);
  curl_url_set(url.get(), CURLUPART_FRAGMENT, nullptr, 0);
  endpoint.url = getPart(url.get(), CURLUPART_URL).value_or("");

  // The display: the same URL without user info, query values redacted.
  for (CURLUPart part :
       {CURLUPART_USER, CURLUPART_PASSWORD, CURLUPART_OPTIONS}) {
    std::optional<std::string> raw = getPart(url.get(), part);
    if (!raw)
      continue;
    endpoint.hasCredentials = true;
    endpoint.secrets.push_back(*raw);
    endpoint.secrets.push_back(percentDecode(*raw));
    curl_url_set(url.get(), part, nullptr, 0);
  }
  if (std::optional<std::string> query = getPart(url.get(), CURLUPART_QUERY)) {
    endpoint.hasCredentials = true;
    std::string shown = redactQuery(*query, endpoint.secrets);
    curl_url_set(url.get(), CURLUPART_QUERY,
                 shown.empty() ? nullptr : shown.c_str(), 0);
  }
  endpoint.display = getPart(url.get(), CURLUPART_URL).value_or("");
  return endpoint;
}

bool mlir::cuir::llm::isLoopbackHost(StringRef host) {
  if (host.equals_insensitive("localhost"))
    return true;
  std::string text = host.str();
  in_addr v4;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  if (host.size() < 2 || !host.starts_with("[") || !host.ends_with("]"))
    return false;
  text = host.drop_front().drop_back().str();
  in6_addr v6;
  if (inet_pton(AF_INET6, text.c_str(), &v6) != 1)
    return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6))
    return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}
