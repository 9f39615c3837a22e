// The HTTPS server against real TLS clients on loopback: the happy paths,
// every hostile client from issue 8, certificate rotation and shutdown.
// No latency assertions: "a healthy request still succeeds" is the measure.
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/tls_test_support.h"
#include "webhook/https_http1.h"
#include "webhook/https_server.h"

namespace gpuguard::webhook {
namespace {

namespace tls = gpuguard::testing::tls;
using namespace std::chrono_literals;

HttpResponse echo(const HttpRequest& r) {
  HttpResponse out;
  out.body = r.body;
  out.headers.emplace_back("X-Method", r.method);
  out.headers.emplace_back("X-Path", r.path);
  out.headers.emplace_back("X-Target", r.target);
  out.headers.emplace_back("X-Peer", r.peer);
  out.headers.emplace_back("X-Client-Verified", r.clientCertificateVerified ? "yes" : "no");
  if (const std::string* v = r.header("x-test")) out.headers.emplace_back("X-Test-Echo", *v);
  if (r.path == "/throw") throw std::runtime_error("boom");
  return out;
}

template <typename F>
bool eventually(F condition, std::chrono::milliseconds timeout = 5s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

// A config for 127.0.0.1:<any port> serving `certPem` with `keyPem`, both
// written to `dir`.
ServerConfig loopbackConfig(tls::TempDir& dir, const std::string& certPem, const std::string& keyPem) {
  ServerConfig config;
  config.bindAddress = "127.0.0.1";
  config.port = 0;
  config.certFile = dir.write("tls.crt", certPem);
  config.keyFile = dir.write("tls.key", keyPem);
  return config;
}

// A server on 127.0.0.1:<any port>, running on its own thread, with a
// throw-away CA and certificate. Tests tweak the config before it starts.
class TestServer {
 public:
  explicit TestServer(const std::function<void(TestServer&, ServerConfig&)>& tweak = {}, Handler handler = echo) {
    pair = ca.issueServer();
    config = loopbackConfig(dir, pair.certPem, pair.keyPem);
    config.workerThreads = 2;
    config.handshakeTimeout = 2000ms;
    config.requestTimeout = 2000ms;
    config.idleTimeout = 5000ms;
    config.certificatePollInterval = 50ms;
    if (tweak) tweak(*this, config);
    server = std::make_unique<HttpsServer>(config, std::move(handler));
    std::string error;
    if (!server->start(error)) throw std::runtime_error("server did not start: " + error);
    thread = std::thread([this] { server->run(); });
  }
  ~TestServer() { shutdown(); }
  void shutdown() {
    if (thread.joinable()) {
      server->stop();
      thread.join();
    }
  }

  std::uint16_t port() const { return server->boundPort(); }
  tls::ClientOptions client() const {
    tls::ClientOptions o;
    o.caPem = ca.certPem();
    return o;
  }
  // One POST on a new connection, answered 200 with the body echoed.
  bool healthy() const {
    auto r = tls::httpsRequest(port(), client(), "POST", "/validate", R"({"healthy":true})");
    return r && r->status == 200 && r->body == R"({"healthy":true})";
  }
  ServerStats stats() const { return server->stats(); }

  tls::TestCa ca;
  tls::TempDir dir;
  tls::KeyPair pair;
  ServerConfig config;
  std::unique_ptr<HttpsServer> server;
  std::thread thread;
};

// Waits up to `timeout` for the server to send something (or close).
bool readable(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count())) > 0;
}

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
  std::string burst;
  for (int i = 0; i < 50; ++i) burst += tls::buildRequest("POST", "/p" + std::to_string(i), std::to_string(i));
  burst += tls::buildRequest("GET", "/last", "", {{"Connection", "close"}});
  ASSERT_TRUE(c.write(burst));
  for (int i = 0; i < 50; ++i) {
    auto r = c.readResponse();
    ASSERT_TRUE(r) << i;
    EXPECT_EQ(r->body, std::to_string(i));
  }
  auto last = c.readResponse();
  ASSERT_TRUE(last);
  EXPECT_EQ(*last->header("x-path"), "/last");
  EXPECT_EQ(*last->header("connection"), "close");
  EXPECT_TRUE(c.peerClosed());
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
  // Only the head: the server answers without waiting for 10 MB.
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

// --- Hostile clients -----------------------------------------------------------------

TEST(HttpsServer, RandomBytesOverTlsNeverHurtTheServer) {
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.requestTimeout = 300ms; });
  std::mt19937 rng(20261129);
  const std::string alphabet = std::string("GETPOST /HTTP1.0:\r\n \t") + '\0' + "abcXYZ-,;=?%\x7f" + "\x80" + "\xff" +
                               "0123456789";
  std::vector<std::unique_ptr<tls::TlsClient>> clients;
  for (int i = 0; i < 60; ++i) {
    std::string junk;
    if (i % 2 == 0) junk = "POST /validate HTTP/1.1\r\nContent-Length: " + std::to_string(rng() % 40) + "\r\n";
    const std::size_t n = rng() % 300;
    for (std::size_t k = 0; k < n; ++k) {
      junk += (i % 3 == 0) ? static_cast<char>(rng() & 0xff) : alphabet[rng() % alphabet.size()];
    }
    if (i % 4 == 0) junk += "\r\n\r\n";
    auto c = std::make_unique<tls::TlsClient>();
    std::string error;
    ASSERT_TRUE(c->connect(s.port(), s.client(), error)) << error;
    ASSERT_TRUE(c->write(junk));
    clients.push_back(std::move(c));
  }
  EXPECT_TRUE(s.healthy());
  for (auto& c : clients) {
    while (c->readResponse()) {  // whatever comes, until the server closes or times the request out
    }
  }
  EXPECT_TRUE(s.healthy());
}

TEST(HttpsServer, SlowlorisIsCutByTheRequestTimeout) {
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.requestTimeout = 300ms; });
  tls::TlsClient slow;
  std::string error;
  ASSERT_TRUE(slow.connect(s.port(), s.client(), error)) << error;
  const std::string trickle = "POST /validate HTTP/1.1\r\nHost: x\r\n" + std::string(100000, 'X');
  const auto start = std::chrono::steady_clock::now();
  bool cut = false;
  std::size_t sent = 0;
  bool checkedHealthy = false;
  while (std::chrono::steady_clock::now() - start < 5s) {
    if (readable(slow.fd(), 20ms) && slow.responsePending()) {
      cut = true;
      break;
    }
    if (!slow.write(std::string_view(trickle).substr(sent++, 1))) {
      cut = true;
      break;
    }
    if (!checkedHealthy && sent == 5) {
      EXPECT_TRUE(s.healthy());  // served while the slow client holds its connection
      checkedHealthy = true;
    }
  }
  ASSERT_TRUE(cut) << "the slow client was never cut";
  auto r = slow.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 408);
  EXPECT_GE(s.stats().timeouts, 1u);
  EXPECT_TRUE(s.healthy());
}

TEST(HttpsServer, BodyThatNeverFinishesIsCut) {
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.requestTimeout = 300ms; });
  tls::TlsClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  ASSERT_TRUE(c.write("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"partial\""));
  EXPECT_TRUE(s.healthy());
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 408);
  EXPECT_TRUE(c.peerClosed());
  EXPECT_TRUE(s.healthy());
}

TEST(HttpsServer, HundredsOfIdleConnectionsDoNotStarveHealthyClients) {
  TestServer s([](TestServer&, ServerConfig& cfg) {
    cfg.handshakeTimeout = 10s;  // keep them all open for the whole test
    cfg.requestTimeout = 10s;
  });
  std::vector<tls::TcpSocket> tcp;
  for (int i = 0; i < 300; ++i) {
    tcp.emplace_back(tls::tcpConnect(s.port()));
    ASSERT_TRUE(tcp.back().valid()) << i;
  }
  std::vector<std::unique_ptr<tls::TlsClient>> idleTls;
  for (int i = 0; i < 50; ++i) {
    auto c = std::make_unique<tls::TlsClient>();
    std::string error;
    ASSERT_TRUE(c->connect(s.port(), s.client(), error)) << i << ": " << error;
    idleTls.push_back(std::move(c));
  }
  EXPECT_TRUE(eventually([&] { return s.stats().connectionsOpen >= 350; }));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(s.healthy()) << i;
  // The idle TLS ones are still usable.
  auto r = idleTls.front()->request("POST", "/validate", "{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(HttpsServer, IdleConnectionsAreClosedByTheirTimeouts) {
  TestServer s([](TestServer&, ServerConfig& cfg) {
    cfg.handshakeTimeout = 300ms;
    cfg.requestTimeout = 300ms;
    cfg.idleTimeout = 300ms;
  });
  std::vector<tls::TcpSocket> tcp;
  for (int i = 0; i < 20; ++i) tcp.emplace_back(tls::tcpConnect(s.port()));
  std::vector<std::unique_ptr<tls::TlsClient>> clients;
  for (int i = 0; i < 10; ++i) {
    auto c = std::make_unique<tls::TlsClient>();
    std::string error;
    ASSERT_TRUE(c->connect(s.port(), s.client(), error)) << error;
    if (i % 2 == 0) {
      ASSERT_TRUE(c->request("POST", "/validate", "{}"));  // keep-alive idle after one request
    }
    clients.push_back(std::move(c));
  }
  EXPECT_TRUE(eventually([&] { return s.stats().connectionsOpen == 0; }))
      << s.stats().connectionsOpen << " still open";
  for (auto& c : clients) EXPECT_TRUE(c->peerClosed());
  EXPECT_GE(s.stats().timeouts, 20u);
  EXPECT_TRUE(s.healthy());
}

TEST(HttpsServer, PlainHttpOnTheTlsPortIsAnsweredAndClosed) {
  TestServer s;
  {
    tls::TcpSocket sock(tls::tcpConnect(s.port()));
    ASSERT_TRUE(sock.valid());
    ASSERT_TRUE(sock.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    const std::string answer = sock.readUntilClose();
    EXPECT_EQ(answer.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << answer;
    EXPECT_NE(answer.find("HTTPS server"), std::string::npos);
  }
  {
    tls::TcpSocket sock(tls::tcpConnect(s.port()));
    ASSERT_TRUE(sock.valid());
    ASSERT_TRUE(sock.send(std::string("\x01\x02\x03\x04 binary junk", 16)));
    EXPECT_EQ(sock.readUntilClose(), "");
  }
  {
    // A TLS record header followed by junk.
    tls::TcpSocket sock(tls::tcpConnect(s.port()));
    ASSERT_TRUE(sock.valid());
    ASSERT_TRUE(sock.send(std::string("\x16\x03\x01\x00\x10", 5) + std::string(16, '\xff')));
    sock.readUntilClose();  // an alert, then the close
  }
  EXPECT_TRUE(eventually([&] { return s.stats().handshakeFailures >= 3; }));
  EXPECT_TRUE(s.healthy());
}

TEST(HttpsServer, OldTlsVersionsAndWeakCiphersAreRefused) {
  TestServer s;
  std::string error;
  {
    tls::ClientOptions o = s.client();
    o.minVersion = TLS1_VERSION;
    o.maxVersion = TLS1_1_VERSION;
    o.cipherList = "DEFAULT@SECLEVEL=0";
    tls::TlsClient c;
    EXPECT_FALSE(c.connect(s.port(), o, error));
  }
  {
    tls::ClientOptions o = s.client();
    o.maxVersion = TLS1_2_VERSION;
    o.cipherList = "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA";  // CBC, no AEAD
    tls::TlsClient c;
    EXPECT_FALSE(c.connect(s.port(), o, error));
  }
  EXPECT_TRUE(eventually([&] { return s.stats().handshakeFailures >= 2; }));
  {
    tls::ClientOptions o = s.client();
    o.maxVersion = TLS1_2_VERSION;
    tls::TlsClient c;
    ASSERT_TRUE(c.connect(s.port(), o, error)) << error;
    EXPECT_EQ(c.protocol(), "TLSv1.2");
    EXPECT_STREQ(SSL_get_cipher_name(c.ssl()), "ECDHE-ECDSA-AES128-GCM-SHA256");
    auto r = c.request("POST", "/validate", "{}");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
}

TEST(HttpsServer, ClientDisconnectingMidRequestIsHarmless) {
  TestServer s;
  for (int i = 0; i < 10; ++i) {
    tls::TlsClient c;
    std::string error;
    ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
    ASSERT_TRUE(c.write("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"half"));
    if (i % 2 == 0) {
      linger hard{1, 0};  // close with a reset
      ::setsockopt(c.fd(), SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    }
    c.close();
  }
  {
    // Gone mid-handshake.
    tls::TcpSocket sock(tls::tcpConnect(s.port()));
    ASSERT_TRUE(sock.send(std::string("\x16\x03\x01\x02\x00\x01", 6)));
  }
  EXPECT_TRUE(s.healthy());
  EXPECT_TRUE(eventually([&] { return s.stats().connectionsOpen == 0; }));
}

TEST(HttpsServer, ConnectionsOverTheCapAreRefused) {
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.maxConnections = 5; });
  std::vector<tls::TcpSocket> socks;
  for (int i = 0; i < 12; ++i) socks.emplace_back(tls::tcpConnect(s.port()));
  EXPECT_TRUE(eventually([&] { return s.stats().connectionsRefused >= 7; }));
  EXPECT_LE(s.stats().connectionsOpen, 5u);
  socks.clear();
  EXPECT_TRUE(eventually([&] { return s.stats().connectionsOpen == 0; }));
  EXPECT_TRUE(s.healthy());
}

// --- Certificates ------------------------------------------------------------------------

TEST(HttpsServer, RotatedCertificateIsPickedUpFromDisk) {
  TestServer s;
  tls::TlsClient before;
  std::string error;
  ASSERT_TRUE(before.connect(s.port(), s.client(), error)) << error;
  EXPECT_EQ(before.peerFingerprint(), s.pair.leafFingerprint);

  const tls::KeyPair next = s.ca.issueServer();
  s.dir.write("tls.key", next.keyPem);
  s.dir.write("tls.crt", next.certPem);
  ASSERT_TRUE(eventually([&] { return s.server->certificateFingerprint() == next.leafFingerprint; }));

  tls::TlsClient after;
  ASSERT_TRUE(after.connect(s.port(), s.client(), error)) << error;
  EXPECT_EQ(after.peerFingerprint(), next.leafFingerprint);
  EXPECT_GE(s.stats().certificateReloads, 1u);
  // The connection made before keeps working.
  auto r = before.request("POST", "/validate", "{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(HttpsServer, RotationThroughASecretVolumeSymlinkSwap) {
  // The kubelet's layout: tls.crt -> ..data/tls.crt, ..data -> ..<timestamp>/.
  namespace fs = std::filesystem;
  tls::TestCa ca;
  const tls::KeyPair first = ca.issueServer();
  const tls::KeyPair second = ca.issueServer();
  TestServer s([&](TestServer& t, ServerConfig& cfg) {
    fs::remove(t.dir.path() / "tls.crt");
    fs::remove(t.dir.path() / "tls.key");
    fs::create_directory(t.dir.path() / "..v1");
    t.dir.write("..v1/tls.crt", first.certPem);
    t.dir.write("..v1/tls.key", first.keyPem);
    fs::create_directory_symlink("..v1", t.dir.path() / "..data");
    fs::create_symlink("..data/tls.crt", t.dir.path() / "tls.crt");
    fs::create_symlink("..data/tls.key", t.dir.path() / "tls.key");
    cfg.certFile = t.dir.file("tls.crt");
    cfg.keyFile = t.dir.file("tls.key");
  });
  auto fp = [&] {
    tls::ClientOptions o;
    o.caPem = ca.certPem();
    tls::TlsClient c;
    std::string error;
    return c.connect(s.port(), o, error) ? c.peerFingerprint() : "connect failed: " + error;
  };
  EXPECT_EQ(fp(), first.leafFingerprint);
  fs::create_directory(s.dir.path() / "..v2");
  s.dir.write("..v2/tls.crt", second.certPem);
  s.dir.write("..v2/tls.key", second.keyPem);
  fs::create_directory_symlink("..v2", s.dir.path() / "..data_tmp");
  fs::rename(s.dir.path() / "..data_tmp", s.dir.path() / "..data");  // the atomic swap
  ASSERT_TRUE(eventually([&] { return s.server->certificateFingerprint() == second.leafFingerprint; }));
  EXPECT_EQ(fp(), second.leafFingerprint);
}

TEST(HttpsServer, ReloadCertificateOnDemand) {
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.certificatePollInterval = 0ms; });  // no watching
  const tls::KeyPair next = s.ca.issueServer();
  s.dir.write("tls.crt", next.certPem);
  s.dir.write("tls.key", next.keyPem);
  std::string error;
  ASSERT_TRUE(s.server->reloadCertificate(error)) << error;
  tls::TlsClient c;
  ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  EXPECT_EQ(c.peerFingerprint(), next.leafFingerprint);
  EXPECT_EQ(s.stats().certificateReloads, 1u);
}

TEST(HttpsServer, BrokenNewPairIsRejectedAndTheOldOneKeepsServing) {
  std::vector<std::string> logged;
  std::mutex logMutex;
  TestServer s([&](TestServer&, ServerConfig& cfg) {
    cfg.log = [&](const std::string& m) {
      std::lock_guard lock(logMutex);
      logged.push_back(m);
    };
  });
  const tls::KeyPair other1 = s.ca.issueServer();
  const tls::KeyPair other2 = s.ca.issueServer();
  // A certificate with a key that is not its own.
  s.dir.write("tls.crt", other1.certPem);
  s.dir.write("tls.key", other2.keyPem);
  ASSERT_TRUE(eventually([&] { return s.stats().certificateReloadFailures >= 1; }));
  EXPECT_EQ(s.server->certificateFingerprint(), s.pair.leafFingerprint);
  EXPECT_TRUE(s.healthy());
  tls::TlsClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  EXPECT_EQ(c.peerFingerprint(), s.pair.leafFingerprint);

  // Garbage, by hand.
  s.dir.write("tls.crt", "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
  EXPECT_FALSE(s.server->reloadCertificate(error));
  EXPECT_FALSE(error.empty());
  EXPECT_GE(s.stats().certificateReloadFailures, 2u);
  EXPECT_TRUE(s.server->certificateLoaded());
  EXPECT_TRUE(s.healthy());

  // A good pair again.
  s.dir.write("tls.crt", other1.certPem);
  s.dir.write("tls.key", other1.keyPem);
  ASSERT_TRUE(eventually([&] { return s.server->certificateFingerprint() == other1.leafFingerprint; }));
  EXPECT_EQ(s.stats().certificateReloads, 1u);
  std::lock_guard lock(logMutex);
  EXPECT_FALSE(logged.empty());
}

TEST(HttpsServer, StartFailsWithABrokenPair) {
  tls::TestCa ca;
  tls::TempDir dir;
  const tls::KeyPair a = ca.issueServer(), b = ca.issueServer();
  ServerConfig cfg = loopbackConfig(dir, a.certPem, b.keyPem);
  HttpsServer server(cfg, echo);
  std::string error;
  EXPECT_FALSE(server.start(error));
  EXPECT_NE(error.find("does not match"), std::string::npos) << error;
  EXPECT_FALSE(server.certificateLoaded());

  cfg.keyFile = dir.file("missing.key");
  HttpsServer missing(cfg, echo);
  EXPECT_FALSE(missing.start(error));
}

// --- Mutual TLS ------------------------------------------------------------------------

tls::ClientOptions withCertificate(tls::ClientOptions o, const tls::KeyPair& client) {
  o.certPem = client.certPem;
  o.keyPem = client.keyPem;
  return o;
}

TEST(HttpsServer, WithAClientCaOnlyTheProbesAreServedWithoutACertificate) {
  tls::TestCa clientCa("gpuguard test client CA");
  TestServer s([&](TestServer& t, ServerConfig& cfg) { cfg.clientCaFile = t.dir.write("client-ca.crt", clientCa.certPem()); });
  // The kubelet's HTTPS probes present no certificate.
  for (const char* probe : {"/healthz", "/livez", "/readyz", "/readyz?verbose"}) {
    auto r = tls::httpsRequest(s.port(), s.client(), "GET", probe);
    ASSERT_TRUE(r) << probe;
    EXPECT_EQ(r->status, 200) << probe;
    EXPECT_EQ(*r->header("x-path"), std::string(probe).substr(0, std::string(probe).find('?')));
    EXPECT_EQ(*r->header("x-client-verified"), "no");
  }
  // Anything else without one: 403, the reason in the body, never the handler.
  for (const char* path : {"/validate", "/metrics", "/healthz/../validate", "/"}) {
    tls::TlsClient c;
    std::string error;
    ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
    auto r = c.request(path == std::string("/validate") ? "POST" : "GET", path, "{}");
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 403) << path;
    EXPECT_EQ(r->header("x-path"), nullptr) << "the handler never sees it";
    EXPECT_EQ(r->body, std::string("{\"error\": \"a verified client certificate is required for ") + path +
                           " (only the health probes are served without one)\"}\n");
    EXPECT_EQ(*r->header("connection"), "close");
    EXPECT_TRUE(c.peerClosed());
  }
  EXPECT_EQ(s.stats().clientCertificateRequired, 4u);
}

TEST(HttpsServer, WithAClientCaAPresentedCertificateMustVerify) {
  tls::TestCa clientCa("gpuguard test client CA");
  tls::TestCa strangerCa("someone else's CA");
  TestServer s([&](TestServer& t, ServerConfig& cfg) { cfg.clientCaFile = t.dir.write("client-ca.crt", clientCa.certPem()); });
  // A certificate from another CA: the handshake fails, even for a probe.
  const tls::ClientOptions stranger = withCertificate(s.client(), strangerCa.issueClient());
  EXPECT_FALSE(tls::httpsRequest(s.port(), stranger, "GET", "/healthz"));
  EXPECT_FALSE(tls::httpsRequest(s.port(), stranger, "POST", "/validate", "{}"));
  // One from the client CA: everything is served.
  const tls::ClientOptions apiserver = withCertificate(s.client(), clientCa.issueClient());
  auto r = tls::httpsRequest(s.port(), apiserver, "POST", "/validate", "{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "{}");
  EXPECT_EQ(*r->header("x-client-verified"), "yes");
  EXPECT_TRUE(eventually([&] { return s.stats().handshakeFailures >= 2; }));
  EXPECT_EQ(s.stats().clientCertificateRequired, 0u);
}

TEST(HttpsServer, AResumedSessionKeepsWhatItsFirstHandshakeVerified) {
  tls::TestCa clientCa("gpuguard test client CA");
  TestServer s([&](TestServer& t, ServerConfig& cfg) { cfg.clientCaFile = t.dir.write("client-ca.crt", clientCa.certPem()); });
  for (int maxVersion : {TLS1_3_VERSION, TLS1_2_VERSION}) {
    // A session begun without a certificate stays without one when resumed.
    tls::ClientOptions anonymous = s.client();
    anonymous.maxVersion = maxVersion;
    tls::TlsClient probe;
    std::string error;
    ASSERT_TRUE(probe.connect(s.port(), anonymous, error)) << error;
    ASSERT_TRUE(probe.request("GET", "/healthz"));
    anonymous.session = probe.session();
    tls::TlsClient resumed;
    ASSERT_TRUE(resumed.connect(s.port(), anonymous, error)) << error;
    EXPECT_TRUE(resumed.resumed()) << maxVersion;
    auto r = resumed.request("POST", "/validate", "{}");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << maxVersion;
  }
}

TEST(HttpsServer, RotatedClientCaIsPickedUpFromDisk) {
  tls::TestCa oldCa("old client CA"), newCa("new client CA");
  std::string caPath;
  TestServer s([&](TestServer& t, ServerConfig& cfg) { cfg.clientCaFile = caPath = t.dir.write("client-ca.crt", oldCa.certPem()); });
  const std::string before = s.server->clientCaFingerprint();
  EXPECT_EQ(before, tls::fingerprintOfPem(oldCa.certPem()));
  const tls::ClientOptions oldClient = withCertificate(s.client(), oldCa.issueClient());
  const tls::ClientOptions newClient = withCertificate(s.client(), newCa.issueClient());
  tls::TlsClient first;
  std::string error;
  ASSERT_TRUE(first.connect(s.port(), oldClient, error)) << error;
  auto r = first.request("POST", "/validate", "{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  tls::ClientOptions resumingOld = oldClient;
  resumingOld.session = first.session();
  EXPECT_FALSE(tls::httpsRequest(s.port(), newClient, "POST", "/validate", "{}")) << "not trusted yet";

  tls::TempDir staging;
  std::filesystem::rename(staging.write("client-ca.crt", newCa.certPem()), caPath);
  ASSERT_TRUE(eventually([&] { return s.stats().clientCaReloads == 1; }));
  EXPECT_EQ(s.server->clientCaFingerprint(), tls::fingerprintOfPem(newCa.certPem()));
  r = tls::httpsRequest(s.port(), newClient, "POST", "/validate", "{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_FALSE(tls::httpsRequest(s.port(), oldClient, "POST", "/validate", "{}")) << "no longer trusted";
  // Nor through a session verified against the old CA: it is not resumed.
  EXPECT_FALSE(tls::httpsRequest(s.port(), resumingOld, "POST", "/validate", "{}"));
  // The connection opened before the rotation keeps what it verified.
  r = first.request("POST", "/validate", "{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(HttpsServer, BrokenNewClientCaFileIsRejectedAndTheOldCasStay) {
  tls::TestCa clientCa("gpuguard test client CA");
  std::string caPath;
  std::mutex logMutex;
  std::vector<std::string> logs;
  TestServer s([&](TestServer& t, ServerConfig& cfg) {
    cfg.clientCaFile = caPath = t.dir.write("client-ca.crt", clientCa.certPem());
    cfg.log = [&](const std::string& m) {
      std::lock_guard lock(logMutex);
      logs.push_back(m);
    };
  });
  const tls::ClientOptions apiserver = withCertificate(s.client(), clientCa.issueClient());
  for (const std::string& broken : {std::string("not a certificate\n"), std::string(),
                                   std::string("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")}) {
    const std::uint64_t failuresBefore = s.stats().clientCaReloadFailures;
    tls::TempDir staging;
    std::filesystem::rename(staging.write("client-ca.crt", broken), caPath);
    ASSERT_TRUE(eventually([&] { return s.stats().clientCaReloadFailures == failuresBefore + 1; })) << broken;
    auto r = tls::httpsRequest(s.port(), apiserver, "POST", "/validate", "{}");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_EQ(s.stats().clientCaReloads, 0u);
  EXPECT_EQ(s.server->clientCaFingerprint(), tls::fingerprintOfPem(clientCa.certPem()));
  std::lock_guard lock(logMutex);
  ASSERT_FALSE(logs.empty());
  EXPECT_THAT(logs.back(), ::testing::StartsWith("client CA file changed but the new file is rejected; the old CAs "
                                                 "stay trusted: "));
}

TEST(HttpsServer, StartFailsWithoutAUsableClientCaFile) {
  tls::TestCa ca;
  tls::TempDir dir;
  const tls::KeyPair p = ca.issueServer();
  ServerConfig cfg = loopbackConfig(dir, p.certPem, p.keyPem);
  cfg.clientCaFile = dir.write("client-ca.crt", "no certificate here\n");
  HttpsServer server(cfg, echo);
  std::string error;
  EXPECT_FALSE(server.start(error));
  EXPECT_EQ(error, "no PEM certificate in client CA file " + *cfg.clientCaFile);
}

// --- Shutdown ------------------------------------------------------------------------

TEST(HttpsServer, StopLetsTheRequestInFlightFinish) {
  std::atomic<bool> entered{false};
  TestServer s({}, [&](const HttpRequest& r) {
    if (r.path == "/slow") {
      entered = true;
      std::this_thread::sleep_for(200ms);
    }
    return echo(r);
  });
  tls::TlsClient idle;
  std::string error;
  ASSERT_TRUE(idle.connect(s.port(), s.client(), error)) << error;
  ASSERT_TRUE(idle.request("POST", "/validate", "{}"));  // now an idle keep-alive connection

  std::optional<tls::Response> slowAnswer;
  std::thread client([&] { slowAnswer = tls::httpsRequest(s.port(), s.client(), "POST", "/slow", R"({"slow":1})"); });
  ASSERT_TRUE(eventually([&] { return entered.load(); }));
  s.server->stop();
  client.join();
  ASSERT_TRUE(slowAnswer);
  EXPECT_EQ(slowAnswer->status, 200);
  EXPECT_EQ(slowAnswer->body, R"({"slow":1})");
  s.thread.join();  // run() returned
  EXPECT_TRUE(idle.peerClosed());
  EXPECT_EQ(s.stats().connectionsOpen, 0u);
  // Not listening any more.
  tls::TcpSocket late(tls::tcpConnect(s.port()));
  EXPECT_FALSE(late.valid());
}

TEST(HttpsServer, StopRefusesNewConnectionsWhileAHandlerIsBusy) {
  std::mutex m;
  std::condition_variable cv;
  bool held = false, released = false;
  TestServer s({}, [&](const HttpRequest& r) {
    if (r.path == "/hold") {
      std::unique_lock lock(m);
      held = true;
      cv.notify_all();
      cv.wait(lock, [&] { return released; });
    }
    return echo(r);
  });
  std::optional<tls::Response> heldAnswer;
  std::thread client([&] { heldAnswer = tls::httpsRequest(s.port(), s.client(), "POST", "/hold", "{}"); });
  {
    std::unique_lock lock(m);
    ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return held; }));
  }
  s.server->stop();
  // The other loop sees the stop at once and shuts the listener, though the
  // loop holding the handler has not looked yet.
  EXPECT_TRUE(eventually([&] {
    tls::ClientOptions o = s.client();
    o.timeout = 500ms;
    tls::TlsClient c;
    std::string error;
    return !c.connect(s.port(), o, error);
  }));
  {
    std::lock_guard lock(m);
    released = true;
    cv.notify_all();
  }
  client.join();
  ASSERT_TRUE(heldAnswer);
  EXPECT_EQ(heldAnswer->status, 200);
  s.thread.join();
}

// One loop, blocked in a handler while stop() arrives: what waits in the
// kernel then (a queued connection, a request in a socket buffer) is exactly
// what a closing listener or socket would reset.
TEST(HttpsServer, StopAnswersEveryRequestAlreadySentAndClosesIdleConnectionsCleanly) {
  std::mutex m;
  std::condition_variable cv;
  bool held = false, released = false;
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.workerThreads = 1; },
               [&](const HttpRequest& r) {
                 if (r.path == "/hold") {
                   std::unique_lock lock(m);
                   held = true;
                   cv.notify_all();
                   cv.wait(lock, [&] { return released; });
                 }
                 return echo(r);
               });
  std::string error;
  tls::TlsClient idle, late;  // keep-alive connections, each answered once
  ASSERT_TRUE(idle.connect(s.port(), s.client(), error)) << error;
  ASSERT_TRUE(idle.request("POST", "/validate", "{}"));
  ASSERT_TRUE(late.connect(s.port(), s.client(), error)) << error;
  ASSERT_TRUE(late.request("POST", "/validate", "{}"));

  std::optional<tls::Response> heldAnswer, queuedAnswer;
  std::thread holder([&] { heldAnswer = tls::httpsRequest(s.port(), s.client(), "POST", "/hold", R"({"held":1})"); });
  {
    std::unique_lock lock(m);
    ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return held; }));
  }
  // The loop is busy: this connection (the kernel completed it) waits in the
  // accept queue; its handshake and request follow.
  const int queuedFd = tls::tcpConnect(s.port());
  ASSERT_GE(queuedFd, 0);
  std::thread queued([&] {
    tls::TlsClient c;
    std::string ignored;
    if (c.connectOver(queuedFd, s.client(), ignored)) queuedAnswer = c.request("POST", "/validate", R"({"queued":1})");
  });
  s.server->stop();
  // Sent after the stop, before the loop could see it: in the socket buffer.
  ASSERT_TRUE(late.write(tls::buildRequest("POST", "/validate", R"({"late":1})")));
  {
    std::lock_guard lock(m);
    released = true;
    cv.notify_all();
  }
  holder.join();
  queued.join();
  s.thread.join();  // run() returned

  ASSERT_TRUE(heldAnswer);
  EXPECT_EQ(heldAnswer->body, R"({"held":1})");
  EXPECT_EQ(*heldAnswer->header("connection"), "close");
  ASSERT_TRUE(queuedAnswer) << "a connection in the accept queue is served, not reset";
  EXPECT_EQ(queuedAnswer->body, R"({"queued":1})");
  EXPECT_EQ(*queuedAnswer->header("connection"), "close");
  auto lateAnswer = late.readResponse();
  ASSERT_TRUE(lateAnswer) << "a request in the socket buffer is answered, not reset";
  EXPECT_EQ(lateAnswer->body, R"({"late":1})");
  EXPECT_EQ(*lateAnswer->header("connection"), "close");
  EXPECT_TRUE(late.peerClosed());
  // The idle keep-alive connection: close_notify and FIN, no reset.
  EXPECT_TRUE(idle.peerClosed());
  EXPECT_EQ(idle.lastEnd(), tls::ReadEnd::CleanClose);
  EXPECT_EQ(s.stats().connectionsOpen, 0u);
  EXPECT_EQ(s.stats().shutdownClosedConnections, 0u);
}

TEST(HttpsServer, ShutdownTimeoutBoundsTheDrain) {
  TestServer s([](TestServer&, ServerConfig& cfg) {
    cfg.shutdownTimeout = 300ms;
    cfg.requestTimeout = 60s;  // would keep the slow client below for a minute
  });
  std::string error;
  tls::TlsClient slow;
  ASSERT_TRUE(slow.connect(s.port(), s.client(), error)) << error;
  // Half a request: the server waits for the rest.
  ASSERT_TRUE(slow.write("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{}"));
  ASSERT_TRUE(eventually([&] { return s.stats().connectionsOpen == 1; }));
  s.server->stop();
  ASSERT_TRUE(eventually([&] { return s.stats().connectionsOpen == 0; }, 5s));
  s.thread.join();
  EXPECT_EQ(s.stats().shutdownClosedConnections, 1u);
}

TEST(HttpsServer, StopBeforeRunMakesRunReturn) {
  tls::TestCa ca;
  tls::TempDir dir;
  const tls::KeyPair p = ca.issueServer();
  ServerConfig cfg = loopbackConfig(dir, p.certPem, p.keyPem);
  HttpsServer server(cfg, echo);
  std::string error;
  ASSERT_TRUE(server.start(error)) << error;
  EXPECT_NE(server.boundPort(), 0);
  server.stop();
  server.run();  // returns at once
  SUCCEED();
}

// --- The judging pool ----------------------------------------------------------------

// One loop: while a large request is judged (held here as long as the test
// likes), a small one on another connection is still answered.
TEST(HttpsServer, ALargeRequestIsJudgedOffTheLoop) {
  std::mutex m;
  std::condition_variable cv;
  bool held = false, released = false;
  TestServer s(
      [](TestServer&, ServerConfig& cfg) {
        cfg.workerThreads = 1;
        cfg.judgeThreads = 1;
        cfg.judgeOffLoopBytes = 4096;
      },
      [&](const HttpRequest& r) {
        if (r.path == "/hold") {
          std::unique_lock lock(m);
          held = true;
          cv.notify_all();
          cv.wait(lock, [&] { return released; });
        }
        return echo(r);
      });
  const std::string large(5000, 'x');
  std::optional<tls::Response> heldAnswer;
  std::thread holder([&] { heldAnswer = tls::httpsRequest(s.port(), s.client(), "POST", "/hold", large); });
  {
    std::unique_lock lock(m);
    ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return held; }));
  }
  EXPECT_TRUE(s.healthy());  // judged on the loop, which the large one does not hold
  {
    std::lock_guard lock(m);
    released = true;
  }
  cv.notify_all();
  holder.join();
  ASSERT_TRUE(heldAnswer);
  EXPECT_EQ(heldAnswer->status, 200);
  EXPECT_EQ(heldAnswer->body, large);
}

// Every request through the pool: keep-alive, pipelining in order, the
// close after the last, a throwing handler.
TEST(HttpsServer, EveryRequestCanBeJudgedOffTheLoop) {
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.judgeOffLoopBytes = 0; });
  tls::TlsClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  for (int i = 0; i < 100; ++i) {
    const std::string body = R"({"i":)" + std::to_string(i) + "}";
    auto r = c.request("POST", "/validate", body);
    ASSERT_TRUE(r) << "request " << i;
    ASSERT_EQ(r->status, 200);
    ASSERT_EQ(r->body, body);
  }
  std::string burst;
  for (int i = 0; i < 50; ++i) burst += tls::buildRequest("POST", "/p" + std::to_string(i), std::to_string(i));
  burst += tls::buildRequest("GET", "/last", "", {{"Connection", "close"}});
  ASSERT_TRUE(c.write(burst));
  for (int i = 0; i < 50; ++i) {
    auto r = c.readResponse();
    ASSERT_TRUE(r) << i;
    EXPECT_EQ(r->body, std::to_string(i));
  }
  auto last = c.readResponse();
  ASSERT_TRUE(last);
  EXPECT_EQ(*last->header("x-path"), "/last");
  EXPECT_EQ(*last->header("connection"), "close");
  EXPECT_TRUE(c.peerClosed());

  auto thrown = tls::httpsRequest(s.port(), s.client(), "POST", "/throw", "{}");
  ASSERT_TRUE(thrown);
  EXPECT_EQ(thrown->status, 500);
  EXPECT_TRUE(s.healthy());
  EXPECT_EQ(s.stats().requestsHandled, 100u + 51u + 1u + 1u);
}

TEST(HttpsServer, StopWaitsForTheJudgingPool) {
  std::atomic<bool> entered{false};
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.judgeOffLoopBytes = 0; },
               [&](const HttpRequest& r) {
                 if (r.path == "/slow") {
                   entered = true;
                   std::this_thread::sleep_for(200ms);
                 }
                 return echo(r);
               });
  tls::TlsClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  ASSERT_TRUE(c.write(tls::buildRequest("POST", "/slow", R"({"slow":1})")));
  ASSERT_TRUE(eventually([&] { return entered.load(); }));
  s.server->stop();
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"slow":1})");
  EXPECT_EQ(*r->header("connection"), "close");
  EXPECT_TRUE(c.peerClosed());
  s.thread.join();
  EXPECT_EQ(s.stats().connectionsOpen, 0u);
}

// The client resets the connection while its request is judged: the answer
// finds the connection closed and frees it.
TEST(HttpsServer, ClientGoneWhileJudgedIsHarmless) {
  std::atomic<int> entered{0};
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.judgeOffLoopBytes = 0; },
               [&](const HttpRequest& r) {
                 if (r.path == "/slow") {
                   ++entered;
                   std::this_thread::sleep_for(100ms);
                 }
                 return echo(r);
               });
  for (int i = 0; i < 4; ++i) {
    tls::TlsClient c;
    std::string error;
    ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
    ASSERT_TRUE(c.write(tls::buildRequest("POST", "/slow", "{}")));
    ASSERT_TRUE(eventually([&] { return entered.load() == i + 1; }));
    if (i % 2 == 0) {
      linger hard{1, 0};  // close with a reset
      ::setsockopt(c.fd(), SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    }
    c.close();
  }
  EXPECT_TRUE(s.healthy());
  EXPECT_TRUE(eventually([&] { return s.stats().connectionsOpen == 0; }));
}

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
