// gpu-requests-limits-mismatch: requests and limits of an extended resource that are both set must be
// equal (validateResourceRequirements), compared after defaulting.
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
using testing::quantityRulesFor;

// --- requests and limits ---------------------------------------------------


TEST(GpuRequestsLimits, LimitsAloneAreValidBecauseRequestsDefaultToThem) {
  EXPECT_THAT(quantityRulesFor("limits:\n  nvidia.com/gpu: 2"), IsEmpty());
  EXPECT_THAT(quantityRulesFor("limits:\n  nvidia.com/gpu: 2", "Deployment"), IsEmpty());
}


TEST(GpuRequestsLimits, EqualValuesInDifferentNotationsAreEqual) {
  EXPECT_THAT(quantityRulesFor("limits:\n  nvidia.com/gpu: 1\nrequests:\n  nvidia.com/gpu: 1000m"), IsEmpty());
  EXPECT_THAT(quantityRulesFor("limits:\n  nvidia.com/gpu: \"1e0\"\nrequests:\n  nvidia.com/gpu: 1"), IsEmpty());
}


TEST(GpuRequestsLimits, DifferentValuesAreAMismatchReportedAtRequestsWithoutTheKey) {
  const auto f = only(judgeYaml(gpuPod("limits:\n  nvidia.com/gpu: 1\nrequests:\n  nvidia.com/gpu: 2")),
                      "gpu-requests-limits-mismatch");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.requests");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"2\": must be equal to nvidia.com/gpu limit of 1"));
}


// deviceclass.resource.kubernetes.io/<class> is a native name: overcommit is
// allowed, but requests above limits are still refused (reference §15.2).
TEST(GpuRequestsLimits, ADeviceClassRequestAboveItsLimitIsRefused) {
  const auto f = only(judgeYaml(gpuPod("limits:\n  deviceclass.resource.kubernetes.io/gpu.nvidia.com: 1\n"
                                       "requests:\n  deviceclass.resource.kubernetes.io/gpu.nvidia.com: 2")),
                      "gpu-requests-limits-mismatch");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.requests");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"2\": must be less than or equal to "
                                        "deviceclass.resource.kubernetes.io/gpu.nvidia.com limit of 1"));
}

TEST(GpuRequestsLimits, ADeviceClassRequestBelowItsLimitOrAloneIsAccepted) {
  EXPECT_THAT(only(judgeYaml(gpuPod("limits:\n  deviceclass.resource.kubernetes.io/gpu.nvidia.com: 2\n"
                                    "requests:\n  deviceclass.resource.kubernetes.io/gpu.nvidia.com: 1")),
                   "gpu-requests-limits-mismatch"),
              IsEmpty());
  EXPECT_THAT(only(judgeYaml(gpuPod("requests:\n  deviceclass.resource.kubernetes.io/gpu.nvidia.com: 1")),
                   "gpu-requests-limits-mismatch"),
              IsEmpty());
  // Edge values compare without overflow.
  EXPECT_THAT(only(judgeYaml(gpuPod("limits:\n  deviceclass.resource.kubernetes.io/gpu.nvidia.com: \"1e30\"\n"
                                    "requests:\n  deviceclass.resource.kubernetes.io/gpu.nvidia.com: "
                                    "\"9223372036854775807\"")),
                   "gpu-requests-limits-mismatch"),
              IsEmpty());
}

// Defaulting rounds both up to milli precision before validation compares
// them: 0.9999 is stored as 1 (gpu-fractional explains it and stays quiet,
// see above), while 1.0001 becomes 1001m and still differs.
TEST(GpuRequestsLimits, ValuesAreComparedAfterTheMilliRoundUp) {
  EXPECT_THAT(quantityRulesFor("limits:\n  nvidia.com/gpu: 1\nrequests:\n  nvidia.com/gpu: \"0.9999\""),
              Not(Contains("gpu-requests-limits-mismatch")));
  EXPECT_THAT(quantityRulesFor("limits:\n  nvidia.com/gpu: \"1.0001\"\nrequests:\n  nvidia.com/gpu: 1"),
              Contains("gpu-requests-limits-mismatch"));
  EXPECT_THAT(quantityRulesFor("limits:\n  nvidia.com/gpu: 2\nrequests:\n  nvidia.com/gpu: \"1.9999\""),
              Not(Contains("gpu-requests-limits-mismatch")));
}


TEST(GpuRequestsLimits, HalfRequestWithWholeLimitIsBothFractionalAndAMismatch) {
  EXPECT_THAT(quantityRulesFor("limits:\n  nvidia.com/gpu: 1\nrequests:\n  nvidia.com/gpu: 0.5"),
              ElementsAre("gpu-fractional", "gpu-requests-limits-mismatch"));
}

}  // namespace
}  // namespace gpuguard
