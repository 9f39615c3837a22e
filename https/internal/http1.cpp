#include "https/internal/http1.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <cstring>

namespace gpuguard::webhook::http1 {

namespace {

// RFC 9110 tchar.
constexpr bool isTokenChar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
    case '-': case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

constexpr unsigned char lower(unsigned char c) { return (c >= 'A' && c <= 'Z') ? static_cast<unsigned char>(c | 0x20) : c; }

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(static_cast<unsigned char>(a[i])) != lower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::string_view trimOws(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

Head fail(int status, std::string_view why) {
  Head h;
  h.status = status;
  h.error = why;
  h.keepAlive = false;
  return h;
}

// Calls f(token) for each comma-separated token of a header value.
template <typename F>
void forEachToken(std::string_view value, F f) {
  while (!value.empty()) {
    std::size_t comma = value.find(',');
    f(trimOws(value.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

// The origin-form part of a request target: the target itself ("/path?q",
// or "*"), or for the absolute form a server MUST accept (RFC 9112 §3.2.2:
// "http://host/path?q") what follows the authority ("/" when nothing does).
std::optional<std::string_view> pathOfTarget(std::string_view target) {
  if (!target.empty() && (target.front() == '/' || target == "*")) return target;
  for (std::string_view scheme : {"http://", "https://"}) {
    if (target.size() <= scheme.size() || !equalsIgnoreCase(target.substr(0, scheme.size()), scheme)) continue;
    const std::string_view rest = target.substr(scheme.size());
    const std::size_t pathStart = rest.find_first_of("/?");
    if (pathStart == 0) return std::nullopt;  // no authority
    if (pathStart == std::string_view::npos) return std::string_view("/");
    return rest[pathStart] == '/' ? rest.substr(pathStart) : std::string_view("/");
  }
  return std::nullopt;
}

void assignLower(std::string& dst, std::string_view src) {
  dst.resize(src.size());
  for (std::size_t i = 0; i < src.size(); ++i) dst[i] = static_cast<char>(lower(static_cast<unsigned char>(src[i])));
}

}  // namespace

std::size_t findHeadEnd(std::string_view buf, std::size_t from, std::size_t& resume) {
  std::size_t pos = from;
  while (pos < buf.size()) {
    const void* hit = std::memchr(buf.data() + pos, '\n', buf.size() - pos);
    if (!hit) break;
    std::size_t i = static_cast<std::size_t>(static_cast<const char*>(hit) - buf.data());
    if (i + 1 >= buf.size()) {
      resume = i;
      return kNotFound;
    }
    if (buf[i + 1] == '\n') return i + 2;
    if (buf[i + 1] == '\r') {
      if (i + 2 >= buf.size()) {
        resume = i;
        return kNotFound;
      }
      if (buf[i + 2] == '\n') return i + 3;
    }
    pos = i + 1;
  }
  resume = buf.size();
  return kNotFound;
}

namespace {

// The request line into `h` (and `out`): false, with `h` failed, when it is
// not one this server takes.
bool parseRequestLine(std::string_view line, Head& h, HttpRequest* out) {
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return h = fail(400, "malformed request line"), false;
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (method.empty() || method.size() > 32) return h = fail(400, "malformed method"), false;
  for (char c : method) {
    if (!isTokenChar(static_cast<unsigned char>(c))) return h = fail(400, "malformed method"), false;
  }
  const std::optional<std::string_view> originForm = pathOfTarget(target);
  if (!originForm) return h = fail(400, "malformed request target"), false;
  for (char c : target) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) return h = fail(400, "malformed request target"), false;
  }
  if (version == "HTTP/1.1" || version == "HTTP/1.0") {
    h.http10 = version == "HTTP/1.0";
    h.keepAlive = !h.http10;
  } else if (version.size() == 8 && version.substr(0, 5) == "HTTP/" && version[5] >= '0' && version[5] <= '9' &&
             version[6] == '.' && version[7] >= '0' && version[7] <= '9') {
    return h = fail(505, "only HTTP/1.0 and HTTP/1.1 are supported"), false;
  } else {
    return h = fail(400, "malformed HTTP version"), false;
  }
  h.headMethod = method == "HEAD";
  if (out) {
    out->method.assign(method);
    out->target.assign(target);
    out->path.assign(originForm->substr(0, originForm->find('?')));
  }
  return true;
}

// What the header lines said so far.
struct HeadersSeen {
  std::size_t fields = 0;
  std::size_t hosts = 0;
  bool contentLength = false;
  bool close = false;
  bool keepAlive = false;
};

bool readContentLength(std::string_view value, HeadersSeen& seen, Head& h) {
  std::uint64_t n = 0;
  if (value.empty() || value.size() > 18) {
    if (value.size() > 18 && value.find_first_not_of("0123456789") == std::string_view::npos) {
      return h = fail(413, "request body too large"), false;
    }
    return h = fail(400, "malformed Content-Length"), false;
  }
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || ptr != value.data() + value.size()) return h = fail(400, "malformed Content-Length"), false;
  // RFC 9110 §8.6 lets a server accept repeated equal values; like nginx
  // we refuse any repetition, so that no proxy in front reads another length.
  if (seen.contentLength) return h = fail(400, "more than one Content-Length header"), false;
  seen.contentLength = true;
  h.contentLength = n;
  return true;
}

// One header field line into `h` (and `out`): false, with `h` failed, when
// it is not one this server takes.
bool parseHeaderLine(std::string_view line, std::size_t maxHeaders, HeadersSeen& seen, Head& h, HttpRequest* out) {
  if (line.front() == ' ' || line.front() == '\t') return h = fail(400, "obsolete header line folding"), false;
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return h = fail(400, "malformed header line"), false;
  const std::string_view name = line.substr(0, colon);
  for (char c : name) {
    if (!isTokenChar(static_cast<unsigned char>(c))) return h = fail(400, "malformed header name"), false;
  }
  const std::string_view value = trimOws(line.substr(colon + 1));
  if (++seen.fields > maxHeaders) return h = fail(431, "too many header fields"), false;
  if (equalsIgnoreCase(name, "content-length")) {
    if (!readContentLength(value, seen, h)) return false;
  } else if (equalsIgnoreCase(name, "transfer-encoding")) {
    return h = fail(411, "Transfer-Encoding is not supported; send Content-Length"), false;
  } else if (equalsIgnoreCase(name, "host")) {
    if (++seen.hosts > 1) return h = fail(400, "more than one Host header"), false;  // RFC 9112 §3.2: MUST be a 400
    if (value.find_first_of(" \t") != std::string_view::npos) return h = fail(400, "malformed Host header"), false;
  } else if (equalsIgnoreCase(name, "connection")) {
    forEachToken(value, [&](std::string_view token) {
      seen.close = seen.close || equalsIgnoreCase(token, "close");
      seen.keepAlive = seen.keepAlive || equalsIgnoreCase(token, "keep-alive");
    });
  } else if (equalsIgnoreCase(name, "expect")) {
    if (equalsIgnoreCase(value, "100-continue")) h.expectContinue = true;
  }
  if (out) {
    out->headers.emplace_back();
    assignLower(out->headers.back().first, name);
    out->headers.back().second.assign(value);
  }
  return true;
}

}  // namespace

Head parseHead(std::string_view head, std::size_t maxHeaders, HttpRequest* out) {
  Head h;
  HeadersSeen seen;
  bool firstLine = true;
  if (out) out->headers.clear();

  while (!head.empty()) {
    std::size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
    if (nl != std::string_view::npos) {
      // RFC 9112 §2.2 lets a server take a bare LF as a line end; we refuse
      // it, as cpp-httplib does: two parsers can then only agree on the lines.
      if (line.empty() || line.back() != '\r') return fail(400, "a line ends in a bare LF (HTTP lines end in CRLF)");
      line.remove_suffix(1);
    }
    if (line.empty()) {
      if (firstLine) return fail(400, "empty request line");
      break;  // the end of the head
    }
    for (char c : line) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && u != '\t') || u == 0x7f) return fail(400, "control character in the request head");
    }
    const bool ok = firstLine ? parseRequestLine(line, h, out) : parseHeaderLine(line, maxHeaders, seen, h, out);
    if (!ok) return h;
    firstLine = false;
  }
  if (firstLine) return fail(400, "empty request");
  if (!h.http10 && seen.hosts == 0) return fail(400, "missing Host header");  // RFC 9112 §3.2: MUST be a 400
  // "close" wins wherever it stands (RFC 9112 §9.6); HTTP/1.0 stays open
  // only when asked to.
  h.keepAlive = !seen.close && (!h.http10 || seen.keepAlive);
  return h;
}

HeadScan scanHead(std::string_view unread, std::size_t& resume, const FramingLimits& limits) {
  HeadScan scan;
  // Empty lines before a request line are allowed (RFC 9112 §2.2).
  while (scan.skipped < unread.size() && (unread[scan.skipped] == '\r' || unread[scan.skipped] == '\n')) ++scan.skipped;
  resume = std::max(resume, scan.skipped);
  const std::string_view head = unread.substr(scan.skipped);
  if (head.empty()) return scan;
  auto reject = [&](int status, std::string reason) {
    scan.outcome = HeadScan::Outcome::Rejected;
    scan.status = status;
    scan.error = std::move(reason);
    return scan;
  };
  std::size_t next = 0;
  const std::size_t end = findHeadEnd(head, resume - scan.skipped, next);
  if (end == kNotFound) {
    resume = scan.skipped + next;
    if (head.size() > limits.maxHeaderBytes) return reject(431, "request header fields too large");
    return scan;
  }
  if (end > limits.maxHeaderBytes) return reject(431, "request header fields too large");
  scan.head = parseHead(head.substr(0, end), limits.maxHeaders, nullptr);
  if (scan.head.status != 0) return reject(scan.head.status, std::string(scan.head.error));
  if (scan.head.contentLength > limits.maxBodyBytes) {
    return reject(413, "request body larger than " + std::to_string(limits.maxBodyBytes) + " bytes");
  }
  scan.outcome = HeadScan::Outcome::Complete;
  scan.headLen = end;
  return scan;
}

std::string_view reasonPhrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Status";
  }
}

namespace {

bool safeHeaderText(std::string_view s) {
  for (char c : s) {
    if (c == '\r' || c == '\n' || c == '\0') return false;
  }
  return true;
}

bool safeHeaderName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!isTokenChar(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

void appendNumber(std::string& out, std::uint64_t n) {
  char buf[24];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, n);
  (void)ec;
  out.append(buf, ptr);
}

}  // namespace

void appendResponse(std::string& out, const HttpResponse& response, bool close, bool keepAlive10, bool headMethod) {
  int status = response.status;
  if (status < 100 || status > 999) status = 500;
  const bool bodyAllowed = !(status < 200 || status == 204 || status == 304);
  out.append("HTTP/1.1 ");
  appendNumber(out, static_cast<std::uint64_t>(status));
  out.push_back(' ');
  out.append(reasonPhrase(status));
  out.append("\r\n");
  if (bodyAllowed) {
    if (!response.contentType.empty() && safeHeaderText(response.contentType)) {
      out.append("Content-Type: ");
      out.append(response.contentType);
      out.append("\r\n");
    }
    out.append("Content-Length: ");
    appendNumber(out, response.body.size());
    out.append("\r\n");
  }
  for (const auto& [name, value] : response.headers) {
    if (!safeHeaderName(name) || !safeHeaderText(value)) continue;
    if (equalsIgnoreCase(name, "content-length") || equalsIgnoreCase(name, "connection") ||
        equalsIgnoreCase(name, "transfer-encoding")) {
      continue;
    }
    out.append(name);
    out.append(": ");
    out.append(value);
    out.append("\r\n");
  }
  if (close) {
    out.append("Connection: close\r\n");
  } else if (keepAlive10) {
    out.append("Connection: keep-alive\r\n");
  }
  out.append("\r\n");
  if (bodyAllowed && !headMethod) out.append(response.body);
}

void appendJsonEscaped(std::string& out, std::string_view text) {
  static const char hex[] = "0123456789abcdef";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      default:
        if (u < 0x20) {
          out.append("\\u00");
          out.push_back(hex[u >> 4]);
          out.push_back(hex[u & 15]);
        } else {
          out.push_back(c);
        }
    }
  }
}

std::string errorBody(std::string_view message) {
  std::string body;
  body.reserve(message.size() + 16);
  body.append("{\"error\": \"");
  appendJsonEscaped(body, message);
  body.append("\"}\n");
  return body;
}

void appendError(std::string& out, int status, std::string_view message) {
  HttpResponse r;
  r.status = status;
  r.body = errorBody(message);
  appendResponse(out, r, /*close=*/true, false, false);
}

}  // namespace gpuguard::webhook::http1
