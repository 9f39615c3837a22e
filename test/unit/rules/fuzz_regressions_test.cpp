// Inputs found by the libFuzzer harnesses (test/fuzz), kept as regression
// tests. Each names the harness, the input and what went wrong.
#include <gtest/gtest.h>

#include <string>

#include "rules/k8s/quantity.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

// fuzz_quantity, input "1000E2147483648" (crash-fdcb85ac...). The exponent
// truncates to int32 like Go (-2147483648) and the value is Go's: 10^2147483651.
// canonical() prints "100e2147483649", an exponent above INT32_MAX, which
// parse() truncates again (to -2147483647): the text re-parses to 1n, not to
// the value, breaking "canonical() always re-parses to an equal value"
// (rules/k8s/quantity.h). Fix (rules/quantity.cpp, Quantity::canonical): when the
// multiple-of-3 exponent exceeds 2147483646, move the excess into the
// mantissa as zeros ("100000e2147483646"), which re-parses exactly.
TEST(FuzzRegressions, CanonicalExponentBeyondInt32ReparsesToTheSameValue) {
  for (const char* text : {"1000E2147483648", "1000e2147483648", "1000e-2147483648"}) {
    const auto q = Quantity::parse(text);
    ASSERT_TRUE(q.has_value()) << text;
    const auto again = Quantity::parse(q->canonical());
    ASSERT_TRUE(again.has_value()) << text << " -> " << q->canonical();
    EXPECT_EQ(*again, *q) << text << " -> " << q->canonical() << " -> " << again->canonical();
  }
}

// The same family below the limit round-trips today and must keep doing so.
TEST(FuzzRegressions, HugeExponentsWithinInt32RoundTrip) {
  for (const char* text : {"1E2147483648", "1e2147483647", "10e2147483647", "1e-2147483648", "1000e4294967296",
                           "1000E4294967295"}) {
    const auto q = Quantity::parse(text);
    ASSERT_TRUE(q.has_value()) << text;
    const auto again = Quantity::parse(q->canonical());
    ASSERT_TRUE(again.has_value()) << text;
    EXPECT_EQ(*again, *q) << text << " -> " << q->canonical();
    EXPECT_EQ(again->canonical(), q->canonical()) << text;
  }
}

// fuzz_quantity, input "\t4687.5Ki" (crash-dc464c19...; a harness bug, not a
// product one). A BinarySI value that is no multiple of 1024 prints as a bare
// integer, as Go's CanonicalizeBytes does; that text re-parses as DecimalSI,
// which prints differently. The value survives; the text need not.
TEST(FuzzRegressions, BinaryValueThatIsNoMultipleOf1024KeepsItsValueNotItsText) {
  const auto q = Quantity::parseTrimmed("\t4687.5Ki");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->canonical(), "4800000");
  const auto again = Quantity::parse(q->canonical());
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, *q);
  EXPECT_EQ(again->canonical(), "4800k");
  EXPECT_EQ(Quantity::parse(again->canonical()).value(), *q);
}

// fuzz_engine (CI run of session 2, crash-a3f2b23e...): a container asking
// for two GPU resources whose quantities saturate to 2^63-1 overflowed the
// signed sum in containerGpus (UBSan: "1 + 9223372036854775807"). Fix
// (rules/resources.cpp, addUnits): unit sums saturate at the maximum. Every
// sum is exercised: two resources in one container (containerGpus), two
// app containers and a sidecar plus an init container (podRequestUnits), and
// two GPU resource names in one pod (podGpus). CI of session 8 found the same
// sum again in the per-container count that nvidia-visible-devices-env and
// cuda-visible-devices-index read (rules/support/container_gpus.cpp, fuzz_admission
// "1 + 9223372036854775807"): container a now sets both variables.
TEST(FuzzRegressions, GpuCountsNearInt64MaxSaturateInsteadOfOverflowing) {
  const std::string huge = "9223372036854775807";
  const std::string pod = R"(
apiVersion: v1
kind: Pod
metadata: {name: huge}
spec:
  initContainers:
  - name: sidecar
    image: busybox
    restartPolicy: Always
    resources: {limits: {nvidia.com/gpu: ")" + huge + R"(", nvidia.com/gpu.shared: "1"}}
  - name: init
    image: busybox
    resources: {limits: {nvidia.com/gpu: "1e30"}}
  containers:
  - name: a
    image: busybox
    env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}, {name: CUDA_VISIBLE_DEVICES, value: "0,1"}]
    resources: {limits: {nvidia.com/gpu: ")" + huge + R"(", nvidia.com/gpu.shared: "1"}}
  - name: b
    image: busybox
    resources: {limits: {nvidia.com/gpu: "1"}, requests: {nvidia.com/gpu: "1"}}
)";
  const std::vector<Finding> findings = testing::judgeYaml(pod);
  // Still judged as a GPU pod that needs more GPUs than any node has.
  EXPECT_FALSE(testing::only(findings, "gpu-missing-toleration").empty());
  EXPECT_FALSE(testing::only(findings, "gpu-count-exceeds-node").empty());
}

}  // namespace
}  // namespace gpuguard
