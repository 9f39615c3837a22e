// What pins the driver (rules/nvidia/gfd_labels.h pinsDriver), and that
// gpu-missing-driver-pin and cuda-driver-too-old agree on it. GPU Feature
// Discovery derives nvidia.com/cuda.runtime-version.* from the driver: it is
// the newest CUDA the driver supports (kubernetes-gpu-semantics §14.8), so a
// required selector on it bounds the driver like driver-version.major does.
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

const Policy kPinRules = onlyRules({"gpu-missing-driver-pin", "cuda-driver-too-old"});

// A CUDA 13 GPU Pod whose node selection is `selection` (pod-level lines).
std::string cuda13Pod(const std::string& selection) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + selection +
         "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
         "  containers:\n  - name: cuda\n    image: nvidia/cuda:13.0.1-runtime-ubuntu24.04\n"
         "    resources: {limits: {nvidia.com/gpu: 1}}\n";
}

std::string requiredAffinity(const std::string& key, const std::string& op, const std::string& values) {
  return "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
         "        nodeSelectorTerms:\n        - matchExpressions:\n          - {key: " + key + ", operator: " + op +
         ", values: " + values + "}\n";
}

TEST(DriverPin, ARequiredRuntimeVersionSelectorPinsTheDriver) {
  // runtime-version.major > 12 holds exactly on drivers >= 580, which run CUDA 13.
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod(requiredAffinity("nvidia.com/cuda.runtime-version.major", "Gt", "[\"12\"]")),
                                 kPinRules)),
              IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod("  nodeSelector: {nvidia.com/cuda.runtime-version.full: \"13.0\"}\n"),
                                 kPinRules)),
              IsEmpty());
  // The deprecated name GFD still writes.
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod("  nodeSelector: {nvidia.com/cuda.runtime.major: \"13\"}\n"), kPinRules)),
              IsEmpty());
}

TEST(DriverPin, BothRulesReadTheSameRuntimePinAsTooOldForCuda13) {
  // Drivers that support CUDA 12 at most: pinned (no missing-pin finding), and too old for a CUDA 13 image.
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod("  nodeSelector: {nvidia.com/cuda.runtime-version.major: \"12\"}\n"),
                                 kPinRules)),
              ElementsAre("cuda-driver-too-old"));
}

TEST(DriverPin, TheRuntimeMinorAloneIsNoPin) {
  // 12.0 and 13.0 share the minor 0: it says nothing of the driver branch.
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod("  nodeSelector: {nvidia.com/cuda.runtime-version.minor: \"0\"}\n"),
                                 kPinRules)),
              ElementsAre("gpu-missing-driver-pin"));
}

TEST(DriverPin, ExclusionsAndPreferencesAreNoPin) {
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod(requiredAffinity("nvidia.com/cuda.runtime-version.major", "NotIn",
                                                            "[\"11\"]")),
                                 kPinRules)),
              ElementsAre("gpu-missing-driver-pin"));
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod(requiredAffinity("nvidia.com/cuda.runtime-version.major", "Exists", "[]")),
                                 kPinRules)),
              ElementsAre("gpu-missing-driver-pin"));
}

TEST(DriverPin, APolicyPinLabelCountsForBothRules) {
  // A node pool label the policy names as a pin: pinned, but its value says
  // nothing of the driver version, so cuda-driver-too-old has nothing to judge.
  Policy policy = kPinRules;
  policy.driverPinLabels = {"karpenter.sh/nodepool"};
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod("  nodeSelector: {karpenter.sh/nodepool: gpu-580}\n"), policy)), IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod(""), policy)), ElementsAre("gpu-missing-driver-pin"));
}

}  // namespace
}  // namespace gpuguard
