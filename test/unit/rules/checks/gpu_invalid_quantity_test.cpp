// gpu-invalid-quantity: a GPU quantity the API server cannot parse (resource.ParseQuantity),
// or a negative one.
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

// The findings of the four rules of the API server's validateResourceRequirements
// (gpu-invalid-quantity, gpu-fractional, gpu-requests-limits-mismatch,
// gpu-requests-without-limits): each is judged beside the other three, which must
// stay quiet where it speaks; other rules have their say on the same pods.
std::vector<std::string> rulesFor(const std::string& resources, const std::string& kind = "Pod") {
  static const Policy quantityRules = onlyRules({"gpu-invalid-quantity", "gpu-fractional",
                                                 "gpu-requests-limits-mismatch", "gpu-requests-without-limits"});
  return rulesHit(judgeYaml(gpuPod(resources, kind), quantityRules));
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

}  // namespace
}  // namespace gpuguard
