// The auditor over the real cluster client (audit/cluster_audit_api.h),
// against the fake API server of the cluster tests (HTTP, cpp-httplib): the
// objects it lists, the report it writes by server-side apply, found again
// by its label, and deleted when the object is fixed.
#include <gtest/gtest.h>

#include "audit/auditor.h"
#include "audit/cluster_audit_api.h"
#include "test/unit/audit/audit_fake_api.h"
#include "test/unit/cluster_fake_api_server.h"

namespace gpuguard::audit {
namespace {

using nlohmann::json;
using audit::testing::eventually;

const std::string kDeployments = "/apis/apps/v1/deployments";
const std::string kReport = "/apis/openreports.io/v1alpha1/namespaces/ml/reports/gpuguard";

cluster::ClientConfig configFor(const std::string& url) {
  cluster::ClientConfig config;
  config.server = url;
  EXPECT_EQ(cluster::parseServerUrl(url, config.url), "");
  config.credentials.token = "t0k";
  return config;
}

json deployment(const std::string& finding) {
  return {{"apiVersion", "apps/v1"}, {"kind", "Deployment"},
          {"metadata", {{"name", "vllm"}, {"namespace", "ml"}, {"annotations", {{"finding", finding}}}}}};
}

Judgement byAnnotation(const json& object, const ClusterFacts*) {
  Judgement j;
  const std::string rule = object["metadata"]["annotations"].value("finding", "");
  if (rule.empty()) return j;
  Finding f;
  f.rule = rule;
  f.path = FieldPath().field("spec");
  f.error = FieldError::required("a GPU rule says so");
  j.findings.push_back(std::move(f));
  return j;
}

AuditorOptions deploymentsOnly() {
  AuditorOptions o;
  o.resources.clear();
  for (const AuditedResource& r : auditedResources()) {
    if (r.name() == "deployments.apps") o.resources.push_back(r);
  }
  o.tick = o.flushInterval = o.firstScanFlushInterval = std::chrono::milliseconds(5);
  o.factsGrace = std::chrono::milliseconds(0);
  o.judgeQps = o.apiQps = 0;
  o.idleScheduling = false;
  return o;
}

TEST(ClusterAuditApiTest, ListsJudgesAndAppliesTheNamespaceReportThroughTheApiServer) {
  gpuguard::testing::FakeApiServer server;
  server.serveCollection("/apis/openreports.io/v1alpha1/reports");
  server.serveCollection("/apis/openreports.io/v1alpha1/clusterreports");
  server.putObject("/apis/apps/v1/namespaces/ml/deployments/vllm", deployment("gpu-missing-toleration"));
  ClusterAuditApi api(configFor(server.url()), 5, std::chrono::milliseconds(5));
  Auditor auditor(api, byAnnotation, deploymentsOnly());
  auditor.start();
  ASSERT_TRUE(eventually([&] { return server.object(kReport).has_value(); }));
  const json report = *server.object(kReport);
  EXPECT_EQ(report["kind"], "Report");
  EXPECT_EQ(report["metadata"]["labels"]["app.kubernetes.io/managed-by"], "gpuguard");
  EXPECT_EQ(report["results"][0]["policy"], "gpu-missing-toleration");
  EXPECT_EQ(report["results"][0]["resources"][0]["uid"], server.object("/apis/apps/v1/namespaces/ml/deployments/vllm")->at("metadata")["uid"]);
  bool applied = false;
  for (const auto& w : server.writes()) applied = applied || (w.method == "PATCH" && w.contentType == "application/apply-patch+yaml");
  EXPECT_TRUE(applied) << "server-side apply";
  auditor.stop();
}

TEST(ClusterAuditApiTest, ATakeoverFindsOurReportByItsLabelAndDeletesItWhenTheObjectIsGone) {
  gpuguard::testing::FakeApiServer server;
  server.serveCollection("/apis/openreports.io/v1alpha1/reports");
  server.serveCollection("/apis/openreports.io/v1alpha1/clusterreports");
  server.serveCollection(kDeployments);
  NamespaceResults set{"ml", {}, 0};
  AuditResult stale;
  stale.object = {"apps/v1", "Deployment", "ml", "gone", "uid-gone"};
  stale.rule = "gpu-fractional";
  set.results.push_back(stale);
  server.putObject(kReport, buildReports(set, ReportFormat::OpenReports).at(0));
  ClusterAuditApi api(configFor(server.url()), 5, std::chrono::milliseconds(5));
  Auditor auditor(api, byAnnotation, deploymentsOnly());
  auditor.start();
  EXPECT_TRUE(eventually([&] { return !server.object(kReport).has_value(); }));
  auditor.stop();
}

}  // namespace
}  // namespace gpuguard::audit
