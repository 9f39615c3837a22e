// dra-claim-with-node-name: a pod that names its node (spec.nodeName) never
// passes through kube-scheduler, the only component that allocates and
// reserves DRA claims; the kubelet waits for them forever
// (kubernetes-gpu-semantics.md §15.1).
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

const Policy kRule = onlyRules({"dra-claim-with-node-name"});

std::string pod(const std::string& podLines, const std::string& resources) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + podLines +
         "  containers:\n  - name: app\n    image: nvidia/cuda:13.0.0-base-ubuntu24.04\n    resources: " + resources +
         "\n";
}

constexpr const char* kClaim = "  resourceClaims: [{name: gpu, resourceClaimTemplateName: single-gpu}]\n";

TEST(DraClaimWithNodeName, APodNamingItsNodeWithAClaimNeverStarts) {
  const auto f = judgeYaml(pod("  nodeName: gpu-node-1\n" + std::string(kClaim), "{claims: [{name: gpu}]}"), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("dra-claim-with-node-name"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.nodeName");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"gpu-node-1\": the pod names its node"));
  EXPECT_THAT(f[0].message(), HasSubstr("claim \"gpu\" (spec.resourceClaims[0])"));
  EXPECT_THAT(f[0].message(), HasSubstr("nodeSelector: {kubernetes.io/hostname: gpu-node-1}"));
}

TEST(DraClaimWithNodeName, EveryClaimCountsNotOnlyGpuClaims) {
  // An IMEX channel or a NIC claim waits for the scheduler just the same.
  const auto f = judgeYaml(pod("  nodeName: n1\n  resourceClaims: [{name: nic, resourceClaimName: rdma-0}]\n",
                               "{claims: [{name: nic}]}"),
                           kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("dra-claim-with-node-name"));
  EXPECT_THAT(f[0].message(), HasSubstr("claim \"nic\""));
}

TEST(DraClaimWithNodeName, AnExtendedResourceADraDriverServesNeedsTheSchedulerToo) {
  EXPECT_THAT(rulesHit(judgeYaml(pod("  nodeName: n1\n",
                                     "{limits: {deviceclass.resource.kubernetes.io/gpu.nvidia.com: 1}}"),
                                 kRule)),
              ElementsAre("dra-claim-with-node-name"));
  // nvidia.com/gpu served by a DeviceClass of the same input (KEP-5004).
  const std::string deviceClass =
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\nspec:\n"
      "  extendedResourceName: nvidia.com/gpu\n  selectors: [{cel: {expression: \"device.driver == "
      "'gpu.nvidia.com'\"}}]\n---\n";
  EXPECT_THAT(rulesHit(judgeInput(deviceClass + pod("  nodeName: n1\n", "{limits: {nvidia.com/gpu: 1}}"), kRule)),
              ElementsAre("dra-claim-with-node-name"));
}

TEST(DraClaimWithNodeName, ADevicePluginGpuWithNodeNameRuns) {
  // The kubelet's device manager allocates device-plugin GPUs itself.
  EXPECT_THAT(judgeYaml(pod("  nodeName: n1\n", "{limits: {nvidia.com/gpu: 1}}"), kRule), IsEmpty());
}

TEST(DraClaimWithNodeName, ClaimsWithoutNodeNameOrWithAnEmptyOneAreTheSchedulersJob) {
  EXPECT_THAT(judgeYaml(pod(kClaim, "{claims: [{name: gpu}]}"), kRule), IsEmpty());
  EXPECT_THAT(judgeYaml(pod("  nodeName: \"\"\n" + std::string(kClaim), "{claims: [{name: gpu}]}"), kRule),
              IsEmpty());
}

TEST(DraClaimWithNodeName, AWorkloadTemplateWithNodeNameCreatesSuchPods) {
  const std::string job = R"(apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      nodeName: gpu-node-1
      restartPolicy: Never
      resourceClaims: [{name: gpu, resourceClaimTemplateName: single-gpu}]
      containers:
      - name: app
        image: busybox
        resources: {claims: [{name: gpu}]}
)";
  const auto f = judgeYaml(job, kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("dra-claim-with-node-name"));
  EXPECT_EQ(f[0].field(), "spec.template.spec.nodeName");
}

TEST(DraClaimWithNodeName, APodTheSchedulerAlreadyBoundIsNotTheAuthorsNodeName) {
  // kubectl get pods -o yaml: the scheduler wrote nodeName.
  const std::string base = pod("  nodeName: gpu-node-1\n" + std::string(kClaim), "{claims: [{name: gpu}]}");
  EXPECT_THAT(judgeYaml(base + "status: {phase: Running}\n", kRule), IsEmpty());
  EXPECT_THAT(judgeYaml(base + "status:\n  phase: Pending\n  conditions: [{type: PodScheduled, status: \"True\"}]\n",
                        kRule),
              IsEmpty());
  // Pending and never scheduled: the author's nodeName.
  EXPECT_THAT(rulesHit(judgeYaml(base + "status: {phase: Pending}\n", kRule)), ElementsAre("dra-claim-with-node-name"));
}

}  // namespace
}  // namespace gpuguard
