// nvidia-visible-devices-env: a container's own NVIDIA_VISIBLE_DEVICES wins
// over the device plugin's (the kubelet appends the container's env last) and
// the NVIDIA runtime honours it, so it reaches GPUs the scheduler never gave
// the pod; it is never a GPU request (kubernetes-gpu-semantics.md §9.3, §15.3).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::judgeInput;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kRule = onlyRules({"nvidia-visible-devices-env"});

std::string pod(const std::string& value, const std::string& limits = "",
                const std::string& image = "nvidia/cuda:12.4.1-base-ubuntu22.04") {
  std::string out = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  runtimeClassName: nvidia\n"
                    "  containers:\n  - name: app\n    image: " + image +
                    "\n    env:\n    - {name: NVIDIA_VISIBLE_DEVICES, value: \"" + value + "\"}\n";
  if (!limits.empty()) out += "    resources: {limits: {" + limits + "}}\n";
  return out;
}

TEST(NvidiaVisibleDevicesEnv, AllWithoutAGpuRequestReachesEveryGpuOfTheNode) {
  const auto f = judgeYaml(pod("all"), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("nvidia-visible-devices-env"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.containers[0].env[0].value");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"all\": container app asks for no GPU"));
  EXPECT_THAT(f[0].message(), HasSubstr("with runtimeClassName nvidia the NVIDIA runtime honours it"));
  EXPECT_THAT(f[0].message(), HasSubstr("every GPU of the node"));
}

TEST(NvidiaVisibleDevicesEnv, IndicesAndUuidsWithoutARequestAreGpuAccessToo) {
  for (const char* v : {"0,1", "GPU-6f1c2a9e-3b1d-4c4e-9f0e-1a2b3c4d5e6f", "nvidia.com/gpu=all"}) {
    const auto f = judgeYaml(pod(v), kRule);
    ASSERT_THAT(rulesHit(f), ElementsAre("nvidia-visible-devices-env")) << v;
    EXPECT_EQ(f[0].severity, Severity::Error) << v;
  }
}

TEST(NvidiaVisibleDevicesEnv, VoidNoneEmptyAndTheVolumeMountsPathGiveNoGpu) {
  for (const char* v : {"void", "none", "", "/var/run/nvidia-container-devices", "$(GPUS)"}) {
    EXPECT_THAT(judgeYaml(pod(v), kRule), IsEmpty()) << v;
  }
}

TEST(NvidiaVisibleDevicesEnv, NamingMoreGpusThanAskedIsAnError) {
  const auto f = judgeYaml(pod("0,1,2,3", "nvidia.com/gpu: 2"), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("nvidia-visible-devices-env"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("asks for 2 GPU(s) but names 4 of the node's"));
}

TEST(NvidiaVisibleDevicesEnv, AllOrTheNodesIndicesBesideAGpuRequestAreWarnings) {
  // "all" is harmless only on a pod that takes the whole node; node indices
  // replace the GPUs the device plugin allocated, which may be another pod's.
  for (const char* v : {"all", "0,1"}) {
    const auto f = judgeYaml(pod(v, "nvidia.com/gpu: 2"), kRule);
    ASSERT_THAT(rulesHit(f), ElementsAre("nvidia-visible-devices-env")) << v;
    EXPECT_EQ(f[0].severity, Severity::Warning) << v;
  }
}

TEST(NvidiaVisibleDevicesEnv, AGpuClaimTheContainerListsIsAGpuRequest) {
  const std::string input =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: two}\nspec:\n  spec:\n"
      "    devices:\n      requests:\n      - name: r\n        exactly: {deviceClassName: gpu.nvidia.com, count: 2}\n"
      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims: [{name: g, "
      "resourceClaimTemplateName: two}]\n  containers:\n  - name: app\n    image: busybox\n    env:\n"
      "    - {name: NVIDIA_VISIBLE_DEVICES, value: \"0,1,2\"}\n    resources: {claims: [{name: g}]}\n";
  const auto f = judgeInput(input, kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("nvidia-visible-devices-env"));
  EXPECT_THAT(f[0].message(), HasSubstr("asks for 2 GPU(s) but names 3"));
}

TEST(NvidiaVisibleDevicesEnv, NvidiasOwnNodeAgentsReadEveryGpuByDesign) {
  for (const char* image : {"nvcr.io/nvidia/k8s-device-plugin:v0.17.0", "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3",
                            "nvcr.io/nvidia/gpu-feature-discovery:v0.8.2"}) {
    EXPECT_THAT(judgeYaml(pod("all", "", image), kRule), IsEmpty()) << image;
  }
}

TEST(NvidiaVisibleDevicesEnv, APrivilegedContainerReachesEveryDeviceAnyway) {
  // The GPU Operator's CUDA validator: the env widens nothing there.
  const std::string privileged = pod("all") + "    securityContext: {privileged: true}\n";
  EXPECT_THAT(judgeYaml(privileged, kRule), IsEmpty());
}

TEST(NvidiaVisibleDevicesEnv, AnotherDaemonSetIsWarnedAsANodeAgentMayNeedEveryGpu) {
  const std::string ds = R"(apiVersion: apps/v1
kind: DaemonSet
metadata: {name: exporter}
spec:
  template:
    spec:
      containers:
      - name: exporter
        image: example.com/gpu-exporter:1
        env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]
)";
  const auto f = judgeYaml(ds, kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("nvidia-visible-devices-env"));
  EXPECT_EQ(f[0].severity, Severity::Warning);
}

TEST(NvidiaVisibleDevicesEnv, TheLastEntryWinsAndValueFromIsUnknown) {
  const std::string twice =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: app\n    image: busybox\n"
      "    env:\n    - {name: NVIDIA_VISIBLE_DEVICES, value: all}\n"
      "    - name: NVIDIA_VISIBLE_DEVICES\n      valueFrom: {configMapKeyRef: {name: c, key: k}}\n";
  EXPECT_THAT(judgeYaml(twice, kRule), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
