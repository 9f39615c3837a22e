// limitrange-gpu-default: LimitRanger copies a LimitRange's default and
// defaultRequest into every container and init container of the namespace
// that names none of the resource, GPUs included (kubernetes-gpu-semantics.md
// §15.4; checked on kube-apiserver v1.37.2).
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

const Policy kRule = onlyRules({"limitrange-gpu-default"});

std::string limitRange(const std::string& limitsItem) {
  return "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr, namespace: ml}\nspec:\n  limits:\n" + limitsItem;
}

TEST(LimitRangeGpuDefault, ADefaultGpuGoesToEveryContainer) {
  const auto f = judgeYaml(limitRange("  - type: Container\n    default: {cpu: \"1\", nvidia.com/gpu: 1}\n"), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("limitrange-gpu-default"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.limits[0].default[nvidia.com/gpu]");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: 1: LimitRanger gives every container and init container"));
  EXPECT_THAT(f[0].message(), HasSubstr("ResourceQuota requests.nvidia.com/gpu"));
}

TEST(LimitRangeGpuDefault, DefaultRequestAndDeviceClassNamesToo) {
  const auto f = judgeYaml(limitRange("  - type: Container\n    defaultRequest:\n      nvidia.com/mig-1g.10gb: \"1\"\n"
                                      "      deviceclass.resource.kubernetes.io/gpu.nvidia.com: 2\n"),
                           kRule);
  EXPECT_THAT(rulesHit(f), ElementsAre("limitrange-gpu-default", "limitrange-gpu-default"));
}

TEST(LimitRangeGpuDefault, MaxMinZeroAndOtherResourcesAreFine) {
  EXPECT_THAT(judgeYaml(limitRange("  - type: Container\n    max: {nvidia.com/gpu: 8}\n    min: {nvidia.com/gpu: 0}\n"),
                        kRule),
              IsEmpty());
  EXPECT_THAT(judgeYaml(limitRange("  - type: Container\n    default: {nvidia.com/gpu: 0, cpu: 500m}\n"), kRule),
              IsEmpty());
  EXPECT_THAT(judgeYaml(limitRange("  - type: Container\n    default: {example.com/fpga: 1}\n"), kRule), IsEmpty());
}

TEST(LimitRangeGpuDefault, TheDocumentedExamplesFireAndStayQuiet) {
  const Rule* rule = findRule("limitrange-gpu-default");
  ASSERT_NE(rule, nullptr);
  EXPECT_THAT(rulesHit(judgeYaml(std::string(rule->doc().wrongExample), kRule)), ElementsAre("limitrange-gpu-default"));
  EXPECT_THAT(judgeYaml(std::string(rule->doc().rightExample), kRule), IsEmpty());
}

TEST(LimitRangeGpuDefault, EveryItemOfAListIsJudged) {
  const std::string list =
      "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: LimitRange\n  metadata: {name: a}\n"
      "  spec:\n    limits:\n    - type: Container\n      default: {nvidia.com/gpu: 1}\n";
  const auto f = judgeYaml(list, kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("limitrange-gpu-default"));
  EXPECT_EQ(f[0].field(), "items[0].spec.limits[0].default[nvidia.com/gpu]");
}

}  // namespace
}  // namespace gpuguard
