// What connections cost before and during their TLS handshake (issue 23: 8,000
// clients that each sent 40 bytes of a ClientHello took the webhook past its
// 256 MiB limit). No OpenSSL state until the ClientHello's first record is in;
// caps on connections and handshakes in progress, beyond which the oldest
// handshake makes room, so that an honest client still gets in.
#include <openssl/ssl.h>

#include <gtest/gtest.h>

#include "test/unit/https/https_server_test_support.h"

namespace gpuguard::webhook {
namespace {

using namespace https_test;

// 40 bytes of a ClientHello: a record header announcing 512 bytes, then the
// start of the handshake message. The red team's client sent this and stopped.
const std::string kPartialClientHello = std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) +
                                        std::string(29, '\x42');

// A complete ClientHello, as a TLS client's first flight; a client that sends
// it and nothing more stalls the handshake after the server's reply.
std::string completeClientHello() {
  tls::CtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  tls::SslPtr ssl(SSL_new(ctx.get()));
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  SSL_set_bio(ssl.get(), in, out);  // owned by ssl from here
  SSL_connect(ssl.get());           // writes the ClientHello, then wants to read
  char* data = nullptr;
  const long n = BIO_get_mem_data(out, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

// Raw TCP connections that each sent `bytes` and stay.
std::vector<tls::TcpSocket> connectAndSend(const TestServer& s, int count, const std::string& bytes) {
  std::vector<tls::TcpSocket> out;
  for (int i = 0; i < count; ++i) {
    out.emplace_back(tls::tcpConnect(s.port()));
    if (!out.back().valid() || !out.back().send(bytes)) ADD_FAILURE() << "connection " << i;
  }
  return out;
}

void oneLoopLongHandshakes(TestServer&, ServerConfig& cfg) {
  cfg.workerThreads = 1;
  cfg.handshakeTimeout = 30s;  // only the caps end these handshakes during the test
  cfg.shutdownTimeout = 500ms;  // a stop waits for handshakes in progress up to this
}

TEST(HttpsServerMemory, AFewBytesOfAClientHelloHoldNoTlsState) {
  TestServer s(oneLoopLongHandshakes);
  auto partial = connectAndSend(s, 50, kPartialClientHello);
  EXPECT_TRUE(eventually([&] { return s.stats().connectionsAwaitingClientHello == 50; }));
  EXPECT_EQ(s.stats().tlsHandshakesInProgress, 0u);
  EXPECT_TRUE(s.healthy());
  EXPECT_EQ(s.stats().handshakesEvicted, 0u);
}

TEST(HttpsServerMemory, AtTheHandshakeCapTheOldestStalledHandshakeMakesRoom) {
  TestServer s([](TestServer& t, ServerConfig& cfg) {
    oneLoopLongHandshakes(t, cfg);
    cfg.maxHandshakes = 2;
  });
  const std::string hello = completeClientHello();
  ASSERT_GT(hello.size(), 100u);
  auto stalled = connectAndSend(s, 3, hello);
  EXPECT_TRUE(eventually([&] { return s.stats().handshakesEvicted == 1; }));
  EXPECT_EQ(s.stats().tlsHandshakesInProgress, 2u);
  // The first one was closed (after the server's first flight).
  tls::setTimeouts(stalled[0].fd(), 5s);
  stalled[0].readUntilClose();
  EXPECT_TRUE(s.healthy()) << "an honest client still gets its handshake";
  EXPECT_EQ(s.stats().handshakesEvicted, 2u);
}

TEST(HttpsServerMemory, AtTheConnectionCapTheOldestHandshakeMakesRoom) {
  TestServer s([](TestServer& t, ServerConfig& cfg) {
    oneLoopLongHandshakes(t, cfg);
    cfg.maxConnections = 8;
  });
  auto partial = connectAndSend(s, 8, kPartialClientHello);
  ASSERT_TRUE(eventually([&] { return s.stats().connectionsOpen == 8; }));
  // Honest clients that stay connected: each takes the place of a stalled one.
  std::vector<std::unique_ptr<tls::TlsClient>> honest;
  for (int i = 0; i < 3; ++i) {
    honest.push_back(std::make_unique<tls::TlsClient>());
    std::string error;
    ASSERT_TRUE(honest.back()->connect(s.port(), s.client(), error)) << i << ": " << error;
    auto r = honest.back()->request("POST", "/validate", "{}");
    ASSERT_TRUE(r) << i;
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_EQ(s.stats().handshakesEvicted, 3u);
  EXPECT_EQ(s.stats().connectionsRefused, 0u);
  EXPECT_EQ(s.stats().connectionsOpen, 8u);
  EXPECT_EQ(s.stats().connectionsAwaitingClientHello, 5u);
}

TEST(HttpsServerMemory, AtTheConnectionCapWithEveryHandshakeDoneNewConnectionsAreRefused) {
  TestServer s([](TestServer& t, ServerConfig& cfg) {
    oneLoopLongHandshakes(t, cfg);
    cfg.maxConnections = 4;
  });
  std::vector<std::unique_ptr<tls::TlsClient>> established;
  for (int i = 0; i < 4; ++i) {
    auto c = std::make_unique<tls::TlsClient>();
    std::string error;
    ASSERT_TRUE(c->connect(s.port(), s.client(), error)) << error;
    ASSERT_TRUE(c->request("POST", "/validate", "{}"));
    established.push_back(std::move(c));
  }
  tls::TcpSocket late(tls::tcpConnect(s.port()));
  EXPECT_TRUE(eventually([&] { return s.stats().connectionsRefused == 1; }));
  EXPECT_EQ(s.stats().handshakesEvicted, 0u);
  auto r = established.front()->request("POST", "/validate", "{}");
  ASSERT_TRUE(r) << "the established connections keep working";
  EXPECT_EQ(r->status, 200);
}

}  // namespace
}  // namespace gpuguard::webhook
