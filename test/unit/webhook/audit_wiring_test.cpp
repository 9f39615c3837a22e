// The webhook's side of the background audit: its flags (off unless asked
// for), its series on /metrics, and the judge it hands the audit (an object of
// the cluster judged as admission judges its CREATE).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "rules/engine.h"
#include "test/unit/test_support.h"
#include "webhook/audit_judge.h"
#include "webhook/audit_run.h"
#include "webhook/flags.h"
#include "webhook/metrics.h"

namespace gpuguard::webhook {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

FlagsResult parse(std::vector<std::string> extra) {
  std::vector<std::string> args{"--tls-cert-file=c", "--tls-private-key-file=k"};
  args.insert(args.end(), extra.begin(), extra.end());
  return parseFlags(args);
}

TEST(AuditFlagsTest, TheAuditIsOffUnlessAskedFor) {
  const Flags flags = parse({}).flags;
  EXPECT_EQ(flags.audit.mode, AuditFlags::Mode::Off);
  EXPECT_EQ(flags.audit.reportFormat, audit::ReportFormat::OpenReports);
  EXPECT_EQ(flags.audit.resyncInterval, std::chrono::hours(1));
  EXPECT_EQ(flags.audit.judgeQps, 50u);
  EXPECT_EQ(flags.audit.apiQps, 20u);
  EXPECT_EQ(flags.audit.apiBurst, 40u);
  EXPECT_EQ(flags.audit.maxResults, 100u);
}

TEST(AuditFlagsTest, TakeTheDesignsNames) {
  const FlagsResult r = parse({"--audit=on", "--audit-policy=/etc/gpuguard/enforce-policy.yaml",
                               "--audit-report-format=wgpolicyk8s", "--audit-resync-interval=10m", "--audit-judge-qps=0",
                               "--audit-api-qps=5", "--audit-api-burst=10", "--audit-max-results=20",
                               "--audit-extra-resource=trainers.example.com", "--audit-extra-resource=jobs.example.org",
                               "--audit-exclude-namespace=kube-system", "--audit-pending-bytes=8Mi",
                               "--audit-metrics-max-namespaces=50"});
  ASSERT_EQ(r.error, "");
  const AuditFlags& a = r.flags.audit;
  EXPECT_EQ(a.mode, AuditFlags::Mode::On);
  EXPECT_EQ(a.policy, "/etc/gpuguard/enforce-policy.yaml");
  EXPECT_EQ(a.reportFormat, audit::ReportFormat::WgPolicy);
  EXPECT_EQ(a.resyncInterval, std::chrono::minutes(10));
  EXPECT_EQ(a.judgeQps, 0u);
  EXPECT_EQ(a.apiQps, 5u);
  EXPECT_EQ(a.apiBurst, 10u);
  EXPECT_EQ(a.maxResults, 20u);
  EXPECT_EQ(a.extraResources, (std::vector<std::string>{"trainers.example.com", "jobs.example.org"}));
  EXPECT_EQ(a.excludeNamespaces, std::vector<std::string>{"kube-system"});
  EXPECT_EQ(a.pendingBytes, 8u << 20);
  EXPECT_EQ(a.metricsMaxNamespaces, 50u);
  EXPECT_EQ(parse({"--audit=auto"}).flags.audit.mode, AuditFlags::Mode::Auto);
}

TEST(AuditFlagsTest, RefuseValuesThatMeanNothing) {
  EXPECT_THAT(parse({"--audit=yes"}).error, HasSubstr("must be on, off or auto"));
  EXPECT_THAT(parse({"--audit-report-format=policyreport"}).error, HasSubstr("openreports or wgpolicyk8s"));
  EXPECT_THAT(parse({"--audit-resync-interval=10ms"}).error, HasSubstr("at least 1s"));
  EXPECT_THAT(parse({"--audit-extra-resource=trainers"}).error, HasSubstr("<plural>.<group>"));
  EXPECT_THAT(parse({"--audit-api-burst=0"}).error, HasSubstr("from 1"));
  EXPECT_THAT(parse({"--audit-max-results=99999999999999999999"}).error, HasSubstr("from 1 to 10000"));
  EXPECT_THAT(parse({"--audit-pending-bytes=1Ki"}).error, HasSubstr("at least 64Ki"));
  EXPECT_THAT(parse({"--audit-policy="}).error, HasSubstr("must name a file"));
}

TEST(AuditFlagsTest, LeaderElectionIsOnWithClientGosDurations) {
  const AuditFlags defaults = parse({}).flags.audit;
  EXPECT_TRUE(defaults.leaderElect);
  EXPECT_EQ(defaults.leaseDuration, std::chrono::seconds(15));
  EXPECT_EQ(defaults.renewDeadline, std::chrono::seconds(10));
  EXPECT_EQ(defaults.retryPeriod, std::chrono::seconds(2));
  EXPECT_EQ(defaults.leaseName, "gpuguard-audit");
  const FlagsResult r = parse({"--leader-elect=false", "--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s",
                               "--leader-elect-retry-period=1s", "--leader-elect-resource-name=audit-lock",
                               "--leader-elect-resource-namespace=gpuguard-system", "--leader-elect-identity=pod-a_1"});
  ASSERT_EQ(r.error, "");
  EXPECT_FALSE(r.flags.audit.leaderElect);
  EXPECT_EQ(r.flags.audit.leaseDuration, std::chrono::seconds(4));
  EXPECT_EQ(r.flags.audit.leaseNamespace, "gpuguard-system");
  EXPECT_EQ(r.flags.audit.identity, "pod-a_1");
  EXPECT_THAT(parse({"--leader-elect=yes"}).error, HasSubstr("true or false"));
  EXPECT_THAT(parse({"--leader-elect-retry-period=500ms"}).error, HasSubstr("at least 1s"));
}

TEST(AuditFlagsTest, HelpNamesEveryAuditAndLeaderElectionFlag) {
  AuditFlags flags;
  FlagSetters setters;
  addAuditFlags(flags, setters);
  EXPECT_GE(setters.size(), 19u);
  for (const auto& [name, setter] : setters) EXPECT_THAT(std::string(kUsage), HasSubstr("--" + name)) << name;
  EXPECT_THAT(std::string(kUsage), HasSubstr("--print-audit-resources"));
}

TEST(AuditFlagsTest, TheElectionIdentityIsThePodNameAndEightHexDigits) {
  const std::string a = electionIdentity(), b = electionIdentity();
  ASSERT_GT(a.size(), 9u);
  EXPECT_EQ(a[a.size() - 9], '_');
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef", a.size() - 8), std::string::npos);
  EXPECT_NE(a, b) << "unique per replica, as client-go requires";
}

TEST(AuditFlagsTest, PrintAuditResourcesNeedsNoCertificate) {
  const FlagsResult r = parseFlags({"--print-audit-resources"});
  EXPECT_EQ(r.error, "");
  EXPECT_TRUE(r.flags.audit.printResources);
}

audit::AuditStatus auditing() {
  audit::AuditStatus s;
  s.running = true;
  s.reportsApiServed = true;
  s.resources = {{"deployments.apps", "synced", true, 12}, {"rayclusters.ray.io", "not served", false, 0}};
  s.findings = {{{"gpu-missing-toleration", "error", "ml"}, 3}, {{"gpu-missing-driver-pin", "warning", "team-b"}, 1},
                {{"gpu-fractional", "error", ""}, 1}};
  s.judged = {{{"deployments.apps", "resync"}, 12}, {{"deployments.apps", "watch"}, 4}};
  s.writes = {{{"apply", "ok"}, 2}, {{"delete", "fenced"}, 1}};
  s.lastFullScanTimestamp = 1796382000.5;
  s.lastFullScanDuration = 2.25;
  s.queueLength = 7;
  s.reports = 2;
  s.leader = true;
  s.leaderTransitions = 2;
  return s;
}

TEST(AuditMetricsTest, ShowTheFindingsObjectsAndTheLastScan) {
  ExternalCounters external;
  external.audit = auditing();
  const std::string text = Metrics("t").render(external);
  EXPECT_THAT(text, HasSubstr("# TYPE gpuguard_audit_findings gauge\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_findings{rule=\"gpu-missing-toleration\",severity=\"error\",namespace=\"ml\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_findings{rule=\"gpu-fractional\",severity=\"error\",namespace=\"\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_objects{resource=\"deployments.apps\"} 12\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_resource_synced{resource=\"rayclusters.ray.io\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_objects_judged_total{resource=\"deployments.apps\",trigger=\"watch\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_last_full_scan_timestamp_seconds 1796382000.5\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_last_full_scan_duration_seconds 2.25\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_report_writes_total{verb=\"delete\",result=\"fenced\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_queue_length 7\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_reports_api_served 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_running 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_leader 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_leader_transitions_total 2\n"));
}

TEST(AuditMetricsTest, NamespacesPastTheCapShareOneSeries) {
  ExternalCounters external;
  external.audit = auditing();
  external.auditMaxNamespaces = 1;  // "" sorts first: the cluster-scoped series keeps its own
  const std::string text = Metrics("t").render(external);
  EXPECT_THAT(text, HasSubstr("namespace=\"\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_audit_findings{rule=\"gpu-missing-toleration\",severity=\"error\",namespace=\"_other\"} 3\n"));
  EXPECT_THAT(text, Not(HasSubstr("namespace=\"ml\"")));
}

TEST(AuditMetricsTest, NoAuditNoSeries) {
  EXPECT_THAT(Metrics("t").render({}), Not(HasSubstr("gpuguard_audit_")));
}

const char* const kDeployment = R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: ml, annotations: {ignore.gpuguard.io/gpu-fractional: "MIG slice, tested"}}
spec:
  template:
    spec:
      containers:
      - {name: server, image: vllm/vllm-openai:v0.6.3, resources: {limits: {nvidia.com/gpu: "0.5"}}}
)";

nlohmann::json deployment() { return yaml::parseStream(kDeployment).documents.at(0).value; }

TEST(AuditJudgeTest, JudgesAsAdmissionJudgesACreate) {
  const AdmissionPolicy policy;
  const audit::Judgement j = judgeForAudit(deployment(), policy, nullptr);
  EXPECT_FALSE(j.exempt);
  ASSERT_FALSE(j.findings.empty());
  JudgeOptions options;
  options.namespaceName = "ml";
  std::vector<Finding> expected = judge(deployment(), policy.engine, options);
  forgetSuppressions(expected);
  ASSERT_EQ(j.findings.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(j.findings[i].fieldError(), expected[i].fieldError());
  EXPECT_TRUE(j.factsSensitive) << "it asks for a GPU";
}

TEST(AuditJudgeTest, SuppressionsCountOnlyWhenThePolicyAllowsThem) {
  AdmissionPolicy policy;
  auto suppressed = [](const audit::Judgement& j) {
    return std::count_if(j.findings.begin(), j.findings.end(), [](const Finding& f) { return f.suppressed; });
  };
  EXPECT_EQ(suppressed(judgeForAudit(deployment(), policy, nullptr)), 0);
  policy.allowSuppressions = true;
  EXPECT_GT(suppressed(judgeForAudit(deployment(), policy, nullptr)), 0) << "reported as skip";
}

TEST(AuditJudgeTest, ExemptNamespacesAndObjectsBeingDeletedAreExempt) {
  AdmissionPolicy policy;
  policy.exemptNamespaces = {"m*"};
  EXPECT_TRUE(judgeForAudit(deployment(), policy, nullptr).exempt);
  nlohmann::json leaving = deployment();
  leaving["metadata"]["deletionTimestamp"] = "2026-12-04T11:00:00Z";
  EXPECT_TRUE(judgeForAudit(leaving, AdmissionPolicy{}, nullptr).exempt);
}

}  // namespace
}  // namespace gpuguard::webhook
