// gpu-in-pod-level-resources: pod-level spec.resources holds only cpu, memory
// and hugepages-*, and ephemeral containers hold no resources at all
// (kubernetes-gpu-semantics.md §2.5); GPUs and DRA claims belong to containers.
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

const Policy kPodLevelOnly = onlyRules({"gpu-in-pod-level-resources"});

std::string podWithPodResources(const std::string& podResources) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resources:\n" + podResources +
         "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n";
}

TEST(GpuInPodLevelResources, AGpuLimitIsReportedLikeTheApiServer) {
  const auto f = judgeYaml(podWithPodResources("    limits:\n      cpu: \"8\"\n      nvidia.com/gpu: 1\n"),
                           kPodLevelOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "gpu-in-pod-level-resources");
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.resources.limits[nvidia.com/gpu]");
  EXPECT_EQ(f[0].pointer(), "/spec/resources/limits/nvidia.com~1gpu");
  EXPECT_EQ(f[0].value, "nvidia.com/gpu");
  EXPECT_THAT(f[0].message(), HasSubstr("Unsupported value: \"nvidia.com/gpu\": supported values: \"cpu\", "
                                      "\"hugepages-\", \"memory\""));
  EXPECT_THAT(f[0].message(), HasSubstr("move it to containers[0].resources.limits"));
}

TEST(GpuInPodLevelResources, RequestsAreReportedToo) {
  const auto f = judgeYaml(podWithPodResources("    requests:\n      nvidia.com/gpu: 1\n"), kPodLevelOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.resources.requests[nvidia.com/gpu]");
  EXPECT_THAT(f[0].message(), HasSubstr("containers[0].resources.requests"));
}

TEST(GpuInPodLevelResources, EveryExtendedResourceAndPolicyGpuIsReported) {
  const auto f = judgeYaml(
      podWithPodResources("    limits:\n      amd.com/gpu: 1\n      nvidia.com/mig-1g.10gb: 1\n      example.com/foo: 1\n"),
      kPodLevelOnly);
  EXPECT_THAT(rulesHit(f), ElementsAre("gpu-in-pod-level-resources", "gpu-in-pod-level-resources",
                                       "gpu-in-pod-level-resources"));
}

TEST(GpuInPodLevelResources, CpuMemoryAndHugepagesAreFine) {
  EXPECT_THAT(rulesHit(judgeYaml(podWithPodResources("    limits:\n      cpu: \"8\"\n      memory: 32Gi\n"
                                                     "      hugepages-2Mi: 1Gi\n    requests:\n      cpu: \"4\"\n"),
                                 kPodLevelOnly)),
              IsEmpty());
}

TEST(GpuInPodLevelResources, OtherUnsupportedNamesAreLeftToTheApiServer) {
  EXPECT_THAT(rulesHit(judgeYaml(podWithPodResources("    limits:\n      ephemeral-storage: 1Gi\n"), kPodLevelOnly)),
              IsEmpty());
}

TEST(GpuInPodLevelResources, GpusInContainersAreFine) {
  EXPECT_THAT(rulesHit(judgeYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resources: {limits: {cpu: "8"}}
  containers:
  - name: cuda
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources: {limits: {nvidia.com/gpu: 1}}
)",
                                 kPodLevelOnly)),
              IsEmpty());
}

TEST(GpuInPodLevelResources, PodLevelClaimsAreForbidden) {
  const auto f = judgeYaml(podWithPodResources("    claims:\n    - name: gpu\n"), kPodLevelOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.resources.claims");
  EXPECT_THAT(f[0].message(), HasSubstr("Forbidden: claims may not be set for Resources at pod-level"));
  EXPECT_THAT(f[0].message(), HasSubstr("containers[0].resources.claims"));
}

TEST(GpuInPodLevelResources, AnEmptyClaimsListIsFine) {
  EXPECT_THAT(rulesHit(judgeYaml(podWithPodResources("    claims: []\n"), kPodLevelOnly)), IsEmpty());
}

// --- ephemeral containers (validateEphemeralContainers, §2.5) --------------------

std::string podWithEphemeral(const std::string& ephemeralResources) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
         "  containers:\n  - name: app\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
         "    resources: {limits: {nvidia.com/gpu: 1}}\n"
         "  ephemeralContainers:\n  - name: dbg\n    image: busybox\n" + ephemeralResources;
}

TEST(GpuInPodLevelResources, AGpuOnAnEphemeralContainerIsForbidden) {
  const auto f = judgeYaml(podWithEphemeral("    resources:\n      limits: {nvidia.com/gpu: 1}\n"
                                            "      requests: {nvidia.com/gpu: 1, cpu: 100m}\n"),
                           kPodLevelOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.ephemeralContainers[0].resources");
  EXPECT_THAT(f[0].message(), HasSubstr("Forbidden: cannot be set for an Ephemeral Container; an ephemeral container "
                                      "gets no resources of its own, so it cannot be given nvidia.com/gpu: remove "
                                      "resources"));
}

TEST(GpuInPodLevelResources, EphemeralContainersWithoutGpusAreLeftToTheApiServer) {
  EXPECT_THAT(rulesHit(judgeYaml(podWithEphemeral("    resources: {limits: {cpu: 100m}}\n"), kPodLevelOnly)),
              IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(podWithEphemeral(""), kPodLevelOnly)), IsEmpty());
}

TEST(GpuInPodLevelResources, TemplatesInWorkloadsAndCustomResourcesAreChecked) {
  const auto f = judgeYaml(R"(apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        resources: {limits: {nvidia.com/gpu: 8}}
        containers:
        - {name: w, image: vllm/vllm-openai}
        - {name: sidecar, image: busybox}
)",
                           kPodLevelOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.leaderWorkerTemplate.workerTemplate.spec.resources.limits[nvidia.com/gpu]");
  EXPECT_THAT(f[0].message(), HasSubstr("containers[i].resources.limits"));
}

}  // namespace
}  // namespace gpuguard
