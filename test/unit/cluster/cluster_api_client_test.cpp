// The API client against a fake API server: paginated lists, watches, the
// versions tried in order, 401 and the exec plugin, and TLS as real clusters
// set it up (a private CA, client certificates).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "cluster/api_client.h"
#include "test/unit/cluster_fake_api_server.h"
#include "test/unit/tls_test_support.h"

namespace gpuguard::cluster {
namespace {

using nlohmann::json;
using testing::FakeApiServer;
using testing::tls::TempDir;

ClientConfig configFor(const std::string& url, const std::string& token = "t0k") {
  ClientConfig config;
  config.server = url;
  EXPECT_EQ(parseServerUrl(url, config.url), "");
  config.credentials.token = token;
  return config;
}

json node(const std::string& name) { return {{"metadata", {{"name", name}}}}; }

const Resource kNodes{"", {"v1"}, "nodes", "Node"};

TEST(ApiClientTest, AListIsReadPageByPageFollowingContinueTokens) {
  FakeApiServer api;
  api.setPages("/api/v1/nodes", {{{"items", {node("a"), node("b")}}},
                                 {{"items", {node("c")}}, {"metadata", {{"resourceVersion", "42"}}}}});
  ApiClient client(configFor(api.url()));
  std::vector<std::string> names;
  const ListResult r = client.list(kNodes, [&](json&& item) { names.push_back(item["metadata"]["name"]); }, 2);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.resourceVersion, "42");
  EXPECT_EQ(r.items, 3u);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(api.requests(), (std::vector<std::string>{"/api/v1/nodes?limit=2 auth=Bearer t0k",
                                                      "/api/v1/nodes?continue=page-1/&=&limit=2 auth=Bearer t0k"}));
}

TEST(ApiClientTest, AVersionTheServerDoesNotServeFallsBackToTheNextAndNoneIs404) {
  FakeApiServer api;
  api.setList("/apis/resource.k8s.io/v1beta2/deviceclasses", 200,
              {{"items", json::array()}, {"metadata", {{"resourceVersion", "7"}}}});
  ApiClient client(configFor(api.url()));
  const Resource classes{"resource.k8s.io", {"v1", "v1beta2"}, "deviceclasses", "DeviceClass"};
  const ListResult r = client.list(classes, [](json&&) {});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.version, "v1beta2");
  const ListResult none = client.list({"karpenter.sh", {"v1"}, "nodepools", "NodePool"}, [](json&&) {});
  EXPECT_EQ(none.status, 404);
  EXPECT_EQ(none.error, "the server could not find the requested resource");
}

TEST(ApiClientTest, RefusedAndMalformedListsAreErrorsThatSayWhy) {
  FakeApiServer api;
  api.setList("/api/v1/nodes", 403,
              {{"kind", "Status"}, {"code", 403}, {"message", "nodes is forbidden: User \"system:serviceaccount:gpuguard:gpuguard\" cannot list resource \"nodes\""}});
  api.setList("/api/v1/namespaces", 200, {{"items", "nope"}});
  ApiClient client(configFor(api.url()));
  const ListResult refused = client.list(kNodes, [](json&&) {});
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.error, "nodes is forbidden: User \"system:serviceaccount:gpuguard:gpuguard\" cannot list resource \"nodes\"");
  const ListResult garbled = client.list({"", {"v1"}, "namespaces", "Namespace"}, [](json&&) {});
  EXPECT_EQ(garbled.error, "the list of namespaces is not a JSON list");
}

TEST(ApiClientTest, AnUnreachableServerIsATransportError) {
  int port;
  {
    FakeApiServer gone;
    port = gone.port();
  }
  ApiClient client(configFor("http://127.0.0.1:" + std::to_string(port)));
  const ListResult r = client.list(kNodes, [](json&&) {});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.error, "cannot connect to 127.0.0.1:" + std::to_string(port) + ": Connection refused");
}

TEST(ApiClientTest, AWatchStreamsEventsWithBookmarksAndRemembersTheLastResourceVersion) {
  FakeApiServer api;
  api.push("/api/v1/nodes", R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"11"}}})");
  api.push("/api/v1/nodes", R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"15"}}})");
  api.push("/api/v1/nodes", FakeApiServer::kEnd);
  ApiClient client(configFor(api.url()));
  std::vector<WatchEvent::Type> types;
  const WatchResult w = client.watch(kNodes, "v1", "10", [&](WatchEvent&& e) {
    types.push_back(e.type);
    return true;
  }, 60, nullptr);
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(w.error, "");
  EXPECT_EQ(w.resourceVersion, "15");
  EXPECT_EQ(types, (std::vector<WatchEvent::Type>{WatchEvent::Type::Added, WatchEvent::Type::Bookmark}));
  EXPECT_EQ(api.requests().at(0),
            "/api/v1/nodes?allowWatchBookmarks=true&resourceVersion=10&timeoutSeconds=60&watch=1 auth=Bearer t0k");
}

TEST(ApiClientTest, ADroppedWatchIsAnErrorThatKeepsTheResourceVersionToResumeFrom) {
  FakeApiServer api;
  api.push("/api/v1/nodes", R"({"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"12"}}})");
  api.push("/api/v1/nodes", FakeApiServer::kDrop);
  ApiClient client(configFor(api.url()));
  const WatchResult w = client.watch(kNodes, "v1", "10", [](WatchEvent&&) { return true; }, 60, nullptr);
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(w.error, "the connection closed inside a chunked body");
  EXPECT_EQ(w.resourceVersion, "12");
}

TEST(ApiClientTest, GoneComesAsAnErrorEventOrAsTheHttpStatus) {
  FakeApiServer api;
  api.push("/api/v1/nodes", R"j({"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old resource version: 10 (99)"}})j");
  ApiClient client(configFor(api.url()));
  const WatchResult event = client.watch(kNodes, "v1", "10", [](WatchEvent&&) { return true; }, 60, nullptr);
  EXPECT_EQ(event.errorEventCode, 410);
  EXPECT_EQ(event.error, "watch ERROR event: too old resource version: 10 (99)");
  api.failWatches("/api/v1/nodes", 410);
  const WatchResult status = client.watch(kNodes, "v1", "10", [](WatchEvent&&) { return true; }, 60, nullptr);
  EXPECT_EQ(status.status, 410);
}

TEST(ApiClientTest, AGarbledWatchLineEndsTheWatchWithTheReason) {
  FakeApiServer api;
  api.push("/api/v1/nodes", "<html>proxy error</html>");
  ApiClient client(configFor(api.url()));
  const WatchResult w = client.watch(kNodes, "v1", "1", [](WatchEvent&&) { return true; }, 60, nullptr);
  EXPECT_EQ(w.error, "a watch line that is not JSON: <html>proxy error</html>");
}

TEST(ApiClientTest, CancellingAnOpenWatchEndsItWithin250ms) {
  FakeApiServer api;
  ApiClient client(configFor(api.url()));
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    api.waitForWatches(1);
    cancel.store(true);
  });
  const WatchResult w = client.watch(kNodes, "v1", "1", [](WatchEvent&&) { return true; }, 60, &cancel);
  canceller.join();
  EXPECT_EQ(w.error, "cancelled");
}

TEST(ApiClientTest, A401RunsTheExecPluginAgainAndRetriesOnce) {
  TempDir dir;
  const std::string plugin = dir.write("plugin.sh", "#!/bin/sh\nN=$(( $(cat " + dir.file("n") + " 2>/dev/null || echo 0) + 1 ))\n"
                                       "echo $N > " + dir.file("n") + "\n"
                                       "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
                                       "\"status\":{\"token\":\"run-'$N'\"}}'\n");
  chmod(plugin.c_str(), 0755);
  FakeApiServer api;
  api.setList("/api/v1/nodes", 401, {{"kind", "Status"}, {"code", 401}, {"message", "Unauthorized"}});
  ClientConfig config = configFor(api.url(), "");
  config.credentials.exec = ExecConfig{plugin, {}, {}, "client.authentication.k8s.io/v1", "Never", false, ""};
  ApiClient client(config);
  const ListResult r = client.list(kNodes, [](json&&) {});
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(api.requests(), (std::vector<std::string>{"/api/v1/nodes?limit=500 auth=Bearer run-1",
                                                      "/api/v1/nodes?limit=500 auth=Bearer run-2"}));
}

class ApiClientTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const testing::tls::KeyPair serverPair = ca_.issueServer();
    dir_.write("server.crt", serverPair.certPem);
    dir_.write("server.key", serverPair.keyPem);
    dir_.write("client-ca.crt", ca_.certPem());
    server_ = std::make_unique<httplib::SSLServer>(dir_.file("server.crt").c_str(), dir_.file("server.key").c_str(),
                                                   dir_.file("client-ca.crt").c_str());
    server_->Get("/api/v1/nodes", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"items":[{"metadata":{"name":"gpu-1"}}],"metadata":{"resourceVersion":"3"}})", "application/json");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }
  ClientConfig config() {
    ClientConfig c = configFor("https://127.0.0.1:" + std::to_string(port_), "");
    c.tls.caPem = ca_.certPem();
    const testing::tls::KeyPair client = ca_.issueClient("gpuguard");
    c.tls.clientCertPem = client.certPem;
    c.tls.clientKeyPem = client.keyPem;
    return c;
  }

  testing::tls::TestCa ca_;
  TempDir dir_;
  std::unique_ptr<httplib::SSLServer> server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(ApiClientTlsTest, AClientCertificateAndThePrivateCaReachTheServer) {
  ApiClient client(config());
  std::size_t items = 0;
  const ListResult r = client.list(kNodes, [&](json&&) { ++items; });
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(items, 1u);
}

TEST_F(ApiClientTlsTest, AServerCertificateFromAnotherCaIsRefusedUnlessVerificationIsSkipped) {
  ClientConfig c = config();
  c.tls.caPem = testing::tls::TestCa("another CA").certPem();
  EXPECT_EQ(ApiClient(c).list(kNodes, [](json&&) {}).error,
            "TLS with 127.0.0.1: certificate verify failed: self-signed certificate in certificate chain");
  c.tls.insecureSkipVerify = true;
  EXPECT_EQ(ApiClient(c).list(kNodes, [](json&&) {}).error, "");
}

TEST_F(ApiClientTlsTest, AServerNameTheCertificateDoesNotHoldIsRefused) {
  ClientConfig c = config();
  c.tls.serverName = "api.other.example";
  EXPECT_EQ(ApiClient(c).list(kNodes, [](json&&) {}).error,
            "TLS with 127.0.0.1: certificate verify failed: hostname mismatch");
}

TEST_F(ApiClientTlsTest, AMismatchedClientKeyIsAConfigurationError) {
  ClientConfig c = config();
  c.tls.clientKeyPem = ca_.issueClient("other").keyPem;
  EXPECT_EQ(ApiClient(c).list(kNodes, [](json&&) {}).error.rfind("the client key does not match the client certificate", 0), 0u);
}

}  // namespace
}  // namespace gpuguard::cluster
