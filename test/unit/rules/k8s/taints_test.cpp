// rules/k8s/taints: Taint.ToString and Toleration.ToleratesTaint. The
// operator-by-operator table for the GPU taint is in gpu_scheduling_rules_test.
#include "rules/k8s/taints.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace gpuguard {
namespace {

using nlohmann::json;

TEST(DescribeTaint, WritesKeyValueEffectAsKubectlDoes) {
  EXPECT_EQ(describeTaint({"dedicated", "inference", "NoSchedule"}), "dedicated=inference:NoSchedule");
  EXPECT_EQ(describeTaint({"nvidia.com/gpu", std::nullopt, "NoSchedule"}), "nvidia.com/gpu:NoSchedule");
  // Taint.ToString leaves out an empty value as it leaves out a missing one.
  EXPECT_EQ(describeTaint({"nvidia.com/gpu", "", "NoExecute"}), "nvidia.com/gpu:NoExecute");
}

TEST(ToleratesTaint, GtAndLtCompareCanonicalIntegers) {
  const Taint slots{"example.com/slots", "5", "NoSchedule"};
  EXPECT_TRUE(toleratesTaint(json::parse(R"({"key":"example.com/slots","operator":"Lt","value":"6"})"), slots));
  EXPECT_FALSE(toleratesTaint(json::parse(R"({"key":"example.com/slots","operator":"Gt","value":"6"})"), slots));
  EXPECT_FALSE(toleratesTaint(json::parse(R"({"key":"example.com/slots","operator":"Lt","value":"06"})"), slots));
  EXPECT_FALSE(toleratesTaint(json::parse(R"({"key":"example.com/slots","operator":"Lt","value":"+6"})"), slots));
}

TEST(ToleratesTaint, ATaintOfUnknownValueIsToleratedOnlyByExists) {
  const Taint gpu{"nvidia.com/gpu", std::nullopt, "NoSchedule"};
  EXPECT_TRUE(toleratesTaint(json::parse(R"({"key":"nvidia.com/gpu","operator":"Exists"})"), gpu));
  EXPECT_FALSE(toleratesTaint(json::parse(R"({"key":"nvidia.com/gpu","value":"present"})"), gpu));
  EXPECT_FALSE(toleratesTaint(json::parse(R"("nvidia.com/gpu")"), gpu));  // not an object
}

// The pod's tolerations are read once (readToleration) and matched against
// every node's taints: the answer is the JSON toleration's, field for field.
TEST(ReadToleration, ReadsTheFieldsTheSchedulerMatchesAndNothingFromANonObject) {
  const std::optional<Toleration> read =
      readToleration(json::parse(R"({"key":"nvidia.com/gpu","operator":"Equal","value":7,"effect":"NoSchedule"})"));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->key, "nvidia.com/gpu");
  EXPECT_EQ(read->op, "Equal");
  EXPECT_EQ(read->value, "");  // not a string: read as absent, as the JSON matcher does
  EXPECT_EQ(read->effect, "NoSchedule");
  EXPECT_FALSE(readToleration(json::parse(R"(["nvidia.com/gpu"])")).has_value());

  const std::vector<Taint> taints = {{"nvidia.com/gpu", "present", "NoSchedule"},
                                     {"nvidia.com/gpu", std::nullopt, "NoExecute"},
                                     {"example.com/slots", "5", "NoSchedule"},
                                     {"dedicated", "", "NoSchedule"}};
  for (const char* text : {R"({"key":"nvidia.com/gpu","operator":"Exists"})", R"({"operator":"Exists"})",
                           R"({"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"})",
                           R"({"key":"example.com/slots","operator":"Gt","value":"4"})", R"({"key":"dedicated"})",
                           R"({"key":"nvidia.com/gpu","operator":"Exists","effect":"NoExecute"})"}) {
    const json toleration = json::parse(text);
    for (const Taint& taint : taints) {
      SCOPED_TRACE(std::string(text) + " against " + describeTaint(taint));
      EXPECT_EQ(toleratesTaint(*readToleration(toleration), taint), toleratesTaint(toleration, taint));
    }
  }
}

}  // namespace
}  // namespace gpuguard
