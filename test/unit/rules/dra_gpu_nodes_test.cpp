// gpu-missing-toleration with the cluster's facts when DRA serves the GPUs
// (red team 32, B2 and B11): a node whose GPUs a DRA driver publishes in
// ResourceSlices has no GPU in allocatable and may carry no GPU Feature
// Discovery label, yet kube-scheduler places claims there (and, with
// DRAExtendedResource, GA in 1.37, plain nvidia.com/gpu requests a DeviceClass
// serves). Such a node is a GPU node for the pod's DRA GPUs; the policy's
// taint is demanded only where a node that can serve them carries it, and
// never as an error on "no GPU node known" for GPUs DRA may serve.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/gpu_node.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::clusterOf;
using testing::gpuNode;
using testing::judgeWithCluster;
using testing::onlyRules;
using testing::rulesHit;

const Policy kToleration = onlyRules({"gpu-missing-toleration"});

// A node as a kubelet without a device plugin reports it: no GPU resource,
// no GFD label. `taints` is a flow list, "" for none.
std::string draNode(const std::string& name, const std::string& taints = "") {
  return gpuNode({.name = name, .taints = taints, .gpus = "", .gfd = false});
}

// A device-plugin GPU node: 8 nvidia.com/gpu, GFD's label, the usual taint.
std::string pluginNode(const std::string& name) {
  return gpuNode({.name = name, .taints = testing::kGpuPresentTaint});
}

// `devices` devices of `driver` on node `node`.
std::string slice(const std::string& name, const std::string& driver, const std::string& node, int devices = 4) {
  std::string out = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " + name +
                    "}\nspec:\n  driver: " + driver + "\n  nodeName: " + node + "\n  pool: {name: " + node +
                    ", generation: 1, resourceSliceCount: 1}\n  devices:\n";
  for (int i = 0; i < devices; ++i) out += "  - {name: dev-" + std::to_string(i) + "}\n";
  return out + "---\n";
}

std::string gpuClass(const std::string& extendedResourceName = "") {
  return "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\nspec:\n" +
         (extendedResourceName.empty() ? "" : "  extendedResourceName: " + extendedResourceName + "\n") +
         "  selectors: [{cel: {expression: \"device.driver == 'gpu.nvidia.com'\"}}]\n---\n";
}

const std::string kTwoGpuClaim =
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: two-gpus, namespace: ml}\nspec:\n"
    "  devices:\n    requests:\n    - {name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}\n---\n";

// R/m/dra-pod.yaml: the claim above, no toleration.
const std::string kClaimPod =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: dra-pod, namespace: ml}\nspec:\n"
    "  resourceClaims: [{name: g, resourceClaimName: two-gpus}]\n"
    "  containers:\n  - name: c\n    image: nvidia/cuda:12.8.1-runtime-ubuntu24.04\n"
    "    resources: {claims: [{name: g}]}\n";

std::string resourcePod(const std::string& resource, int count) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: ext, namespace: ml}\nspec:\n  containers:\n  - name: c\n"
         "    image: nvidia/cuda:12.8.1-runtime-ubuntu24.04\n    resources: {limits: {" + resource + ": \"" +
         std::to_string(count) + "\"}}\n";
}

const std::string kTainted = "[{key: nvidia.com/gpu, effect: NoSchedule}]";

TEST(GpuMissingTolerationDra, AClaimPodNeedsNoTolerationWhereItsSliceNodeIsUntainted) {
  // B2: kube-scheduler binds the pod to dra-node and allocates two of its devices;
  // no node carries nvidia.com/gpu, so demanding it would deny a pod that runs.
  const auto cluster = clusterOf(draNode("dra-node") + gpuClass() + slice("s", "gpu.nvidia.com", "dra-node") +
                                 kTwoGpuClaim);
  EXPECT_THAT(judgeWithCluster(kClaimPod, *cluster, kToleration), IsEmpty());
}

TEST(GpuMissingTolerationDra, AClaimPodNeedsTheTaintItsSliceNodeCarries) {
  const auto cluster = clusterOf(draNode("dra-node", kTainted) + gpuClass() +
                                 slice("s", "gpu.nvidia.com", "dra-node") + kTwoGpuClaim);
  const auto findings = judgeWithCluster(kClaimPod, *cluster, kToleration);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(findings[0].severity, Severity::Error);
}

TEST(GpuMissingTolerationDra, OnlyASliceOfAGpuDriverMakesAGpuNode) {
  // A NIC driver's devices on an untainted node do not serve the GPU claim: the
  // claim can only be allocated on the tainted GPU node.
  const auto cluster = clusterOf(draNode("gpu-node", kTainted) + draNode("nic-node") + gpuClass() +
                                 slice("g", "gpu.nvidia.com", "gpu-node") +
                                 slice("n", "sriov.example.com", "nic-node") + kTwoGpuClaim);
  EXPECT_THAT(rulesHit(judgeWithCluster(kClaimPod, *cluster, kToleration)), ElementsAre("gpu-missing-toleration"));
}

TEST(GpuMissingTolerationDra, AnExtendedResourceADeviceClassServesReachesTheUntaintedDraNode) {
  // B11: gpu-t (device plugin) is tainted, dra-node is not; with DRAExtendedResource the
  // scheduler serves nvidia.com/gpu on dra-node from the class's devices.
  const auto cluster = clusterOf(pluginNode("gpu-t") + draNode("dra-node") + gpuClass("nvidia.com/gpu") +
                                 slice("s", "gpu.nvidia.com", "dra-node"));
  EXPECT_THAT(judgeWithCluster(resourcePod("nvidia.com/gpu", 2), *cluster, kToleration), IsEmpty());
  // The class's implicit name is served by DRA alone, on the same node.
  EXPECT_THAT(judgeWithCluster(resourcePod("deviceclass.resource.kubernetes.io/gpu.nvidia.com", 2), *cluster,
                               kToleration),
              IsEmpty());
}

TEST(GpuMissingTolerationDra, ADevicePluginPodKeepsItsVerdictBesideDraNodes) {
  // No class serves nvidia.com/gpu: only gpu-t's device plugin does, and gpu-t is tainted.
  const auto cluster =
      clusterOf(pluginNode("gpu-t") + draNode("dra-node") + gpuClass() + slice("s", "gpu.nvidia.com", "dra-node"));
  const auto findings = judgeWithCluster(resourcePod("nvidia.com/gpu", 2), *cluster, kToleration);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(findings[0].severity, Severity::Error);
}

TEST(GpuMissingTolerationDra, NoKnownNodeServingDraGpusIsAWarningNotADenial) {
  // R/offline/facts-dra-only.yaml: a snapshot without ResourceSlices, one untainted node
  // without GPU allocatable. The nodes DRA serves are unknown, so the taint is not
  // known to be on them: a warning that says so.
  const auto cluster = clusterOf(draNode("dra-1") + gpuClass("nvidia.com/gpu"));
  for (const std::string& pod : {resourcePod("nvidia.com/gpu", 8),
                                 resourcePod("deviceclass.resource.kubernetes.io/gpu.nvidia.com", 2)}) {
    const auto findings = judgeWithCluster(pod, *cluster, kToleration);
    ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-missing-toleration")) << pod;
    EXPECT_EQ(findings[0].severity, Severity::Warning);
    EXPECT_THAT(findings[0].message(), HasSubstr("hold no ResourceSlices"));
  }
}

TEST(GpuMissingTolerationDra, ListedSlicesOfNoGpuDriverLeaveDraPodsWithAWarningAndPluginPodsWithTheError) {
  ClusterFactsBuilder builder;
  builder.markListed(FactKind::Node);
  builder.markListed(FactKind::ResourceSlice);  // listed, none published yet
  builder.add(nlohmann::json::parse(R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cpu-1"},
      "status": {"allocatable": {"cpu": "8"}}})"));
  builder.add(nlohmann::json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
      "metadata": {"name": "gpu.nvidia.com"},
      "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}})"));
  const auto cluster = builder.build();
  const auto claim = judgeWithCluster(kTwoGpuClaim + kClaimPod, *cluster, kToleration);
  ASSERT_THAT(rulesHit(claim), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(claim[0].severity, Severity::Warning);
  EXPECT_THAT(claim[0].message(), HasSubstr("show no node a ResourceSlice of a GPU driver names"));
  // A device plugin's GPU pod: the GPU nodes scaled to zero carry the policy's taint.
  const auto plugin = judgeWithCluster(resourcePod("nvidia.com/gpu", 1), *cluster, kToleration);
  ASSERT_THAT(rulesHit(plugin), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(plugin[0].severity, Severity::Error);
}

}  // namespace
}  // namespace gpuguard
