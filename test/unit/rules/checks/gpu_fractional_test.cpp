// gpu-fractional: a GPU (any extended resource) is counted in whole units; the API
// server rejects a fraction, and on deviceclass.resource.kubernetes.io/<class>, native
// to core validation, kube-scheduler never binds one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

// === Extended resources: whole numbers only ============================================

namespace gpuguard::whole_numbers {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::gpuPod;
using testing::judgeYaml;
using testing::only;
using testing::onlyRules;
using testing::quantityRulesFor;
using testing::rulesHit;

// --- whole numbers ---------------------------------------------------------

struct WholeCase {
  const char* written;
  bool fractional;
};

// How GoogleTest and ctest name each case (instead of its bytes).
void PrintTo(const WholeCase& c, std::ostream* os) { *os << c.written; }

class GpuQuantityAsWritten : public ::testing::TestWithParam<WholeCase> {};

TEST_P(GpuQuantityAsWritten, IsFractionalExactlyWhenNotAWholeNumber) {
  const WholeCase c = GetParam();
  const auto rules = quantityRulesFor(std::string("limits:\n  nvidia.com/gpu: ") + c.written);
  if (c.fractional) EXPECT_THAT(rules, ElementsAre("gpu-fractional")) << c.written;
  else EXPECT_THAT(rules, IsEmpty()) << c.written;
}

INSTANTIATE_TEST_SUITE_P(
    Reference, GpuQuantityAsWritten,
    ::testing::Values(WholeCase{"1", false}, WholeCase{"1.0", false}, WholeCase{"\"1.0\"", false},
                      WholeCase{"\"1000m\"", false}, WholeCase{"\"2000m\"", false}, WholeCase{"1e0", false},
                      WholeCase{"\"1e3\"", false}, WholeCase{"\"1.\"", false}, WholeCase{"\"+1\"", false},
                      WholeCase{"\"01\"", false}, WholeCase{"\"1k\"", false}, WholeCase{"\" 2 \"", false},
                      WholeCase{"0", false}, WholeCase{"0.5", true}, WholeCase{"\"500m\"", true},
                      WholeCase{"\".5\"", true}, WholeCase{"1.5", true}, WholeCase{"\"1e-3\"", true},
                      WholeCase{"\"1.5e0\"", true}, WholeCase{"\"1m\"", true}, WholeCase{"\"1u\"", true},
                      WholeCase{"\"0.9999\"", true}, WholeCase{"\"1.0001\"", true}));

TEST(GpuFractional, SaysWhatToAskForInstead) {
  const auto f = only(judgeYaml(gpuPod("limits:\n  nvidia.com/gpu: 0.5")), "gpu-fractional");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.limits[nvidia.com/gpu]");
  EXPECT_EQ(f[0].pointer(), "/spec/containers/0/resources/limits/nvidia.com~1gpu");
  EXPECT_THAT(f[0].message(), HasSubstr("must be an integer"));
  EXPECT_THAT(f[0].message(), HasSubstr("ask for 1"));
  EXPECT_THAT(f[0].message(), HasSubstr("MIG"));
}

TEST(GpuFractional, NotesThatTheApiServerRoundsUpNearlyWholeValues) {
  const auto f = only(judgeYaml(gpuPod("limits:\n  nvidia.com/gpu: \"0.9999\"")), "gpu-fractional");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("rounds 0.9999 up to 1"));
}

TEST(GpuFractional, AppliesToEveryExtendedResourceLikeTheApiServer) {
  EXPECT_THAT(quantityRulesFor("limits:\n  example.com/foo: 0.5"), ElementsAre("gpu-fractional"));
  EXPECT_THAT(quantityRulesFor("limits:\n  amd.com/gpu: 250m"), ElementsAre("gpu-fractional"));
}

TEST(GpuFractional, LeavesNativeResourcesAlone) {
  // cpu and memory may be fractional; kubernetes.io/ names are native (substring rule).
  EXPECT_THAT(quantityRulesFor("limits:\n  cpu: 500m\n  memory: 1.5Gi"), IsEmpty());
  EXPECT_THAT(quantityRulesFor("limits:\n  foo.kubernetes.io/gpu: 0.5"), IsEmpty());
}

TEST(GpuFractional, ChecksInitAndSidecarContainersToo) {
  const std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
      "  tolerations: [{operator: Exists}]\n  nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n"
      "  initContainers:\n  - name: i\n    image: x\n    resources: {limits: {nvidia.com/gpu: 0.5}}\n"
      "  - name: s\n    image: x\n    restartPolicy: Always\n    resources: {limits: {nvidia.com/gpu: 1.5}}\n"
      "  containers:\n  - name: c\n    image: x\n";
  const auto f = only(judgeYaml(yaml), "gpu-fractional");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].field(), "spec.initContainers[0].resources.limits[nvidia.com/gpu]");
  EXPECT_EQ(f[1].field(), "spec.initContainers[1].resources.limits[nvidia.com/gpu]");
}

}  // namespace
}  // namespace gpuguard::whole_numbers

// === deviceclass.resource.kubernetes.io/<class> ========================================

namespace gpuguard::device_class_resource {
namespace {

// gpu-fractional on deviceclass.resource.kubernetes.io/<class>: native to
// core validation, so the API server accepts a fraction, but kube-scheduler
// takes the request as a device count and never binds a non-integer one
// (kubernetes-gpu-semantics.md §15.2; the API side is in
// test/e2e/cases/oracle/dra.yaml, documented in oracle-known.tsv).


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
}  // namespace gpuguard::device_class_resource
