// The webhook's HTTP/1.1 request framing (https/internal/http1.h) on arbitrary
// bytes, read the way a connection reads them: head scanning across reads,
// head parsing, body framing by Content-Length, pipelined requests.
//
// Input: byte 0 picks how the stream is cut into reads; the rest is the
// stream a client sends on one connection.
//
// Invariants besides "no crash, no leak, no UB":
//   - the requests framed (and the rejection that ends the connection) are
//     the same whether the bytes come at once or in pieces;
//   - a framed request lies within the bytes received; a head stays within
//     maxHeaderBytes and its Content-Length within maxBodyBytes;
//   - an accepted head has at most one Content-Length, no Transfer-Encoding,
//     exactly one Host in HTTP/1.1 (at most one in 1.0): nothing two parsers
//     could frame differently (request smuggling);
//   - parseHead with and without the request object agree, the path is an
//     origin form, header names come lower-cased tokens, values without CR, LF or NUL; a rejection is one of
//     400, 411, 413, 431, 505 with a reason;
//   - a response echoing the request's fields cannot be split.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "test/fuzz/fuzz_common.h"
#include "https/internal/http1.h"

namespace {

using gpuguard::webhook::HttpRequest;
using gpuguard::webhook::HttpResponse;
namespace http1 = gpuguard::webhook::http1;
using Outcome = http1::HeadScan::Outcome;

// Small limits, so that the fuzzer reaches 431 and 413 often.
constexpr http1::FramingLimits kLimits{512, 8, 2048};

struct Framed {
  int status = 0;  // 0: a request; else the rejection that closed the connection
  std::size_t offset = 0, headLen = 0, bodyLen = 0;
  bool operator==(const Framed&) const = default;
};

// A connection's input loop (https/internal/connection.cpp processInput):
// bytes arrive in reads of the given sizes (the rest at once at the end).
std::vector<Framed> frame(std::string_view stream, const std::vector<std::size_t>& reads) {
  std::vector<Framed> out;
  std::string in;
  std::size_t inPos = 0, scanPos = 0, fed = 0, next = 0;
  bool headReady = false;
  std::size_t headLen = 0, bodyLen = 0;
  while (true) {
    const std::size_t chunk = next < reads.size() ? reads[next++] : stream.size() - fed;
    const std::size_t n = std::min(chunk, stream.size() - fed);
    in.append(stream.substr(fed, n));
    fed += n;
    while (true) {
      if (!headReady) {
        std::size_t resume = scanPos - inPos;
        const http1::HeadScan scan = http1::scanHead(std::string_view(in).substr(inPos), resume, kLimits);
        FUZZ_CHECK(resume >= scan.skipped && inPos + resume <= in.size());
        scanPos = inPos + resume;
        inPos += scan.skipped;
        if (scan.outcome == Outcome::Rejected) {
          FUZZ_CHECK(scan.status == 400 || scan.status == 411 || scan.status == 413 || scan.status == 431 ||
                     scan.status == 505);
          FUZZ_CHECK(!scan.error.empty());
          out.push_back({scan.status, inPos, 0, 0});
          return out;  // the connection closes; what else came is dropped
        }
        if (scan.outcome == Outcome::NeedMore) break;
        FUZZ_CHECK(scan.head.status == 0 && scan.headLen <= kLimits.maxHeaderBytes);
        FUZZ_CHECK(scan.head.contentLength <= kLimits.maxBodyBytes);
        headReady = true;
        headLen = scan.headLen;
        bodyLen = static_cast<std::size_t>(scan.head.contentLength);
      }
      if (in.size() - inPos < headLen + bodyLen) break;
      out.push_back({0, inPos, headLen, bodyLen});
      inPos += headLen + bodyLen;
      scanPos = inPos;
      headReady = false;
    }
    if (fed == stream.size()) return out;
  }
}

bool isLowerToken(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u < 0x7f && !(c >= 'A' && c <= 'Z') && c != ':' && c != '(' && c != ')' && c != ',';
  });
}

std::size_t countHeader(const HttpRequest& req, std::string_view name) {
  return static_cast<std::size_t>(std::count_if(req.headers.begin(), req.headers.end(),
                                                [&](const auto& h) { return h.first == name; }));
}

// What every accepted head must hold.
void checkAcceptedHead(std::string_view head) {
  HttpRequest req;
  const http1::Head a = http1::parseHead(head, kLimits.maxHeaders, nullptr);
  const http1::Head b = http1::parseHead(head, kLimits.maxHeaders, &req);
  FUZZ_CHECK(a.status == 0 && b.status == 0);
  FUZZ_CHECK(a.contentLength == b.contentLength && a.keepAlive == b.keepAlive && a.http10 == b.http10 &&
             a.expectContinue == b.expectContinue && a.headMethod == b.headMethod);
  FUZZ_CHECK(countHeader(req, "content-length") <= 1);
  FUZZ_CHECK(countHeader(req, "transfer-encoding") == 0);
  FUZZ_CHECK(a.http10 ? countHeader(req, "host") <= 1 : countHeader(req, "host") == 1);
  // The path is the target's origin form (after the authority of an absolute-form target).
  FUZZ_CHECK(!req.method.empty() && !req.target.empty() && (req.path.starts_with('/') || req.path == "*"));
  FUZZ_CHECK(req.target.starts_with(req.path) || req.target.find("://") != std::string::npos);
  for (const auto& [name, value] : req.headers) {
    FUZZ_CHECK(isLowerToken(name));
    FUZZ_CHECK(value.find_first_of(std::string_view("\r\n\0", 3)) == std::string::npos);
  }

  // A handler that echoes what it was sent cannot split its response.
  HttpResponse r;
  r.contentType = req.target;
  for (const auto& h : req.headers) r.headers.emplace_back(h.first, h.second);
  r.headers.emplace_back(req.method, req.path);
  r.body = std::string(head);
  std::string out;
  http1::appendResponse(out, r, !a.keepAlive, a.http10 && a.keepAlive, a.headMethod);
  const std::size_t end = out.find("\r\n\r\n");
  FUZZ_CHECK(end != std::string::npos);
  const std::string_view responseHead = std::string_view(out).substr(0, end + 2);
  for (std::size_t i = 0; i < responseHead.size(); ++i) {
    const char c = responseHead[i];
    FUZZ_CHECK(c != '\0');
    if (c == '\r') FUZZ_CHECK(responseHead[i + 1] == '\n');
    if (c == '\n') FUZZ_CHECK(i > 0 && responseHead[i - 1] == '\r');
  }
  http1::appendError(out, 400, std::string(head));  // a reason carrying anything stays one JSON string
}

// Read sizes from one seed byte: 1 to 32 bytes each, a few thousand at most.
std::vector<std::size_t> readSizes(std::uint8_t seed, std::size_t total) {
  std::vector<std::size_t> sizes;
  std::uint32_t x = seed * 2654435761u + 1;
  for (std::size_t sum = 0; sum < total && sizes.size() < 4096;) {
    x = x * 1103515245u + 12345u;
    sizes.push_back(1 + (x >> 16) % 32);
    sum += sizes.back();
  }
  return sizes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::vector<Framed> whole = frame(stream, {});
  const std::vector<Framed> pieces = frame(stream, readSizes(data[0], stream.size()));
  const std::vector<Framed> bytes = frame(stream, std::vector<std::size_t>(std::min<std::size_t>(stream.size(), 600), 1));
  FUZZ_CHECK(whole == pieces);
  FUZZ_CHECK(whole == bytes);

  std::size_t end = 0;
  for (const Framed& f : whole) {
    FUZZ_CHECK(f.offset >= end && f.offset + f.headLen + f.bodyLen <= stream.size());
    if (f.status == 0) checkAcceptedHead(stream.substr(f.offset, f.headLen));
    end = f.offset + f.headLen + f.bodyLen;
  }
  return 0;
}
