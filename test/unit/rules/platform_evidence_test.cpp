// gpu-missing-toleration on a pod that names its platform (red team 33 C7):
// GKE samples select cloud.google.com/gke-accelerator, a label only GKE puts
// on its nodes, where the ExtendedResourceToleration plugin adds the GPU
// toleration; AKS samples tolerate sku=gpu, the taint AKS's docs prescribe.
// Judged by the generic policy, the finding names the --platform that
// judges them as their platform does, and is a warning when that platform
// needs no toleration of their own - never dropped, never an error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::judgeYaml;
using testing::onlyRules;

const Policy kGeneric = onlyRules({"gpu-missing-toleration"});

Policy onPlatform(const char* platform) {
  Policy p = Policy::fromJson(nlohmann::json::object(), "test", platform);
  p.rules = kGeneric.rules;
  return p;
}

// A Deployment whose pod has these lines under spec (6-space indented) and
// one container asking `resources`.
std::string deployment(const std::string& specLines, const std::string& resources = "{limits: {nvidia.com/gpu: 1}}") {
  return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: tfserve}\nspec:\n  template:\n    spec:\n" +
         specLines + "      containers:\n      - name: c\n        image: tensorflow/serving:2.13.1-gpu\n" +
         "        resources: " + resources + "\n";
}

const std::string kGkeAccelerator = "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n";

TEST(GpuMissingTolerationOnANamedPlatform, AGkeSelectedPodIsAWarningThatNamesPlatformGke) {
  // GoogleCloudPlatform/kubernetes-engine-samples
  // ai-ml/gke-online-serving-single-gpu/src/gke-config/deployment-tfserve.yaml, in short.
  const auto f = judgeYaml(deployment(kGkeAccelerator), kGeneric);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_THAT(f[0].message(), HasSubstr("the pod names GKE (nodeSelector cloud.google.com/gke-accelerator=nvidia-l4, "
                                        "a label only GKE puts on its nodes)"));
  EXPECT_THAT(f[0].message(), HasSubstr("--platform gke (policy key platform: gke)"));
  EXPECT_THAT(judgeYaml(deployment(kGkeAccelerator), onPlatform("gke")), IsEmpty());
}

TEST(GpuMissingTolerationOnANamedPlatform, ADraClaimOnGkeGetsNoAutomaticTolerationSoGkeDoesNotExcuseIt) {
  // ExtendedResourceToleration adds tolerations for extended resources only
  // (the claim is judged by its name alone here, a warning for that reason).
  const std::string claim = kGkeAccelerator + "      resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]\n";
  const auto f = judgeYaml(deployment(claim, "{claims: [{name: gpu}]}"), kGeneric);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("judge it as on GKE with --platform gke"));
  EXPECT_THAT(f[0].message(), Not(HasSubstr("needs no toleration of its own")));
}

TEST(GpuMissingTolerationOnANamedPlatform, AnAksTolerationOfSkuGpuNamesPlatformAks) {
  // Azure/karpenter-provider-azure examples/workloads/samples-mnist.yaml, in short.
  const std::string sku = "      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]\n";
  const auto f = judgeYaml(deployment(sku), kGeneric);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_THAT(f[0].message(), HasSubstr("--platform aks (policy key platform: aks)"));
  EXPECT_THAT(judgeYaml(deployment(sku), onPlatform("aks")), IsEmpty());
}

TEST(GpuMissingTolerationOnANamedPlatform, ALabelOnlyOneOfTheOredTermsRequiresNamesNothing) {
  const std::string either =
      "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
      "            nodeSelectorTerms:\n"
      "            - matchExpressions: [{key: cloud.google.com/gke-accelerator, operator: In, values: [nvidia-l4]}]\n"
      "            - matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4]}]\n";
  const auto f = judgeYaml(deployment(either), kGeneric);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), Not(HasSubstr("--platform")));
}

TEST(GpuMissingTolerationOnANamedPlatform, WithoutAPlatformLabelTheGenericErrorStands) {
  const auto f = judgeYaml(deployment("      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"), kGeneric);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), Not(HasSubstr("--platform")));
}

}  // namespace
}  // namespace gpuguard
