// The API client's requests on one object (GET, create, replace, server-side
// apply, delete with a uid precondition), list/watch options, and keep-alive:
// against the fake API server, which answers as the API server does (404,
// 409 AlreadyExists, Conflict, failed preconditions).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cluster/api_client.h"
#include "test/unit/cluster_fake_api_server.h"

namespace gpuguard::cluster {
namespace {

using nlohmann::json;
using testing::FakeApiServer;

ClientConfig configFor(const std::string& url) {
  ClientConfig config;
  config.server = url;
  EXPECT_EQ(parseServerUrl(url, config.url), "");
  config.credentials.token = "t0k";
  return config;
}

const Resource kLeases{"coordination.k8s.io", {"v1"}, "leases", "Lease", true};
const Resource kReports{"openreports.io", {"v1alpha1"}, "reports", "Report", true};
const Resource kClusterReports{"openreports.io", {"v1alpha1"}, "clusterreports", "ClusterReport", false};
const Resource kPods{"", {"v1"}, "pods", "Pod", true};
const std::string kLeasePath = "/apis/coordination.k8s.io/v1/namespaces/gpuguard-system/leases/gpuguard-audit";

json lease(const std::string& holder) {
  return {{"apiVersion", "coordination.k8s.io/v1"}, {"kind", "Lease"},
          {"metadata", {{"name", "gpuguard-audit"}, {"namespace", "gpuguard-system"}}},
          {"spec", {{"holderIdentity", holder}, {"leaseDurationSeconds", 15}}}};
}

json report(const std::string& ns, const std::string& name, int fails) {
  return {{"apiVersion", "openreports.io/v1alpha1"}, {"kind", "Report"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"app.kubernetes.io/managed-by", "gpuguard"}}}}},
          {"source", "gpuguard"}, {"summary", {{"fail", fails}}}};
}

TEST(ResourcePathTest, NamespacedResourcesHaveACollectionPerNamespaceAndOneForAll) {
  EXPECT_EQ(kReports.path("v1alpha1"), "/apis/openreports.io/v1alpha1/reports");
  EXPECT_EQ(kReports.path("v1alpha1", "ml"), "/apis/openreports.io/v1alpha1/namespaces/ml/reports");
  EXPECT_EQ(kPods.objectPath("v1", "ml", "train-0"), "/api/v1/namespaces/ml/pods/train-0");
  EXPECT_EQ(kClusterReports.objectPath("v1alpha1", "ml", "gpuguard"), "/apis/openreports.io/v1alpha1/clusterreports/gpuguard");
  EXPECT_EQ(kReports.apiVersion("v1alpha1"), "openreports.io/v1alpha1");
  EXPECT_EQ(kPods.apiVersion("v1"), "v1");
}

TEST(ApiClientObjectTest, GetAnswersTheObjectOr404) {
  FakeApiServer api;
  api.putObject(kLeasePath, lease("a"));
  ApiClient client(configFor(api.url()));
  const ApiResult found = client.getObject(kLeases, "v1", "gpuguard-system", "gpuguard-audit");
  EXPECT_TRUE(found.ok());
  EXPECT_EQ(found.status, 200);
  EXPECT_EQ(found.body["spec"]["holderIdentity"], "a");
  EXPECT_EQ(found.body["metadata"]["resourceVersion"], "101");
  const ApiResult missing = client.getObject(kLeases, "v1", "gpuguard-system", "other");
  EXPECT_FALSE(missing.ok());
  EXPECT_TRUE(missing.notFound());
  EXPECT_EQ(missing.error, "the server could not find the requested resource");
}

TEST(ApiClientObjectTest, CreatePostsToTheCollectionAndASecondCreateIsAlreadyExists) {
  FakeApiServer api;
  ApiClient client(configFor(api.url()));
  const ApiResult created = client.create(kLeases, "v1", "gpuguard-system", lease("a"));
  EXPECT_EQ(created.status, 201);
  EXPECT_EQ(created.error, "");
  EXPECT_EQ(created.body["metadata"]["uid"], "uid-1");
  const ApiResult again = client.create(kLeases, "v1", "gpuguard-system", lease("b"));
  EXPECT_TRUE(again.conflict());
  EXPECT_EQ(again.body["reason"], "AlreadyExists");
  EXPECT_EQ(again.error, "\"gpuguard-audit\" already exists");
  EXPECT_EQ(api.object(kLeasePath)->at("spec")["holderIdentity"], "a");
  const std::vector<FakeApiServer::Write> writes = api.writes();
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[0].method, "POST");
  EXPECT_EQ(writes[0].target, "/apis/coordination.k8s.io/v1/namespaces/gpuguard-system/leases");
  EXPECT_EQ(writes[0].contentType, "application/json");
  EXPECT_EQ(writes[0].body, lease("a"));
}

TEST(ApiClientObjectTest, ReplaceWithAStaleResourceVersionIsAConflict) {
  FakeApiServer api;
  const json stored = api.putObject(kLeasePath, lease("a"));
  ApiClient client(configFor(api.url()));
  json mine = stored;
  mine["spec"]["holderIdentity"] = "b";
  const ApiResult replaced = client.replace(kLeases, "v1", "gpuguard-system", "gpuguard-audit", mine);
  EXPECT_TRUE(replaced.ok());
  EXPECT_EQ(replaced.body["spec"]["holderIdentity"], "b");
  EXPECT_NE(replaced.body["metadata"]["resourceVersion"], stored["metadata"]["resourceVersion"]);
  const ApiResult stale = client.replace(kLeases, "v1", "gpuguard-system", "gpuguard-audit", stored);
  EXPECT_TRUE(stale.conflict());
  EXPECT_EQ(stale.body["reason"], "Conflict");
  EXPECT_EQ(api.object(kLeasePath)->at("spec")["holderIdentity"], "b");
}

TEST(ApiClientObjectTest, ApplyIsAServerSideApplyPatchThatCreatesAndThenUpdates) {
  FakeApiServer api;
  ApiClient client(configFor(api.url()));
  const ApiResult created = client.apply(kReports, "v1alpha1", "ml", "gpuguard", report("ml", "gpuguard", 1));
  EXPECT_EQ(created.status, 201);
  const ApiResult unchanged = client.apply(kReports, "v1alpha1", "ml", "gpuguard", report("ml", "gpuguard", 1));
  EXPECT_EQ(unchanged.status, 200);
  EXPECT_EQ(unchanged.body["metadata"]["resourceVersion"], created.body["metadata"]["resourceVersion"]);
  const ApiResult changed = client.apply(kReports, "v1alpha1", "ml", "gpuguard", report("ml", "gpuguard", 2));
  EXPECT_TRUE(changed.ok());
  EXPECT_EQ(changed.body["summary"]["fail"], 2);
  const FakeApiServer::Write write = api.writes().at(0);
  EXPECT_EQ(write.method, "PATCH");
  EXPECT_EQ(write.target, "/apis/openreports.io/v1alpha1/namespaces/ml/reports/gpuguard?fieldManager=gpuguard-audit&force=true");
  EXPECT_EQ(write.contentType, "application/apply-patch+yaml");
  EXPECT_EQ(write.body, report("ml", "gpuguard", 1));
}

TEST(ApiClientObjectTest, ClusterScopedObjectsIgnoreTheNamespace) {
  FakeApiServer api;
  ApiClient client(configFor(api.url()));
  json clusterReport = report("", "gpuguard", 1);
  clusterReport["kind"] = "ClusterReport";
  clusterReport["metadata"].erase("namespace");
  EXPECT_EQ(client.apply(kClusterReports, "v1alpha1", "", "gpuguard", clusterReport).status, 201);
  EXPECT_TRUE(api.object("/apis/openreports.io/v1alpha1/clusterreports/gpuguard").has_value());
}

TEST(ApiClientObjectTest, RemoveCarriesTheUidPreconditionSoAnotherObjectOfTheSameNameStays) {
  FakeApiServer api;
  const json stored = api.putObject("/apis/openreports.io/v1alpha1/namespaces/ml/reports/gpuguard", report("ml", "gpuguard", 1));
  ApiClient client(configFor(api.url()));
  const ApiResult wrongUid = client.remove(kReports, "v1alpha1", "ml", "gpuguard", "uid-of-an-older-report");
  EXPECT_TRUE(wrongUid.conflict());
  EXPECT_EQ(wrongUid.error, "Precondition failed: UID in precondition: uid-of-an-older-report, UID in object meta: uid-1");
  EXPECT_EQ(api.objectCount(), 1u);
  const ApiResult removed = client.remove(kReports, "v1alpha1", "ml", "gpuguard", stored["metadata"]["uid"]);
  EXPECT_TRUE(removed.ok());
  EXPECT_EQ(api.objectCount(), 0u);
  EXPECT_TRUE(client.remove(kReports, "v1alpha1", "ml", "gpuguard", "").notFound());
  EXPECT_EQ(api.writes().at(1).body,
            (json{{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"preconditions", {{"uid", "uid-1"}}}}));
  EXPECT_EQ(api.writes().at(2).body, (json{{"apiVersion", "v1"}, {"kind", "DeleteOptions"}}));
}

TEST(ApiClientObjectTest, RefusalsAndServerErrorsCarryTheStatusAndItsMessage) {
  FakeApiServer api;
  api.failNext("PATCH", "/apis/openreports.io/v1alpha1/namespaces/ml/reports/gpuguard", 500);
  ApiClient client(configFor(api.url()));
  const ApiResult failed = client.apply(kReports, "v1alpha1", "ml", "gpuguard", report("ml", "gpuguard", 1));
  EXPECT_EQ(failed.status, 500);
  EXPECT_EQ(failed.error, "injected by the test");
  EXPECT_EQ(failed.body["kind"], "Status");
  EXPECT_EQ(client.apply(kReports, "v1alpha1", "ml", "gpuguard", report("ml", "gpuguard", 1)).status, 201);
}

TEST(ApiClientObjectTest, ABodyThatIsNotJsonIsAnErrorNotACrash) {
  FakeApiServer api;
  api.setList("/api/v1/namespaces/ml/pods/p", 200, "just a string");
  api.setList("/api/v1/namespaces/ml/pods/q", 503, "<html>upstream down</html>");
  ApiClient client(configFor(api.url()));
  const ApiResult notObject = client.getObject(kPods, "v1", "ml", "p");
  EXPECT_EQ(notObject.error, "the answer to GET is not a JSON object: \"just a string\"");
  EXPECT_FALSE(notObject.ok());
  const ApiResult down = client.getObject(kPods, "v1", "ml", "q");
  EXPECT_EQ(down.status, 503);
  EXPECT_EQ(down.error, "HTTP 503: \"<html>upstream down</html>\"");
}

TEST(ApiClientObjectTest, AnAnswerLargerThanTheObjectCapIsRefused) {
  FakeApiServer api;
  api.setList("/api/v1/namespaces/ml/pods/huge", 200, {{"data", std::string(ApiClient::kMaxObjectBytes + 1, 'x')}});
  ApiClient client(configFor(api.url()));
  const ApiResult huge = client.getObject(kPods, "v1", "ml", "huge");
  EXPECT_FALSE(huge.ok());
  EXPECT_EQ(huge.error, "the answer is larger than 16 MiB");
  EXPECT_TRUE(huge.body.is_null());
}

TEST(ApiClientObjectTest, AStringThatIsNotUtf8IsSentReplacedNotThrown) {
  FakeApiServer api;
  ApiClient client(configFor(api.url()));
  json bad = report("ml", "gpuguard", 1);
  bad["message"] = std::string("cut in the middle of \xE2\x82");
  const ApiResult r = client.apply(kReports, "v1alpha1", "ml", "gpuguard", bad);
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.body["message"], "cut in the middle of \xEF\xBF\xBD");
}

TEST(ApiClientListOptionsTest, ANamespaceAndSelectorsNarrowTheListAndTheWatch) {
  FakeApiServer api;
  api.putObject("/apis/openreports.io/v1alpha1/namespaces/ml/reports/gpuguard", report("ml", "gpuguard", 1));
  json foreign = report("ml", "kyverno-1", 1);
  foreign["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "kyverno";
  api.putObject("/apis/openreports.io/v1alpha1/namespaces/ml/reports/kyverno-1", foreign);
  api.putObject("/apis/openreports.io/v1alpha1/namespaces/team-a/reports/gpuguard", report("team-a", "gpuguard", 3));
  ApiClient client(configFor(api.url()));
  ListOptions ours;
  ours.labelSelector = "app.kubernetes.io/managed-by=gpuguard";
  ours.pageSize = 100;
  std::vector<std::string> seen;
  const auto collect = [&](json&& item) {
    seen.push_back(item["metadata"]["namespace"].get<std::string>() + "/" + item["metadata"]["name"].get<std::string>());
  };
  EXPECT_EQ(client.list(kReports, collect, ours).error, "");
  EXPECT_EQ(seen, (std::vector<std::string>{"ml/gpuguard", "team-a/gpuguard"}));
  seen.clear();
  ours.namespaceName = "team-a";
  EXPECT_EQ(client.list(kReports, collect, ours).items, 1u);
  EXPECT_EQ(seen, (std::vector<std::string>{"team-a/gpuguard"}));
  ListOptions pending;
  pending.fieldSelector = "status.phase=Pending";
  pending.namespaceName = "ml";
  api.push("/api/v1/namespaces/ml/pods", FakeApiServer::kEnd);
  client.watch(kPods, "v1", pending, "7", [](WatchEvent&&) { return true; }, 30, nullptr);
  const std::vector<std::string> requests = api.requests();
  EXPECT_EQ(requests.at(0), "/apis/openreports.io/v1alpha1/reports?labelSelector=app.kubernetes.io/managed-by=gpuguard&limit=100 auth=Bearer t0k");
  EXPECT_EQ(requests.at(2), "/api/v1/namespaces/ml/pods?allowWatchBookmarks=true&fieldSelector=status.phase=Pending"
                            "&resourceVersion=7&timeoutSeconds=30&watch=1 auth=Bearer t0k");
}

TEST(ApiClientListOptionsTest, AServedCollectionWithNothingInItIsAnEmptyList) {
  FakeApiServer api;
  api.serveCollection("/apis/openreports.io/v1alpha1/reports");
  ApiClient client(configFor(api.url()));
  const ListResult r = client.list(kReports, [](json&&) {}, ListOptions{});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.items, 0u);
}

TEST(HttpKeepAliveTest, RequestsWithoutAStreamShareConnectionsAndAWatchHasItsOwn) {
  FakeApiServer api;  // cpp-httplib closes a connection after 5 requests on it
  ApiClient client(configFor(api.url()));
  for (int i = 0; i < 10; ++i) client.apply(kReports, "v1alpha1", "ml", "r" + std::to_string(i), report("ml", "r", i));
  EXPECT_EQ(api.objectCount(), 10u);
  EXPECT_EQ(api.connections(), 2u);
  api.push("/apis/openreports.io/v1alpha1/reports", FakeApiServer::kEnd);
  client.watch(kReports, "v1alpha1", "1", [](WatchEvent&&) { return true; }, 30, nullptr);
  EXPECT_EQ(api.connections(), 3u);
}

// A server whose first connection answers one request and then misbehaves
// as `Mode` says; a second connection (when the mode has one) answers.
class ClosingServer {
 public:
  enum class Mode {
    CloseUnanswered,  // reads the second request and closes (a Go server dropping an idle connection as it arrives)
    Silent,           // reads the second request and never answers, the connection kept open
    CloseIdle,        // closes right after the first answer: the connection dies while idle in the pool
  };
  explicit ClosingServer(Mode mode = Mode::CloseUnanswered) : mode_(mode) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    listen(listener_, 4);
    socklen_t length = sizeof address;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~ClosingServer() {
    thread_.join();
    close(listener_);
  }
  std::uint16_t port() const { return port_; }
  int requests() const { return requests_; }

 private:
  bool answerOne(int fd) {
    std::string in;
    char buffer[4096];
    while (in.find("\r\n\r\n") == std::string::npos) {
      const long n = recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) return false;
      in.append(buffer, static_cast<std::size_t>(n));
    }
    ++requests_;
    const std::string body = R"({"kind":"Pod"})";
    const std::string out = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                            std::to_string(body.size()) + "\r\n\r\n" + body;
    return send(fd, out.data(), out.size(), MSG_NOSIGNAL) == static_cast<long>(out.size());
  }
  void serve() {
    const int first = accept(listener_, nullptr, nullptr);
    answerOne(first);
    if (mode_ == Mode::CloseIdle) {
      close(first);
      const int second = accept(listener_, nullptr, nullptr);
      answerOne(second);
      close(second);
      return;
    }
    char buffer[4096];
    if (recv(first, buffer, sizeof buffer, 0) > 0) ++requests_;  // the second request: read, never answered
    if (mode_ == Mode::Silent) {
      while (recv(first, buffer, sizeof buffer, 0) > 0) ++requests_;  // until the client gives up and closes
      close(first);
      return;
    }
    close(first);
    const int second = accept(listener_, nullptr, nullptr);
    answerOne(second);
    close(second);
  }
  Mode mode_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<int> requests_{0};
};

TEST(HttpKeepAliveTest, AReusedConnectionClosedBeforeTheAnswerIsRetriedOnceOnANewOne) {
  ClosingServer server;
  HttpClient http(ServerUrl{false, "127.0.0.1", server.port(), ""}, TlsSettings{});
  HttpRequest request;
  request.pathAndQuery = "/api/v1/namespaces/ml/pods/p";
  EXPECT_EQ(http.get(request).status, 200);
  const HttpResponse retried = http.get(request);
  EXPECT_EQ(retried.error, "");
  EXPECT_EQ(retried.status, 200);
  EXPECT_EQ(retried.body, R"({"kind":"Pod"})");
  EXPECT_EQ(server.requests(), 3);
}

TEST(HttpKeepAliveTest, AReusedConnectionThatTimesOutIsNotSentAgain) {
  ClosingServer server(ClosingServer::Mode::Silent);
  {
    HttpClient http(ServerUrl{false, "127.0.0.1", server.port(), ""}, TlsSettings{});
    HttpRequest request;
    request.pathAndQuery = "/api/v1/namespaces/ml/pods/p";
    request.idleTimeout = std::chrono::milliseconds(100);
    EXPECT_EQ(http.get(request).status, 200);
    const HttpResponse slow = http.get(request);
    EXPECT_EQ(slow.status, 0);
    EXPECT_EQ(slow.error, "timed out");
  }
  EXPECT_EQ(server.requests(), 2);
}

TEST(HttpKeepAliveTest, AnIdleConnectionTheServerClosedIsReplacedWithoutAnError) {
  ClosingServer server(ClosingServer::Mode::CloseIdle);
  HttpClient http(ServerUrl{false, "127.0.0.1", server.port(), ""}, TlsSettings{});
  HttpRequest request;
  request.pathAndQuery = "/api/v1/namespaces/ml/pods/p";
  EXPECT_EQ(http.get(request).status, 200);
  EXPECT_EQ(http.idleConnections(), 1u);
  const HttpResponse next = http.get(request);  // the pooled connection is closed: dropped (or retried)
  EXPECT_EQ(next.error, "");
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(server.requests(), 2);
}

TEST(HttpKeepAliveTest, AServerGoneIsAConnectErrorAndNoConnectionIsKept) {
  int port;
  {
    FakeApiServer gone;
    port = gone.port();
  }
  HttpClient http(ServerUrl{false, "127.0.0.1", static_cast<std::uint16_t>(port), ""}, TlsSettings{});
  HttpRequest request;
  request.pathAndQuery = "/api/v1/namespaces/ml/pods/p";
  const HttpResponse refused = http.get(request);
  EXPECT_EQ(refused.status, 0);
  EXPECT_EQ(refused.error, "cannot connect to 127.0.0.1:" + std::to_string(port) + ": Connection refused");
  EXPECT_EQ(http.idleConnections(), 0u);
}

TEST(HttpKeepAliveTest, ABodyIsSentWithItsLengthAndType) {
  FakeApiServer api;
  HttpClient http(ServerUrl{false, "127.0.0.1", static_cast<std::uint16_t>(api.port()), ""}, TlsSettings{});
  HttpRequest request;
  request.pathAndQuery = "/apis/coordination.k8s.io/v1/namespaces/gpuguard-system/leases";
  const HttpResponse created = http.send("POST", request, lease("a").dump(), "application/json");
  EXPECT_EQ(created.status, 201);
  EXPECT_EQ(api.writes().at(0).body, lease("a"));
  request.maxBodyBytes = 16;
  const HttpResponse capped = http.send("POST", request, lease("b").dump(), "application/json");
  EXPECT_EQ(capped.status, 409);
  EXPECT_EQ(capped.error, "the answer is larger than 16 bytes");
}

}  // namespace
}  // namespace gpuguard::cluster
