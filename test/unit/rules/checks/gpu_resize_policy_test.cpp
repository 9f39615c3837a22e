// gpu-resize-policy: in-place resize covers cpu and memory only; the API
// server refuses a resizePolicy naming anything else (validateResizePolicy;
// checked on kube-apiserver v1.37.2 by test/e2e/cases/oracle/resize-policy.yaml).
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

const Policy kRule = onlyRules({"gpu-resize-policy"});

std::string pod(const std::string& resizePolicy) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: app\n    image: busybox\n"
         "    resizePolicy: " + resizePolicy + "\n";
}

TEST(GpuResizePolicy, AGpuInResizePolicyIsUnsupported) {
  const auto f = judgeYaml(pod("[{resourceName: cpu, restartPolicy: NotRequired}, "
                               "{resourceName: nvidia.com/gpu, restartPolicy: RestartContainer}]"),
                           kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-resize-policy"));
  EXPECT_EQ(f[0].field(), "spec.containers[0].resizePolicy");  // the API server's field
  EXPECT_THAT(f[0].message(),
              HasSubstr("Unsupported value: \"nvidia.com/gpu\": supported values: \"cpu\", \"memory\""));
}

TEST(GpuResizePolicy, MigSlicesAndDeviceClassNamesToo) {
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{resourceName: nvidia.com/mig-1g.10gb, restartPolicy: NotRequired}, "
                                     "{resourceName: deviceclass.resource.kubernetes.io/gpu.nvidia.com, "
                                     "restartPolicy: NotRequired}]"),
                                 kRule)),
              ElementsAre("gpu-resize-policy", "gpu-resize-policy"));
}

TEST(GpuResizePolicy, CpuAndMemoryAreFine) {
  EXPECT_THAT(judgeYaml(pod("[{resourceName: cpu, restartPolicy: NotRequired}, "
                            "{resourceName: memory, restartPolicy: RestartContainer}]"),
                        kRule),
              IsEmpty());
}

TEST(GpuResizePolicy, InsideACustomResourceToo) {
  const std::string job = R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: t}
spec:
  pytorchReplicaSpecs:
    Worker:
      template:
        spec:
          containers:
          - name: pytorch
            image: busybox
            resizePolicy: [{resourceName: nvidia.com/gpu, restartPolicy: NotRequired}]
)";
  EXPECT_THAT(rulesHit(judgeYaml(job, kRule)), ElementsAre("gpu-resize-policy"));
}

}  // namespace
}  // namespace gpuguard
