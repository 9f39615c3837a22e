// cuda-visible-devices-index: CUDA_VISIBLE_DEVICES counts the devices the
// process sees - the container's own, from 0 - and an invalid index hides
// itself and every later one; a MIG container shows CUDA one device
// (kubernetes-gpu-semantics.md §15.7, §15.8).
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

const Policy kRule = onlyRules({"cuda-visible-devices-index"});

std::string pod(const std::string& value, const std::string& limits, const std::string& moreEnv = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: app\n    image: busybox\n"
         "    env:\n" + moreEnv + "    - {name: CUDA_VISIBLE_DEVICES, value: \"" + value +
         "\"}\n    resources: {limits: {" + limits + "}}\n";
}

TEST(CudaVisibleDevicesIndex, NodeIndicesOnATwoGpuContainerLeaveNoDevice) {
  const auto f = judgeYaml(pod("2,3", "nvidia.com/gpu: 2"), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("cuda-visible-devices-index"));
  EXPECT_EQ(f[0].field(), "spec.containers[0].env[0].value");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"2,3\": index 2 is beyond the 2 device(s) container app"));
  EXPECT_THAT(f[0].message(), HasSubstr("CUDA sees no device at all"));
}

TEST(CudaVisibleDevicesIndex, AHugeValueIsEchoedAbbreviated) {
  std::string value = "9";
  for (int i = 0; i < 100000; ++i) value += ",0";  // 200,001 bytes
  const auto f = judgeYaml(pod(value, "nvidia.com/gpu: 2"), kRule);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_LT(f[0].message().size(), 1000u);
  EXPECT_LT(f[0].value.size(), 300u);
  EXPECT_THAT(f[0].message(), HasSubstr("... (200001 bytes)"));
}

TEST(CudaVisibleDevicesIndex, ALaterInvalidIndexHidesTheRest) {
  const auto f = judgeYaml(pod("0,2,1", "nvidia.com/gpu: 2"), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("cuda-visible-devices-index"));
  EXPECT_THAT(f[0].message(), HasSubstr("only the 1 device(s) listed before it"));
}

TEST(CudaVisibleDevicesIndex, IndicesWithinTheContainersGpusAreFine) {
  EXPECT_THAT(judgeYaml(pod("0,1", "nvidia.com/gpu: 2"), kRule), IsEmpty());
  EXPECT_THAT(judgeYaml(pod("1", "nvidia.com/gpu: 4"), kRule), IsEmpty());
}

TEST(CudaVisibleDevicesIndex, AMigContainerShowsCudaOneDevice) {
  EXPECT_THAT(rulesHit(judgeYaml(pod("0,1", "nvidia.com/mig-1g.10gb: 2"), kRule)),
              ElementsAre("cuda-visible-devices-index"));
  EXPECT_THAT(judgeYaml(pod("0", "nvidia.com/mig-1g.10gb: 2"), kRule), IsEmpty());
}

TEST(CudaVisibleDevicesIndex, UuidsNegativeIndicesAndUnknownCountsAreNotJudged) {
  EXPECT_THAT(judgeYaml(pod("GPU-6f1c2a9e-3b1d-4c4e-9f0e-1a2b3c4d5e6f", "nvidia.com/gpu: 1"), kRule), IsEmpty());
  EXPECT_THAT(judgeYaml(pod("-1", "nvidia.com/gpu: 1"), kRule), IsEmpty());
  EXPECT_THAT(judgeYaml(pod("$(RANK)", "nvidia.com/gpu: 1"), kRule), IsEmpty());
  // No GPU asked: nothing to count against.
  EXPECT_THAT(judgeYaml(pod("3", "cpu: 1"), kRule), IsEmpty());
}

TEST(CudaVisibleDevicesIndex, AnNvidiaVisibleDevicesListIsWhatTheContainerSees) {
  const std::string nvd = "    - {name: NVIDIA_VISIBLE_DEVICES, value: \"0,1,2,3\"}\n";
  EXPECT_THAT(judgeYaml(pod("3", "nvidia.com/gpu: 1", nvd), kRule), IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(pod("4", "nvidia.com/gpu: 1", nvd), kRule)),
              ElementsAre("cuda-visible-devices-index"));
}

}  // namespace
}  // namespace gpuguard
