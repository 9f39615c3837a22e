// gpu-requests-without-limits: an extended resource in requests needs its limit ("Limit must be set for
// non overcommitable resources"), in Pods, workload templates and custom resources.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::gpuPod;
using testing::judgeYaml;
using testing::only;
using testing::rulesHit;

// --- requests without limits -----------------------------------------------

TEST(GpuRequestsLimits, RequestsAloneNeedALimitReportedAtLimitsWithoutTheKey) {
  for (const char* kind : {"Pod", "Deployment", "StatefulSet"}) {
    const auto f = only(judgeYaml(gpuPod("requests:\n  nvidia.com/gpu: 1", kind)), "gpu-requests-without-limits");
    ASSERT_EQ(f.size(), 1u) << kind;
    EXPECT_THAT(f[0].field(), ::testing::EndsWith("containers[0].resources.limits"));
    EXPECT_THAT(f[0].message(), HasSubstr("Limit must be set for non overcommitable resources"));
  }
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
