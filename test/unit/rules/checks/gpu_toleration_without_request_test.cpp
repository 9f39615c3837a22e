// gpu-toleration-without-request: a pod that tolerates the GPU taint but asks
// for no GPU squats on GPU nodes. DaemonSets are exempt.
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

const Policy kSquatOnly = onlyRules({"gpu-toleration-without-request"});

const std::string kGpuToleration = "  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n";

// A workload of `kind` whose pod has these tolerations and this container body.
std::string workload(const std::string& kind, const std::string& tolerations, const std::string& container,
                     const std::string& extraSpec = "") {
  const std::string spec = "tolerations:\n" + tolerations + extraSpec + "containers:\n- name: c\n  image: busybox\n" +
                           container;
  auto indent = [](const std::string& text, const std::string& by) {
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t nl = text.find('\n', start);
      if (nl == std::string::npos) nl = text.size();
      out += by + text.substr(start, nl - start) + "\n";
      start = nl + 1;
    }
    return out;
  };
  if (kind == "Pod") return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + indent(spec, "  ");
  return "apiVersion: apps/v1\nkind: " + kind + "\nmetadata: {name: w}\nspec:\n  template:\n    spec:\n" +
         indent(spec, "      ");
}

std::vector<Finding> judge(const std::string& yaml, const Policy& policy = kSquatOnly) {
  return judgeYaml(yaml, policy);
}

TEST(GpuTolerationWithoutRequest, ADeploymentThatToleratesTheGpuTaintWithoutAGpuSquats) {
  const auto f = judge(workload("Deployment", kGpuToleration, ""));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "gpu-toleration-without-request");
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].field(), "spec.template.spec.tolerations[0]");
  EXPECT_THAT(f[0].message(), HasSubstr("tolerates the GPU node taint nvidia.com/gpu:NoSchedule, but no container asks "
                                      "for a GPU"));
  EXPECT_THAT(f[0].message(), HasSubstr("remove the toleration"));
}

TEST(GpuTolerationWithoutRequest, APodThatAsksForAGpuIsFine) {
  EXPECT_THAT(judge(workload("Pod", kGpuToleration, "  resources:\n    limits:\n      nvidia.com/gpu: 1\n")),
              IsEmpty());
}

TEST(GpuTolerationWithoutRequest, AZeroGpuRequestDoesNotCount) {
  EXPECT_THAT(rulesHit(judge(workload("Pod", kGpuToleration, "  resources:\n    limits:\n      nvidia.com/gpu: 0\n"))),
              ElementsAre("gpu-toleration-without-request"));
}

TEST(GpuTolerationWithoutRequest, MigAndSharedGpusAndOtherGpuResourcesCount) {
  for (const char* r : {"nvidia.com/mig-1g.10gb", "nvidia.com/gpu.shared", "nvidia.com/gpumem", "amd.com/gpu",
                        "gpu.intel.com/i915"}) {
    EXPECT_THAT(judge(workload("Pod", kGpuToleration,
                               std::string("  resources:\n    limits:\n      ") + r + ": 1\n")),
                IsEmpty())
        << r;
  }
}

TEST(GpuTolerationWithoutRequest, AnInitContainerGpuCounts) {
  const std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  tolerations:\n" + kGpuToleration +
      "  initContainers:\n  - name: warmup\n    image: busybox\n    resources: {limits: {nvidia.com/gpu: 1}}\n"
      "  containers:\n  - {name: c, image: busybox}\n";
  EXPECT_THAT(judge(yaml), IsEmpty());
}

TEST(GpuTolerationWithoutRequest, DraResourceClaimsCount) {
  EXPECT_THAT(judge(workload("Pod", kGpuToleration, "  resources:\n    claims:\n    - name: gpu\n",
                             "resourceClaims:\n- {name: gpu, resourceClaimTemplateName: single-gpu}\n")),
              IsEmpty());
}

TEST(GpuTolerationWithoutRequest, KaiGpuSharingAnnotationsCount) {
  const std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {gpu-fraction: \"0.5\"}\nspec:\n"
      "  tolerations:\n" +
      kGpuToleration + "  containers:\n  - {name: c, image: busybox}\n";
  EXPECT_THAT(judge(yaml), IsEmpty());
}

TEST(GpuTolerationWithoutRequest, AnyDeviceRequestCountsSinceItMayBeAGpuUnderAnotherName) {
  // The GPU Operator's plugin validator: the resource name is filled in later.
  EXPECT_THAT(judge(workload("Pod", kGpuToleration, "  resources:\n    limits:\n      FILLED_BY_VALIDATOR: 1\n")),
              IsEmpty());
  EXPECT_THAT(rulesHit(judge(workload("Pod", kGpuToleration,
                                      "  resources:\n    limits:\n      cpu: 2\n      memory: 1Gi\n"
                                      "      hugepages-2Mi: 100Mi\n"))),
              ElementsAre("gpu-toleration-without-request"));
}

TEST(GpuTolerationWithoutRequest, GpusHandedOutByTheNvidiaRuntimeCount) {
  // The GPU Operator's CUDA validator: NVIDIA_VISIBLE_DEVICES and a CDI annotation.
  EXPECT_THAT(judge(workload("Pod", kGpuToleration, "  env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]\n")),
              IsEmpty());
  EXPECT_THAT(rulesHit(judge(workload("Pod", kGpuToleration,
                                      "  env: [{name: NVIDIA_VISIBLE_DEVICES, value: void}]\n"))),
              ElementsAre("gpu-toleration-without-request"));
  const std::string cdi =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
      "    nvidia.cdi.k8s.io/container.cuda-validation: management.nvidia.com/gpu=all\nspec:\n  tolerations:\n" +
      kGpuToleration + "  containers:\n  - {name: c, image: busybox}\n";
  EXPECT_THAT(judge(cdi), IsEmpty());
}

TEST(GpuTolerationWithoutRequest, DaemonSetsAreExempt) {
  EXPECT_THAT(judge(workload("DaemonSet", kGpuToleration, "")), IsEmpty());
}

TEST(GpuTolerationWithoutRequest, PodsOwnedByADaemonSetAreExempt) {
  const std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: dcgm-exporter-x7k2\n"
      "  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: dcgm-exporter, uid: u}]\nspec:\n"
      "  tolerations:\n" +
      kGpuToleration + "  containers:\n  - {name: c, image: busybox}\n";
  EXPECT_THAT(judge(yaml), IsEmpty());
}

TEST(GpuTolerationWithoutRequest, AWildcardTolerationIsNotCounted) {
  EXPECT_THAT(judge(workload("Deployment", "  - {operator: Exists}\n", "")), IsEmpty());
}

TEST(GpuTolerationWithoutRequest, ATolerationOfAnotherTaintOrEffectIsFine) {
  EXPECT_THAT(judge(workload("Deployment", "  - {key: dedicated, operator: Exists, effect: NoSchedule}\n", "")),
              IsEmpty());
  EXPECT_THAT(judge(workload("Deployment", "  - {key: nvidia.com/gpu, operator: Exists, effect: NoExecute}\n", "")),
              IsEmpty());
}

TEST(GpuTolerationWithoutRequest, ATolerationWithAnEmptyEffectTolerates) {
  EXPECT_THAT(rulesHit(judge(workload("Deployment", "  - {key: nvidia.com/gpu, operator: Exists}\n", ""))),
              ElementsAre("gpu-toleration-without-request"));
}

TEST(GpuTolerationWithoutRequest, EqualOnlyToleratesAValueThePolicyNames) {
  const std::string equal = "  - {key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}\n";
  EXPECT_THAT(judge(workload("Deployment", equal, "")), IsEmpty());  // default taint: value unknown
  Policy withValue = kSquatOnly;
  withValue.gpuTaints = {{"nvidia.com/gpu", std::string("present"), "NoSchedule"}};
  EXPECT_THAT(rulesHit(judge(workload("Deployment", equal, ""), withValue)),
              ElementsAre("gpu-toleration-without-request"));
}

TEST(GpuTolerationWithoutRequest, ThePolicyTaintsAreUsed) {
  Policy custom = kSquatOnly;
  custom.gpuTaints = {{"gpu", std::nullopt, "NoSchedule"}};
  EXPECT_THAT(judge(workload("Deployment", kGpuToleration, ""), custom), IsEmpty());
  EXPECT_THAT(rulesHit(judge(workload("Deployment", "  - {key: gpu, operator: Exists}\n", ""), custom)),
              ElementsAre("gpu-toleration-without-request"));
}

TEST(GpuTolerationWithoutRequest, OneFindingPerPod) {
  const std::string two = kGpuToleration + "  - {key: nvidia.com/gpu, operator: Exists}\n";
  EXPECT_THAT(judge(workload("Deployment", two, "")), ::testing::SizeIs(1));
}

TEST(GpuTolerationWithoutRequest, CustomResourceGroupsAreJudgedOneByOne) {
  const std::string ray =
      "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\nspec:\n"
      "  headGroupSpec:\n    template:\n      spec:\n        tolerations:\n"
      "        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
      "        containers:\n        - {name: head, image: rayproject/ray}\n"
      "  workerGroupSpecs:\n  - groupName: gpu\n    template:\n      spec:\n        tolerations:\n"
      "        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
      "        containers:\n        - name: w\n          image: rayproject/ray\n"
      "          resources: {limits: {nvidia.com/gpu: 1}}\n";
  const auto f = judge(ray);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.headGroupSpec.template.spec.tolerations[0]");
}

TEST(GpuTolerationWithoutRequest, IsOnByDefaultAsAWarning) {
  const auto mine = testing::only(judgeYaml(workload("Deployment", kGpuToleration, "")),
                                  "gpu-toleration-without-request");
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].severity, Severity::Warning);
}


}  // namespace
}  // namespace gpuguard
