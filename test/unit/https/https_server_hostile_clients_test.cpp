// The HTTPS server against every hostile client from issue 8: random bytes,
// slowloris, bodies that never finish, idle floods, plain HTTP on the TLS
// port, old TLS, clients that vanish mid-request, connections over the cap.
// No latency assertions: "a healthy request still succeeds" is the measure.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/https/https_server_test_support.h"

namespace gpuguard::webhook {
namespace {

using namespace https_test;

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

// Over the cap, a new connection closes the oldest one still waiting for its
// ClientHello (https_server_memory_test.cpp has the rest of the caps).
TEST(HttpsServer, ConnectionsOverTheCapCloseTheOldestHandshake) {
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.maxConnections = 5; });
  std::vector<tls::TcpSocket> socks;
  for (int i = 0; i < 12; ++i) socks.emplace_back(tls::tcpConnect(s.port()));
  // Both counters settle together: the server counts an eviction a moment
  // before the evicted connection's close, so a read in between sees 6 open.
  EXPECT_TRUE(eventually([&] { return s.stats().handshakesEvicted >= 7 && s.stats().connectionsOpen <= 5; }))
      << "evicted " << s.stats().handshakesEvicted << ", open " << s.stats().connectionsOpen;
  EXPECT_EQ(s.stats().connectionsRefused, 0u);
  socks.clear();
  EXPECT_TRUE(eventually([&] { return s.stats().connectionsOpen == 0; }));
  EXPECT_TRUE(s.healthy());
}

}  // namespace
}  // namespace gpuguard::webhook
