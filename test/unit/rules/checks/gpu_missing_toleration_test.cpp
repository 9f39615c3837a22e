// gpu-missing-toleration names the near miss: when a GPU pod has tolerations
// but none tolerates the GPU taint (ToleratesTaint, kubernetes-gpu-semantics
// §6.1), the finding says which one comes closest and why, as the scheduler's
// rules decide it: keys are compared exactly, an empty effect matches every
// effect, Equal compares values, Exists ignores them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kTolerationOnly = onlyRules({"gpu-missing-toleration"});

// A GPU Pod with the given tolerations (flow YAML, "" for none) and extra
// lines inside its container.
std::string pod(const std::string& tolerations, const std::string& containerLines = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" +
         (tolerations.empty() ? std::string() : "  tolerations: " + tolerations + "\n") +
         "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n" + containerLines +
         "    resources: {limits: {nvidia.com/gpu: 1}}\n";
}

std::string messageFor(const std::string& tolerations, const std::string& containerLines = "",
                       const Policy& policy = kTolerationOnly) {
  const auto f = judgeYaml(pod(tolerations, containerLines), policy);
  if (f.size() != 1) return "expected one finding, got " + std::to_string(f.size());
  return f[0].message();
}

TEST(GpuMissingTolerationNearMiss, AKeyOneLetterOffIsNamed) {
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpus, operator: Exists, effect: NoSchedule}]"),
              EndsWith("; the closest is spec.tolerations[0] "
                       "{\"effect\":\"NoSchedule\",\"key\":\"nvidia.com/gpus\",\"operator\":\"Exists\"}: the key "
                       "nvidia.com/gpus is not nvidia.com/gpu"));
}

TEST(GpuMissingTolerationNearMiss, KeysAreCaseSensitive) {
  EXPECT_THAT(messageFor("[{key: nvidia.com/GPU, operator: Exists}]"),
              HasSubstr("the key nvidia.com/GPU is not nvidia.com/gpu (keys are case-sensitive)"));
}

TEST(GpuMissingTolerationNearMiss, AnotherEffectIsNamed) {
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]"),
              HasSubstr("it tolerates the effect NoExecute, not NoSchedule"));
}

TEST(GpuMissingTolerationNearMiss, EqualAgainstATaintValueThePolicyLeavesOpen) {
  // gpuTaints without a value: the nodes' value is unknown, only Exists is sure to match.
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpu, operator: Equal, value: \"true\", effect: NoSchedule}]"),
              HasSubstr("operator Equal with value \"true\" matches one taint value, and the policy's gpuTaints "
                        "leave the GPU nodes' value open"));
}

TEST(GpuMissingTolerationNearMiss, EqualWithAnotherValueThanTheTaints) {
  Policy policy = kTolerationOnly;
  policy.gpuTaints = {{"nvidia.com/gpu", std::string("present"), "NoSchedule"}};
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpu, value: \"true\"}]", "", policy),
              HasSubstr("operator Equal (the default) with value \"true\" does not match the taint's value "
                        "\"present\""));
  // The right value tolerates it: nothing to report.
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{key: nvidia.com/gpu, value: present}]"), policy)), IsEmpty());
}

TEST(GpuMissingTolerationNearMiss, TheTolerationWithTheFewestDifferencesIsTheClosest) {
  const std::string m = messageFor(
      "[{key: nvidia.com/gpus, operator: Exists, effect: NoExecute}, {key: nvidia.com/gpu, operator: Exists, "
      "effect: NoExecute}]");
  EXPECT_THAT(m, HasSubstr("the closest is spec.tolerations[1] "));
  EXPECT_THAT(m, Not(HasSubstr("nvidia.com/gpus is not")));
  // Several differences of one toleration are all named.
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpus, operator: Exists, effect: NoExecute}]"),
              HasSubstr("the key nvidia.com/gpus is not nvidia.com/gpu, and it tolerates the effect NoExecute"));
}

TEST(GpuMissingTolerationNearMiss, AnUnrelatedKeyIsNoNearMiss) {
  const std::string m = messageFor("[{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}]");
  EXPECT_THAT(m, HasSubstr("no toleration for the GPU node taint nvidia.com/gpu:NoSchedule"));
  EXPECT_THAT(m, Not(HasSubstr("closest")));
}

TEST(GpuMissingTolerationNearMiss, AToleratingEntryInsideAContainerIsNamed) {
  const std::string m =
      messageFor("", "    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n");
  EXPECT_THAT(m, HasSubstr("the closest is spec.containers[0].tolerations[0] "));
  EXPECT_THAT(m, HasSubstr("a container has no tolerations field"));
  EXPECT_THAT(m, HasSubstr("move it to spec.tolerations"));
}

TEST(GpuMissingTolerationNearMiss, AnOperatorThatIsNeitherExistsNorEqual) {
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpu, operator: exists}]"),
              HasSubstr("the operator \"exists\" is neither Exists nor Equal, and tolerates nothing"));
}

TEST(GpuMissingTolerationNearMiss, AMatchingTolerationIsNoFinding) {
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{key: nvidia.com/gpu, operator: Exists}]"), kTolerationOnly)), IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{operator: Exists}]"), kTolerationOnly)), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
