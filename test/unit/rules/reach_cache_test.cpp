// A ReachCache gives an object the reach of an earlier one only when the two
// are the same but for who they are (rules/reach_cache.h): the replicas of a
// workload share one pass over the nodes, anything the placement could read
// tells objects apart, and what is judged with the cache is what is judged
// without it.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "rules/engine.h"
#include "rules/reach_cache.h"
#include "test/unit/gpu_node.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using nlohmann::json;
using testing::clusterOf;

// A GPU node on CUDA driver `driver`, tainted as the GPU Operator taints it.
std::string nodeOn(const std::string& name, const std::string& driver) {
  return testing::gpuNode({.name = name, .driver = driver, .taints = testing::kGpuTaint});
}

// GPU nodes on two CUDA driver majors.
const std::string kTwoDrivers = nodeOn("gpu-550", "550") + nodeOn("gpu-570", "570");

// A replica of one workload's pod: `name` and `uid` are its own, the rest the template's.
json replica(const std::string& name, const std::string& uid, const std::string& selector = "{}") {
  return json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": ")" + name + R"(", "uid": ")" + uid + R"(", "namespace": "ml",
      "generateName": "infer-7d9c-", "labels": {"app": "infer"}, "resourceVersion": ")" + uid + R"(",
      "managedFields": [{"manager": "kube-controller-manager", "time": "2026-12-05T11:00:0)" + uid.substr(0, 1) + R"(Z"}]},
    "spec": {"nodeSelector": )" + selector + R"(,
      "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
      "containers": [{"name": "app", "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                      "resources": {"limits": {"nvidia.com/gpu": 8}}}]}})");
}

// What a finding says, all of it that a front end shows.
std::vector<std::string> said(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const Finding& f : findings) out.push_back(f.rule + " " + std::string(severityName(f.severity)) + " " + f.fieldError());
  return out;
}

std::vector<std::string> judgedWith(const json& object, const ClusterFacts& cluster, ReachCache* cache,
                                    const Policy& policy) {
  JudgeOptions options;
  options.cluster = &cluster;
  options.reachCache = cache;
  options.namespaceName = "ml";
  return said(judge(object, policy, options));
}

TEST(SameButIdentity, ObjectsThatDifferOnlyInWhoTheyAreAreTheSame) {
  EXPECT_TRUE(sameButIdentity(replica("infer-7d9c-abcde", "1111"), replica("infer-7d9c-fghij", "2222")));
}

TEST(SameButIdentity, AnythingElseTellsThemApart) {
  const json a = replica("a", "1");
  json b = a;
  b["metadata"]["labels"]["app"] = "other";
  EXPECT_FALSE(sameButIdentity(a, b)) << "a label a selector or affinity may read";
  b = a;
  b["metadata"]["annotations"] = {{"gpuguard.io/x", "y"}};
  EXPECT_FALSE(sameButIdentity(a, b)) << "a member only one has";
  b = a;
  b["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = 8.0;
  EXPECT_FALSE(sameButIdentity(a, b)) << "8 and 8.0 are two quantities as written";
  b = a;
  b["kind"] = "Deployment";
  EXPECT_FALSE(sameButIdentity(a, b));
  b = a;
  b.erase("metadata");
  EXPECT_FALSE(sameButIdentity(a, b)) << "metadata missing on one side";
  b = a;
  b["spec"]["name"] = "x";
  EXPECT_FALSE(sameButIdentity(a, b)) << "identity fields count outside metadata";
}

TEST(ReachCache, TheFirstOfAKindIsOnlyFingerprintedTheSecondKeptTheThirdServed) {
  const auto cluster = clusterOf(kTwoDrivers);
  const Policy policy;
  ReachCache cache;
  const std::vector<std::string> first = judgedWith(replica("infer-1", "1111"), *cluster, &cache, policy);
  EXPECT_EQ(cache.kept(), 0u) << "an object seen once is not copied";
  const std::vector<std::string> second = judgedWith(replica("infer-2", "2222"), *cluster, &cache, policy);
  EXPECT_EQ(cache.kept(), 1u);
  const std::vector<std::string> third = judgedWith(replica("infer-3", "3333"), *cluster, &cache, policy);
  EXPECT_EQ(cache.misses(), 2u);
  EXPECT_EQ(cache.hits(), 1u);
  ASSERT_FALSE(first.empty()) << "two driver majors: the unpinned pod has a finding to share";
  EXPECT_EQ(second, first);
  EXPECT_EQ(third, first);
  EXPECT_EQ(third, judgedWith(replica("infer-3", "3333"), *cluster, nullptr, policy));
}

TEST(ReachCache, APodThatReadsTheNodesOtherwiseIsJudgedForItself) {
  // The two differ only in their nodeSelector's value: objects whose
  // fingerprints may agree, which only the comparison tells apart.
  const auto cluster = clusterOf(kTwoDrivers);
  const Policy policy;
  ReachCache cache;
  const json unpinned = replica("infer-1", "1111");
  const json pinned = replica("infer-2", "2222", R"({"nvidia.com/cuda.driver-version.major": "570"})");
  const std::vector<std::string> alone = judgedWith(pinned, *cluster, nullptr, policy);
  EXPECT_NE(alone, judgedWith(unpinned, *cluster, nullptr, policy)) << "the pin changes the verdict";
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    EXPECT_EQ(judgedWith(unpinned, *cluster, &cache, policy), judgedWith(unpinned, *cluster, nullptr, policy));
    EXPECT_EQ(judgedWith(pinned, *cluster, &cache, policy), alone);
  }
  EXPECT_GE(cache.hits(), 2u) << "both kept by the last round";
}

TEST(ReachCache, NewFactsOrAnotherPolicyStartItAfresh) {
  const auto twoDrivers = clusterOf(kTwoDrivers);
  const auto oneDriver = clusterOf(nodeOn("gpu-570", "570"));
  const Policy policy;
  ReachCache cache;
  const json pod = replica("infer-1", "1111");
  judgedWith(pod, *twoDrivers, &cache, policy);
  judgedWith(pod, *twoDrivers, &cache, policy);
  ASSERT_EQ(cache.kept(), 1u);
  EXPECT_EQ(judgedWith(pod, *oneDriver, &cache, policy), judgedWith(pod, *oneDriver, nullptr, policy));
  EXPECT_EQ(cache.hits(), 0u) << "other facts: nothing kept is read";
  EXPECT_EQ(cache.kept(), 0u);
  judgedWith(pod, *oneDriver, &cache, policy);
  ASSERT_EQ(cache.kept(), 1u);
  const Policy other;
  judgedWith(pod, *oneDriver, &cache, other);
  EXPECT_EQ(cache.hits(), 0u) << "another policy: nothing kept is read";
}

TEST(ReachCache, KeepsAFewWorkloadsAndForgetsTheLeastRecentlyJudged) {
  const auto cluster = clusterOf(kTwoDrivers);
  const Policy policy;
  ReachCache cache;
  const auto workload = [](std::size_t i) {
    return replica("w" + std::to_string(i), "1", R"({"team": "t)" + std::to_string(i) + R"("})");
  };
  for (std::size_t i = 0; i <= ReachCache::kEntries; ++i) {
    judgedWith(workload(i), *cluster, &cache, policy);
    judgedWith(workload(i), *cluster, &cache, policy);
  }
  EXPECT_EQ(cache.kept(), ReachCache::kEntries);
  std::size_t hits = cache.hits();
  judgedWith(workload(ReachCache::kEntries), *cluster, &cache, policy);
  EXPECT_EQ(cache.hits(), hits + 1) << "the most recent is kept";
  hits = cache.hits();
  judgedWith(workload(0), *cluster, &cache, policy);
  EXPECT_EQ(cache.hits(), hits) << "the oldest made room";
}

TEST(ReachCache, IsNotReadWhenTheInputDefinesFacts) {
  // Another object of the input may define the claim templates the pod
  // names: its reach is then not the object's alone.
  const auto cluster = clusterOf(kTwoDrivers);
  const Policy policy;
  ReachCache cache;
  InputFacts facts;
  JudgeOptions options;
  options.cluster = cluster.get();
  options.reachCache = &cache;
  options.facts = &facts;
  judge(replica("a", "1"), policy, options);
  judge(replica("b", "2"), policy, options);
  EXPECT_EQ(cache.hits() + cache.misses(), 0u);
}

}  // namespace
}  // namespace gpuguard
