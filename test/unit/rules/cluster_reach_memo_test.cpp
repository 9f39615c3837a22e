// reachOf judges a pod once per kind of node group the pod can tell apart
// (rules/cluster_reach.cpp visibleKey): node groups alike in every label the
// pod's nodeSelector and affinity read, their taints, cordon and the
// resources it requests share one judgement. Whatever is shared, each node
// group's verdict is the one judgeNode gives that group's node alone, and a
// pod that names nodes is still judged node by node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "rules/cluster_reach.h"
#include "test/unit/gpu_node.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::HasSubstr;
using testing::clusterOf;

// A GPU node of node group `group` (an EKS label the pods below never read).
std::string node(const std::string& name, const std::string& group, const std::string& driver,
                 const std::string& taint = testing::kGpuTaint) {
  return testing::gpuNode(
      {.name = name,
       .driver = driver,
       .taints = taint,
       .labels = "eks.amazonaws.com/nodegroup: " + group + ", nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB"});
}

// A pod asking for `gpus` GPUs with extra spec lines (selector, affinity, nodeName).
nlohmann::json pod(const std::string& specLines, int gpus = 1) {
  const std::string text = "apiVersion: v1\nkind: Pod\nmetadata: {name: infer, namespace: ml}\nspec:\n" + specLines +
                           "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
                           "  containers:\n  - name: app\n    image: nvcr.io/nvidia/tritonserver:24.01-py3\n"
                           "    resources:\n      limits: {nvidia.com/gpu: " + std::to_string(gpus) + "}\n";
  yaml::ParseResult parsed = yaml::parseStream(text);
  if (parsed.error) throw std::runtime_error("test pod does not parse: " + parsed.error->message);
  return parsed.documents.at(0).value;
}

const std::string kDriverPin =
    "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
    "[{matchExpressions: [{key: nvidia.com/cuda.driver-version.major, operator: In, values: [\"550\"]}]}]}}}\n";

struct Judged {
  PodReach reach;
  std::vector<NodeVerdict> alone;  // judgeNode on each entry's node, nothing shared
};

Judged judgeAgainst(const nlohmann::json& object, const ClusterFacts& cluster) {
  static const Policy policy;
  static const InputFacts none;
  const std::vector<PodSite> sites = findPodSites(object);
  const GpuFacts gpu{policy, none, &cluster, "ml"};
  Judged out{reachOf(sites.at(0), cluster, gpu, "ml"), {}};
  PlacementPod placement = placementPod(sites.at(0), podRequests(sites.at(0)).resources, policy);
  for (const NodeReach& n : out.reach.nodes) out.alone.push_back(judgeNode(placement, *n.node, {}, policy));
  return out;
}

void expectSameAsAlone(const Judged& judged) {
  ASSERT_EQ(judged.reach.nodes.size(), judged.alone.size());
  for (std::size_t i = 0; i < judged.alone.size(); ++i) {
    const NodeVerdict& shared = *judged.reach.nodes[i].verdict;
    const NodeVerdict& alone = judged.alone[i];
    SCOPED_TRACE("node " + alone.node);
    EXPECT_EQ(judged.reach.nodes[i].node->name, alone.node);
    EXPECT_EQ(shared.schedulable, alone.schedulable);
    EXPECT_EQ(shared.reasons, alone.reasons);
    EXPECT_EQ(shared.cause, alone.cause);
    EXPECT_EQ(shared.verdict, alone.verdict);
    EXPECT_EQ(shared.affinityMatches, alone.affinityMatches);
    EXPECT_EQ(shared.selectorFailures.size(), alone.selectorFailures.size());
    EXPECT_EQ(shared.untoleratedTaints.size(), alone.untoleratedTaints.size());
  }
}

TEST(ReachMemo, GroupsThatDifferOnlyInALabelThePodDoesNotReadGetTheSameVerdict) {
  const auto cluster = clusterOf(node("a-1", "gpu-1", "550") + node("a-2", "gpu-1", "550") + node("b-1", "gpu-2", "550"));
  ASSERT_EQ(cluster->nodeGroups().size(), 2U);
  const Judged judged = judgeAgainst(pod("  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n" + kDriverPin),
                                     *cluster);
  ASSERT_EQ(judged.reach.nodes.size(), 2U);
  EXPECT_EQ(judged.reach.nodes[0].verdict->cause, "fits");
  EXPECT_EQ(judged.reach.nodes[1].verdict->cause, "fits");
  EXPECT_EQ(judged.reach.nodes[1].node->name, "b-1");    // its own node, with the first group's verdict:
  EXPECT_EQ(judged.reach.nodes[1].verdict, judged.reach.nodes[0].verdict);  // judged once, not copied
  EXPECT_EQ(judged.reach.nodes[0].nodes.size(), 2U);     // the groups keep their members
  EXPECT_EQ(judged.reach.nodeCount(), 3U);
  expectSameAsAlone(judged);
}

TEST(ReachMemo, AFailingVerdictIsSharedWordForWord) {
  const auto cluster = clusterOf(node("a-1", "gpu-1", "570") + node("b-1", "gpu-2", "570"));
  const Judged judged = judgeAgainst(pod(kDriverPin, 16), *cluster);
  ASSERT_EQ(judged.reach.nodes.size(), 2U);
  EXPECT_EQ(judged.reach.nodes[1].verdict->verdict, "affinity mismatch");
  EXPECT_THAT(judged.reach.nodes[1].verdict->cause, HasSubstr("nvidia.com/cuda.driver-version.major is 570"));
  EXPECT_THAT(judged.reach.verdict, HasSubstr("0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."));
  expectSameAsAlone(judged);
}

TEST(ReachMemo, ALabelThePodReadsKeepsGroupsApart) {
  const auto cluster = clusterOf(node("a-1", "gpu-1", "550") + node("b-1", "gpu-2", "570"));
  const Judged judged = judgeAgainst(pod(kDriverPin), *cluster);
  ASSERT_EQ(judged.reach.nodes.size(), 2U);
  EXPECT_TRUE(judged.reach.nodes[0].verdict->schedulable);
  EXPECT_FALSE(judged.reach.nodes[1].verdict->schedulable);
  EXPECT_TRUE(judged.reach.nodes[0].reachable);
  EXPECT_FALSE(judged.reach.nodes[1].reachable);
  expectSameAsAlone(judged);
}

TEST(ReachMemo, TaintsTheOnlyDifferenceKeepGroupsApart) {
  const auto cluster = clusterOf(node("a-1", "gpu-1", "550") +
                                 node("b-1", "gpu-2", "550", "[{key: dedicated, value: infer, effect: NoSchedule}]"));
  const Judged judged = judgeAgainst(pod(kDriverPin), *cluster);
  ASSERT_EQ(judged.reach.nodes.size(), 2U);
  EXPECT_TRUE(judged.reach.nodes[0].verdict->schedulable);
  EXPECT_EQ(judged.reach.nodes[1].verdict->verdict, "untolerated taint");
  expectSameAsAlone(judged);
}

// Past a few kinds of node group the kinds are found by hash: twelve groups
// of ten driver majors still share the two verdicts they can and no other.
TEST(ReachMemo, ManyKindsOfNodeGroupAreFoundByHashAndStillShared) {
  std::string nodes;
  for (int i = 0; i < 12; ++i) {
    const std::string n = std::to_string(100 + i);
    nodes += node("n-" + n, "gpu-" + n, std::to_string(540 + i % 10));
  }
  const auto cluster = clusterOf(nodes);
  ASSERT_EQ(cluster->nodeGroups().size(), 12U);
  const Judged judged = judgeAgainst(pod(kDriverPin), *cluster);
  ASSERT_EQ(judged.reach.nodes.size(), 12U);
  const auto verdictOf = [&](const std::string& name) {
    for (const NodeReach& n : judged.reach.nodes) {
      if (n.node->name == name) return n.verdict;
    }
    throw std::runtime_error("no node " + name);
  };
  EXPECT_EQ(verdictOf("n-110"), verdictOf("n-100"));  // driver 540 both
  EXPECT_EQ(verdictOf("n-111"), verdictOf("n-101"));  // driver 541 both
  EXPECT_NE(verdictOf("n-110"), verdictOf("n-101"));
  EXPECT_NE(verdictOf("n-109"), verdictOf("n-100"));
  expectSameAsAlone(judged);
}

TEST(ReachMemo, APodThatNamesItsNodeIsJudgedNodeByNode) {
  const auto cluster = clusterOf(node("a-1", "gpu-1", "550") + node("a-2", "gpu-1", "550") + node("a-3", "gpu-1", "550"));
  ASSERT_EQ(cluster->nodeGroups().size(), 1U);
  const Judged judged = judgeAgainst(pod("  nodeName: a-2\n"), *cluster);
  ASSERT_EQ(judged.reach.nodes.size(), 3U);
  EXPECT_TRUE(judged.reach.nodes[0].verdict->nodeNameMismatch);
  EXPECT_FALSE(judged.reach.nodes[1].verdict->nodeNameMismatch);
  EXPECT_TRUE(judged.reach.nodes[2].verdict->nodeNameMismatch);
  EXPECT_EQ(judged.reach.landingNodes().size(), 1U);
  expectSameAsAlone(judged);
}

TEST(ReachMemo, AHostnameSelectorIsJudgedNodeByNode) {
  const auto cluster = clusterOf(node("a-1", "gpu-1", "550") + node("a-2", "gpu-1", "550"));
  const Judged judged = judgeAgainst(pod("  nodeSelector: {kubernetes.io/hostname: a-1}\n"), *cluster);
  ASSERT_EQ(judged.reach.nodes.size(), 2U);
  EXPECT_TRUE(judged.reach.nodes[0].verdict->schedulable);
  EXPECT_EQ(judged.reach.nodes[1].verdict->verdict, "nodeSelector mismatch");
  EXPECT_THAT(judged.reach.verdict, HasSubstr("1/2 nodes are available"));
  expectSameAsAlone(judged);
}

}  // namespace
}  // namespace gpuguard
