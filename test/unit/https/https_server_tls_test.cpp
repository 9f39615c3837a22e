// The HTTPS server's certificates: rotation from disk (and through a Secret
// volume's symlink swap), reloads on demand, broken pairs, and mutual TLS
// (the probes without a client certificate, client CA rotation).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/https/https_server_test_support.h"

namespace gpuguard::webhook {
namespace {

using namespace https_test;

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

// Red team 35 D5: connections that finished their handshake without a
// certificate, then sent nothing, held every slot and kept the API server
// out. At the cap the oldest of them, between requests, makes room.
TEST(HttpsServer, WithAClientCaConnectionsWithoutACertificateMakeRoomAtTheCap) {
  tls::TestCa clientCa("gpuguard test client CA");
  TestServer s([&](TestServer& t, ServerConfig& cfg) {
    cfg.clientCaFile = t.dir.write("client-ca.crt", clientCa.certPem());
    cfg.maxConnections = 4;
    cfg.workerThreads = 1;  // one event loop: the cap and the eviction see every connection
  });
  std::vector<tls::TlsClient> strangers(4);
  for (auto& c : strangers) {
    std::string error;
    ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  }
  ASSERT_TRUE(eventually([&] { return s.stats().connectionsOpen == 4; }));
  const tls::ClientOptions apiserver = withCertificate(s.client(), clientCa.issueClient());
  std::vector<tls::TlsClient> reviews(3);  // kept open: each new one needs a slot
  for (auto& c : reviews) {
    std::string error;
    ASSERT_TRUE(c.connect(s.port(), apiserver, error)) << error;
    auto r = c.request("POST", "/validate", "{}");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_EQ(s.stats().unverifiedEvicted, 3u);
  EXPECT_EQ(s.stats().connectionsRefused, 0u);
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

}  // namespace
}  // namespace gpuguard::webhook
