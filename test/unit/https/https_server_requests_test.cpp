// The HTTPS server against real TLS clients on loopback: the happy paths
// (keep-alive, pipelining, HTTP/1.0, Expect, session resumption) and the
// errors the server itself makes (500, 413, 431, malformed requests).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/https/https_server_test_support.h"

namespace gpuguard::webhook {
namespace {

using namespace https_test;

// --- Happy paths -----------------------------------------------------------------

TEST(HttpsServer, PostRoundTrip) {
  TestServer s;
  tls::TlsClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  auto r = c.request("POST", "/validate?timeout=10s", R"({"kind":"AdmissionReview"})", {{"X-Test", "Mixed Case"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"kind":"AdmissionReview"})");
  ASSERT_TRUE(r->header("content-type"));
  EXPECT_EQ(*r->header("content-type"), "application/json");
  EXPECT_EQ(*r->header("x-method"), "POST");
  EXPECT_EQ(*r->header("x-path"), "/validate");
  EXPECT_EQ(*r->header("x-target"), "/validate?timeout=10s");
  EXPECT_EQ(*r->header("x-test-echo"), "Mixed Case");  // looked up lower-case
  EXPECT_EQ(r->header("x-peer")->rfind("127.0.0.1:", 0), 0u);
  EXPECT_EQ(c.peerFingerprint(), s.pair.leafFingerprint);
  EXPECT_EQ(s.server->certificateFingerprint(), s.pair.leafFingerprint);
  EXPECT_TRUE(s.server->certificateLoaded());
  EXPECT_EQ(c.protocol(), "TLSv1.3");
}

TEST(HttpsServer, KeepAliveServesManyRequestsOnOneConnection) {
  TestServer s;
  tls::TlsClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  for (int i = 0; i < 300; ++i) {
    const std::string body = R"({"i":)" + std::to_string(i) + "}";
    auto r = c.request("POST", "/validate", body);
    ASSERT_TRUE(r) << "request " << i;
    ASSERT_EQ(r->status, 200);
    ASSERT_EQ(r->body, body);
    EXPECT_FALSE(r->header("connection"));
  }
  EXPECT_EQ(s.stats().connectionsAccepted, 1u);
  EXPECT_EQ(s.stats().requestsHandled, 300u);
}

TEST(HttpsServer, PipelinedRequestsAreAnsweredInOrder) {
  TestServer s;
  tls::TlsClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  ASSERT_TRUE(c.write(tls::buildRequest("POST", "/a", "first") + tls::buildRequest("POST", "/b", "second")));
  auto r1 = c.readResponse();
  auto r2 = c.readResponse();
  ASSERT_TRUE(r1 && r2);
  EXPECT_EQ(r1->body, "first");
  EXPECT_EQ(*r1->header("x-path"), "/a");
  EXPECT_EQ(r2->body, "second");
  EXPECT_EQ(*r2->header("x-path"), "/b");

  // Many at once, the last one closing: all answered, then the close.
  ASSERT_NO_FATAL_FAILURE(expectBurstAnsweredInOrderThenClosed(c));
}

TEST(HttpsServer, FullChainIsServed) {
  tls::TestCa root("gpuguard test root");
  tls::TestCa intermediate("gpuguard test intermediate", root);
  TestServer s([&](TestServer& t, ServerConfig& cfg) {
    t.pair = intermediate.issueServer();
    cfg.certFile = t.dir.write("chain.crt", t.pair.certPem);
    cfg.keyFile = t.dir.write("chain.key", t.pair.keyPem);
  });
  tls::ClientOptions o;
  o.caPem = root.certPem();  // trusts only the root: needs the intermediate from the server
  tls::TlsClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.port(), o, error)) << error;
  EXPECT_EQ(c.peerChainLength(), 2);
  auto r = c.request("POST", "/validate", "{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(HttpsServer, Http10AndConnectionHeaders) {
  TestServer s;
  {
    tls::TlsClient c;
    std::string error;
    ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
    ASSERT_TRUE(c.write("GET /old HTTP/1.0\r\n\r\n"));
    auto r = c.readResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(*r->header("connection"), "close");
    EXPECT_TRUE(c.peerClosed());
  }
  {
    tls::TlsClient c;
    std::string error;
    ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(c.write("GET /old HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
      auto r = c.readResponse();
      ASSERT_TRUE(r);
      EXPECT_EQ(*r->header("connection"), "keep-alive");
    }
  }
  {
    tls::TlsClient c;
    std::string error;
    ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
    auto r = c.request("POST", "/x", "{}", {{"Connection", "close"}});
    ASSERT_TRUE(r);
    EXPECT_EQ(*r->header("connection"), "close");
    EXPECT_TRUE(c.peerClosed());
  }
}

TEST(HttpsServer, ExpectContinueIsAnswered) {
  TestServer s;
  tls::TlsClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  ASSERT_TRUE(c.write("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n"));
  auto interim = c.readResponse(/*skipInterim=*/false);
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(c.write("body"));
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "body");
}

TEST(HttpsServer, SessionTicketsResumeSessions) {
  tls::TestCa clientCa("gpuguard test client CA");
  const tls::KeyPair apiserver = clientCa.issueClient();
  TestServer s([&](TestServer& t, ServerConfig& cfg) { cfg.clientCaFile = t.dir.write("client-ca.crt", clientCa.certPem()); });
  for (int maxVersion : {TLS1_3_VERSION, TLS1_2_VERSION}) {
    tls::ClientOptions o = s.client();
    o.certPem = apiserver.certPem;
    o.keyPem = apiserver.keyPem;
    o.maxVersion = maxVersion;
    tls::TlsClient first;
    std::string error;
    ASSERT_TRUE(first.connect(s.port(), o, error)) << error;
    ASSERT_TRUE(first.request("POST", "/validate", "{}"));
    o.session = first.session();
    tls::TlsClient second;
    ASSERT_TRUE(second.connect(s.port(), o, error)) << error;
    EXPECT_TRUE(second.resumed()) << maxVersion;
    auto r = second.request("POST", "/validate", "{}");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
}

TEST(HttpsServer, HandlerExceptionBecomes500) {
  TestServer s;
  auto r = tls::httpsRequest(s.port(), s.client(), "POST", "/throw", "{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find("\"error\""), std::string::npos);
  EXPECT_TRUE(s.healthy());
}

// --- Server-made errors ------------------------------------------------------------

TEST(HttpsServer, DeclaredBodyOverTheLimitIs413BeforeItIsSent) {
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.maxBodyBytes = 64 * 1024; });
  {
    auto r = tls::httpsRequest(s.port(), s.client(), "POST", "/validate", std::string(64 * 1024, 'x'));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);  // exactly the limit
  }
  tls::TlsClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  // Only the head, announcing more than twice the limit: the server answers
  // without waiting for 10 MB (a body up to twice the limit is read first:
  // https_server_body_budget_test.cpp).
  ASSERT_TRUE(c.write("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 10485760\r\n\r\n"));
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(*r->header("content-type"), "application/json");
  EXPECT_EQ(r->body.rfind("{\"error\": \"", 0), 0u) << r->body;
  EXPECT_EQ(*r->header("connection"), "close");
  EXPECT_TRUE(c.peerClosed());
  EXPECT_GE(s.stats().requestsRejected, 1u);
  EXPECT_TRUE(s.healthy());
}

TEST(HttpsServer, BodySentWithAnOversizedRequestStillGets413) {
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.maxBodyBytes = 1024; });
  tls::TlsClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  // The whole oversized request in one go: the server rejects on the head and
  // drains the rest, so the 413 is not lost to a reset.
  ASSERT_TRUE(c.write(tls::buildRequest("POST", "/validate", std::string(200 * 1024, 'x'))));
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
}

TEST(HttpsServer, HugeHeadersAre431) {
  TestServer s;
  {
    tls::TlsClient c;
    std::string error;
    ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
    auto r = c.request("POST", "/validate", "{}", {{"X-Big", std::string(20000, 'a')}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 431);
    EXPECT_TRUE(c.peerClosed());
  }
  {
    // A head that never ends is cut as soon as it passes the limit.
    tls::TlsClient c;
    std::string error;
    ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
    ASSERT_TRUE(c.write("GET / HTTP/1.1\r\nX-Endless: " + std::string(40000, 'b')));
    auto r = c.readResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 431);
  }
  {
    std::vector<std::pair<std::string, std::string>> many;
    for (int i = 0; i < 300; ++i) many.emplace_back("X-H" + std::to_string(i), "v");
    tls::TlsClient c;
    std::string error;
    ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
    auto r = c.request("POST", "/validate", "{}", many);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 431);
  }
  EXPECT_TRUE(s.healthy());
}

TEST(HttpsServer, MalformedRequestsAreRejected) {
  TestServer s;
  struct Case {
    std::string request;
    int status;
  };
  const std::vector<Case> cases = {
      {"GARBAGE\r\n\r\n", 400},
      {"GET /x HTTP/2.0\r\n\r\n", 505},
      {"GET /x FOO/1.1\r\n\r\n", 400},
      {"GET x HTTP/1.1\r\n\r\n", 400},
      {"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411},
      {"POST /x HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400},
      {"POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
      {"POST /x HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413},
      {"GET /x HTTP/1.1\r\nBad Header: x\r\n\r\n", 400},
      {"GET /x HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", 400},
      {std::string("GET /x HTTP/1.1\r\nX: a\0b\r\n\r\n", 27), 400},
      {"GET /x HTTP/1.1\r\n\r\n", 400},                                    // no Host (RFC 9112 §3.2)
      {"GET /x HTTP/1.1\nHost: a\n\n", 400},                              // bare LF line ends
      {"GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},              // two Hosts
      {"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab", 400},  // even equal
  };
  for (const Case& k : cases) {
    tls::TlsClient c;
    std::string error;
    ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
    ASSERT_TRUE(c.write(k.request));
    auto r = c.readResponse();
    ASSERT_TRUE(r) << k.request;
    EXPECT_EQ(r->status, k.status) << k.request;
    EXPECT_EQ(r->body.rfind("{\"error\": ", 0), 0u) << r->body;
    EXPECT_TRUE(c.peerClosed()) << k.request;
  }
  EXPECT_TRUE(s.healthy());
}

}  // namespace
}  // namespace gpuguard::webhook
