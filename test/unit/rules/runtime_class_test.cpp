// A pod naming a RuntimeClass (spec.runtimeClassName) gets that class's
// scheduling from the RuntimeClass admission plugin (on by default) before
// kube-scheduler, or a validating webhook judging a Pod, sees it:
// scheduling.nodeSelector merged into the pod's nodeSelector (a key the pod
// sets to another value: the pod is rejected), scheduling.tolerations
// appended (kubernetes plugin/pkg/admission/runtimeclass setScheduling).
// Red team 34 D2: a Deployment whose RuntimeClass supplies the GPU toleration
// or the driver pin was denied, though its pods are admitted and bound.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/cluster_reduce.h"
#include "test/unit/gpu_node.h"
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

// red team 34 rc/runtimeclass.yaml: the toleration of the GPU taint and a driver pin.
const std::string kGpuRuntimeClass =
    "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: nvidia-gpu}\nhandler: nvidia\n"
    "scheduling:\n  nodeSelector: {nvidia.com/cuda.driver-version.major: \"570\"}\n"
    "  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n---\n";
// The class the GPU Operator installs: a handler, no scheduling.
const std::string kOperatorRuntimeClass =
    "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: nvidia}\nhandler: nvidia\n---\n";

// A one-GPU Deployment of a CUDA 12.8 image naming `runtimeClass`, with `extra` pod spec lines.
std::string deployment(const std::string& runtimeClass, const std::string& extra = "") {
  return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: infer, namespace: ml}\nspec:\n"
         "  selector: {matchLabels: {app: infer}}\n  template:\n    metadata: {labels: {app: infer}}\n"
         "    spec:\n      runtimeClassName: " + runtimeClass + "\n" + extra +
         "      containers:\n      - name: c\n        image: nvidia/cuda:12.8.0-runtime-ubuntu22.04\n"
         "        resources: {limits: {nvidia.com/gpu: \"1\"}}\n";
}

// A GFD-labelled 8-GPU node on driver `major`, tainted nvidia.com/gpu=present:NoSchedule.
std::string gpuNode(const std::string& name, const std::string& major) {
  return testing::gpuNode({.name = name, .driver = major, .taints = testing::kGpuPresentTaint});
}

const Policy kPlacementRules = [] {
  Policy p = onlyRules({"gpu-missing-toleration", "gpu-missing-driver-pin", "gpu-unschedulable"});
  p.rules["gpu-missing-driver-pin"] = RuleSetting::Error;
  return p;
}();
// The same rules at the severities their findings choose (the driver pin's error on mixed drivers).
const Policy kDefaultSeverities = onlyRules({"gpu-missing-toleration", "gpu-missing-driver-pin", "gpu-unschedulable"});
const std::string kTolerated = "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n";

TEST(RuntimeClassScheduling, IsReadFromTheRuntimeClass) {
  const auto facts = clusterOf(kGpuRuntimeClass);
  const RuntimeClassFacts* r = facts->runtimeClass("nvidia-gpu");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->nodeSelector.at("nvidia.com/cuda.driver-version.major"), "570");
  ASSERT_EQ(r->tolerations.size(), 1u);
  EXPECT_EQ(r->tolerations[0]["key"], "nvidia.com/gpu");
  EXPECT_TRUE(facts->listed(FactKind::RuntimeClass));
}

TEST(RuntimeClassScheduling, AWatchedDeletionForgetsTheClass) {
  ClusterFactsBuilder builder;
  builder.add(nlohmann::json::parse(R"({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
      "metadata": {"name": "nvidia-gpu"}, "handler": "nvidia",
      "scheduling": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}})"));
  ASSERT_NE(builder.build()->runtimeClass("nvidia-gpu"), nullptr);
  EXPECT_TRUE(builder.remove(FactKind::RuntimeClass, "", "nvidia-gpu"));
  EXPECT_EQ(builder.build()->runtimeClass("nvidia-gpu"), nullptr);
  EXPECT_TRUE(builder.build()->listed(FactKind::RuntimeClass));  // listed, and now known to be absent
}

TEST(RuntimeClassScheduling, WithTheClusterFactsSuppliesTheTolerationAndTheDriverPin) {
  // gpu-550 and gpu-570 both tainted: the class's pin keeps the pod on gpu-570, its toleration lets it land.
  const auto cluster = clusterOf(gpuNode("gpu-550", "550") + gpuNode("gpu-570", "570") + kGpuRuntimeClass);
  EXPECT_THAT(judgeWithCluster(deployment("nvidia-gpu"), *cluster, kPlacementRules), IsEmpty());
}

TEST(RuntimeClassScheduling, WithoutItTheSameClusterDeniesTheTemplate) {
  const auto cluster = clusterOf(gpuNode("gpu-550", "550") + gpuNode("gpu-570", "570"));
  EXPECT_THAT(rulesHit(judgeWithCluster(deployment("nvidia"), *cluster, kPlacementRules)),
              ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin", "gpu-unschedulable"));
}

TEST(RuntimeClassScheduling, InTheLintersInputSuppliesTheTolerationAndTheDriverPin) {
  // No cluster facts: the policy's taint and pin labels are judged against what the class adds.
  EXPECT_THAT(judgeInput(kGpuRuntimeClass + deployment("nvidia-gpu"), kPlacementRules), IsEmpty());
}

TEST(RuntimeClassScheduling, TheGpuOperatorsNvidiaClassAddsNothing) {
  const auto f = judgeInput(kOperatorRuntimeClass + deployment("nvidia"), kPlacementRules);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  for (const Finding& finding : f) EXPECT_THAT(finding.message(), Not(HasSubstr("RuntimeClass")));
}

TEST(RuntimeClassScheduling, AnUnknownClassMaySupplyThemSoTheFindingsAreWarningsThatSaySo) {
  const auto f = judgeInput(deployment("nvidia-gpu"), kDefaultSeverities);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  for (const Finding& finding : f) EXPECT_EQ(finding.severity, Severity::Warning) << finding.message();
  // A severity the policy sets for the rule stays the policy's.
  EXPECT_EQ(judgeInput(deployment("nvidia-gpu"), kPlacementRules).at(1).severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("RuntimeClass nvidia-gpu (spec.runtimeClassName)"));
  EXPECT_THAT(f[0].message(), HasSubstr("its scheduling.tolerations may supply it"));
  EXPECT_THAT(f[1].message(), HasSubstr("its scheduling.nodeSelector may supply it"));
}

// Red team 35 D4: helm install creates a Deployment before its RuntimeClass,
// and the webhook's watch lags a kubectl apply of both: a class the listed
// facts lack is unknown, not absent (the plugin reads it when the controller
// creates the pods). Nothing "can never schedule" for it either.
TEST(RuntimeClassScheduling, AClassTheWatchHasNotSeenYetIsUnknownNotAbsent) {
  const auto cluster = clusterOf(gpuNode("gpu-550", "550") + gpuNode("gpu-570", "570") + kOperatorRuntimeClass);
  const auto f = judgeWithCluster(deployment("nvidia-gpu"), *cluster, kDefaultSeverities);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  for (const Finding& finding : f) {
    EXPECT_EQ(finding.severity, Severity::Warning) << finding.message();
    EXPECT_THAT(finding.message(), HasSubstr("which neither the input nor the cluster facts hold (yet)"));
  }
}

TEST(RuntimeClassScheduling, TheGpuOperatorsClassesNamedButNotHeldAddNothingAndStayErrors) {
  const auto cluster = clusterOf(gpuNode("gpu-550", "550") + gpuNode("gpu-570", "570"));
  for (const char* name : {"nvidia", "nvidia-cdi", "nvidia-legacy"}) {
    const auto f = judgeWithCluster(deployment(name), *cluster, kPlacementRules);
    ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin", "gpu-unschedulable")) << name;
    EXPECT_EQ(f[0].severity, Severity::Error) << name;
    for (const Finding& finding : f) EXPECT_THAT(finding.message(), Not(HasSubstr("RuntimeClass"))) << name;
  }
}

TEST(RuntimeClassScheduling, ThePodsOwnTolerationsStayWhenTheClassAppendsItsOwn) {
  // The class pins the driver only; the template tolerates the taint itself.
  const std::string pinOnly =
      "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: pin}\nhandler: nvidia\n"
      "scheduling: {nodeSelector: {nvidia.com/cuda.driver-version.major: \"570\"}}\n---\n";
  const auto cluster = clusterOf(gpuNode("gpu-550", "550") + gpuNode("gpu-570", "570") + pinOnly);
  EXPECT_THAT(judgeWithCluster(deployment("pin", kTolerated), *cluster, kPlacementRules), IsEmpty());
  EXPECT_THAT(rulesHit(judgeWithCluster(deployment("pin"), *cluster, kPlacementRules)),
              ElementsAre("gpu-missing-toleration", "gpu-unschedulable"));
}

TEST(RuntimeClassScheduling, ASelectorTheClassMergesNarrowsWhereThePodLands) {
  // The pod selects gpu.product, the class adds the driver: both hold, and no node has both.
  const std::string pin550 =
      "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: old}\nhandler: nvidia\n"
      "scheduling: {nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}}\n---\n";
  const auto cluster = clusterOf(gpuNode("gpu-570", "570") + pin550);
  const auto f = judgeWithCluster(deployment("old", kTolerated), *cluster, kPlacementRules);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-unschedulable"));
  EXPECT_THAT(f[0].message(), HasSubstr("node affinity"));
}

TEST(RuntimeClassScheduling, ASelectorThatConflictsWithThePodsIsNotMerged) {
  // The plugin rejects such a pod ("conflict: runtimeClass.scheduling.nodeSelector[...]"): the class
  // is not credited with the toleration either.
  const auto f = judgeInput(
      kGpuRuntimeClass + deployment("nvidia-gpu", "      nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n"),
      kPlacementRules);
  EXPECT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
}

}  // namespace
}  // namespace gpuguard
