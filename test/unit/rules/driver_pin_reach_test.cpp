// gpu-missing-driver-pin with the cluster's node facts judges what the pod's
// driver selection actually reaches:
//   - red team 32 B13: a "pin" Gt 549 that still admits nodes on 550 and 570
//     passed silently, while the same pod unpinned was denied for those two
//     majors (kube-scheduler placed it on 550);
//   - B1: a reachable GPU node without GPU Feature Discovery driver labels
//     was left out of "the GPU nodes this pod can reach all run ...".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/gpu_node.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::clusterOf;
using testing::judgeWithCluster;
using testing::onlyRules;
using testing::rulesHit;

// An 8-GPU nvidia.com/gpu-tainted node; `driver` "" leaves out the GFD labels.
std::string node(const std::string& name, const std::string& driver) {
  return testing::gpuNode(
      {.name = name, .driver = driver, .taints = testing::kGpuPresentTaint, .gfd = !driver.empty()});
}

// A one-GPU pod running `image`, tolerating the GPU taint, with `affinity`.
std::string pod(const std::string& affinity, const std::string& image = "nvidia/cuda:12.8.1-runtime-ubuntu24.04") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n"
         "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n" + affinity +
         "  containers:\n  - name: c\n    image: " + image + "\n    resources: {limits: {nvidia.com/gpu: 1}}\n";
}

std::string driverAffinity(const std::string& op, const std::string& values) {
  return "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
         "        nodeSelectorTerms:\n        - matchExpressions:\n"
         "          - {key: nvidia.com/cuda.driver-version.major, operator: " + op + ", values: " + values + "}\n";
}

const Policy kPin = onlyRules({"gpu-missing-driver-pin"});

TEST(DriverPinReach, APinThatStillAdmitsTwoMajorsIsJudgedByThem) {
  // CUDA 12.8 needs 570; Gt 549 admits 550 too.
  const auto cluster = clusterOf(node("gpu-t", "570") + node("gpu-550", "550"));
  const auto f = judgeWithCluster(pod(driverAffinity("Gt", "[\"549\"]")), *cluster, kPin);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("they are 550 (1 node: gpu-550), "
                                        "570 (1 node: gpu-t)"));
  EXPECT_EQ(f[0].path.apiPath(), "spec.affinity");
}

TEST(DriverPinReach, APinThatAdmitsOneMajorIsEnough) {
  const auto cluster = clusterOf(node("gpu-t", "570") + node("gpu-550", "550"));
  EXPECT_THAT(judgeWithCluster(pod(driverAffinity("Gt", "[\"569\"]")), *cluster, kPin), IsEmpty());
}

TEST(DriverPinReach, APinWhoseMajorsAllRunTheImageIsEnough) {
  // CUDA 12.4 runs natively on 550 and 570: the wide pin is deliberate.
  const auto cluster = clusterOf(node("gpu-t", "570") + node("gpu-550", "550"));
  const auto f = judgeWithCluster(pod(driverAffinity("Gt", "[\"549\"]"), "nvidia/cuda:12.4.1-base-ubuntu22.04"),
                                  *cluster, kPin);
  EXPECT_THAT(f, IsEmpty());
}

TEST(DriverPinReach, WithoutFactsAPinIsTakenAsWritten) {
  EXPECT_THAT(testing::judgeInput(pod(driverAffinity("Gt", "[\"549\"]")), kPin), IsEmpty());
}

TEST(DriverPinReach, AReachableNodeWithoutDriverLabelsIsNamed) {
  const auto cluster = clusterOf(node("gpu-new", "570") + node("gpu-nogfd", ""));
  const auto f = judgeWithCluster(pod(""), *cluster, kPin);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_THAT(f[0].message(), HasSubstr("run CUDA driver 570 (1 node: gpu-new), and a driver no GPU Feature "
                                        "Discovery label tells (1 node: gpu-nogfd)"));
  EXPECT_THAT(f[0].message(), Not(HasSubstr("all run")));
}

TEST(DriverPinReach, TheChangeComesBeforeWhatTheClusterShows) {
  // The API server keeps 256 characters of a warning (red team 32 B10).
  const auto cluster = clusterOf(node("gpu-new", "570"));
  const auto f = judgeWithCluster(pod(""), *cluster, kPin);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-driver-pin"));
  const std::string m = f[0].message();
  EXPECT_THAT(m, ::testing::StartsWith("Required value: no nodeSelector or required node affinity on a CUDA driver "
                                       "label (nvidia.com/cuda.driver-version.major): add nodeSelector"));
  EXPECT_LT(m.find("add nodeSelector"), m.find("all run CUDA driver 570"));
  EXPECT_LT(m.find("add nodeSelector"), 200u);
}

TEST(DriverPinReach, OnlyNodesWithoutDriverLabelsAreNamedToo) {
  const auto cluster = clusterOf(node("gpu-nogfd", ""));
  const auto f = judgeWithCluster(pod(""), *cluster, kPin);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_THAT(f[0].message(), HasSubstr("reach run a driver no GPU Feature Discovery label tells (1 node: gpu-nogfd)"));
}

}  // namespace
}  // namespace gpuguard
