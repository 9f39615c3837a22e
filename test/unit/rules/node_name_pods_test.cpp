// Pods that name their node (spec.nodeName) bypass kube-scheduler: the
// kubelet admits them against NoExecute taints only, so a NoSchedule GPU
// taint needs no toleration, and the author who chose the node needs no
// driver pin (kubernetes-gpu-semantics.md §15.1; checked on v1.37.2 in
// test/e2e/cases/oracle).
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

const Policy kNodeRules = onlyRules({"gpu-missing-toleration", "gpu-missing-driver-pin"});

std::string gpuPod(const std::string& podLines) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + podLines +
         "  containers:\n  - name: app\n    image: nvidia/cuda:13.0.0-base-ubuntu24.04\n"
         "    resources: {limits: {nvidia.com/gpu: 1}}\n";
}

TEST(NodeNamePods, ThePodThroughTheSchedulerNeedsTolerationAndPin) {
  EXPECT_THAT(rulesHit(judgeYaml(gpuPod(""), kNodeRules)),
              ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
}

TEST(NodeNamePods, APodNamingItsNodeNeedsNoNoScheduleTolerationNorADriverPin) {
  EXPECT_THAT(judgeYaml(gpuPod("  nodeName: gpu-node-1\n"), kNodeRules), IsEmpty());
}

TEST(NodeNamePods, ANoExecuteGpuTaintStillKeepsItOff) {
  Policy policy = kNodeRules;
  policy.gpuTaints = {Taint{"nvidia.com/gpu", std::nullopt, "NoExecute"}};
  const auto f = judgeYaml(gpuPod("  nodeName: gpu-node-1\n"), policy);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_THAT(f[0].message(), HasSubstr("nvidia.com/gpu:NoExecute"));
}

TEST(NodeNamePods, AToleranceTheApiServerRejectsIsStillReported) {
  // Validation does not depend on the scheduler.
  const auto f = judgeYaml(
      gpuPod("  nodeName: n1\n  tolerations: [{key: nvidia.com/gpu, operator: Exists, value: \"true\"}]\n"),
      kNodeRules);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_THAT(f[0].message(), HasSubstr("value must be empty when `operator` is 'Exists'"));
}

}  // namespace
}  // namespace gpuguard
