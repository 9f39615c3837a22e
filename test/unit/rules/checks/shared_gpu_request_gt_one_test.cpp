// shared-gpu-request-gt-one: GKE time-sharing and MPS nodes, and the device
// plugin's MPS sharing, give at most one nvidia.com/gpu per container
// (kubernetes-gpu-semantics.md §9.5, §15.5).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kRule = onlyRules({"shared-gpu-request-gt-one"});

std::string pod(const std::string& podLines, const std::string& gpus) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + podLines +
         "  containers:\n  - name: app\n    image: busybox\n    resources: {limits: {nvidia.com/gpu: " + gpus + "}}\n";
}

TEST(SharedGpuRequestGtOne, TwoGpusOnGkeTimeSharingNodes) {
  const auto f = judgeYaml(pod("  nodeSelector: {cloud.google.com/gke-gpu-sharing-strategy: time-sharing}\n", "2"),
                           kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("shared-gpu-request-gt-one"));
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.limits[nvidia.com/gpu]");
  EXPECT_THAT(f[0].message(), HasSubstr("asks for 2 nvidia.com/gpu on nodes whose GPUs are shared (GKE time-sharing)"));
}

TEST(SharedGpuRequestGtOne, MaxSharedClientsAndMpsSelectSharedNodesToo) {
  EXPECT_THAT(rulesHit(judgeYaml(pod("  nodeSelector: {cloud.google.com/gke-max-shared-clients-per-gpu: \"2\"}\n", "4"),
                                 kRule)),
              ElementsAre("shared-gpu-request-gt-one"));
  EXPECT_THAT(rulesHit(judgeYaml(pod("  nodeSelector: {nvidia.com/gpu.sharing-strategy: mps}\n", "2"), kRule)),
              ElementsAre("shared-gpu-request-gt-one"));
}

TEST(SharedGpuRequestGtOne, OneGpuOrNodesThatMayBeUnsharedAreFine) {
  EXPECT_THAT(judgeYaml(pod("  nodeSelector: {cloud.google.com/gke-gpu-sharing-strategy: time-sharing}\n", "1"), kRule),
              IsEmpty());
  EXPECT_THAT(judgeYaml(pod("", "4"), kRule), IsEmpty());
  // The device plugin's own time-slicing lets requests above one through by default.
  EXPECT_THAT(judgeYaml(pod("  nodeSelector: {nvidia.com/gpu.sharing-strategy: time-slicing}\n", "2"), kRule),
              IsEmpty());
  // One affinity term reaches unshared nodes: the pod may land there.
  const std::string twoTerms =
      "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "        nodeSelectorTerms:\n        - matchExpressions:\n"
      "          - {key: cloud.google.com/gke-gpu-sharing-strategy, operator: In, values: [time-sharing]}\n"
      "        - matchExpressions:\n          - {key: cloud.google.com/gke-accelerator, operator: In, values: [nvidia-l4]}\n";
  EXPECT_THAT(judgeYaml(pod(twoTerms, "2"), kRule), IsEmpty());
}

}  // namespace
}  // namespace gpuguard

namespace gpuguard {
namespace {

// Item 7's other node shape: GKE asks MIG partitions as nvidia.com/gpu
// (mig-resource-name).
TEST(GkeMigPartitions, AreAskedAsNvidiaComGpuNotMigNames) {
  const Policy rule = testing::onlyRules({"mig-resource-name"});
  const std::string head =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
      "  nodeSelector: {cloud.google.com/gke-gpu-partition-size: 1g.5gb}\n"
      "  containers:\n  - name: app\n    image: busybox\n    resources: {limits: {";
  const auto f = testing::judgeYaml(head + "nvidia.com/mig-1g.5gb: 1}}\n", rule);
  ASSERT_THAT(testing::rulesHit(f), ::testing::ElementsAre("mig-resource-name"));
  EXPECT_THAT(f[0].message(), ::testing::HasSubstr("GKE exposes MIG partitions (cloud.google.com/gke-gpu-partition-size: "
                                                   "1g.5gb) as nvidia.com/gpu"));
  EXPECT_THAT(testing::judgeYaml(head + "nvidia.com/gpu: 1}}\n", rule), ::testing::IsEmpty());
}

}  // namespace
}  // namespace gpuguard
