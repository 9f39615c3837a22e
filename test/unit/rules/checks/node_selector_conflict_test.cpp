// node-selector-conflict: its whole specification. A GPU pod whose nodeSelector
// sets a label to another value than an admission plugin merges into it is
// rejected by that plugin: the RuntimeClass plugin (its class's
// scheduling.nodeSelector, on by default), PodNodeSelector (the namespace's
// scheduler.alpha.kubernetes.io/node-selector, only with assumePodNodeSelector)
// and OpenShift's OriginPodNodeEnvironment (openshift.io/node-selector). The
// finding names the label, both values and the plugin's own words.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::clusterOf;
using testing::judgeInput;
using testing::judgeWithCluster;
using testing::onlyRules;
using testing::rulesHit;

const Policy kRule = onlyRules({"node-selector-conflict"});
const Policy kRuleWithPodNodeSelector = [] {
  Policy p = kRule;
  p.assumePodNodeSelector = true;
  return p;
}();

const std::string kH100Class =
    "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: nvidia-h100}\nhandler: nvidia\n"
    "scheduling:\n  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n---\n";

std::string ns(const std::string& annotation) {
  return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n  annotations: {" + annotation + "}\n---\n";
}

// A Pod in namespace ml asking `gpus` nvidia.com/gpu, with pod spec lines `spec`.
std::string pod(const std::string& spec, const std::string& gpus = "1") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: train, namespace: ml}\nspec:\n" + spec +
         "  containers:\n  - name: c\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n"
         "    resources: {limits: {nvidia.com/gpu: \"" + gpus + "\"}}\n";
}

const std::string kA100Selector = "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n";

TEST(NodeSelectorConflict, APodSelectingAnotherValueThanItsRuntimeClassIsRejectedInTheApiServersWords) {
  const auto f = judgeInput(kH100Class + pod("  runtimeClassName: nvidia-h100\n" + kA100Selector), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("node-selector-conflict"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.nodeSelector[nvidia.com/gpu.product]");
  EXPECT_THAT(f[0].message(), HasSubstr("Forbidden: the pod's nodeSelector sets nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB, "
                                        "and RuntimeClass nvidia-h100 sets nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3"));
  EXPECT_THAT(f[0].message(), HasSubstr("\"conflict: runtimeClass.scheduling.nodeSelector[nvidia.com/gpu.product] = "
                                        "NVIDIA-H100-80GB-HBM3; pod.spec.nodeSelector[nvidia.com/gpu.product] = "
                                        "NVIDIA-A100-SXM4-80GB\""));
  EXPECT_THAT(f[0].message(), Not(HasSubstr("FailedCreate")));
}

TEST(NodeSelectorConflict, AWorkloadIsAdmittedButItsControllerCreatesNoPod) {
  const std::string deployment =
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: infer, namespace: ml}\nspec:\n"
      "  selector: {matchLabels: {app: infer}}\n  template:\n    metadata: {labels: {app: infer}}\n    spec:\n"
      "      runtimeClassName: nvidia-h100\n      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
      "      containers:\n      - {name: c, image: vllm/vllm-openai:v0.9.1, resources: {limits: {nvidia.com/gpu: 1}}}\n";
  const auto f = judgeInput(kH100Class + deployment, kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("node-selector-conflict"));
  EXPECT_EQ(f[0].field(), "spec.template.spec.nodeSelector[nvidia.com/gpu.product]");
  EXPECT_THAT(f[0].message(), HasSubstr("so the controller creates no pod of it (FailedCreate events)"));
}

TEST(NodeSelectorConflict, TheSameValueOrAnotherLabelIsMergedWithoutConflict) {
  EXPECT_THAT(judgeInput(kH100Class + pod("  runtimeClassName: nvidia-h100\n"
                                          "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"),
                         kRule),
              IsEmpty());
  EXPECT_THAT(judgeInput(kH100Class + pod("  runtimeClassName: nvidia-h100\n"
                                          "  nodeSelector: {nvidia.com/cuda.driver-version.major: \"570\"}\n"),
                         kRule),
              IsEmpty());
}

TEST(NodeSelectorConflict, AClassNeitherTheInputNorTheFactsHoldConflictsWithNothing) {
  EXPECT_THAT(judgeInput(pod("  runtimeClassName: nvidia-h100\n" + kA100Selector), kRule), IsEmpty());
}

TEST(NodeSelectorConflict, TheClassFromTheClusterFactsCountsToo) {
  const auto cluster = clusterOf(kH100Class);
  const auto f = judgeWithCluster(pod("  runtimeClassName: nvidia-h100\n" + kA100Selector), *cluster, kRule);
  EXPECT_THAT(rulesHit(f), ElementsAre("node-selector-conflict"));
}

TEST(NodeSelectorConflict, TheNamespacesSelectorConflictsOnlyWhereThePolicySaysPodNodeSelectorRuns) {
  const std::string input =
      ns("scheduler.alpha.kubernetes.io/node-selector: \"nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3\"") +
      pod(kA100Selector);
  EXPECT_THAT(judgeInput(input, kRule), IsEmpty()) << "PodNodeSelector is off by default";
  const auto f = judgeInput(input, kRuleWithPodNodeSelector);
  ASSERT_THAT(rulesHit(f), ElementsAre("node-selector-conflict"));
  EXPECT_EQ(f[0].field(), "spec.nodeSelector[nvidia.com/gpu.product]");
  EXPECT_THAT(f[0].message(), HasSubstr("namespace ml's scheduler.alpha.kubernetes.io/node-selector sets "
                                        "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3"));
  EXPECT_THAT(f[0].message(), HasSubstr("\"pod node label selector conflicts with its namespace node label selector\""));
  EXPECT_THAT(f[0].message(), HasSubstr("or name another namespace"));
}

TEST(NodeSelectorConflict, OpenShiftsProjectSelectorIsRejectedInItsPluginsWords) {
  const auto f = judgeInput(ns("openshift.io/node-selector: \"nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3\"") +
                                pod(kA100Selector),
                            kRuleWithPodNodeSelector);
  ASSERT_THAT(rulesHit(f), ElementsAre("node-selector-conflict"));
  EXPECT_THAT(f[0].message(), HasSubstr("\"pod node label selector conflicts with its project node label selector\""));
}

// PodNodeSelector runs before RuntimeClass: a class that sets a label the
// namespace already set to another value is the conflict, at the class's name.
TEST(NodeSelectorConflict, ANamespaceAndARuntimeClassThatDisagreeRejectThePodAtItsRuntimeClassName) {
  const auto f = judgeInput(ns("scheduler.alpha.kubernetes.io/node-selector: \"nvidia.com/gpu.product=NVIDIA-L4\"") +
                                kH100Class + pod("  runtimeClassName: nvidia-h100\n"),
                            kRuleWithPodNodeSelector);
  ASSERT_THAT(rulesHit(f), ElementsAre("node-selector-conflict"));
  EXPECT_EQ(f[0].field(), "spec.runtimeClassName");
  EXPECT_THAT(f[0].message(), HasSubstr("the namespace's node selector sets nvidia.com/gpu.product=NVIDIA-L4, and "
                                        "RuntimeClass nvidia-h100 sets nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3"));
}

TEST(NodeSelectorConflict, APodThatAsksForNoGpuIsLeftAlone) {
  const std::string web = "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: ml}\nspec:\n"
                          "  runtimeClassName: nvidia-h100\n" + kA100Selector +
                          "  containers:\n  - name: web\n    image: nginx:1.27\n";
  EXPECT_THAT(judgeInput(kH100Class + web, kRule), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
