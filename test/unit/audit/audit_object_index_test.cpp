// What the audit remembers per object (audit/object_index.h): when a
// re-judgement can be skipped, which namespaces' reports to look at again,
// results inherited from reports at takeover, and objects gone while no
// watch was open.
#include <gtest/gtest.h>

#include "audit/object_index.h"

namespace gpuguard::audit {
namespace {

using nlohmann::json;

AuditResult resultFor(const std::string& ns, const std::string& uid, const std::string& rule,
                      Severity severity = Severity::Error) {
  AuditResult r;
  r.object = {"apps/v1", "Deployment", ns, "d-" + uid, uid};
  r.rule = rule;
  r.severity = severity;
  r.message = rule + " message";
  return r;
}

ObjectRecord judged(const std::string& ns, const std::string& uid, std::vector<AuditResult> results,
                    Generations with = {1, 1}, bool factsSensitive = false) {
  ObjectRecord r;
  r.resource = 4;
  r.ref = {"apps/v1", "Deployment", ns, "d-" + uid, uid};
  r.resourceVersion = "10";
  r.judgeKey = "key-10";
  r.judgedWith = with;
  r.factsSensitive = factsSensitive;
  r.judged = true;
  r.results = std::move(results);
  return r;
}

TEST(ObjectIndexTest, AnObjectNeverJudgedIsStale) {
  ObjectIndex index;
  EXPECT_EQ(index.freshness("u1", "10", {1, 1}), ObjectIndex::Freshness::Stale);
}

TEST(ObjectIndexTest, TheSameResourceVersionAndPolicyNeedNothing) {
  ObjectIndex index;
  index.record("u1", judged("ml", "u1", {}));
  EXPECT_EQ(index.freshness("u1", "10", {1, 1}), ObjectIndex::Freshness::Current);
}

TEST(ObjectIndexTest, ANewResourceVersionWithTheSameJudgeKeyIsNotJudgedAgain) {
  ObjectIndex index;
  index.record("u1", judged("ml", "u1", {}));
  EXPECT_EQ(index.freshness("u1", "11", {1, 1}), ObjectIndex::Freshness::CheckKey);
  EXPECT_TRUE(index.keyUnchanged("u1", "key-10", "11"));
  EXPECT_EQ(index.freshness("u1", "11", {1, 1}), ObjectIndex::Freshness::Current) << "the new version is remembered";
  EXPECT_FALSE(index.keyUnchanged("u1", "key-12", "12"));
}

TEST(ObjectIndexTest, AnotherPolicyGenerationMakesEveryObjectStale) {
  ObjectIndex index;
  index.record("u1", judged("ml", "u1", {}));
  EXPECT_EQ(index.freshness("u1", "10", {2, 1}), ObjectIndex::Freshness::Stale);
}

TEST(ObjectIndexTest, NewFactsMakeOnlyFactsSensitiveObjectsStale) {
  ObjectIndex index;
  index.record("plain", judged("ml", "plain", {}));
  index.record("gpu", judged("ml", "gpu", {}, {1, 1}, true));
  EXPECT_EQ(index.freshness("plain", "10", {1, 2}), ObjectIndex::Freshness::Current);
  EXPECT_EQ(index.freshness("gpu", "10", {1, 2}), ObjectIndex::Freshness::Stale);
  EXPECT_EQ(index.factsSensitiveCount(), 1u);
}

TEST(ObjectIndexTest, ANamespaceIsDirtyWhenAnObjectGainsOrLosesResults) {
  ObjectIndex index;
  index.record("clean", judged("a", "clean", {}));
  EXPECT_TRUE(index.takeDirty().empty()) << "a clean object touches no report";
  index.record("u1", judged("ml", "u1", {resultFor("ml", "u1", "gpu-fractional")}));
  EXPECT_EQ(index.takeDirty(), std::set<std::string>{"ml"});
  EXPECT_TRUE(index.takeDirty().empty());
  index.record("u1", judged("ml", "u1", {}));  // fixed
  EXPECT_EQ(index.takeDirty(), std::set<std::string>{"ml"});
  EXPECT_TRUE(index.namespaceResults("ml").results.empty());
}

TEST(ObjectIndexTest, ForgettingAnObjectWithResultsDirtiesItsNamespace) {
  ObjectIndex index;
  index.record("u1", judged("ml", "u1", {resultFor("ml", "u1", "gpu-fractional")}));
  index.takeDirty();
  index.forget("u1");
  EXPECT_EQ(index.takeDirty(), std::set<std::string>{"ml"});
  EXPECT_EQ(index.size(), 0u);
  index.forget("never-seen");  // harmless
}

TEST(ObjectIndexTest, ANamespacesResultsAreItsObjectsResultsSorted) {
  ObjectIndex index;
  ObjectRecord b = judged("ml", "b", {resultFor("ml", "b", "gpu-fractional")});
  b.dropped = 2;
  index.record("b", b);
  index.record("a", judged("ml", "a", {resultFor("ml", "a", "gpu-missing-toleration")}));
  index.record("x", judged("other", "x", {resultFor("other", "x", "gpu-fractional")}));
  const NamespaceResults ml = index.namespaceResults("ml");
  ASSERT_EQ(ml.results.size(), 2u);
  EXPECT_EQ(ml.results[0].object.uid, "a");
  EXPECT_EQ(ml.dropped, 2u);
  EXPECT_TRUE(index.namespaceResults("nowhere").results.empty());
}

TEST(ObjectIndexTest, ObjectsMissingFromACompleteListAreForgotten) {
  ObjectIndex index;
  index.record("kept", judged("ml", "kept", {resultFor("ml", "kept", "gpu-fractional")}));
  index.record("gone", judged("ml", "gone", {resultFor("ml", "gone", "gpu-fractional")}));
  ObjectRecord otherResource = judged("ml", "pod", {});
  otherResource.resource = 0;
  index.record("pod", otherResource);
  EXPECT_EQ(index.forgetUnseen(4, {"kept"}), 1u);
  EXPECT_EQ(index.size(), 2u) << "another resource's objects are not this list's to judge";
  EXPECT_EQ(index.resultsOf("gone").size(), 0u);
}

TEST(ObjectIndexTest, InheritedResultsCountUntilTheObjectIsJudged) {
  ObjectIndex index;
  index.inherit({resultFor("ml", "u1", "gpu-fractional"), resultFor("ml", "u1", "gpu-missing-toleration"),
                 resultFor("ml", "u2", "gpu-fractional")},
                [](const AuditedObject&) { return std::optional<std::size_t>(4); });
  EXPECT_EQ(index.namespaceResults("ml").results.size(), 3u);
  EXPECT_EQ(index.freshness("u1", "10", {1, 1}), ObjectIndex::Freshness::Stale) << "inherited is not judged";
  index.record("u1", judged("ml", "u1", {}));
  EXPECT_EQ(index.namespaceResults("ml").results.size(), 1u);
}

TEST(ObjectIndexTest, InheritingNeverOverwritesAJudgedObject) {
  ObjectIndex index;
  index.record("u1", judged("ml", "u1", {}));
  index.inherit({resultFor("ml", "u1", "gpu-fractional")}, [](const AuditedObject&) { return std::optional<std::size_t>(4); });
  EXPECT_TRUE(index.resultsOf("u1").empty());
}

TEST(ObjectIndexTest, ResultsOfKindsNoLongerAuditedAreNotInherited) {
  ObjectIndex index;
  index.inherit({resultFor("ml", "u1", "gpu-fractional")}, [](const AuditedObject&) { return std::optional<std::size_t>(); });
  EXPECT_EQ(index.size(), 0u);
}

TEST(ObjectIndexTest, CountsFindingsByRuleSeverityAndNamespaceWithoutSuppressedOnes) {
  ObjectIndex index;
  AuditResult suppressed = resultFor("ml", "u1", "gpu-missing-driver-pin", Severity::Warning);
  suppressed.suppressed = true;
  index.record("u1", judged("ml", "u1", {resultFor("ml", "u1", "gpu-fractional"), suppressed}));
  index.record("u2", judged("ml", "u2", {resultFor("ml", "u2", "gpu-fractional")}));
  const auto counts = index.findingCounts();
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ((counts.at({"gpu-fractional", "error", "ml"})), 2u);
  EXPECT_EQ(index.objectsPerResource().at(4), 2u);
}

TEST(JudgeKeyTest, IgnoresStatusManagedFieldsAndResourceVersionButNotAnnotations) {
  const json pod = json::parse(R"({"kind": "Pod", "metadata": {"name": "p", "resourceVersion": "1",
      "managedFields": [{"manager": "kubelet"}]}, "spec": {"containers": []}, "status": {"phase": "Pending"}})");
  json churned = pod;
  churned["status"]["phase"] = "Running";
  churned["metadata"]["resourceVersion"] = "2";
  churned["metadata"]["managedFields"][0]["manager"] = "scheduler";
  EXPECT_EQ(judgeKeyOf(pod), judgeKeyOf(churned));
  json annotated = pod;
  annotated["metadata"]["annotations"] = {{"ignore.gpuguard.io/gpu-fractional", "tested"}};
  EXPECT_NE(judgeKeyOf(pod), judgeKeyOf(annotated));
  EXPECT_EQ(judgeKeyOf(json("not an object")).size(), 64u);
}

}  // namespace
}  // namespace gpuguard::audit
