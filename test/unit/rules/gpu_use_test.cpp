// One notion of "this pod uses GPUs" (rules/gpu_use.h), held the same by
// every rule: GPUs from DRA claims, from the implicit extended resource
// deviceclass.resource.kubernetes.io/<class> and from a DRA-backed extended
// resource put the pod on the GPU nodes like nvidia.com/gpu does, so the
// node taint (device taints do not replace it, KEP-5055), the driver pin and
// the node's GPU count apply (kubernetes-gpu-semantics.md §14.6, §14.7).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/gpu_use.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::judgeInput;
using testing::onlyRules;
using testing::rulesHit;

const Policy kNodeRules = onlyRules({"gpu-missing-toleration", "gpu-missing-driver-pin", "gpu-count-exceeds-node",
                                     "gpu-toleration-without-request"});

constexpr const char* kToleration = "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n";
constexpr const char* kDriverPin = "  nodeSelector: {nvidia.com/cuda.driver-version.major: \"580\"}\n";

std::string claimTemplate(const std::string& name, const std::string& deviceClass, int count) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: " + name +
         "}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: r\n        exactly: {deviceClassName: " +
         deviceClass + ", count: " + std::to_string(count) + "}\n";
}

// A Pod whose one container uses the pod claim "c" from `templateName`, with
// the given extra pod-level lines.
std::string claimPod(const std::string& templateName, const std::string& podLines) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + podLines +
         "  resourceClaims: [{name: c, resourceClaimTemplateName: " + templateName +
         "}]\n  containers:\n  - name: app\n    image: nvidia/cuda:13.0.0-base-ubuntu24.04\n"
         "    resources: {claims: [{name: c}]}\n";
}

std::string limitsPod(const std::string& limits, const std::string& podLines) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + podLines +
         "  containers:\n  - name: app\n    image: nvidia/cuda:13.0.0-base-ubuntu24.04\n    resources: {limits: " +
         limits + "}\n";
}

// --- GPUs from DRA claims -------------------------------------------------------

TEST(GpuUse, APodWhoseGpusComeFromAClaimStillNeedsTheGpuNodeTolerationAndDriverPin) {
  const auto f = judgeInput(claimTemplate("one-gpu", "gpu.nvidia.com", 1) + "---\n" + claimPod("one-gpu", ""),
                            kNodeRules);
  EXPECT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  EXPECT_EQ(f[0].field(), "spec.tolerations");
  EXPECT_THAT(f[0].message(), HasSubstr("no toleration for the GPU node taint nvidia.com/gpu:NoSchedule"));
}

TEST(GpuUse, AClaimPodWithTheTolerationAndAPinIsClean) {
  EXPECT_THAT(rulesHit(judgeInput(claimTemplate("one-gpu", "gpu.nvidia.com", 1) + "---\n" +
                                      claimPod("one-gpu", std::string(kToleration) + kDriverPin),
                                  kNodeRules)),
              IsEmpty());
}

TEST(GpuUse, AClaimOfANonGpuDeviceClassIsNoGpu) {
  // An IMEX channel (ComputeDomain) claim: not a GPU, so neither the GPU
  // taint nor a driver pin concerns the pod.
  EXPECT_THAT(rulesHit(judgeInput(claimTemplate("imex-channel", "compute-domain-default-channel.nvidia.com", 1) +
                                      "---\n" + claimPod("imex-channel", ""),
                                  kNodeRules)),
              IsEmpty());
}

TEST(GpuUse, TheTemplateInTheInputDecidesOverTheClaimsName) {
  // Named "gpu-..." but asking an RDMA NIC class: the template says no GPU.
  EXPECT_THAT(rulesHit(judgeInput(claimTemplate("gpu-rdma-nic", "rdma.example.com", 1) + "---\n" +
                                      claimPod("gpu-rdma-nic", ""),
                                  kNodeRules)),
              IsEmpty());
}

TEST(GpuUse, WithoutItsTemplateAClaimCountsAsAGpuWhenItsNameSaysSo) {
  EXPECT_THAT(rulesHit(judgeInput(claimPod("single-gpu", ""), kNodeRules)),
              ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  EXPECT_THAT(rulesHit(judgeInput(claimPod("rdma-nic", ""), kNodeRules)), IsEmpty());
}

TEST(GpuUse, ExtendedResourceTolerationAddsNothingForClaims) {
  // The admission plugin tolerates extended resources named in requests, never claims.
  Policy policy = kNodeRules;
  policy.assumeExtendedResourceToleration = true;
  EXPECT_THAT(rulesHit(judgeInput(claimTemplate("one-gpu", "gpu.nvidia.com", 1) + "---\n" +
                                      claimPod("one-gpu", kDriverPin),
                                  policy)),
              ElementsAre("gpu-missing-toleration"));
  EXPECT_THAT(rulesHit(judgeInput(limitsPod("{nvidia.com/gpu: 1}", kDriverPin), policy)), IsEmpty());
}

TEST(GpuUse, ClaimsBeyondAnyNodesGpusAreReported) {
  const auto f = judgeInput(claimTemplate("sixteen", "gpu.nvidia.com", 16) + "---\n" +
                                claimPod("sixteen", std::string(kToleration) + kDriverPin),
                            kNodeRules);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-count-exceeds-node"));
  EXPECT_EQ(f[0].field(), "spec.resourceClaims[0]");
  EXPECT_EQ(f[0].value, "16");
  EXPECT_THAT(f[0].message(), HasSubstr("the pod's resourceClaims allocate 16 whole GPUs on its node (c: 16)"));
  EXPECT_THAT(rulesHit(judgeInput(claimTemplate("eight", "gpu.nvidia.com", 8) + "---\n" +
                                      claimPod("eight", std::string(kToleration) + kDriverPin),
                                  kNodeRules)),
              IsEmpty());
}

TEST(GpuUse, MigSlicesFromClaimsAreNotCountedAsWholeGpus) {
  EXPECT_THAT(rulesHit(judgeInput(claimTemplate("slices", "mig.nvidia.com", 14) + "---\n" +
                                      claimPod("slices", std::string(kToleration) + kDriverPin),
                                  kNodeRules)),
              IsEmpty());
}

// --- GPUs from extended resources DRA serves ---------------------------------------

TEST(GpuUse, TheImplicitDeviceClassResourceOfAGpuClassIsAGpu) {
  const std::string limits = "{deviceclass.resource.kubernetes.io/gpu.nvidia.com: 1}";
  EXPECT_THAT(rulesHit(judgeInput(limitsPod(limits, ""), kNodeRules)),
              ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  EXPECT_THAT(rulesHit(judgeInput(limitsPod(limits, std::string(kToleration) + kDriverPin), kNodeRules)), IsEmpty());
  const auto f = judgeInput(limitsPod("{deviceclass.resource.kubernetes.io/gpu.nvidia.com: 9}",
                                      std::string(kToleration) + kDriverPin),
                            kNodeRules);
  EXPECT_THAT(rulesHit(f), ElementsAre("gpu-count-exceeds-node"));
}

TEST(GpuUse, AnExtendedResourceAGpuDeviceClassOfTheInputServesIsAGpu) {
  const std::string deviceClass =
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: accel.example.com}\nspec:\n"
      "  selectors: [{cel: {expression: \"device.driver == 'gpu.nvidia.com'\"}}]\n"
      "  extendedResourceName: example.com/accelerator\n";
  const std::string pod = limitsPod("{example.com/accelerator: 1}", "");
  EXPECT_THAT(rulesHit(judgeInput(deviceClass + "---\n" + pod, kNodeRules)),
              ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  // Without the class, example.com/accelerator is just some device.
  EXPECT_THAT(rulesHit(judgeInput(pod, kNodeRules)), IsEmpty());
}

TEST(GpuUse, GpuSourcesNameEveryWayThePodAsks) {
  InputFacts input;
  input.add(nlohmann::json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
      "metadata": {"name": "two"}, "spec": {"spec": {"devices": {"requests": [{"name": "r",
      "firstAvailable": [{"name": "a", "deviceClassName": "gpu.nvidia.com", "count": 4},
                         {"name": "b", "deviceClassName": "gpu.nvidia.com", "count": 2}]}]}}}})"));
  Policy policy;
  policy.draExtendedResources = {"nvidia.com/gpu"};
  const nlohmann::json pod = nlohmann::json::parse(R"({"apiVersion": "v1", "kind": "Pod", "spec": {
      "resourceClaims": [{"name": "c", "resourceClaimTemplateName": "two"}],
      "containers": [{"name": "app", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1,
          "deviceclass.resource.kubernetes.io/gpu.nvidia.com": 3}}}]}})");
  const std::vector<PodSite> sites = findPodSites(pod);
  ASSERT_EQ(sites.size(), 1u);
  const std::vector<GpuSource> sources = gpuSources(sites[0], GpuFacts{policy, input});
  ASSERT_EQ(sources.size(), 3u);
  EXPECT_EQ(sources[0].kind, GpuSourceKind::DeviceClassResource);
  EXPECT_EQ(sources[0].wholeGpus, 3);
  EXPECT_EQ(sources[1].kind, GpuSourceKind::ExtendedResource);
  EXPECT_TRUE(sources[1].draBacked);  // the policy says a DRA driver serves it
  EXPECT_EQ(sources[2].kind, GpuSourceKind::Claim);
  EXPECT_EQ(sources[2].path.apiPath(), "spec.resourceClaims[0]");
  EXPECT_EQ(sources[2].wholeGpus, 2);  // the fewest of the alternatives
}

// --- the toleration rules agree ------------------------------------------------------

TEST(GpuUse, AToleratingClaimPodIsNotAPodWithoutGpus) {
  EXPECT_THAT(rulesHit(judgeInput(limitsPod("{deviceclass.resource.kubernetes.io/gpu.nvidia.com: 1}",
                                            std::string(kToleration) + kDriverPin),
                                  kNodeRules)),
              IsEmpty());
}

// --- gpuSources is read once per site, for the facts it was asked with ----------

TEST(GpuUse, ASiteAskedAgainWithOtherFactsIsReadWithThoseFacts) {
  const nlohmann::json pod = nlohmann::json::parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[)"
      R"({"name":"app","image":"i","resources":{"limits":{"example.com/accel":"1"}}}]}})");
  const std::vector<PodSite> sites = findPodSites(pod);
  ASSERT_EQ(sites.size(), 1u);
  const InputFacts none;
  const Policy defaults;
  Policy accelIsAGpu;
  accelIsAGpu.gpuResources = {"example.com/accel"};
  EXPECT_THAT(gpuSources(sites[0], GpuFacts{defaults, none}), IsEmpty());
  const std::vector<GpuSource>& accel = gpuSources(sites[0], GpuFacts{accelIsAGpu, none});
  ASSERT_EQ(accel.size(), 1u);
  EXPECT_EQ(accel[0].name, "example.com/accel");
  EXPECT_EQ(&gpuSources(sites[0], GpuFacts{accelIsAGpu, none}), &accel);  // the same facts: read once
  EXPECT_THAT(gpuSources(sites[0], GpuFacts{defaults, none}), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
