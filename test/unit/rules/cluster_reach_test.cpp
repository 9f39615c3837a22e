// Which GPU nodes a pod lands on (rules/cluster_reach.h), as kube-scheduler's
// filters decide, and what the rules that read it say: the driver pin,
// cuda-driver-too-old and gpu-missing-toleration count only the nodes where
// the scheduler may put the pod.
//   - NodeResourcesFit: a node whose allocatable lacks the GPU resource the
//     pod requests, or holds fewer than it asks, never takes it (red team 32
//     B17: a MIG pool on 570 and a whole-GPU pool on 550 denied every pod for
//     "2 CUDA driver majors").
//   - NodeUnschedulable: a cordoned node takes no new pod unless it tolerates
//     node.kubernetes.io/unschedulable:NoSchedule (B19: cordoning the 550
//     nodes during a rollout denied every unpinned pod).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/gpu_node.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::clusterOf;
using testing::gpuNode;
using testing::judgeWithCluster;
using testing::onlyRules;
using testing::rulesHit;

// A GFD-labelled, nvidia.com/gpu-tainted node on driver `driver` whose
// allocatable holds `gpus` ("nvidia.com/gpu: \"8\"") besides cpu, memory and
// pods; `spec` adds lines under spec (a cordon).
std::string node(const std::string& name, const std::string& driver, const std::string& gpus,
                 const std::string& spec = "") {
  return gpuNode({.name = name, .driver = driver, .taints = testing::kGpuPresentTaint, .gpus = gpus, .spec = spec});
}

// A pod of CUDA 12.8 (needs the 570 branch) asking `resources`, unpinned.
std::string pod(const std::string& resources,
                const std::string& tolerations = "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]",
                const std::string& image = "nvidia/cuda:12.8.1-runtime-ubuntu24.04") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  tolerations: " + tolerations +
         "\n  containers:\n  - name: c\n    image: " + image + "\n    resources: {limits: {" + resources + "}}\n";
}

const Policy kPin = onlyRules({"gpu-missing-driver-pin"});

// An A100 in MIG mixed strategy on 570 (no whole GPUs left), 8 whole GPUs on 550.
const std::string kMigAnd550 = node("mig-a", "570", "nvidia.com/mig-1g.10gb: \"14\", nvidia.com/gpu: \"0\"") +
                               node("gpu-b", "550", "nvidia.com/gpu: \"8\"");

TEST(ClusterReach, AMigPodLandsOnlyOnTheNodesThatOfferItsMigProfile) {
  // kube-scheduler: gpu-b "Insufficient nvidia.com/mig-1g.10gb"; the pod can only get driver 570.
  const auto cluster = clusterOf(kMigAnd550);
  const auto findings = judgeWithCluster(pod("nvidia.com/mig-1g.10gb: 1"), *cluster, kPin);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_EQ(findings[0].severity, Severity::Warning);
  EXPECT_THAT(findings[0].message(), HasSubstr("all run CUDA driver 570 (1 node: mig-a)"));
}

TEST(ClusterReach, AWholeGpuPodDoesNotLandOnANodeThatAdvertisesNoWholeGpus) {
  // mig-a advertises 0 nvidia.com/gpu: the pod lands on gpu-b (550) alone.
  const auto cluster = clusterOf(kMigAnd550);
  const auto findings = judgeWithCluster(pod("nvidia.com/gpu: 1"), *cluster, kPin);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_EQ(findings[0].severity, Severity::Warning);
  EXPECT_THAT(findings[0].message(), HasSubstr("all run CUDA driver 550 (1 node: gpu-b)"));
}

TEST(ClusterReach, AnEightGpuPodDoesNotLandOnAFourGpuNode) {
  // small-550 holds 4 GPUs: "Insufficient nvidia.com/gpu" there, so only big-570 (8) takes the pod.
  const auto cluster = clusterOf(node("small-550", "550", "nvidia.com/gpu: \"4\"") +
                                 node("big-570", "570", "nvidia.com/gpu: \"8\""));
  const auto eight = judgeWithCluster(pod("nvidia.com/gpu: 8"), *cluster, kPin);
  ASSERT_THAT(rulesHit(eight), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_EQ(eight[0].severity, Severity::Warning);
  EXPECT_THAT(eight[0].message(), HasSubstr("all run CUDA driver 570 (1 node: big-570)"));
  // Four GPUs fit both: two majors, and CUDA 12.8 is too new for 550.
  const auto four = judgeWithCluster(pod("nvidia.com/gpu: 4"), *cluster, kPin);
  ASSERT_THAT(rulesHit(four), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_EQ(four[0].severity, Severity::Error);
  EXPECT_THAT(four[0].message(), HasSubstr("run 2 CUDA driver majors: 550 (1 node: small-550), 570 (1 node: big-570)"));
}

TEST(ClusterReach, CudaDriverTooOldCountsOnlyTheNodesTheGpuCountFits) {
  // A CUDA 13 pod of 8 GPUs: the 4-GPU node on 535 cannot take it, the 8-GPU node on 580 can.
  const Policy tooOld = onlyRules({"cuda-driver-too-old"});
  const std::string cuda13 = "nvidia/cuda:13.0.0-runtime-ubuntu24.04";
  const auto cluster = clusterOf(node("small-535", "535", "nvidia.com/gpu: \"4\"") +
                                 node("big-580", "580", "nvidia.com/gpu: \"8\""));
  const std::string tolerates = "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]";
  EXPECT_THAT(judgeWithCluster(pod("nvidia.com/gpu: 8", tolerates, cuda13), *cluster, tooOld), IsEmpty());
  const auto one = judgeWithCluster(pod("nvidia.com/gpu: 1", tolerates, cuda13), *cluster, tooOld);
  ASSERT_THAT(rulesHit(one), ElementsAre("cuda-driver-too-old"));
  EXPECT_THAT(one[0].message(), HasSubstr("run driver 535 (1 node: small-535)"));
}

TEST(ClusterReach, AnUntaintedNodeWithoutThePodsMigProfileDoesNotExcuseTheToleration) {
  // The whole-GPU node is untainted, the MIG node tainted: a MIG pod can only go to the tainted one.
  const Policy toleration = onlyRules({"gpu-missing-toleration"});
  const auto cluster =
      clusterOf(node("mig-a", "570", "nvidia.com/mig-1g.10gb: \"14\"") + gpuNode({.name = "whole-b"}));
  EXPECT_THAT(rulesHit(judgeWithCluster(pod("nvidia.com/mig-1g.10gb: 1", "[]"), *cluster, toleration)),
              ElementsAre("gpu-missing-toleration"));
  // A whole-GPU pod lands on the untainted node: no toleration needed.
  EXPECT_THAT(judgeWithCluster(pod("nvidia.com/gpu: 1", "[]"), *cluster, toleration), IsEmpty());
}

const std::string kCordon = "  unschedulable: true\n";

TEST(ClusterReach, CordonedNodesTakeNoNewPod) {
  // The rollout: old-550 cordoned (spec.unschedulable and the taint the node lifecycle controller adds),
  // new-570 open. kube-scheduler's NodeUnschedulable filter leaves only new-570.
  const std::string cordoned = gpuNode({.name = "old-550",
                                        .driver = "550",
                                        .taints = "[{key: nvidia.com/gpu, value: present, effect: NoSchedule}, "
                                                  "{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]",
                                        .spec = kCordon});
  const auto cluster = clusterOf(cordoned + node("new-570", "570", "nvidia.com/gpu: \"8\""));
  const auto findings = judgeWithCluster(pod("nvidia.com/gpu: 1"), *cluster, kPin);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_EQ(findings[0].severity, Severity::Warning);
  EXPECT_THAT(findings[0].message(), HasSubstr("all run CUDA driver 570 (1 node: new-570)"));
  // spec.unschedulable alone (the taint not yet added) is the same cordon.
  const auto specOnly = clusterOf(node("old-550", "550", "nvidia.com/gpu: \"8\"", kCordon) +
                                  node("new-570", "570", "nvidia.com/gpu: \"8\""));
  EXPECT_EQ(judgeWithCluster(pod("nvidia.com/gpu: 1"), *specOnly, kPin).at(0).severity, Severity::Warning);
  // A pod that tolerates the cordon may still go to old-550: two majors again.
  const std::string tolerant =
      "[{key: nvidia.com/gpu, operator: Exists}, {key: node.kubernetes.io/unschedulable, operator: Exists, "
      "effect: NoSchedule}]";
  const auto both = judgeWithCluster(pod("nvidia.com/gpu: 1", tolerant), *cluster, kPin);
  ASSERT_THAT(rulesHit(both), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_EQ(both[0].severity, Severity::Error);
  EXPECT_THAT(both[0].message(), HasSubstr("550 (1 node: old-550), 570 (1 node: new-570)"));
}

}  // namespace
}  // namespace gpuguard
