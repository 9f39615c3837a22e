// An unparseable GPU quantity still marks a GPU ask (kubernetes-gpu-semantics.md
// §15.9): gpu-invalid-quantity says what to write, and the rules that hold GPU
// pods to the GPU nodes judge the pod as the GPU pod it is meant to be.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

std::string pod(const std::string& quantity, const std::string& podLines = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + podLines +
         "  containers:\n  - name: app\n    image: busybox\n    resources: {limits: {nvidia.com/gpu: " + quantity +
         "}}\n";
}

TEST(UnparseableGpuAsk, ATemplatedCountIsStillAGpuPod) {
  const Policy policy = onlyRules({"gpu-invalid-quantity", "gpu-missing-toleration", "gpu-toleration-without-request"});
  EXPECT_THAT(rulesHit(judgeYaml(pod("\"{{ .Values.gpus }}\""), policy)),
              ElementsAre("gpu-invalid-quantity", "gpu-missing-toleration"));
  // ...and its GPU toleration is not one "without a request".
  EXPECT_THAT(rulesHit(judgeYaml(pod("\"1 GPU\"", "  tolerations: [{key: nvidia.com/gpu, operator: Exists, "
                                                  "effect: NoSchedule}]\n"),
                                 policy)),
              ElementsAre("gpu-invalid-quantity"));
}

TEST(UnparseableGpuAsk, AZeroCountIsNoAsk) {
  EXPECT_THAT(judgeYaml(pod("0"), onlyRules({"gpu-missing-toleration"})), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
