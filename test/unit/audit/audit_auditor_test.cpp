// The background audit end to end against an API server in the process
// (audit/auditor.h): what exists is judged and reported per namespace, a fix
// or a deletion clears its results, a new policy or new facts re-judge, a
// takeover with identical judgements writes nothing, a refused resource
// keeps its reports, and only a writer behind the fence writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <sstream>

#include "audit/auditor.h"
#include "rules/engine.h"
#include "test/unit/audit/audit_fake_api.h"

namespace gpuguard::audit {
namespace {

using nlohmann::json;
using testing::eventually;
using testing::FakeAuditApi;

constexpr const char* kReports = "reports.openreports.io";
constexpr const char* kClusterReports = "clusterreports.openreports.io";
constexpr const char* kFindingsAnnotation = "test.gpuguard.io/findings";  // what the scripted judge finds

json workload(const std::string& name, const std::string& ns, const std::string& findings, json extra = json::object()) {
  json object = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"},
                 {"metadata", {{"name", name}, {"annotations", {{kFindingsAnnotation, findings}}}}},
                 {"spec", {{"replicas", 1}}}};
  if (!ns.empty()) object["metadata"]["namespace"] = ns;
  object.merge_patch(extra);
  return object;
}

// Judges by the object's annotation ("rule-a,warn-b": an error of rule-a, a
// warning of warn-b); rules in `disabled` are off, as a policy would turn them
// off; namespace "exempt" is exempt; annotation test.gpuguard.io/facts: the
// findings depend on the facts.
struct ScriptedJudge {
  std::mutex mutex;
  std::set<std::string> disabled;
  std::map<std::string, int> judged;  // by object name

  Judgement operator()(const json& object, const ClusterFacts*) {
    std::lock_guard lock(mutex);
    const json& meta = object["metadata"];
    ++judged[meta.value("name", std::string())];
    Judgement j;
    j.exempt = meta.value("namespace", std::string()) == "exempt";
    j.factsSensitive = meta.value("annotations", json::object()).contains("test.gpuguard.io/facts");
    std::stringstream list(meta.value("annotations", json::object()).value(kFindingsAnnotation, std::string()));
    for (std::string rule; std::getline(list, rule, ',');) {
      if (rule.empty() || disabled.count(rule) > 0) continue;
      Finding f;
      f.rule = rule;
      f.severity = rule.rfind("warn-", 0) == 0 ? Severity::Warning : Severity::Error;
      f.path = FieldPath().field("spec").field("replicas");
      f.error = FieldError::invalid("1", rule + " says so; change it");
      j.findings.push_back(std::move(f));
    }
    return j;
  }
  int count(const std::string& name) {
    std::lock_guard lock(mutex);
    return judged[name];
  }
};

struct AuditorTest : ::testing::Test {
  FakeAuditApi api;
  ScriptedJudge judge;
  std::atomic<std::uint64_t> policyGeneration{0};
  std::atomic<bool> leading{true};
  std::mutex factsMutex;
  std::shared_ptr<const ClusterFacts> facts;
  std::vector<std::string> logged;
  std::unique_ptr<Auditor> auditor;

  AuditorOptions options() {
    AuditorOptions o;
    o.resources.clear();
    for (const AuditedResource& r : auditedResources()) {
      for (const char* name : {"pods", "deployments.apps", "replicasets.apps", "clusterworkflowtemplates.argoproj.io"}) {
        if (r.name() == name) o.resources.push_back(r);
      }
    }
    o.tick = o.flushInterval = o.firstScanFlushInterval = std::chrono::milliseconds(5);
    o.factsGrace = o.factsSettle = o.factsMinInterval = std::chrono::milliseconds(0);
    o.backoffInitial = o.backoffMax = std::chrono::milliseconds(5);
    o.judgeQps = o.apiQps = 0;
    o.idleScheduling = false;
    o.policyGeneration = [this] { return policyGeneration.load(); };
    o.facts = [this] {
      std::lock_guard lock(factsMutex);
      return facts;
    };
    o.mayWrite = [this] { return leading.load(); };
    o.now = [] { return Timestamp{1796382000, 0}; };
    return o;
  }
  void start(AuditorOptions o) {
    auditor = std::make_unique<Auditor>(api, [this](const json& obj, const ClusterFacts* f) { return judge(obj, f); }, std::move(o));
    auditor->start();
  }
  void start() { start(options()); }
  // Waits for a complete scan after `scans` and for everything judged and written.
  bool settled(std::uint64_t scans = 0) {
    return eventually([&] { return auditor->completedScans() > scans && auditor->idle(); });
  }
  json report(const std::string& key, const char* resource = kReports) {
    const auto objects = api.objects(resource);
    const auto it = objects.find(key);
    return it == objects.end() ? json() : it->second;
  }
  std::vector<std::string> policiesIn(const json& doc) {
    std::vector<std::string> out;
    for (const json& r : doc.value("results", json::array())) out.push_back(r["policy"]);
    return out;
  }
};

TEST_F(AuditorTest, ObjectsThatExistedBeforeTheAuditAreReportedPerNamespace) {
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration,warn-driver-pin"));
  api.put("deployments.apps", workload("trainer", "ml", "gpu-fractional"));
  api.put("deployments.apps", workload("other", "team-b", "gpu-fractional"));
  start();
  ASSERT_TRUE(settled());
  const json ml = report("ml/gpuguard");
  ASSERT_TRUE(ml.is_object());
  EXPECT_EQ(ml["kind"], "Report");
  EXPECT_EQ(policiesIn(ml), (std::vector<std::string>{"gpu-fractional", "gpu-missing-toleration", "warn-driver-pin"}))
      << "sorted by kind, then name: trainer before vllm";
  EXPECT_EQ(ml["summary"]["fail"], 2);
  EXPECT_EQ(ml["summary"]["warn"], 1);
  EXPECT_EQ(ml["results"][0]["resources"][0]["apiVersion"], "apps/v1") << "list items are stamped with their kind";
  EXPECT_TRUE(report("team-b/gpuguard").is_object());
}

// With --cluster-facts=off the webhook gives the audit no facts source: the
// first list must not wait out the grace that exists to let facts arrive.
TEST_F(AuditorTest, WithoutAFactsSourceTheFirstListDoesNotWaitForFacts) {
  api.put("deployments.apps", workload("vllm", "ml", "gpu-fractional"));
  AuditorOptions o = options();
  o.facts = nullptr;
  o.factsGrace = std::chrono::hours(1);
  start(std::move(o));
  ASSERT_TRUE(settled());
  EXPECT_TRUE(report("ml/gpuguard").is_object());
}

TEST_F(AuditorTest, CleanObjectsExemptNamespacesAndControlledObjectsHaveNoResults) {
  api.put("deployments.apps", workload("clean", "quiet", ""));
  api.put("deployments.apps", workload("bad", "exempt", "gpu-fractional"));
  json replicaSet = workload("vllm-5d8f", "ml", "gpu-fractional");
  replicaSet["metadata"]["ownerReferences"] = json::parse(R"([{"apiVersion": "apps/v1", "kind": "Deployment",
      "name": "vllm", "uid": "d-1", "controller": true}])");
  api.put("replicasets.apps", replicaSet);
  start();
  ASSERT_TRUE(settled());
  EXPECT_TRUE(api.objects(kReports).empty());
  EXPECT_EQ(judge.count("vllm-5d8f"), 0) << "its Deployment carries the finding";
  EXPECT_EQ(judge.count("clean"), 1);
}

TEST_F(AuditorTest, ExcludedNamespacesAreNotJudged) {
  api.put("deployments.apps", workload("bad", "sandbox", "gpu-fractional"));
  AuditorOptions o = options();
  o.excludeNamespaces = {"sandbox"};
  start(std::move(o));
  ASSERT_TRUE(settled());
  EXPECT_EQ(judge.count("bad"), 0);
  EXPECT_TRUE(api.objects(kReports).empty());
}

TEST_F(AuditorTest, ClusterScopedObjectsGoToTheClusterReport) {
  json cwt = workload("train-template", "", "gpu-fractional");
  cwt["apiVersion"] = "argoproj.io/v1alpha1";
  cwt["kind"] = "ClusterWorkflowTemplate";
  api.put("clusterworkflowtemplates.argoproj.io", cwt);
  start();
  ASSERT_TRUE(settled());
  const json doc = report("/gpuguard", kClusterReports);
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["kind"], "ClusterReport");
  EXPECT_EQ(doc["results"][0]["resources"][0]["kind"], "ClusterWorkflowTemplate");
}

TEST_F(AuditorTest, AFixSeenByTheWatchRemovesTheReport) {
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration"));
  start();
  ASSERT_TRUE(settled());
  ASSERT_TRUE(report("ml/gpuguard").is_object());
  api.put("deployments.apps", workload("vllm", "ml", "", {{"metadata", {{"uid", api.objects("deployments.apps").at("ml/vllm")["metadata"]["uid"]}}}}));
  EXPECT_TRUE(eventually([&] { return report("ml/gpuguard").is_null(); }));
  EXPECT_EQ(api.lists("deployments.apps"), 1u) << "the watch saw it, no relist";
}

TEST_F(AuditorTest, AChangeThatKeepsTheFindingsRewritesNothing) {
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration"));
  start();
  ASSERT_TRUE(settled());
  const std::size_t writes = api.writes().size();
  const json uid = api.objects("deployments.apps").at("ml/vllm")["metadata"]["uid"];
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration", {{"metadata", {{"uid", uid}}}, {"spec", {{"replicas", 3}}}}));
  ASSERT_TRUE(eventually([&] { return judge.count("vllm") == 2 && auditor->idle(); }));
  EXPECT_EQ(api.writes().size(), writes) << "same result set, same digest: no write";
}

TEST_F(AuditorTest, StatusChurnIsNotJudgedAgain) {
  api.put("pods", workload("p", "ml", "gpu-fractional", {{"apiVersion", "v1"}, {"kind", "Pod"}}));
  start();
  ASSERT_TRUE(settled());
  const json uid = api.objects("pods").at("ml/p")["metadata"]["uid"];
  api.put("pods", workload("p", "ml", "gpu-fractional",
                           {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"uid", uid}}}, {"status", {{"phase", "Running"}}}}));
  api.put("pods", workload("marker", "ml", ""));
  ASSERT_TRUE(eventually([&] { return judge.count("marker") == 1 && auditor->idle(); }));
  EXPECT_EQ(judge.count("p"), 1) << "the judge key ignores status";
}

TEST_F(AuditorTest, DeletingTheObjectRemovesItsResults) {
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration"));
  api.put("deployments.apps", workload("trainer", "ml", "gpu-fractional"));
  start();
  ASSERT_TRUE(settled());
  api.erase("deployments.apps", "ml", "vllm");
  EXPECT_TRUE(eventually([&] { return policiesIn(report("ml/gpuguard")) == std::vector<std::string>{"gpu-fractional"}; }));
  api.erase("deployments.apps", "ml", "trainer");
  EXPECT_TRUE(eventually([&] { return report("ml/gpuguard").is_null(); }));
}

TEST_F(AuditorTest, ANewPolicyRelistsAndJudgesEverythingAgain) {
  api.put("deployments.apps", workload("cron", "ml", "warn-driver-pin"));
  api.put("deployments.apps", workload("vllm", "ml", "gpu-fractional"));
  start();
  ASSERT_TRUE(settled());
  const std::uint64_t scans = auditor->completedScans();
  {
    std::lock_guard lock(judge.mutex);
    judge.disabled = {"warn-driver-pin"};
  }
  policyGeneration.store(1);
  ASSERT_TRUE(settled(scans));
  EXPECT_EQ(policiesIn(report("ml/gpuguard")), std::vector<std::string>{"gpu-fractional"});
  EXPECT_EQ(judge.count("vllm"), 2);
  EXPECT_GE(auditor->status().judged.at({"deployments.apps", "policy"}), 2u);
}

TEST_F(AuditorTest, NewFactsReJudgeOnlyTheObjectsTheyCanChange) {
  api.put("deployments.apps", workload("gpu", "ml", "gpu-fractional", {{"metadata", {{"annotations", {{"test.gpuguard.io/facts", "yes"}}}}}}));
  api.put("deployments.apps", workload("plain", "ml", "gpu-fractional"));
  start();
  ASSERT_TRUE(settled());
  const std::uint64_t scans = auditor->completedScans();
  {
    std::lock_guard lock(factsMutex);
    facts = ClusterFactsBuilder().build();
  }
  ASSERT_TRUE(settled(scans));
  EXPECT_EQ(judge.count("gpu"), 2);
  EXPECT_EQ(judge.count("plain"), 1);
  EXPECT_EQ(auditor->status().judged.at({"deployments.apps", "facts"}), 1u);
}

TEST_F(AuditorTest, AResyncFindsWhatWasDeletedWhileNoWatchWasOpen) {
  api.put("deployments.apps", workload("vllm", "ml", "gpu-fractional"));
  AuditorOptions o = options();
  o.resyncInterval = std::chrono::milliseconds(20);
  start(std::move(o));
  ASSERT_TRUE(settled());
  EXPECT_TRUE(eventually([&] { return api.lists("deployments.apps") >= 3; })) << "relisted every resync";
}

TEST_F(AuditorTest, ATakeoverWithIdenticalJudgementsWritesNothing) {
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration"));
  start();
  ASSERT_TRUE(settled());
  auditor->stop();
  const std::vector<std::string> before = api.writes();
  start();  // the next leader, same cluster
  ASSERT_TRUE(settled());
  EXPECT_EQ(api.writes(), before);
  EXPECT_EQ(auditor->status().reports, 1u) << "it knows what is written";
}

TEST_F(AuditorTest, ATakeoverKeepsWhenEachFindingWasFirstSeen) {
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration"));
  start();
  ASSERT_TRUE(settled());
  auditor->stop();
  api.put("deployments.apps", workload("late", "ml", "gpu-fractional"));
  AuditorOptions later = options();
  later.now = [] { return Timestamp{1796400000, 0}; };
  start(std::move(later));
  ASSERT_TRUE(settled());
  const json doc = report("ml/gpuguard");
  ASSERT_EQ(doc["results"].size(), 2u);
  EXPECT_EQ(doc["results"][0]["timestamp"]["seconds"], 1796400000) << "late: new";
  EXPECT_EQ(doc["results"][1]["timestamp"]["seconds"], 1796382000) << "vllm: carried over";
}

TEST_F(AuditorTest, ReportsOfObjectsDeletedWhileNobodyAuditedAreRemovedAfterTheScan) {
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration"));
  start();
  ASSERT_TRUE(settled());
  auditor->stop();
  api.erase("deployments.apps", "ml", "vllm");
  start();
  ASSERT_TRUE(settled());
  EXPECT_TRUE(report("ml/gpuguard").is_null());
}

TEST_F(AuditorTest, SwitchingTheReportFormatDeletesOurReportsInTheOtherApiAfterTheScan) {
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration"));
  start();
  ASSERT_TRUE(settled());
  auditor->stop();
  AuditorOptions wg = options();
  wg.format = ReportFormat::WgPolicy;
  start(std::move(wg));
  ASSERT_TRUE(settled());
  EXPECT_TRUE(eventually([&] { return report("ml/gpuguard").is_null(); })) << "the openreports Report is gone";
  EXPECT_EQ(report("ml/gpuguard", "policyreports.wgpolicyk8s.io")["kind"], "PolicyReport");
}

TEST_F(AuditorTest, ARefusedResourceKeepsItsReports) {
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration"));
  start();
  ASSERT_TRUE(settled());
  auditor->stop();
  api.answer("deployments.apps", 403);
  start();
  ASSERT_TRUE(settled());
  EXPECT_EQ(policiesIn(report("ml/gpuguard")), std::vector<std::string>{"gpu-missing-toleration"})
      << "a 403 proves nothing gone";
  bool refused = false;
  for (const AuditResourceStatus& s : auditor->status().resources) refused = refused || (s.resource == "deployments.apps" && s.state == "refused");
  EXPECT_TRUE(refused);
}

TEST_F(AuditorTest, WithoutTheReportApiItJudgesButWritesNothing) {
  api.answer(kReports, 404);
  api.answer(kClusterReports, 404);
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration"));
  start();
  // The worker records the judgement just after the judge returns: wait for the record itself.
  ASSERT_TRUE(eventually([&] { return auditor->completedScans() > 0 && auditor->status().findings.size() == 1; }))
      << "the metrics still count the findings";
  EXPECT_EQ(judge.count("vllm"), 1);
  EXPECT_TRUE(api.writes().empty());
  EXPECT_FALSE(auditor->status().reportsApiServed);
}

// A report list that fails otherwise than 404 (a CRD's storage "(re)initializing" answers 503)
// says nothing about whether the CRDs are installed: it is asked again after a backoff, not after
// the not-served wait, and nobody is told to install CRDs.
TEST_F(AuditorTest, AReportListThatFailsBrieflyIsAskedAgainSoon) {
  AuditorOptions o = options();
  o.notServedRetry = std::chrono::hours(1);
  std::mutex logMutex;
  o.log = [&](bool, const std::string& line) {
    std::lock_guard lock(logMutex);
    logged.push_back(line);
  };
  api.answer(kClusterReports, 503);
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration"));
  start(std::move(o));
  ASSERT_TRUE(eventually([&] { return api.lists(kClusterReports) >= 2; })) << "asked again within the backoff";
  api.answer(kClusterReports, 0);
  ASSERT_TRUE(eventually([&] { return report("ml/gpuguard").is_object(); })) << "written without waiting an hour";
  EXPECT_EQ(policiesIn(report("ml/gpuguard")), std::vector<std::string>{"gpu-missing-toleration"});
  auditor->stop();
  std::lock_guard lock(logMutex);
  EXPECT_TRUE(std::any_of(logged.begin(), logged.end(), [](const std::string& l) {
    return l.find("cannot list our clusterreports.openreports.io") != std::string::npos;
  }));
  EXPECT_FALSE(std::any_of(logged.begin(), logged.end(), [](const std::string& l) {
    return l.find("install its CRDs") != std::string::npos;
  }));
}

TEST_F(AuditorTest, ARefusedReportListIsLoggedAsRefusedNotAsMissingCrds) {
  AuditorOptions o = options();
  std::mutex logMutex;
  o.log = [&](bool, const std::string& line) {
    std::lock_guard lock(logMutex);
    logged.push_back(line);
  };
  api.answer(kReports, 403);
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration"));
  start(std::move(o));
  ASSERT_TRUE(eventually([&] { return auditor->completedScans() > 0 && auditor->status().findings.size() == 1; }));
  auditor->stop();
  EXPECT_TRUE(api.writes().empty());
  std::lock_guard lock(logMutex);
  EXPECT_TRUE(std::any_of(logged.begin(), logged.end(), [](const std::string& l) {
    return l.find("cannot list our reports.openreports.io: the server answered 403") != std::string::npos;
  }));
  EXPECT_FALSE(std::any_of(logged.begin(), logged.end(), [](const std::string& l) {
    return l.find("install its CRDs") != std::string::npos;
  }));
}

// A report is not rewritten as it grows during the first full scan: it is written once the scan
// is complete (a resource still unreachable keeps the scan incomplete).
TEST_F(AuditorTest, DuringTheFirstScanReportsAreWrittenWhenItCompletes) {
  AuditorOptions o = options();
  o.firstScanFlushInterval = std::chrono::hours(1);
  api.answer("replicasets.apps", 503);
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration"));
  api.put("deployments.apps", workload("train", "ml", "warn-b"));
  start(std::move(o));
  ASSERT_TRUE(eventually([&] { return auditor->status().findings.size() == 2; })) << "both judged";
  EXPECT_EQ(auditor->completedScans(), 0u);
  EXPECT_TRUE(api.writes().empty()) << "the scan is not complete";
  api.answer("replicasets.apps", 0);
  ASSERT_TRUE(settled());
  EXPECT_EQ(api.writes(), std::vector<std::string>{"apply reports.openreports.io ml/gpuguard"});
  EXPECT_EQ(policiesIn(report("ml/gpuguard")).size(), 2u);
}

TEST_F(AuditorTest, BehindAClosedFenceNothingIsWrittenAndTheWriteWaits) {
  leading.store(false);
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration"));
  start();
  ASSERT_TRUE(eventually([&] { return auditor->status().writes.count({"apply", "fenced"}) > 0; }));
  EXPECT_TRUE(api.writes().empty());
  leading.store(true);
  EXPECT_TRUE(eventually([&] { return report("ml/gpuguard").is_object(); }));
}

TEST_F(AuditorTest, ANamespacePastTwoHundredResultsIsSplitAndShrinksBack) {
  std::string many;
  for (int i = 0; i < 250; ++i) many += (i ? "," : "") + std::string("rule-") + std::to_string(i);
  AuditorOptions o = options();
  o.bounds.maxResultsPerObject = 300;
  api.put("deployments.apps", workload("noisy", "ml", many));
  start(std::move(o));
  ASSERT_TRUE(settled());
  EXPECT_EQ(report("ml/gpuguard")["results"].size(), 200u);
  EXPECT_EQ(report("ml/gpuguard-2")["results"].size(), 50u);
  const json uid = api.objects("deployments.apps").at("ml/noisy")["metadata"]["uid"];
  api.put("deployments.apps", workload("noisy", "ml", "rule-1", {{"metadata", {{"uid", uid}}}}));
  EXPECT_TRUE(eventually([&] { return report("ml/gpuguard-2").is_null() && report("ml/gpuguard")["results"].size() == 1; }));
}

TEST_F(AuditorTest, StatusCountsFindingsObjectsAndTheScan) {
  api.put("deployments.apps", workload("vllm", "ml", "gpu-missing-toleration,warn-driver-pin"));
  start();
  ASSERT_TRUE(settled());
  const AuditStatus s = auditor->status();
  EXPECT_TRUE(s.running);
  EXPECT_TRUE(s.reportsApiServed);
  EXPECT_EQ((s.findings.at({"gpu-missing-toleration", "error", "ml"})), 1u);
  EXPECT_EQ((s.findings.at({"warn-driver-pin", "warning", "ml"})), 1u);
  EXPECT_GT(s.lastFullScanTimestamp, 1.7e9);
  EXPECT_GE(s.lastFullScanDuration, 0.0);
  EXPECT_EQ(s.reports, 1u);
  EXPECT_EQ((s.writes.at({"apply", "ok"})), 1u);
  bool counted = false;
  for (const AuditResourceStatus& r : s.resources) counted = counted || (r.resource == "deployments.apps" && r.objects == 1 && r.synced);
  EXPECT_TRUE(counted);
}

TEST_F(AuditorTest, DiscoveryNamesTheKindOfAnExtraResourceSoItIsAudited) {
  json trainer = workload("t1", "ml", "gpu-fractional");
  trainer["apiVersion"] = "example.com/v2";
  trainer["kind"] = "Trainer";
  api.put("trainers.example.com", trainer);
  AuditorOptions o = options();
  o.resources = withExtraResources({"trainers.example.com"});
  o.resources.erase(o.resources.begin(), o.resources.end() - 1);  // the extra resource alone
  o.resolveResources = [](std::vector<AuditedResource> resources, const std::atomic<bool>&) {
    resources.at(0).versions = {"v2"};
    resources.at(0).kind = "Trainer";
    return resources;
  };
  start(std::move(o));
  ASSERT_TRUE(settled());
  EXPECT_EQ(report("ml/gpuguard")["results"][0]["resources"][0]["apiVersion"], "example.com/v2");
}

TEST_F(AuditorTest, AnExtraResourceDiscoveryDoesNotNameIsNotServed) {
  AuditorOptions o = options();
  o.resources = {withExtraResources({"trainers.example.com"}).back()};
  start(std::move(o));
  ASSERT_TRUE(settled());
  EXPECT_EQ(auditor->status().resources.at(0).state, "not served");
  EXPECT_EQ(api.lists("trainers.example.com"), 0u);
}

TEST_F(AuditorTest, TheRealEngineJudgesAsAdmissionWould) {
  const json deployment = json::parse(R"({"apiVersion": "apps/v1", "kind": "Deployment",
      "metadata": {"name": "vllm", "namespace": "ml"},
      "spec": {"template": {"spec": {"containers": [{"name": "server", "image": "vllm/vllm-openai:v0.6.3",
        "resources": {"limits": {"nvidia.com/gpu": "0.5"}}}]}}}})");
  api.put("deployments.apps", deployment);
  auditor = std::make_unique<Auditor>(
      api, [](const json& object, const ClusterFacts* f) {
        JudgeOptions o;
        o.cluster = f;
        return Judgement{false, gpuguard::judge(object, Policy{}, o), false};
      },
      options());
  auditor->start();
  ASSERT_TRUE(settled());
  std::vector<std::string> expected;
  for (const Finding& f : gpuguard::judge(deployment, Policy{})) expected.push_back(f.rule);
  ASSERT_FALSE(expected.empty());
  std::vector<std::string> got = policiesIn(report("ml/gpuguard"));
  std::sort(got.begin(), got.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(got, expected);
}

}  // namespace
}  // namespace gpuguard::audit
