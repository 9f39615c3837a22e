// Platform presets: `platform: <name>` in the policy (and gpuguard-lint
// --platform) is a bundle of cluster facts (kubernetes-gpu-semantics.md
// §14.17): which taint GPU nodes carry, whether the API server adds GPU
// tolerations, which labels nodes have. Keys written beside it win.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rules/k8s/taints.h"
#include "test/unit/lint/lint_test_support.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using nlohmann::json;
using testing::judgeYaml;
using testing::only;
using testing::rulesHit;

Policy platform(const std::string& name, json extra = json::object()) {
  extra["platform"] = name;
  return Policy::fromJson(extra, "test.yaml");
}

// A Pod asking for one GPU with the given pod-level block (indented two spaces).
std::string gpuPod(const std::string& scheduling) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + scheduling +
         "  containers:\n  - name: c\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
         "    resources:\n      limits:\n        nvidia.com/gpu: 1\n";
}

TEST(PlatformPresets, GenericIsTheDefaultPolicy) {
  const Policy p = platform("generic");
  const Policy d;
  EXPECT_EQ(p.platform, "generic");
  EXPECT_EQ(p.assumeExtendedResourceToleration, d.assumeExtendedResourceToleration);
  EXPECT_EQ(p.driverPinLabels, d.driverPinLabels);
  EXPECT_TRUE(p.gfdLabels);
}

TEST(PlatformPresets, GkeAddsTheGpuTolerationToPodsThatRequestGpus) {
  const Policy p = platform("gke");
  EXPECT_TRUE(p.assumeExtendedResourceToleration);
  ASSERT_EQ(p.gpuTaints.size(), 1u);
  EXPECT_EQ(describeTaint(p.gpuTaints[0]), "nvidia.com/gpu=present:NoSchedule");
  // A Pod needs no toleration there, nor the Pods a Deployment creates.
  EXPECT_THAT(only(judgeYaml(gpuPod(""), p), "gpu-missing-toleration"), IsEmpty());
  const std::string deployment =
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
      "      containers:\n      - {name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}\n";
  EXPECT_THAT(only(judgeYaml(deployment, p), "gpu-missing-toleration"), IsEmpty());
  // Without the preset the same Deployment is reported.
  EXPECT_THAT(rulesHit(only(judgeYaml(deployment), "gpu-missing-toleration")), ElementsAre("gpu-missing-toleration"));
}

TEST(PlatformPresets, GkeCountsTheDriverChannelAsADriverPin) {
  const auto f = judgeYaml(gpuPod("  nodeSelector: {cloud.google.com/gke-gpu-driver-version: latest}\n"), platform("gke"));
  EXPECT_THAT(only(f, "gpu-missing-driver-pin"), IsEmpty());
}

TEST(PlatformPresets, AksAddsNoTolerationAndTaintsWithSku) {
  const Policy p = platform("aks");
  EXPECT_FALSE(p.assumeExtendedResourceToleration);
  const auto missing = only(judgeYaml(gpuPod(""), p), "gpu-missing-toleration");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_THAT(missing[0].message(), HasSubstr("sku=gpu:NoSchedule"));
  EXPECT_THAT(only(judgeYaml(gpuPod("  tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]\n"), p),
                   "gpu-missing-toleration"),
              IsEmpty());
}

TEST(PlatformPresets, EksAutoModePinsByNodePoolAndHasNoGfdLabels) {
  const Policy p = platform("eks-auto-mode");
  EXPECT_TRUE(p.assumeExtendedResourceToleration);
  EXPECT_FALSE(p.gfdLabels);
  EXPECT_THAT(only(judgeYaml(gpuPod("  nodeSelector: {karpenter.sh/nodepool: gpu}\n"), p), "gpu-missing-driver-pin"),
              IsEmpty());
  const auto unpinned = only(judgeYaml(gpuPod(""), p), "gpu-missing-driver-pin");
  ASSERT_EQ(unpinned.size(), 1u);
  EXPECT_THAT(unpinned[0].message(), HasSubstr("add nodeSelector karpenter.sh/nodepool: \"<value>\""));
}

// OpenShift's API server turns on PodNodeSelector and PodTolerationRestriction
// (off upstream) and runs OriginPodNodeEnvironment: a namespace's
// openshift.io/node-selector reaches its pods there.
TEST(PlatformPresets, OpenShiftCreditsTheNamespacesNodeSelectorAndDefaultTolerations) {
  const Policy p = platform("openshift");
  EXPECT_TRUE(p.assumePodNodeSelector);
  EXPECT_TRUE(p.assumePodTolerationRestriction);
  EXPECT_FALSE(p.assumeExtendedResourceToleration);
  const std::string pod =
      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n  annotations:\n"
      "    openshift.io/node-selector: nvidia.com/cuda.driver.major=570\n---\n"
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n"
      "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
      "  containers:\n  - {name: c, image: nvidia/cuda:12.4.1-base-ubuntu22.04, resources: {limits: {nvidia.com/gpu: 1}}}\n";
  EXPECT_THAT(only(testing::judgeInput(pod, p), "gpu-missing-driver-pin"), IsEmpty());
  const auto generic = only(testing::judgeInput(pod), "gpu-missing-driver-pin");
  ASSERT_EQ(generic.size(), 1u);
  EXPECT_THAT(generic[0].message(), HasSubstr("set assumePodNodeSelector: true"));
}

TEST(PlatformPresets, OnEksAutoModeAGfdLabelSelectorSelectsNoNode) {
  const auto f = only(judgeYaml(gpuPod("  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"), platform("eks-auto-mode")),
                      "gpu-label-value");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.nodeSelector[nvidia.com/gpu.product]");
  EXPECT_THAT(f[0].message(), HasSubstr("the platform (eks-auto-mode) runs no GPU Feature Discovery, so no node carries "
                                      "nvidia.com/gpu.product"));
  const std::string affinity =
      "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "        nodeSelectorTerms:\n        - matchExpressions:\n"
      "          - {key: nvidia.com/cuda.driver-version.major, operator: In, values: [\"580\", \"570\"]}\n"
      "          - {key: nvidia.com/gpu.product, operator: NotIn, values: [Tesla-T4]}\n";
  const auto a = only(judgeYaml(gpuPod(affinity), platform("eks-auto-mode")), "gpu-label-value");
  ASSERT_EQ(a.size(), 1u);  // once for the In; a NotIn excludes nothing
  EXPECT_EQ(a[0].field(),
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            ".matchExpressions[0].values[0]");
  // The same selector elsewhere is fine: GFD labels the nodes.
  EXPECT_THAT(only(judgeYaml(gpuPod("  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"), platform("eks")),
                   "gpu-label-value"),
              IsEmpty());
}

TEST(PlatformPresets, KeysWrittenBesideThePlatformWin) {
  const Policy p = platform("gke", {{"assumeExtendedResourceToleration", false},
                                    {"gpuTaints", json::array({{{"key", "gpu"}, {"effect", "NoSchedule"}}})}});
  EXPECT_EQ(p.platform, "gke");
  EXPECT_FALSE(p.assumeExtendedResourceToleration);
  ASSERT_EQ(p.gpuTaints.size(), 1u);
  EXPECT_EQ(p.gpuTaints[0].key, "gpu");
  // What the preset sets and the file does not stays.
  EXPECT_EQ(p.driverPinLabels.front(), "cloud.google.com/gke-gpu-driver-version");
}

TEST(PlatformPresets, ACallersPlatformReplacesTheDocumentsOwn) {
  const Policy p = Policy::fromJson({{"platform", "gke"}, {"maxGpusPerNode", 4}}, "test.yaml", "aks");
  EXPECT_EQ(p.platform, "aks");
  EXPECT_FALSE(p.assumeExtendedResourceToleration);
  EXPECT_EQ(p.maxGpusPerNode, 4);
}

TEST(PlatformPresets, AnUnknownPlatformNamesTheKnownOnes) {
  try {
    (void)platform("gcp");
    FAIL() << "no error";
  } catch (const PolicyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("test.yaml: platform: unknown platform \"gcp\" (known: generic, gke, eks, "
                                    "eks-auto-mode, aks, openshift)"));
  }
  EXPECT_THROW((void)Policy::fromJson({{"platform", 3}}, "test.yaml"), PolicyError);
}

TEST(PlatformPresets, EveryPresetIsDocumented) {
  for (const PlatformPreset& p : platformPresets()) {
    EXPECT_FALSE(p.facts.empty()) << p.name;
    EXPECT_EQ(platform(std::string(p.name)).platform, p.name);
  }
}

}  // namespace

namespace lint_test {
namespace {

using ::testing::HasSubstr;

TEST(LintPlatform, ThePlatformFlagAppliesThePreset) {
  TempDir dir;
  dir.write("pod.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
            "  nodeSelector: {cloud.google.com/gke-gpu-driver-version: latest}\n"
            "  containers:\n  - {name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}\n");
  // Generic: no toleration (a warning naming --platform gke: the pod selects a GKE label), no GFD driver pin.
  const RunResult generic = runLint({"--fail-on", "warning", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(generic.exitCode, 1);
  EXPECT_THAT(generic.out, HasSubstr("--platform gke"));
  const RunResult gke = runLint({"--platform", "gke", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(gke.exitCode, 0) << gke.out << gke.err;
}

TEST(LintPlatform, AnUnknownPlatformIsBadUsage) {
  TempDir dir;
  dir.write("pod.yaml", kGoodPod);
  const RunResult r = runLint({"--platform", "gcp", "pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown platform \"gcp\" (known: generic, gke, eks, eks-auto-mode, aks, openshift)"));
}

TEST(LintPlatform, APolicyFileWithAnUnknownPlatformIsAnInputError) {
  TempDir dir;
  dir.write("pod.yaml", kGoodPod);
  dir.write(".gpuguard.yaml", "platform: gcp\n");
  const RunResult r = runLint({"pod.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr(".gpuguard.yaml: platform: unknown platform \"gcp\""));
}

}  // namespace
}  // namespace lint_test
}  // namespace gpuguard
