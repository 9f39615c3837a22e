// rules/k8s/taints: Taint.ToString and Toleration.ToleratesTaint. The
// operator-by-operator table for the GPU taint is in gpu_scheduling_rules_test.
#include "rules/k8s/taints.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gpuguard
