// A namespace's node selector, merged into every pod created in it by the
// PodNodeSelector admission plugin (scheduler.alpha.kubernetes.io/node-selector;
// off by default upstream) or OpenShift's OriginPodNodeEnvironment
// (openshift.io/node-selector, in a namespace without the former; on by
// default there). A key the pod sets to another value rejects the pod.
// Credited only when the policy sets assumePodNodeSelector, as
// assumePodTolerationRestriction credits defaultTolerations.
// Red team 34 D4: a Deployment in a namespace whose selector pins driver 570
// was denied for "2 CUDA driver majors", its pods bound to the 570 node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/cluster_reduce.h"
#include "rules/engine.h"
#include "rules/reach_cache.h"
#include "test/unit/gpu_node.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;
using ::testing::Pair;
using testing::clusterOf;
using testing::judgeInput;
using testing::judgeWithCluster;
using testing::onlyRules;
using testing::rulesHit;

std::string namespaceWith(const std::string& annotations) {
  return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n  annotations: " + annotations + "\n---\n";
}
const std::string kPinned570 = namespaceWith("{scheduler.alpha.kubernetes.io/node-selector: "
                                             "\"nvidia.com/cuda.driver-version.major=570\"}");

// red team 34 m/dep-unpinned.yaml: CUDA 12.8, the GPU toleration, no pin.
std::string deployment(const std::string& extra = "") {
  return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: infer, namespace: ml}\nspec:\n"
         "  selector: {matchLabels: {app: infer}}\n  template:\n    metadata: {labels: {app: infer}}\n    spec:\n" +
         extra + "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
                 "      containers:\n      - name: c\n        image: nvidia/cuda:12.8.0-runtime-ubuntu22.04\n"
                 "        resources: {limits: {nvidia.com/gpu: \"1\"}}\n";
}

// A GFD-labelled 8-GPU node on driver `major`, tainted nvidia.com/gpu=present:NoSchedule.
std::string gpuNode(const std::string& name, const std::string& major) {
  return testing::gpuNode({.name = name, .driver = major, .taints = testing::kGpuPresentTaint});
}

const Policy kPin = onlyRules({"gpu-missing-driver-pin"});
Policy withPlugin(Policy p) {
  p.assumePodNodeSelector = true;
  return p;
}

TEST(NamespaceNodeSelector, IsReadAsPodNodeSelectorReadsIt) {
  std::vector<std::string> warnings;
  const json ns = json::parse(R"({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml",
      "annotations": {"scheduler.alpha.kubernetes.io/node-selector": "a=1, b = 2,c="}}})");
  const NamespaceFacts n = reduceNamespace(ns, warnings);
  EXPECT_THAT(n.nodeSelector, Optional(ElementsAre(Pair("a", "1"), Pair("b", "2"), Pair("c", ""))));
  EXPECT_EQ(n.nodeSelectorAnnotation, "scheduler.alpha.kubernetes.io/node-selector");
  EXPECT_THAT(warnings, IsEmpty());
}

TEST(NamespaceNodeSelector, AnEmptyAnnotationSelectsNothingAndAPairWithoutEqualsIsNotRead) {
  std::vector<std::string> warnings;
  const auto reduce = [&](const std::string& value) {
    return reduceNamespace(json{{"apiVersion", "v1"}, {"kind", "Namespace"},
                                {"metadata", {{"name", "ml"}, {"annotations", {{"scheduler.alpha.kubernetes.io/node-selector", value}}}}}},
                           warnings);
  };
  EXPECT_THAT(reduce("").nodeSelector, Optional(IsEmpty()));
  EXPECT_EQ(reduce("a=1,b").nodeSelector, std::nullopt);
  EXPECT_EQ(reduce("a==1").nodeSelector, std::nullopt);
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("is not a list of key=value"), HasSubstr("is not a list of key=value")));
}

TEST(NamespaceNodeSelector, OpenShiftsAnnotationCountsOnlyWithoutTheUpstreamOne) {
  std::vector<std::string> warnings;
  const json both = json::parse(R"({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml",
      "annotations": {"openshift.io/node-selector": "a=1", "scheduler.alpha.kubernetes.io/node-selector": "b=2"}}})");
  EXPECT_THAT(reduceNamespace(both, warnings).nodeSelector, Optional(ElementsAre(Pair("b", "2"))));
  const json openShift = json::parse(R"({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml",
      "annotations": {"openshift.io/node-selector": "a=1"}}})");
  const NamespaceFacts n = reduceNamespace(openShift, warnings);
  EXPECT_THAT(n.nodeSelector, Optional(ElementsAre(Pair("a", "1"))));
  EXPECT_EQ(n.nodeSelectorAnnotation, "openshift.io/node-selector");
}

TEST(NamespaceNodeSelector, PinsTheDriverWhenThePolicySaysThePluginRuns) {
  const auto cluster = clusterOf(gpuNode("gpu-550", "550") + gpuNode("gpu-570", "570") + kPinned570);
  EXPECT_THAT(judgeWithCluster(deployment(), *cluster, withPlugin(kPin)), IsEmpty());
}

// The webhook judges the object as a whole with its kept reaches (ReachCache),
// not the linter's documents: the pin must count there too.
TEST(NamespaceNodeSelector, PinsTheDriverInTheWebhooksJudgingWithKeptReaches) {
  const auto cluster = clusterOf(gpuNode("gpu-550", "550") + gpuNode("gpu-570", "570") + kPinned570);
  const json object = yaml::parseStream(deployment()).documents.at(0).value;
  ReachCache cache;
  JudgeOptions options;
  options.cluster = cluster.get();
  options.reachCache = &cache;
  options.namespaceName = "ml";
  for (int review = 0; review < 3; ++review) {
    EXPECT_THAT(rulesHit(judge(object, withPlugin(kPin), options)), IsEmpty()) << "review " << review;
  }
  options.reachCache = nullptr;
  EXPECT_THAT(rulesHit(judge(object, withPlugin(kPin), options)), IsEmpty()) << "without the cache";
}

TEST(NamespaceNodeSelector, WithoutThePluginIsNotCreditedButTheFindingSaysItWouldPin) {
  const auto cluster = clusterOf(gpuNode("gpu-550", "550") + gpuNode("gpu-570", "570") + kPinned570);
  const auto f = judgeWithCluster(deployment(), *cluster, kPin);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("namespace ml's scheduler.alpha.kubernetes.io/node-selector pins "
                                        "nvidia.com/cuda.driver-version.major=570, but only the PodNodeSelector "
                                        "admission plugin adds it to pods, and it is off by default"));
}

TEST(NamespaceNodeSelector, TheNamespaceInTheLintersInputCountsToo) {
  EXPECT_THAT(judgeInput(kPinned570 + deployment(), withPlugin(kPin)), IsEmpty());
  EXPECT_THAT(rulesHit(judgeInput(kPinned570 + deployment(), kPin)), ElementsAre("gpu-missing-driver-pin"));
}

TEST(NamespaceNodeSelector, OpenShiftsAnnotationPinsWithTheSameKey) {
  const std::string openShift = namespaceWith("{openshift.io/node-selector: \"nvidia.com/cuda.driver-version.major=570\"}");
  EXPECT_THAT(judgeInput(openShift + deployment(), withPlugin(kPin)), IsEmpty());
}

TEST(NamespaceNodeSelector, AConflictWithThePodsOwnSelectorIsNotMerged) {
  // The plugin rejects such pods; the pod is judged as written: its own 550 pin lands on gpu-550.
  const auto cluster = clusterOf(gpuNode("gpu-550", "550") + kPinned570);
  const Policy both = withPlugin(onlyRules({"gpu-missing-driver-pin", "gpu-unschedulable"}));
  const auto f = judgeWithCluster(
      deployment("      nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n"), *cluster, both);
  EXPECT_THAT(rulesHit(f), IsEmpty());
}

TEST(NamespaceNodeSelector, DecidesWhereThePodCanLand) {
  // Only a 550 node: the namespace's 570 pin leaves the pod no node, with the plugin.
  const auto cluster = clusterOf(gpuNode("gpu-550", "550") + kPinned570);
  const Policy unschedulable = onlyRules({"gpu-unschedulable"});
  EXPECT_THAT(rulesHit(judgeWithCluster(deployment(), *cluster, withPlugin(unschedulable))),
              ElementsAre("gpu-unschedulable"));
  EXPECT_THAT(judgeWithCluster(deployment(), *cluster, unschedulable), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
