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

// Red team 35 D7: kube-controller-manager's resourceclaim controller reserves
// an already allocated claim for a pod with spec.nodeName (syncPod,
// reserveForPod), so such a pod starts when its claim by name is allocated on
// that node. The facts decide; a claim they do not hold is a warning.
std::string sharedClaim(const std::string& status) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared-gpu, namespace: default}\n"
         "spec:\n  devices:\n    requests:\n    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}\n" + status +
         "---\n";
}
std::string allocatedOn(const std::string& node) {
  return "status:\n  allocation:\n    nodeSelector:\n      nodeSelectorTerms:\n"
         "      - matchFields: [{key: metadata.name, operator: In, values: [" + node + "]}]\n";
}
const std::string kProfiler =
    pod("  nodeName: gpu-1\n  resourceClaims: [{name: gpu, resourceClaimName: shared-gpu}]\n", "{claims: [{name: gpu}]}");

TEST(DraClaimWithNodeName, AClaimByNameAllocatedOnThatNodeIsReservedForThePodWhichStarts) {
  const auto cluster = testing::clusterOf(sharedClaim(allocatedOn("gpu-1")));
  EXPECT_THAT(testing::judgeWithCluster(kProfiler, *cluster, kRule), IsEmpty());
}

TEST(DraClaimWithNodeName, AClaimByNameNotAllocatedOrAllocatedElsewhereNeverIs) {
  const auto elsewhere = testing::clusterOf(sharedClaim(allocatedOn("gpu-2")));
  const auto f = testing::judgeWithCluster(kProfiler, *elsewhere, kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("dra-claim-with-node-name"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("ResourceClaim shared-gpu allocated on gpu-2"));
  const auto unallocated = testing::clusterOf(sharedClaim(""));
  const auto g = testing::judgeWithCluster(kProfiler, *unallocated, kRule);
  ASSERT_THAT(rulesHit(g), ElementsAre("dra-claim-with-node-name"));
  EXPECT_EQ(g[0].severity, Severity::Error);
  EXPECT_THAT(g[0].message(), HasSubstr("ResourceClaim shared-gpu not allocated"));
}

TEST(DraClaimWithNodeName, AClaimByNameNeitherTheInputNorTheFactsHoldIsAWarning) {
  const auto f = judgeYaml(kProfiler, kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("dra-claim-with-node-name"));
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_THAT(f[0].message(), HasSubstr("must already be allocated on node gpu-1, which kube-controller-manager then "
                                        "reserves for the pod"));
  // Beside a template's claim, which nothing allocates, it is an error.
  const auto both = judgeYaml(pod("  nodeName: gpu-1\n  resourceClaims: [{name: gpu, resourceClaimName: shared-gpu}, "
                                  "{name: more, resourceClaimTemplateName: single-gpu}]\n",
                                  "{claims: [{name: gpu}, {name: more}]}"),
                              kRule);
  ASSERT_THAT(rulesHit(both), ElementsAre("dra-claim-with-node-name"));
  EXPECT_EQ(both[0].severity, Severity::Error);
  EXPECT_THAT(both[0].message(), HasSubstr("claim \"more\""));
}

}  // namespace
}  // namespace gpuguard
