// The HTTP/1.1 parser of the HTTPS server (https/internal/http1.h) on its
// own: finding the head, header names, connection semantics, framing two
// parsers could read differently, and arbitrary input.
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "https/internal/http1.h"
#include "https/server.h"

namespace gpuguard::webhook {
namespace {

// --- The HTTP/1.1 parser on its own ----------------------------------------------------------

TEST(HttpsHttp1, HeadEndIsFoundIncrementally) {
  const std::string head = "GET / HTTP/1.1\r\nHost: x\r\n\r\nBODY";
  std::size_t resume = 0;
  std::size_t found = http1::kNotFound;
  for (std::size_t n = 1; n <= head.size() && found == http1::kNotFound; ++n) {
    std::size_t next = 0;
    found = http1::findHeadEnd(std::string_view(head).substr(0, n), resume, next);
    if (found == http1::kNotFound) {
      EXPECT_LE(next, n);
      resume = next;
    }
  }
  EXPECT_EQ(found, head.size() - 4);
  std::size_t r = 0;
  EXPECT_EQ(http1::findHeadEnd("GET / HTTP/1.0\n\nX", 0, r), 16u);  // bare LF
}

TEST(HttpsHttp1, ParsesHeadAndLowerCasesNames) {
  HttpRequest req;
  const auto h = http1::parseHead(
      "POST /validate?timeout=5s HTTP/1.1\r\nHost: a\r\nContent-Length:  12 \r\nX-Mixed-CASE: Value \r\n"
      "Expect: 100-Continue\r\n\r\n",
      100, &req);
  EXPECT_EQ(h.status, 0) << h.error;
  EXPECT_EQ(h.contentLength, 12u);
  EXPECT_TRUE(h.keepAlive);
  EXPECT_TRUE(h.expectContinue);
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.path, "/validate");
  EXPECT_EQ(req.target, "/validate?timeout=5s");
  ASSERT_TRUE(req.header("x-mixed-case"));
  EXPECT_EQ(*req.header("x-mixed-case"), "Value");
  EXPECT_EQ(*req.header("content-length"), "12");
  EXPECT_FALSE(req.header("X-Mixed-CASE"));
}

TEST(HttpsHttp1, ConnectionSemantics) {
  auto keepAlive = [](const std::string& head) { return http1::parseHead(head, 100, nullptr).keepAlive; };
  EXPECT_FALSE(keepAlive("GET / HTTP/1.0\r\n\r\n"));
  EXPECT_TRUE(keepAlive("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  EXPECT_FALSE(keepAlive("GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, Close\r\n\r\n"));
  EXPECT_TRUE(keepAlive("GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n"));
  // "close" wins wherever it stands, in one header or in several.
  EXPECT_FALSE(keepAlive("GET / HTTP/1.0\r\nConnection: close, keep-alive\r\n\r\n"));
  EXPECT_FALSE(keepAlive("GET / HTTP/1.0\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n"));
  EXPECT_FALSE(keepAlive("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n"));
  EXPECT_TRUE(http1::parseHead("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", 100, nullptr).headMethod);
}

TEST(HttpsHttp1, FramingThatTwoParsersCouldReadDifferentlyIsRefused) {
  auto status = [](const std::string& head) { return http1::parseHead(head, 100, nullptr).status; };
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"), 400);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n"), 400);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"), 411);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n"), 411);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length : 5\r\n\r\n"), 400) << "space before the colon";
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n"), 400);
  EXPECT_EQ(status("GET / HTTP/1.1\r\n\r\n"), 400) << "HTTP/1.1 needs a Host";
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n"), 400);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: a b\r\n\r\n"), 400);
  EXPECT_EQ(status("GET / HTTP/1.1\nHost: a\n\n"), 400) << "bare LF line ends";
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: a\r\n\n"), 400) << "a bare LF ending the head";
  EXPECT_EQ(status("GET / HTTP/1.0\r\n\r\n"), 0) << "HTTP/1.0 may leave Host out";
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost:\r\n\r\n"), 0) << "an empty Host is valid (RFC 9110 §7.2)";
}

TEST(HttpsHttp1, TheAbsoluteFormOfATargetIsAccepted) {
  // RFC 9112 §3.2.2: a server MUST accept it; the path is what follows the authority.
  auto pathOf = [](const std::string& target) {
    HttpRequest req;
    const auto h = http1::parseHead("GET " + target + " HTTP/1.1\r\nHost: a\r\n\r\n", 100, &req);
    return h.status == 0 ? req.path : "status " + std::to_string(h.status);
  };
  EXPECT_EQ(pathOf("http://a:8443/validate?timeout=5s"), "/validate");
  EXPECT_EQ(pathOf("HTTPS://a"), "/");
  EXPECT_EQ(pathOf("https://a?x=1"), "/");
  EXPECT_EQ(pathOf("http:///validate"), "status 400") << "no authority";
  EXPECT_EQ(pathOf("ftp://a/validate"), "status 400");
  EXPECT_EQ(pathOf("validate"), "status 400");
}

TEST(HttpsHttp1, AHeadIsScannedOnceAcrossReadsAndItsLimitsHold) {
  const http1::FramingLimits limits{64, 4, 10};
  const std::string stream = "\r\nPOST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc";
  std::size_t resume = 0;
  http1::HeadScan scan;
  for (std::size_t n = 0; n <= stream.size(); ++n) {
    scan = http1::scanHead(std::string_view(stream).substr(0, n), resume, limits);
    if (scan.outcome != http1::HeadScan::Outcome::NeedMore) break;
    EXPECT_LE(resume, n);
  }
  ASSERT_EQ(scan.outcome, http1::HeadScan::Outcome::Complete);
  EXPECT_EQ(scan.skipped, 2u) << "the empty line before the request line";
  EXPECT_EQ(scan.skipped + scan.headLen + scan.head.contentLength, stream.size());

  std::size_t r = 0;
  EXPECT_EQ(http1::scanHead("GET / HTTP/1.1\r\nHost: a\r\nX: " + std::string(64, 'x'), r, limits).status, 431);
  r = 0;
  EXPECT_EQ(http1::scanHead("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", r, limits).status, 413);
  r = 0;
  EXPECT_EQ(http1::scanHead("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", r, limits).status, 431);
}

TEST(HttpsHttp1, ArbitraryInputIsParsedSafely) {
  std::mt19937 rng(7);
  const std::string pieces[] = {"GET", "POST", " ", "/", "HTTP/1.1", "HTTP/1.0", "\r\n", "\n", ":", "Content-Length",
                                "Connection", "close", "keep-alive", "Expect", "100-continue", "Transfer-Encoding",
                                "\t", "0", "18446744073709551616", "\x80", std::string(1, '\0'), "x"};
  HttpRequest req;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    const int n = static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) text += pieces[rng() % std::size(pieces)];
    std::size_t resume = 0;
    const std::size_t end = http1::findHeadEnd(text, rng() % (text.size() + 1), resume);
    EXPECT_TRUE(end == http1::kNotFound ? resume <= text.size() : end <= text.size());
    const auto h = http1::parseHead(text, 64, &req);
    if (h.status != 0) {
      EXPECT_TRUE(h.status == 400 || h.status == 411 || h.status == 413 || h.status == 431 || h.status == 505)
          << h.status;
    }
  }
}

TEST(HttpsHttp1, ResponsesCannotBeSplitByHandlerHeaders) {
  HttpResponse r;
  r.body = "{}";
  r.headers = {{"X-Ok", "fine"}, {"X-Evil", "a\r\nSet-Cookie: x"}, {"Bad Name", "v"}, {"Content-Length", "99"}};
  std::string out;
  http1::appendResponse(out, r, false, false, false);
  EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nX-Ok: fine\r\n\r\n{}");
  out.clear();
  http1::appendError(out, 400, "bad \"thing\"\n");
  EXPECT_NE(out.find("{\"error\": \"bad \\\"thing\\\"\\n\"}"), std::string::npos) << out;
  EXPECT_NE(out.find("Connection: close\r\n"), std::string::npos);
}

}  // namespace
}  // namespace gpuguard::webhook
