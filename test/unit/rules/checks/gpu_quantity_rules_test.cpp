// gpu-invalid-quantity, gpu-fractional, gpu-requests-limits-mismatch and
// gpu-requests-without-limits: the API server's resource validation
// (validateResourceRequirements), reproduced for every place pods live.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
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
using testing::rulesHit;

// The findings of this file's four rules: other rules have their say on the
// same pods (1e3 GPUs exceed a node; a toleration without a GPU request).
std::vector<std::string> rulesFor(const std::string& resources, const std::string& kind = "Pod") {
  static const Policy quantityRules = onlyRules({"gpu-invalid-quantity", "gpu-fractional",
                                                 "gpu-requests-limits-mismatch", "gpu-requests-without-limits"});
  return rulesHit(judgeYaml(gpuPod(resources, kind), quantityRules));
}

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
  const auto rules = rulesFor(std::string("limits:\n  nvidia.com/gpu: ") + c.written);
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
  EXPECT_THAT(rulesFor("limits:\n  example.com/foo: 0.5"), ElementsAre("gpu-fractional"));
  EXPECT_THAT(rulesFor("limits:\n  amd.com/gpu: 250m"), ElementsAre("gpu-fractional"));
}

TEST(GpuFractional, LeavesNativeResourcesAlone) {
  // cpu and memory may be fractional; kubernetes.io/ names are native (substring rule).
  EXPECT_THAT(rulesFor("limits:\n  cpu: 500m\n  memory: 1.5Gi"), IsEmpty());
  EXPECT_THAT(rulesFor("limits:\n  foo.kubernetes.io/gpu: 0.5"), IsEmpty());
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

// --- quantities that do not parse -----------------------------------------

class UnparseableGpuQuantity : public ::testing::TestWithParam<const char*> {};

TEST_P(UnparseableGpuQuantity, IsAnInvalidQuantity) {
  EXPECT_THAT(rulesFor(std::string("limits:\n  nvidia.com/gpu: ") + GetParam()), ElementsAre("gpu-invalid-quantity"))
      << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Reference, UnparseableGpuQuantity,
                         ::testing::Values("\"1 GPU\"", "\"1K\"", "\"1,000\"", "\"1_000\"", "\"0x1\"", "\"1e\"",
                                           "\"1ki\"", "\"\"", "\"..\"", "\"1m3\"", "true", "[1]", "{a: 1}"));

TEST(GpuInvalidQuantity, QuotesTheApiServersParseError) {
  const auto f = only(judgeYaml(gpuPod("limits:\n  nvidia.com/gpu: \"1 GPU\"")), "gpu-invalid-quantity");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"1 GPU\": quantities must match the regular expression"));
}

TEST(GpuInvalidQuantity, NegativeCountsMustBeAtLeastZero) {
  const auto f = only(judgeYaml(gpuPod("limits:\n  nvidia.com/gpu: -1")), "gpu-invalid-quantity");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"-1\": must be greater than or equal to 0"));
}

TEST(GpuInvalidQuantity, NullIsZeroLikeTheApiServersDecoder) {
  EXPECT_THAT(rulesFor("limits:\n  nvidia.com/gpu: null"), IsEmpty());
}

// --- requests and limits ---------------------------------------------------

TEST(GpuRequestsLimits, LimitsAloneAreValidBecauseRequestsDefaultToThem) {
  EXPECT_THAT(rulesFor("limits:\n  nvidia.com/gpu: 2"), IsEmpty());
  EXPECT_THAT(rulesFor("limits:\n  nvidia.com/gpu: 2", "Deployment"), IsEmpty());
}

TEST(GpuRequestsLimits, EqualValuesInDifferentNotationsAreEqual) {
  EXPECT_THAT(rulesFor("limits:\n  nvidia.com/gpu: 1\nrequests:\n  nvidia.com/gpu: 1000m"), IsEmpty());
  EXPECT_THAT(rulesFor("limits:\n  nvidia.com/gpu: \"1e0\"\nrequests:\n  nvidia.com/gpu: 1"), IsEmpty());
}

TEST(GpuRequestsLimits, DifferentValuesAreAMismatchReportedAtRequestsWithoutTheKey) {
  const auto f = only(judgeYaml(gpuPod("limits:\n  nvidia.com/gpu: 1\nrequests:\n  nvidia.com/gpu: 2")),
                      "gpu-requests-limits-mismatch");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.requests");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"2\": must be equal to nvidia.com/gpu limit of 1"));
}

// Defaulting rounds both up to milli precision before validation compares
// them: 0.9999 is stored as 1 (gpu-fractional explains it and stays quiet,
// see above), while 1.0001 becomes 1001m and still differs.
TEST(GpuRequestsLimits, ValuesAreComparedAfterTheMilliRoundUp) {
  EXPECT_THAT(rulesFor("limits:\n  nvidia.com/gpu: 1\nrequests:\n  nvidia.com/gpu: \"0.9999\""),
              Not(Contains("gpu-requests-limits-mismatch")));
  EXPECT_THAT(rulesFor("limits:\n  nvidia.com/gpu: \"1.0001\"\nrequests:\n  nvidia.com/gpu: 1"),
              Contains("gpu-requests-limits-mismatch"));
  EXPECT_THAT(rulesFor("limits:\n  nvidia.com/gpu: 2\nrequests:\n  nvidia.com/gpu: \"1.9999\""),
              Not(Contains("gpu-requests-limits-mismatch")));
}

TEST(GpuRequestsLimits, RequestsAloneNeedALimitReportedAtLimitsWithoutTheKey) {
  for (const char* kind : {"Pod", "Deployment", "StatefulSet"}) {
    const auto f = only(judgeYaml(gpuPod("requests:\n  nvidia.com/gpu: 1", kind)), "gpu-requests-without-limits");
    ASSERT_EQ(f.size(), 1u) << kind;
    EXPECT_THAT(f[0].field(), ::testing::EndsWith("containers[0].resources.limits"));
    EXPECT_THAT(f[0].message(), HasSubstr("Limit must be set for non overcommitable resources"));
  }
}

TEST(GpuRequestsLimits, HalfRequestWithWholeLimitIsBothFractionalAndAMismatch) {
  EXPECT_THAT(rulesFor("limits:\n  nvidia.com/gpu: 1\nrequests:\n  nvidia.com/gpu: 0.5"),
              ElementsAre("gpu-fractional", "gpu-requests-limits-mismatch"));
}

TEST(GpuRequestsLimits, CustomResourcesAreJudgedLikePodTemplates) {
  const std::string ray =
      "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\nspec:\n  workerGroupSpecs:\n"
      "  - template:\n      spec:\n        tolerations: [{operator: Exists}]\n"
      "        nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n"
      "        containers:\n        - name: w\n          image: rayproject/ray\n"
      "          resources: {requests: {nvidia.com/gpu: 1}}\n";
  EXPECT_THAT(rulesHit(judgeYaml(ray)), ElementsAre("gpu-requests-without-limits"));
}

}  // namespace
}  // namespace gpuguard
