// gpu-invalid-quantity: a GPU quantity the API server cannot parse (resource.ParseQuantity),
// or a negative one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/k8s/quantity.h"
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

// --- quantities that do not parse -----------------------------------------

class UnparseableGpuQuantity : public ::testing::TestWithParam<const char*> {};

TEST_P(UnparseableGpuQuantity, IsAnInvalidQuantity) {
  EXPECT_THAT(quantityRulesFor(std::string("limits:\n  nvidia.com/gpu: ") + GetParam()),
              ElementsAre("gpu-invalid-quantity"))
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

// kubectl sends YAML strings as Go's encoding/json writes them, and
// Quantity.UnmarshalJSON parses the raw token's escapes as written (§1.6).
TEST(GpuInvalidQuantity, CharactersKubectlSendsJsonEscapedMakeTheQuantityInvalid) {
  for (const char* written : {"\"1\\n\"", "\"\\t1\"", "\"1\\r\"", "\"1\\u2028\""}) {
    const auto f = only(judgeYaml(gpuPod(std::string("limits:\n  nvidia.com/gpu: ") + written)), "gpu-invalid-quantity");
    ASSERT_EQ(f.size(), 1u) << written;
    EXPECT_THAT(f[0].message(), HasSubstr("kubectl sends JSON-escaped")) << written;
  }
}

TEST(GpuInvalidQuantity, SpacesTheDecoderTrimsAndDecodedEscapesAreValid) {
  // " 1" and U+00A0 reach the server as they are and are trimmed; "\u0031" is "1" once YAML decodes it.
  for (const char* written : {"\" 1\"", "\"1\\u00a0\"", "\"\\u0031\""}) {
    EXPECT_THAT(only(judgeYaml(gpuPod(std::string("limits:\n  nvidia.com/gpu: ") + written)), "gpu-invalid-quantity"),
                IsEmpty())
        << written;
  }
}

TEST(GpuInvalidQuantity, GoJsonEscapingIsWhatKubectlSends) {
  EXPECT_EQ(goJsonStringBody("1"), "1");
  EXPECT_EQ(goJsonStringBody("1\n"), "1\\n");
  EXPECT_EQ(goJsonStringBody("a\"b\\c"), "a\\\"b\\\\c");
  EXPECT_EQ(goJsonStringBody("<&>"), "\\u003c\\u0026\\u003e");
  EXPECT_EQ(goJsonStringBody("\x01"), "\\u0001");
  EXPECT_EQ(goJsonStringBody("x\xe2\x80\xa8"), "x\\u2028");
  EXPECT_EQ(goJsonStringBody("\xff"), "\\ufffd");
  EXPECT_EQ(goJsonStringBody("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is left as it is
}

TEST(GpuInvalidQuantity, NullIsZeroLikeTheApiServersDecoder) {
  EXPECT_THAT(quantityRulesFor("limits:\n  nvidia.com/gpu: null"), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
