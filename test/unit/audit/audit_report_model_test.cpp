// The background audit's reports (audit/report_model.h): one OpenReports
// Report `gpuguard` per namespace (ClusterReport for cluster-scoped objects),
// one result per finding, split past 200 results or ~1 MiB, rewritten only
// when the result set's digest changes; the wgpolicyk8s.io variant.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "audit/report_model.h"
#include "test/unit/test_support.h"
#include "text/utf8.h"

namespace gpuguard::audit {
namespace {

using nlohmann::json;

const AuditedObject kVllm{"apps/v1", "Deployment", "ml", "vllm", "6f1c2a4e-9b7d-4c1e-8a53-2d7e0c9f4b10"};
constexpr Timestamp kNow{1796382000, 0};

Finding finding(std::string rule, Severity severity, std::vector<std::string> path, FieldError error) {
  Finding f;
  f.rule = std::move(rule);
  f.severity = severity;
  for (std::string& segment : path) f.path = f.path.field(segment);
  f.error = std::move(error);
  return f;
}

Finding missingToleration() {
  return finding("gpu-missing-toleration", Severity::Error, {"spec", "template", "spec", "tolerations"},
                 FieldError::required("no toleration for the GPU node taint nvidia.com/gpu:NoSchedule; add one"));
}

Finding missingDriverPin() {
  return finding("gpu-missing-driver-pin", Severity::Warning, {"spec", "template", "spec", "nodeSelector"},
                 FieldError::required("no driver version is selected; select nvidia.com/cuda.driver.major"));
}

NamespaceResults namespaceOf(std::string ns, std::vector<AuditResult> results) {
  return NamespaceResults{std::move(ns), std::move(results), 0};
}

TEST(AuditResultTest, AnErrorFindingIsAScoredFailBecauseEnforceWouldDenyIt) {
  const ObjectResults r = resultsOf(kVllm, {missingToleration()}, true, kNow);
  ASSERT_EQ(r.results.size(), 1u);
  const json doc = buildReports(namespaceOf("ml", r.results), ReportFormat::OpenReports).at(0);
  const json& result = doc["results"][0];
  EXPECT_EQ(result["source"], "gpuguard");
  EXPECT_EQ(result["policy"], "gpu-missing-toleration");
  EXPECT_EQ(result["category"], "GPU");
  EXPECT_EQ(result["result"], "fail");
  EXPECT_EQ(result["severity"], "high");
  EXPECT_EQ(result["scored"], true);
  EXPECT_FALSE(result.contains("rule")) << "optional in the CRD; the rule id is the policy";
}

TEST(AuditResultTest, AWarningFindingIsAWarnThatIsNotScored) {
  const ObjectResults r = resultsOf(kVllm, {missingDriverPin()}, false, kNow);
  const json result = buildReports(namespaceOf("ml", r.results), ReportFormat::OpenReports).at(0)["results"][0];
  EXPECT_EQ(result["result"], "warn");
  EXPECT_EQ(result["severity"], "medium");
  EXPECT_FALSE(result.contains("scored"));
}

TEST(AuditResultTest, ASuppressedFindingIsASkipThatSaysWhy) {
  Finding f = missingToleration();
  f.suppressed = true;
  f.suppressionReason = "the nodes of this pool carry no taint";
  const json result =
      buildReports(namespaceOf("ml", resultsOf(kVllm, {f}, false, kNow).results), ReportFormat::OpenReports)
          .at(0)["results"][0];
  EXPECT_EQ(result["result"], "skip");
  EXPECT_FALSE(result.contains("scored"));
  EXPECT_EQ(result["properties"]["suppressedBecause"], "the nodes of this pool carry no taint");
}

TEST(AuditResultTest, TheResultNamesTheObjectTheFieldAndWhatTheApiServerWouldSay) {
  Finding f = missingToleration();
  f.value = "[]";
  const json result =
      buildReports(namespaceOf("ml", resultsOf(kVllm, {f}, true, kNow).results), ReportFormat::OpenReports)
          .at(0)["results"][0];
  EXPECT_EQ(result["resources"], json::parse(R"([{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "ml",
      "name": "vllm", "uid": "6f1c2a4e-9b7d-4c1e-8a53-2d7e0c9f4b10"}])"));
  EXPECT_EQ(result["message"], "spec.template.spec.tolerations: Required value: no toleration for the GPU node taint "
                               "nvidia.com/gpu:NoSchedule; add one");
  EXPECT_EQ(result["properties"], json::parse(R"({"field": "spec.template.spec.tolerations",
      "pointer": "/spec/template/spec/tolerations", "value": "[]", "fixable": "false",
      "process": "background scan", "clusterFacts": "true"})"));
}

TEST(AuditResultTest, TheTimestampHasBothSecondsAndNanosAsTheCrdRequires) {
  const json result = buildReports(namespaceOf("ml", resultsOf(kVllm, {missingToleration()}, false, {1796382000, 5}).results),
                                   ReportFormat::OpenReports)
                          .at(0)["results"][0];
  EXPECT_EQ(result["timestamp"], json::parse(R"({"seconds": 1796382000, "nanos": 5})"));
}

TEST(AuditResultTest, AFindingSeenBeforeKeepsItsFirstSeenTimeAndANewOneGetsNow) {
  const std::vector<AuditResult> before = resultsOf(kVllm, {missingToleration()}, false, {100, 7}).results;
  const ObjectResults after = resultsOf(kVllm, {missingToleration(), missingDriverPin()}, false, {200, 0}, before);
  ASSERT_EQ(after.results.size(), 2u);
  EXPECT_EQ(after.results[0].firstSeen, (Timestamp{100, 7}));
  EXPECT_EQ(after.results[1].firstSeen, (Timestamp{200, 0}));
}

TEST(AuditResultTest, TheSameFindingOfAnotherObjectIsNew) {
  const std::vector<AuditResult> before = resultsOf(kVllm, {missingToleration()}, false, {100, 0}).results;
  AuditedObject other = kVllm;
  other.uid = "another-uid";
  EXPECT_EQ(resultsOf(other, {missingToleration()}, false, {200, 0}, before).results.at(0).firstSeen, (Timestamp{200, 0}));
}

TEST(AuditResultTest, AMessageIsCutTo1KiBOnACharacterBoundary) {
  Finding f = missingToleration();
  std::string detail;
  while (detail.size() < 5 * 1024) detail += "Grafikkarte für Ä ";  // two-byte characters everywhere
  f.error = FieldError::invalid("\"x\"", detail);
  const AuditResult r = resultsOf(kVllm, {f}, false, kNow).results.at(0);
  EXPECT_LE(r.message.size(), kMaxMessageBytes);
  EXPECT_GT(r.message.size(), kMaxMessageBytes - 4);
  EXPECT_TRUE(utf8::isValid(r.message));
}

TEST(AuditResultTest, InvalidUtf8InAValueBecomesTheReplacementCharacter) {
  Finding f = missingToleration();
  f.value = std::string("bad\xff\xfe", 5);
  const AuditResult r = resultsOf(kVllm, {f}, false, kNow).results.at(0);
  EXPECT_EQ(r.value, "bad\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(AuditResultTest, AValueIsCutTo256Bytes) {
  Finding f = missingToleration();
  f.value = std::string(10'000, '9');
  EXPECT_EQ(resultsOf(kVllm, {f}, false, kNow).results.at(0).value.size(), kMaxValueBytes);
}

TEST(AuditResultTest, AnObjectKeepsAtMostItsMaximumAndCountsTheRest) {
  const std::vector<Finding> many(101, missingToleration());
  const ObjectResults r = resultsOf(kVllm, many, false, kNow, {}, 100);
  EXPECT_EQ(r.results.size(), 100u);
  EXPECT_EQ(r.dropped, 1u);
}

TEST(AuditResultTest, TheFindingsOfTheEngineBecomeResultsInTheEnginesOrder) {
  const std::vector<Finding> findings = testing::judgeYaml(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: ml, uid: u-1}
spec:
  template:
    spec:
      containers:
      - name: server
        image: vllm/vllm-openai:v0.6.3
        resources: {limits: {nvidia.com/gpu: "0.5"}}
)");
  ASSERT_FALSE(findings.empty());
  const ObjectResults r = resultsOf(kVllm, findings, false, kNow);
  ASSERT_EQ(r.results.size(), findings.size());
  for (std::size_t i = 0; i < findings.size(); ++i) {
    EXPECT_EQ(r.results[i].rule, findings[i].rule);
    EXPECT_EQ(r.results[i].message, findings[i].fieldError());
    EXPECT_EQ(r.results[i].pointer, findings[i].pointer());
  }
}

TEST(NamespaceReportTest, IsOneReportNamedGpuguardInTheNamespaceMarkedAsOurs) {
  const json doc =
      buildReports(namespaceOf("ml", resultsOf(kVllm, {missingToleration(), missingDriverPin()}, false, kNow).results),
                   ReportFormat::OpenReports)
          .at(0);
  EXPECT_EQ(doc["apiVersion"], "openreports.io/v1alpha1");
  EXPECT_EQ(doc["kind"], "Report");
  EXPECT_EQ(doc["metadata"]["name"], "gpuguard");
  EXPECT_EQ(doc["metadata"]["namespace"], "ml");
  EXPECT_EQ(doc["metadata"]["labels"], json::parse(R"({"app.kubernetes.io/managed-by": "gpuguard"})"));
  EXPECT_EQ(doc["source"], "gpuguard");
  EXPECT_EQ(doc["configuration"], json::parse(R"({"limits": {"maxResults": 100, "statusFilter": ["fail", "warn", "skip"]}})"));
  EXPECT_EQ(doc["summary"], json::parse(R"({"pass": 0, "fail": 1, "warn": 1, "error": 0, "skip": 0})"));
  EXPECT_EQ(doc["results"].size(), 2u);
  EXPECT_FALSE(doc.contains("scope")) << "a namespace's report is about many objects; each result names its own";
}

TEST(NamespaceReportTest, CarriesTheDigestOfItsResultSet) {
  const NamespaceResults set = namespaceOf("ml", resultsOf(kVllm, {missingToleration()}, false, kNow).results);
  const json doc = buildReports(set, ReportFormat::OpenReports).at(0);
  EXPECT_EQ(doc["metadata"]["annotations"]["gpuguard.io/results-digest"], resultsDigest(set.results));
}

TEST(NamespaceReportTest, CountsTheResultsObjectsCouldNotKeep) {
  NamespaceResults set = namespaceOf("ml", resultsOf(kVllm, {missingToleration()}, false, kNow).results);
  set.dropped = 3;
  const json doc = buildReports(set, ReportFormat::OpenReports).at(0);
  EXPECT_EQ(doc["metadata"]["annotations"]["gpuguard.io/results-truncated"], "3");
}

TEST(NamespaceReportTest, ANamespaceWithoutResultsHasNoReport) {
  EXPECT_TRUE(buildReports(namespaceOf("ml", {}), ReportFormat::OpenReports).empty());
}

TEST(NamespaceReportTest, ClusterScopedObjectsGoToTheClusterReport) {
  const AuditedObject pool{"karpenter.sh/v1", "NodePool", "", "gpu", "np-uid"};
  const json doc =
      buildReports(namespaceOf("", resultsOf(pool, {missingToleration()}, false, kNow).results), ReportFormat::OpenReports)
          .at(0);
  EXPECT_EQ(doc["kind"], "ClusterReport");
  EXPECT_EQ(doc["metadata"]["name"], "gpuguard");
  EXPECT_FALSE(doc["metadata"].contains("namespace"));
  EXPECT_FALSE(doc["results"][0]["resources"][0].contains("namespace"));
}

std::vector<AuditResult> resultsOfObjects(std::size_t objects, std::size_t findingsEach) {
  std::vector<AuditResult> all;
  for (std::size_t i = 0; i < objects; ++i) {
    AuditedObject o = kVllm;
    o.name = "vllm-" + std::to_string(1000 + i);
    o.uid = "uid-" + std::to_string(i);
    for (AuditResult& r : resultsOf(o, std::vector<Finding>(findingsEach, missingToleration()), false, kNow).results) {
      all.push_back(std::move(r));
    }
  }
  return all;
}

TEST(NamespaceReportTest, PastTwoHundredResultsItSplitsIntoGpuguardGpuguard2AndOn) {
  const NamespaceResults set = namespaceOf("ml", resultsOfObjects(401, 1));
  const std::vector<json> docs = buildReports(set, ReportFormat::OpenReports);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0]["metadata"]["name"], "gpuguard");
  EXPECT_EQ(docs[1]["metadata"]["name"], "gpuguard-2");
  EXPECT_EQ(docs[2]["metadata"]["name"], "gpuguard-3");
  EXPECT_EQ(docs[0]["results"].size(), 200u);
  EXPECT_EQ(docs[2]["results"].size(), 1u);
  EXPECT_EQ(docs[2]["summary"]["fail"], 1) << "each document counts its own results";
  for (const json& d : docs) EXPECT_EQ(d["metadata"]["annotations"]["gpuguard.io/results-digest"], resultsDigest(set.results));
}

TEST(NamespaceReportTest, ResultsOfAboutOneMebibyteSplitBeforeEtcdWouldRefuseThem) {
  std::vector<AuditResult> big = resultsOfObjects(190, 1);
  for (AuditResult& r : big) r.message = std::string(kMaxMessageBytes, 'm'), r.value = std::string(kMaxValueBytes, 'v');
  const ReportBounds bounds{200, 100 * 1024, 100};
  const std::vector<json> docs = buildReports(namespaceOf("ml", big), ReportFormat::OpenReports, bounds);
  ASSERT_GT(docs.size(), 1u);
  std::size_t total = 0;
  for (const json& d : docs) {
    EXPECT_LE(d["results"].dump().size(), bounds.maxBytes);
    total += d["results"].size();
  }
  EXPECT_EQ(total, big.size());
}

TEST(NamespaceReportTest, TheDefaultBoundsKeepEveryDocumentUnderOneMebibyte) {
  std::vector<AuditResult> big = resultsOfObjects(1000, 1);
  for (AuditResult& r : big) r.message = std::string(kMaxMessageBytes, 'm'), r.value = std::string(kMaxValueBytes, 'v');
  for (const json& d : buildReports(namespaceOf("ml", big), ReportFormat::OpenReports)) {
    EXPECT_LT(d.dump().size(), 1024u * 1024u);
  }
}

TEST(WgPolicyReportTest, IsAPolicyReportWithoutSourceOrConfigurationAndTheSameResults) {
  const NamespaceResults set = namespaceOf("ml", resultsOf(kVllm, {missingToleration()}, false, kNow).results);
  const json open = buildReports(set, ReportFormat::OpenReports).at(0);
  const json wg = buildReports(set, ReportFormat::WgPolicy).at(0);
  EXPECT_EQ(wg["apiVersion"], "wgpolicyk8s.io/v1alpha2");
  EXPECT_EQ(wg["kind"], "PolicyReport");
  EXPECT_FALSE(wg.contains("source"));
  EXPECT_FALSE(wg.contains("configuration"));
  EXPECT_EQ(wg["results"], open["results"]);
  EXPECT_EQ(wg["summary"], open["summary"]);
  EXPECT_EQ(buildReports(namespaceOf("", set.results), ReportFormat::WgPolicy).at(0)["kind"], "ClusterPolicyReport");
}

TEST(ReportApiTest, NamesTheGroupVersionAndPluralsOfEachFormat) {
  EXPECT_EQ(reportApi(ReportFormat::OpenReports).plural, "reports");
  EXPECT_EQ(reportApi(ReportFormat::OpenReports).clusterPlural, "clusterreports");
  EXPECT_EQ(reportApi(ReportFormat::WgPolicy).group, "wgpolicyk8s.io");
  EXPECT_EQ(reportApi(ReportFormat::WgPolicy).clusterPlural, "clusterpolicyreports");
  EXPECT_EQ(parseReportFormat("wgpolicyk8s"), ReportFormat::WgPolicy);
  EXPECT_EQ(parseReportFormat("openreports"), ReportFormat::OpenReports);
  EXPECT_EQ(parseReportFormat("policyreport"), std::nullopt);
}

TEST(ResultsDigestTest, IgnoresWhenFindingsWereFirstSeen) {
  const std::vector<AuditResult> a = resultsOf(kVllm, {missingToleration()}, false, {1, 0}).results;
  const std::vector<AuditResult> b = resultsOf(kVllm, {missingToleration()}, false, {999, 5}).results;
  EXPECT_EQ(resultsDigest(a), resultsDigest(b));
}

TEST(ResultsDigestTest, ChangesWithAnyResultAndWithTheDroppedCount) {
  const std::vector<AuditResult> one = resultsOf(kVllm, {missingToleration()}, false, kNow).results;
  const std::vector<AuditResult> two = resultsOf(kVllm, {missingToleration(), missingDriverPin()}, false, kNow).results;
  std::vector<AuditResult> facts = one;
  facts[0].clusterFacts = true;
  EXPECT_NE(resultsDigest(one), resultsDigest(two));
  EXPECT_NE(resultsDigest(one), resultsDigest(facts));
  EXPECT_NE(resultsDigest(one), resultsDigest(one, 1));
  EXPECT_EQ(resultsDigest(one).rfind("sha256:", 0), 0u);
}

TEST(ResultsDigestTest, TheResultsReadBackFromAReportHaveTheDigestItWasWrittenWith) {
  Finding suppressed = missingDriverPin();
  suppressed.suppressed = true;
  suppressed.suppressionReason = "pinned by the node pool";
  Finding valued = missingToleration();
  valued.value = "\"x\"";
  const NamespaceResults set =
      namespaceOf("ml", resultsOf(kVllm, {valued, missingDriverPin(), suppressed}, true, {42, 9}).results);
  const json doc = buildReports(set, ReportFormat::OpenReports).at(0);
  const std::vector<AuditResult> back = resultsFromReport(doc);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(resultsDigest(back), resultsDigest(set.results));
  EXPECT_EQ(back[0].firstSeen, (Timestamp{42, 9}));
  EXPECT_EQ(back[2].suppressedBecause, "pinned by the node pool");
}

TEST(ResultsDigestTest, ReadingBackSkipsWhatIsNotAResult) {
  const json doc = json::parse(R"({"results": [42, {"policy": "x"}, {"resources": [{"kind": "Pod"}]},
      {"policy": "gpu-fractional", "result": "fail", "resources": [{"kind": "Pod", "name": "p"}],
       "timestamp": {"seconds": "soon", "nanos": 9999999999}}]})");
  const std::vector<AuditResult> back = resultsFromReport(doc);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].rule, "gpu-fractional");
  EXPECT_EQ(back[0].firstSeen, (Timestamp{0, 0}));
  EXPECT_TRUE(resultsFromReport(json("not a report")).empty());
}

TEST(SortResultsTest, OrdersByKindNameAndUidKeepingEachObjectsOwnOrder) {
  AuditedObject a = kVllm, b = kVllm;
  a.name = "b-second", b.name = "a-first";
  std::vector<AuditResult> all = resultsOf(a, {missingToleration(), missingDriverPin()}, false, kNow).results;
  for (AuditResult& r : resultsOf(b, {missingDriverPin()}, false, kNow).results) all.push_back(std::move(r));
  sortResults(all);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].object.name, "a-first");
  EXPECT_EQ(all[1].rule, "gpu-missing-toleration");
  EXPECT_EQ(all[2].rule, "gpu-missing-driver-pin");
}

}  // namespace
}  // namespace gpuguard::audit
