// gpuguard-webhook end to end inside one process: the real HTTPS server on
// 127.0.0.1 (port 0) with throw-away certificates, real TLS from a client
// that verifies the server, and the webhook application behind it. A last
// group runs the gpuguard-webhook binary itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <httplib.h>

#include "test/unit/tls_test_support.h"
#include "webhook/app.h"
#include "https/server.h"
#include "webhook/log.h"
#include "webhook/malloc_tuning.h"
#include "webhook/metrics.h"
#include "webhook/policy_source.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
namespace tls = gpuguard::testing::tls;

// ---------------------------------------------------------------------------
// Requests.
// ---------------------------------------------------------------------------

std::string review(const std::string& operation, const json& object, const json& oldObject = nullptr,
                   const std::string& apiVersion = "admission.k8s.io/v1", bool dryRun = false) {
  const json& source = object.is_object() ? object : oldObject;
  json request = {
      {"uid", "uid-" + operation},
      {"kind", {{"group", ""}, {"version", "v1"}, {"kind", source.value("kind", "Pod")}}},
      {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
      {"name", "trainer"},
      {"namespace", "ml"},
      {"operation", operation},
      {"userInfo", {{"username", "alice"}}},
      {"object", object},
      {"oldObject", oldObject},
      {"dryRun", dryRun},
  };
  return json{{"kind", "AdmissionReview"}, {"apiVersion", apiVersion}, {"request", request}}.dump();
}

json gpuPod(bool tolerated, const std::string& gpus = "1", const std::string& kind = "Pod") {
  json spec = {{"containers",
                {{{"name", "cuda"},
                  {"image", "nvidia/cuda:12.4.1-base-ubuntu22.04"},
                  {"resources", {{"limits", {{"nvidia.com/gpu", gpus}}}, {"requests", {{"nvidia.com/gpu", gpus}}}}}}}},
               {"nodeSelector", {{"nvidia.com/cuda.driver-version.major", "550"}}}};
  if (tolerated) spec["tolerations"] = {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}};
  return {{"apiVersion", kind == "Pod" ? "v1" : "example.com/v1"},
          {"kind", kind},
          {"metadata", {{"name", "trainer"}, {"namespace", "ml"}}},
          {"spec", spec}};
}

// A client that verifies the server against the test CA.
tls::ClientOptions trusting(const tls::TestCa& ca) {
  tls::ClientOptions options;
  options.caPem = ca.certPem();
  return options;
}

// One well-formed request through cpp-httplib's client, verifying the server
// (its certificate for 127.0.0.1) against the test CA: an implementation of
// HTTP and TLS independent of the server's, so the server is not checked only
// by code that shares its assumptions. Malformed bytes go through the raw
// client of tls_test_support.h.
std::optional<tls::Response> httplibRequest(std::uint16_t port, const tls::TestCa& ca, const std::string& method,
                                            const std::string& path, const std::string& body = "") {
  httplib::SSLClient client("127.0.0.1", port);
  X509_STORE* trusted = X509_STORE_new();
  X509_STORE_add_cert(trusted, tls::certFromPem(ca.certPem()).get());
  client.set_ca_cert_store(trusted);  // the client's SSL_CTX owns it from here
  client.enable_server_certificate_verification(true);
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  const httplib::Result r = method == "POST" ? client.Post(path.c_str(), body, "application/json")
                                             : client.Get(path.c_str());
  if (!r) return std::nullopt;
  tls::Response out;
  out.status = r->status;
  out.body = r->body;
  for (const auto& [name, value] : r->headers) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    out.headers.emplace_back(lower, value);
  }
  return out;
}

// ---------------------------------------------------------------------------
// The fixture: one webhook on loopback per test.
// ---------------------------------------------------------------------------

class Webhook : public ::testing::Test {
 protected:
  void SetUp() override {
    certPath = dir.write("tls.crt", pair.certPem);
    keyPath = dir.write("tls.key", pair.keyPem);
    policyPath = dir.write("policy.yaml", "rules: {}\n");
  }

  void TearDown() override { stopServer(); }

  void startServer(std::size_t maxBody = 256 * 1024) {
    policy = std::make_unique<PolicySource>(policyPath, logger);
    app = std::make_unique<WebhookApp>(*policy, metrics, logger);
    ServerConfig config;
    config.bindAddress = "127.0.0.1";
    config.port = 0;
    config.certFile = certPath;
    config.keyFile = keyPath;
    config.maxBodyBytes = maxBody;
    config.certificatePollInterval = 100ms;
    config.workerThreads = 2;
    config.clientCaFile = clientCaPath;
    server = std::make_unique<HttpsServer>(config, [this](const HttpRequest& request) {
      if (request.header("x-test-hold")) holdRequest();
      return app->handle(request);
    });
    app->attach(server.get());
    std::string error;
    ASSERT_TRUE(server->start(error)) << error;
    app->setServing(true);
    runner = std::thread([this] { server->run(); });
    port = server->boundPort();
  }

  void stopServer() {
    if (!server) return;
    releaseHeld();
    server->stop();
    if (runner.joinable()) runner.join();
    server.reset();
  }

  std::optional<tls::Response> call(const std::string& method, const std::string& path, const std::string& body = "") {
    return httplibRequest(port, ca, method, path, body);
  }

  json admitOverTls(const std::string& body) {
    const auto r = call("POST", "/validate", body);
    if (!r) {
      ADD_FAILURE() << "no response";
      return json();
    }
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body);
  }

  std::string metricsText() {
    const auto r = call("GET", "/metrics");
    return r ? r->body : std::string();
  }

  // Requests carrying "X-Test-Hold" wait in the handler until released.
  void holdRequest() {
    std::unique_lock lock(holdMutex);
    ++held;
    holdCv.notify_all();
    holdCv.wait(lock, [this] { return released; });
  }
  void waitUntilHeld() {
    std::unique_lock lock(holdMutex);
    ASSERT_TRUE(holdCv.wait_for(lock, 5s, [this] { return held > 0; }));
  }
  void releaseHeld() {
    std::lock_guard lock(holdMutex);
    released = true;
    holdCv.notify_all();
  }

  std::vector<std::string> logLines() {
    std::lock_guard lock(logMutex);
    return lines;
  }

  tls::TestCa ca;
  tls::KeyPair pair = ca.issueServer();
  tls::TempDir dir;
  std::string certPath, keyPath, policyPath;
  std::optional<std::string> clientCaPath;  // mutual TLS when set before startServer()

  std::mutex logMutex;
  std::vector<std::string> lines;
  Logger logger{LogLevel::Debug, [this](std::string_view line) {
                  std::lock_guard lock(logMutex);
                  lines.emplace_back(line);
                }};
  Metrics metrics{"test"};
  std::unique_ptr<PolicySource> policy;
  std::unique_ptr<WebhookApp> app;
  std::unique_ptr<HttpsServer> server;
  std::thread runner;
  std::uint16_t port = 0;

  std::mutex holdMutex;
  std::condition_variable holdCv;
  int held = 0;
  bool released = false;
};

// ---------------------------------------------------------------------------
// Admission over TLS.
// ---------------------------------------------------------------------------

TEST_F(Webhook, DeniesAGpuPodWithoutTolerationOverRealTls) {
  startServer();
  const json reply = admitOverTls(review("CREATE", gpuPod(false)));
  EXPECT_EQ(reply["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(reply["response"]["uid"], "uid-CREATE");
  EXPECT_EQ(reply["response"]["allowed"], false);
  EXPECT_EQ(reply["response"]["status"]["code"], 403);
  EXPECT_EQ(reply["response"]["status"]["reason"], "Forbidden");
  EXPECT_THAT(reply["response"]["status"]["message"].get<std::string>(),
              StartsWith("spec.tolerations: Required value: no toleration for the GPU node taint nvidia.com/gpu"));
  EXPECT_FALSE(reply["response"].contains("patch"));
}

TEST_F(Webhook, AdmitsAGoodPodAndWarnsPerPolicy) {
  policyPath = dir.write("policy.yaml", "rules: {gpu-missing-toleration: warning}\n");
  startServer();
  EXPECT_EQ(admitOverTls(review("CREATE", gpuPod(true)))["response"]["allowed"], true);
  const json warned = admitOverTls(review("CREATE", gpuPod(false)));
  EXPECT_EQ(warned["response"]["allowed"], true);
  ASSERT_TRUE(warned["response"].contains("warnings"));
  EXPECT_THAT(warned["response"]["warnings"][0].get<std::string>(), StartsWith("gpu-missing-toleration: spec.tolerations: "));
}

TEST_F(Webhook, AnswersV1beta1InV1beta1) {
  startServer();
  const json reply = admitOverTls(review("CREATE", gpuPod(false), nullptr, "admission.k8s.io/v1beta1"));
  EXPECT_EQ(reply["apiVersion"], "admission.k8s.io/v1beta1");
  EXPECT_EQ(reply["response"]["allowed"], false);
}

TEST_F(Webhook, AllowsDeleteAndJudgesDryRun) {
  startServer();
  EXPECT_EQ(admitOverTls(review("DELETE", nullptr, gpuPod(false)))["response"]["allowed"], true);
  EXPECT_EQ(admitOverTls(review("CREATE", gpuPod(false), nullptr, "admission.k8s.io/v1", true))["response"]["allowed"],
            false);
}

TEST_F(Webhook, DeniesACustomResourceWithAFractionalGpu) {
  startServer();
  const json reply = admitOverTls(review("CREATE", gpuPod(true, "0.5", "TrainingRun")));
  EXPECT_EQ(reply["response"]["allowed"], false);
  EXPECT_THAT(reply["response"]["status"]["message"].get<std::string>(), HasSubstr("must be an integer"));
}

TEST_F(Webhook, MalformedBodiesGet400AndOversizedOnes413) {
  startServer(64 * 1024);
  const auto bad = call("POST", "/validate", "{not json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(json::parse(bad->body)["message"].get<std::string>(), HasSubstr("malformed JSON"));

  const auto noRequest = call("POST", "/validate", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})");
  ASSERT_TRUE(noRequest);
  EXPECT_EQ(noRequest->status, 400);
  EXPECT_THAT(noRequest->body, HasSubstr("has no request"));

  json pod = gpuPod(true);
  pod["metadata"]["annotations"] = {{"filler", std::string(100 * 1024, 'x')}};
  const auto big = call("POST", "/validate", review("CREATE", pod));
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);

  const auto deep = call("POST", "/validate", std::string(50000, '['));
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->status, 400);

  // The server is still fine afterwards.
  EXPECT_EQ(admitOverTls(review("CREATE", gpuPod(true)))["response"]["allowed"], true);
}

TEST_F(Webhook, OtherRoutesAndMethods) {
  startServer();
  const auto get = call("GET", "/validate");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  ASSERT_TRUE(get->header("allow"));
  EXPECT_EQ(*get->header("allow"), "POST");
  const auto missing = call("GET", "/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  const auto withQuery = call("POST", "/validate?timeout=5s", review("CREATE", gpuPod(true)));
  ASSERT_TRUE(withQuery);
  EXPECT_EQ(withQuery->status, 200) << "the API server appends ?timeout=";
}

// ---------------------------------------------------------------------------
// Health, readiness, metrics, logs.
// ---------------------------------------------------------------------------

TEST_F(Webhook, HealthzAndReadyz) {
  startServer();
  const auto health = call("GET", "/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");
  const auto ready = call("GET", "/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);

  app->setServing(false);  // what SIGTERM does first
  const auto draining = call("GET", "/readyz");
  ASSERT_TRUE(draining);
  EXPECT_EQ(draining->status, 503);
  EXPECT_EQ(call("GET", "/healthz")->status, 200);
}

TEST_F(Webhook, UnderMutualTlsTheKubeletsProbesNeedNoClientCertificate) {
  tls::TestCa clientCa("API server client CA");
  clientCaPath = dir.write("client-ca.crt", clientCa.certPem());
  startServer();
  // The kubelet: HTTPS, no client certificate.
  for (const char* probe : {"/healthz", "/livez", "/readyz"}) {
    const auto r = call("GET", probe);
    ASSERT_TRUE(r) << probe;
    EXPECT_EQ(r->status, 200) << probe;
    EXPECT_EQ(r->body, "ok\n");
  }
  // Reviews and metrics need one.
  const auto anonymousReview = call("POST", "/validate", review("CREATE", gpuPod(false)));
  ASSERT_TRUE(anonymousReview);
  EXPECT_EQ(anonymousReview->status, 403);
  EXPECT_THAT(anonymousReview->body, HasSubstr("a verified client certificate is required for /validate"));
  EXPECT_EQ(call("GET", "/metrics")->status, 403);
  // The API server presents one.
  tls::ClientOptions apiserver = trusting(ca);
  const tls::KeyPair client = clientCa.issueClient();
  apiserver.certPem = client.certPem;
  apiserver.keyPem = client.keyPem;
  const auto r = tls::httpsRequest(port, apiserver, "POST", "/validate", review("CREATE", gpuPod(false)));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["response"]["allowed"], false);
  const auto metrics = tls::httpsRequest(port, apiserver, "GET", "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("gpuguard_https_client_certificate_required_total 2\n"));
  EXPECT_THAT(metrics->body, HasSubstr("gpuguard_client_ca_reloads_total{result=\"success\"} 0\n"));
}

TEST_F(Webhook, MetricsCountRequestsFindingsAndLatency) {
  startServer();
  admitOverTls(review("CREATE", gpuPod(false)));
  admitOverTls(review("CREATE", gpuPod(false)));
  admitOverTls(review("CREATE", gpuPod(true)));
  admitOverTls(review("DELETE", nullptr, gpuPod(false)));
  call("POST", "/validate", "garbage");

  const auto r = call("GET", "/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  ASSERT_TRUE(r->header("content-type"));
  EXPECT_EQ(*r->header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  const std::string& m = r->body;
  EXPECT_THAT(m, HasSubstr("# TYPE gpuguard_admission_requests_total counter\n"));
  EXPECT_THAT(m, HasSubstr("gpuguard_admission_requests_total{operation=\"CREATE\",kind=\"Pod\",result=\"denied\"} 2\n"));
  EXPECT_THAT(m, HasSubstr("gpuguard_admission_requests_total{operation=\"CREATE\",kind=\"Pod\",result=\"allowed\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("gpuguard_admission_requests_total{operation=\"DELETE\",kind=\"Pod\",result=\"allowed\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("gpuguard_admission_requests_total{operation=\"\",kind=\"\",result=\"invalid\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("gpuguard_admission_findings_total{rule=\"gpu-missing-toleration\",severity=\"error\"} 2\n"));
  EXPECT_THAT(m, HasSubstr("gpuguard_admission_findings_total{rule=\"gpu-fractional\",severity=\"error\"} 0\n"));
  EXPECT_THAT(m, HasSubstr("# TYPE gpuguard_admission_duration_seconds histogram\n"));
  EXPECT_THAT(m, HasSubstr("gpuguard_admission_duration_seconds_bucket{le=\"+Inf\"} 5\n"));
  EXPECT_THAT(m, HasSubstr("gpuguard_admission_duration_seconds_count 5\n"));
  EXPECT_THAT(m, HasSubstr("gpuguard_certificate_reloads_total{result=\"success\"} 0\n"));
  EXPECT_THAT(m, HasSubstr("gpuguard_certificate_reloads_total{result=\"failure\"} 0\n"));
  EXPECT_THAT(m, HasSubstr("gpuguard_policy_reloads_total{result=\"success\"} 0\n"));
  EXPECT_THAT(m, HasSubstr("gpuguard_https_connections_accepted_total "));
  // Every sample line is "name{labels} value" or "name value".
  std::istringstream in(m);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    EXPECT_THAT(line, ::testing::MatchesRegex("[a-z_]+(\\{.*\\})? [0-9.e+-]+")) << line;
  }
}

TEST_F(Webhook, LogsOneJsonLinePerReviewWithoutTheObject) {
  startServer();
  json pod = gpuPod(false);
  pod["metadata"]["annotations"] = {{"secret-note", "do-not-log-me"}};
  admitOverTls(review("CREATE", pod));
  bool found = false;
  for (const std::string& line : logLines()) {
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.back(), '\n');
    const json entry = json::parse(line);  // every line is one JSON object
    EXPECT_TRUE(entry.contains("time") && entry.contains("level") && entry.contains("msg"));
    EXPECT_THAT(line, Not(HasSubstr("do-not-log-me")));
    EXPECT_THAT(line, Not(HasSubstr("nvidia/cuda:12.4.1")));
    if (entry["msg"] == "admission") {
      found = true;
      EXPECT_EQ(entry["level"], "info");
      EXPECT_EQ(entry["uid"], "uid-CREATE");
      EXPECT_EQ(entry["kind"], "Pod");
      EXPECT_EQ(entry["namespace"], "ml");
      EXPECT_EQ(entry["name"], "trainer");
      EXPECT_EQ(entry["operation"], "CREATE");
      EXPECT_EQ(entry["dryRun"], false);
      EXPECT_EQ(entry["decision"], "denied");
      EXPECT_THAT(entry["rules"].get<std::vector<std::string>>(), Contains("gpu-missing-toleration"));
      EXPECT_TRUE(entry["durationMs"].is_number());
    }
  }
  EXPECT_TRUE(found);
}

// ---------------------------------------------------------------------------
// Policy hot reload.
// ---------------------------------------------------------------------------

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 5000ms) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return pred();
}

TEST_F(Webhook, APolicyChangeIsPickedUpAndABadOneIsRejected) {
  policyPath = dir.write("policy.yaml", "rules: {gpu-missing-toleration: off}\n");
  startServer();
  policy->start(50ms);
  EXPECT_EQ(admitOverTls(review("CREATE", gpuPod(false)))["response"]["allowed"], true);

  dir.write("policy.yaml", "rules: {gpu-missing-toleration: error}\n");
  EXPECT_TRUE(eventually([&] { return admitOverTls(review("CREATE", gpuPod(false)))["response"]["allowed"] == false; }));
  EXPECT_EQ(policy->reloadSuccesses(), 1u);

  dir.write("policy.yaml", "rules: {no-such-rule: error}\n");
  EXPECT_TRUE(eventually([&] { return policy->reloadFailures() == 1u; }));
  EXPECT_EQ(admitOverTls(review("CREATE", gpuPod(false)))["response"]["allowed"], false) << "the old policy stays";
  EXPECT_THAT(metricsText(), HasSubstr("gpuguard_policy_reloads_total{result=\"failure\"} 1\n"));

  // An exemption matches the request's namespace (the pod is in "ml")...
  dir.write("policy.yaml", "exemptions: [{namespace: 'm.'}]\n");
  EXPECT_TRUE(eventually([&] { return admitOverTls(review("CREATE", gpuPod(false)))["response"]["allowed"] == true; }));
  // ...and a pattern RE2 cannot compile is a rejected reload that names the entry.
  dir.write("policy.yaml", "exemptions: [{namespace: 'm('}]\n");
  EXPECT_TRUE(eventually([&] { return policy->reloadFailures() == 2u; }));
  EXPECT_EQ(admitOverTls(review("CREATE", gpuPod(false)))["response"]["allowed"], true) << "the old policy stays";
  const auto logs = logLines();
  EXPECT_TRUE(std::any_of(logs.begin(), logs.end(), [](const std::string& l) {
    return l.find("policy reload failed") != std::string::npos && l.find("exemptions[0].namespace") != std::string::npos &&
           l.find("invalid pattern") != std::string::npos;
  }));
  policy->stop();
}

TEST_F(Webhook, APolicyBehindASwappedSymlinkIsReloadedLikeAConfigMap) {
  // kubelet writes ConfigMap files into a timestamped directory and swaps
  // the ..data symlink; policy.yaml -> ..data/policy.yaml never changes.
  namespace fs = std::filesystem;
  const fs::path cm = dir.path() / "cm";
  fs::create_directories(cm / "v1");
  { std::ofstream(cm / "v1" / "policy.yaml") << "rules: {gpu-missing-toleration: off}\n"; }
  fs::create_directory_symlink("v1", cm / "..data");
  fs::create_symlink("..data/policy.yaml", cm / "policy.yaml");
  policyPath = (cm / "policy.yaml").string();
  startServer();
  policy->start(50ms);
  EXPECT_EQ(admitOverTls(review("CREATE", gpuPod(false)))["response"]["allowed"], true);

  fs::create_directories(cm / "v2");
  { std::ofstream(cm / "v2" / "policy.yaml") << "rules: {gpu-missing-toleration: error}\n"; }
  fs::create_directory_symlink("v2", cm / "..data_tmp");
  fs::rename(cm / "..data_tmp", cm / "..data");  // atomic swap, as kubelet does
  EXPECT_TRUE(eventually([&] { return admitOverTls(review("CREATE", gpuPod(false)))["response"]["allowed"] == false; }));
  policy->stop();
}

// ---------------------------------------------------------------------------
// Certificates and shutdown, at the webhook level (the HTTPS server's own
// tests cover the details).
// ---------------------------------------------------------------------------

TEST_F(Webhook, CertificateRotationDuringTrafficLosesNoRequest) {
  startServer();
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, failed{0};
  std::thread traffic([&] {
    while (!stop.load()) {
      const auto r = call("POST", "/validate", review("CREATE", gpuPod(true)));
      (r && r->status == 200 ? ok : failed).fetch_add(1);
    }
  });

  const tls::KeyPair next = ca.issueServer();
  dir.write("tls.key.new", next.keyPem);
  dir.write("tls.crt", next.certPem);
  std::filesystem::rename(dir.file("tls.key.new"), dir.file("tls.key"));
  const bool rotated = eventually([&] {
    tls::TlsClient client;
    std::string error;
    return client.connect(port, trusting(ca), error) && client.peerFingerprint() == next.leafFingerprint;
  });
  std::this_thread::sleep_for(200ms);
  stop = true;
  traffic.join();
  EXPECT_TRUE(rotated);
  EXPECT_GT(ok.load(), 0);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_THAT(metricsText(), ::testing::ContainsRegex("gpuguard_certificate_reloads_total\\{result=\"success\"\\} [1-9]"));

  // A broken pair is rejected; the new certificate keeps serving.
  dir.write("tls.crt", "not a certificate");
  EXPECT_TRUE(eventually([&] {
    return metricsText().find("gpuguard_certificate_reloads_total{result=\"failure\"} 0\n") == std::string::npos;
  }));
  EXPECT_EQ(admitOverTls(review("CREATE", gpuPod(true)))["response"]["allowed"], true);
  EXPECT_TRUE(app->ready());
}

TEST_F(Webhook, ShutdownFinishesTheRequestInFlight) {
  startServer();
  std::optional<tls::Response> inFlight;
  std::thread client([&] {
    tls::TlsClient c;
    std::string error;
    if (!c.connect(port, trusting(ca), error)) return;
    inFlight = c.request("POST", "/validate", review("CREATE", gpuPod(false)), {{"X-Test-Hold", "1"}});
  });
  waitUntilHeld();
  std::thread stopper([&] { server->stop(); });
  std::this_thread::sleep_for(100ms);
  tls::ClientOptions quick = trusting(ca);
  quick.timeout = 500ms;
  std::string refused;
  EXPECT_FALSE(tls::TlsClient().connect(port, quick, refused)) << "no new connections once stopping";
  releaseHeld();
  client.join();
  stopper.join();
  runner.join();
  ASSERT_TRUE(inFlight);
  EXPECT_EQ(inFlight->status, 200);
  EXPECT_EQ(json::parse(inFlight->body)["response"]["allowed"], false);
}

// ---------------------------------------------------------------------------
// The gpuguard-webhook binary.
// ---------------------------------------------------------------------------

struct ProcessResult {
  int exitCode = -1;
  std::string out;
  std::string err;
};

std::string binary() { return std::string(GPUGUARD_BINARY_DIR) + "/gpuguard-webhook"; }

std::string slurp(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

ProcessResult runBinary(const std::vector<std::string>& args) {
  // Everything the child needs is built before fork().
  std::string path = binary();
  std::vector<std::string> copy = args;
  std::vector<char*> argv{path.data()};
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2], err[2];
  if (::pipe(out) != 0 || ::pipe(err) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::close(out[0]), ::close(err[0]), ::close(out[1]), ::close(err[1]);
    ::execv(path.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(out[1]), ::close(err[1]);
  ProcessResult r;
  r.out = slurp(out[0]);
  r.err = slurp(err[0]);
  ::close(out[0]), ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

class Binary : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(binary())) GTEST_SKIP() << "not built: " << binary();
  }
};

TEST_F(Binary, HelpDocumentsEveryFlag) {
  const ProcessResult r = runBinary({"--help"});
  EXPECT_EQ(r.exitCode, 0);
  for (const char* flag : {"--tls-cert-file", "--tls-private-key-file", "--port", "--bind-address", "--policy",
                           "--client-ca-file", "--max-request-bytes", "--log-level", "--policy-reload-interval",
                           "--tls-reload-interval", "--request-timeout", "--idle-timeout", "--shutdown-timeout", "--worker-threads",
                           "--judge-threads", "--judge-off-loop-bytes",
                           "--check-policy", "--version", "/validate", "/healthz", "/readyz", "/metrics"}) {
    EXPECT_THAT(r.out, HasSubstr(flag));
  }
}

TEST_F(Binary, VersionAndUsageErrors) {
  EXPECT_THAT(runBinary({"--version"}).out, StartsWith("gpuguard-webhook "));
  const ProcessResult noTls = runBinary({"--port=8443"});
  EXPECT_EQ(noTls.exitCode, 2);
  EXPECT_THAT(noTls.err, HasSubstr("--tls-cert-file and --tls-private-key-file are required"));
  const ProcessResult unknown = runBinary({"--insecure-port=80"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_THAT(unknown.err, HasSubstr("unknown flag --insecure-port"));
}

TEST_F(Binary, CheckPolicy) {
  tls::TempDir dir;
  const ProcessResult good = runBinary({"--check-policy", "--policy=" + dir.write("p.yaml", "rules: {gpu-fractional: warning}\n")});
  EXPECT_EQ(good.exitCode, 0) << good.err;
  EXPECT_THAT(good.out, HasSubstr("ok"));
  const ProcessResult bad = runBinary({"--check-policy", "--policy=" + dir.write("q.yaml", "rules: {nope: error}\n")});
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_THAT(bad.err, HasSubstr("nope"));
}

// The binary serving on 127.0.0.1 with a throw-away certificate; its logs
// (stderr) are read all along (a full pipe would block the webhook's
// logging) and kept.
class WebhookProcess {
 public:
  explicit WebhookProcess(const tls::TestCa& ca, std::vector<std::string> extraArgs = {}) {
    const tls::KeyPair pair = ca.issueServer();
    std::vector<std::string> args{binary(), "--tls-cert-file=" + dir_.write("tls.crt", pair.certPem),
                                  "--tls-private-key-file=" + dir_.write("tls.key", pair.keyPem), "--port=0",
                                  "--bind-address=127.0.0.1"};
    args.insert(args.end(), extraArgs.begin(), extraArgs.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int err[2];
    if (::pipe(err) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(err[1], 2);
      ::close(err[0]), ::close(err[1]);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(err[1]);
    errFd_ = err[0];
    // The "serving" line tells the port.
    char buf[4096];
    while (port_ == 0) {
      const ssize_t n = ::read(errFd_, buf, sizeof buf);
      if (n <= 0) break;
      logs_.append(buf, static_cast<std::size_t>(n));
      for (std::size_t start = 0, nl; (nl = logs_.find('\n', start)) != std::string::npos; start = nl + 1) {
        const json line = json::parse(logs_.substr(start, nl - start), nullptr, false);
        if (line.is_object() && line.value("msg", "") == "serving") port_ = line.value("port", 0);
      }
    }
    reader_ = std::thread([this] { rest_ = slurp(errFd_); });
  }
  ~WebhookProcess() {
    if (pid_ > 0) waitForExit(SIGKILL);
  }

  std::uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& logs() const { return logs_; }  // complete after waitForExit()
  // Sends `sig`, reads the rest of the logs, returns the wait status.
  int waitForExit(int sig) {
    ::kill(pid_, sig);
    if (reader_.joinable()) reader_.join();
    logs_ += rest_;
    ::close(errFd_);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  tls::TempDir dir_;
  pid_t pid_ = -1;
  int errFd_ = -1;
  std::uint16_t port_ = 0;
  std::string logs_, rest_;
  std::thread reader_;
};

TEST_F(Binary, ServesUntilSigtermThenExitsZero) {
  tls::TestCa ca;
  WebhookProcess webhook(ca);
  ASSERT_NE(webhook.port(), 0) << webhook.logs();

  const auto reply = httplibRequest(webhook.port(), ca, "POST", "/validate", review("CREATE", gpuPod(false)));
  ASSERT_TRUE(reply);
  EXPECT_EQ(json::parse(reply->body)["response"]["allowed"], false);

  const int status = webhook.waitForExit(SIGTERM);
  ASSERT_TRUE(WIFEXITED(status)) << webhook.logs();
  EXPECT_EQ(WEXITSTATUS(status), 0) << webhook.logs();
  EXPECT_THAT(webhook.logs(), HasSubstr(R"("msg":"shutting down")"));
  EXPECT_THAT(webhook.logs(), HasSubstr(R"("msg":"stopped")"));
}

// "kill -HUP" out of habit (to reload) must not cut admission calls: the
// files reload on their own.
TEST_F(Binary, SighupIsIgnoredAndServingGoesOn) {
  tls::TestCa ca;
  WebhookProcess webhook(ca);
  ASSERT_NE(webhook.port(), 0) << webhook.logs();
  ASSERT_EQ(::kill(webhook.pid(), SIGHUP), 0);
  std::optional<tls::Response> reply;
  for (int attempt = 0; attempt < 50 && !reply; ++attempt) {  // the signal is handled asynchronously
    std::this_thread::sleep_for(20ms);
    reply = httplibRequest(webhook.port(), ca, "POST", "/validate", review("CREATE", gpuPod(false)));
  }
  ASSERT_TRUE(reply);
  EXPECT_EQ(json::parse(reply->body)["response"]["allowed"], false);

  const int status = webhook.waitForExit(SIGTERM);
  ASSERT_TRUE(WIFEXITED(status)) << webhook.logs();
  EXPECT_EQ(WEXITSTATUS(status), 0) << webhook.logs();
  EXPECT_THAT(webhook.logs(), HasSubstr("SIGHUP ignored"));
}

// The environment variables of a running process.
std::vector<std::string> environmentOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::vector<std::string> vars;
  for (std::string var; std::getline(in, var, '\0');) vars.push_back(var);
  return vars;
}

// webhook/malloc_tuning.h: the server re-executes itself once with a larger
// glibc per-thread cache, keeping its PID (kubelet and systemd track it);
// a tcache_count the operator set is left alone.
TEST_F(Binary, ServesWithTheMallocTunableUnlessTheOperatorSetOne) {
  if (!webhook::mallocTuningSupported()) GTEST_SKIP() << "no malloc tuning in this build (sanitizers or not glibc)";
  tls::TestCa ca;
  {
    WebhookProcess webhook(ca);
    ASSERT_NE(webhook.port(), 0) << webhook.logs();
    EXPECT_THAT(environmentOf(webhook.pid()), Contains(std::string("GLIBC_TUNABLES=") + webhook::kMallocTunable));
  }
  const char* saved = std::getenv("GLIBC_TUNABLES");
  const std::string restore = saved ? saved : "";
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=7", 1);
  {
    WebhookProcess webhook(ca);
    ASSERT_NE(webhook.port(), 0) << webhook.logs();
    EXPECT_THAT(environmentOf(webhook.pid()), Contains(std::string("GLIBC_TUNABLES=glibc.malloc.tcache_count=7")));
  }
  saved ? ::setenv("GLIBC_TUNABLES", restore.c_str(), 1) : ::unsetenv("GLIBC_TUNABLES");
}

// What kube-apiserver sees when a webhook pod is terminated under traffic:
// every request it sent is answered in full, or the connection is closed
// cleanly between two requests (close_notify/FIN before any response byte,
// which Go's transport retries on a new connection). Never a reset, never a
// truncated response; connections that come afterwards are refused.
TEST_F(Binary, SigtermUnderKeepAliveTrafficAnswersOrClosesCleanlyNeverResets) {
  tls::TestCa ca;
  WebhookProcess webhook(ca);
  ASSERT_NE(webhook.port(), 0) << webhook.logs();
  const std::string request = tls::buildRequest("POST", "/validate", review("CREATE", gpuPod(false)));

  struct Tally {
    int answered = 0, answeredWithClose = 0, cleanCloses = 0, resets = 0, truncated = 0, otherFailures = 0;
    std::vector<std::string> problems;
  };
  constexpr int kConnections = 8;
  std::vector<Tally> tallies(kConnections);
  std::atomic<int> totalAnswered{0};
  std::atomic<bool> signalled{false};
  std::vector<std::thread> clients;
  for (int i = 0; i < kConnections; ++i) {
    clients.emplace_back([&, i] {
      Tally& t = tallies[static_cast<std::size_t>(i)];
      tls::TlsClient c;
      std::string error;
      int onThisConnection = 0;
      while (true) {
        if (!c.connected()) onThisConnection = 0;
        if (!c.connected() && !c.connect(webhook.port(), trusting(ca), error)) {
          if (!signalled.load()) t.problems.push_back("connect failed before SIGTERM: " + error);
          return;  // refused: the listener is closed
        }
        if (!c.write(request)) {
          (c.lastEnd() == tls::ReadEnd::Reset ? t.resets : t.otherFailures)++;
          t.problems.push_back("write failed: " + c.lastError());
          return;
        }
        const auto r = c.readResponse();
        if (r) {
          ++t.answered;
          ++onThisConnection;
          ++totalAnswered;
          if (r->status != 200) t.problems.push_back("HTTP " + std::to_string(r->status));
          if (const std::string* connection = r->header("connection"); connection && *connection == "close") {
            ++t.answeredWithClose;
            c.close();
          }
          continue;
        }
        if (!c.unread().empty()) {
          ++t.truncated;
        } else if (c.lastEnd() == tls::ReadEnd::CleanClose) {
          ++t.cleanCloses;
        } else if (c.lastEnd() == tls::ReadEnd::Reset) {
          ++t.resets;
        } else {
          ++t.otherFailures;
          t.problems.push_back("read failed after " + std::to_string(onThisConnection) + " answers on this connection" +
                               (signalled.load() ? " (after SIGTERM): " : ": ") + c.lastError());
        }
        c.close();
      }
    });
  }
  // Traffic on every connection, then SIGTERM in the middle of it.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (totalAnswered.load() < 50 * kConnections && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  signalled = true;
  const int status = webhook.waitForExit(SIGTERM);
  for (auto& t : clients) t.join();

  ASSERT_TRUE(WIFEXITED(status)) << webhook.logs();
  EXPECT_EQ(WEXITSTATUS(status), 0) << webhook.logs();
  int answeredWithClose = 0;
  for (const Tally& t : tallies) {
    EXPECT_GT(t.answered, 0);
    EXPECT_EQ(t.resets, 0);
    EXPECT_EQ(t.truncated, 0);
    EXPECT_EQ(t.otherFailures, 0);
    EXPECT_THAT(t.problems, ::testing::IsEmpty());
    answeredWithClose += t.answeredWithClose;
  }
  // Requests that were in flight at the stop were answered, telling the
  // client to close.
  EXPECT_GT(answeredWithClose, 0);
}

}  // namespace
}  // namespace gpuguard::webhook
