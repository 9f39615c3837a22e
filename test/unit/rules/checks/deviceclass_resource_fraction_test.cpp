// gpu-fractional on deviceclass.resource.kubernetes.io/<class>: native to
// core validation, so the API server accepts a fraction, but kube-scheduler
// takes the request as a device count and never binds a non-integer one
// (kubernetes-gpu-semantics.md §15.2; the API side is in
// test/e2e/cases/oracle/dra.yaml, documented in oracle-known.tsv).
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

const Policy kRule = onlyRules({"gpu-fractional"});

std::string pod(const std::string& quantity) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: app\n    image: busybox\n"
         "    resources: {limits: {deviceclass.resource.kubernetes.io/gpu.nvidia.com: " + quantity + "}}\n";
}

TEST(DeviceClassResourceFraction, AFractionalDeviceCountNeverBinds) {
  const auto f = judgeYaml(pod("500m"), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-fractional"));
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.limits[deviceclass.resource.kubernetes.io/gpu.nvidia.com]");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"500m\": a DeviceClass's implicit extended resource"));
  EXPECT_THAT(f[0].message(), HasSubstr("fails at PreBind"));
  EXPECT_THAT(f[0].message(), HasSubstr("ask for 1 whole device(s)"));
}

TEST(DeviceClassResourceFraction, WholeCountsAreFine) {
  EXPECT_THAT(judgeYaml(pod("2"), kRule), IsEmpty());
  EXPECT_THAT(judgeYaml(pod("1000m"), kRule), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
