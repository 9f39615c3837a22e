// gpu-missing-toleration with the cluster's node facts judges the taints the
// GPU nodes carry, as kube-scheduler's TaintToleration filter reads them
// (key, operator Equal/Exists, value, effect; an empty effect matches all),
// not only the policy's gpuTaints:
//   - red team 32 B8: an Equal toleration of value "true" against the nodes'
//     nvidia.com/gpu=present:NoSchedule was a warning; the pod stays Pending;
//   - B9: GPU nodes tainted sku=gpu:NoSchedule (AKS) or with the policy's key
//     but NoExecute: a pod with no toleration was a warning only, and the
//     fix (what /mutate adds) added nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/support/gpu_taints.h"
#include "rules/support/platform_evidence.h"
#include "test/unit/gpu_node.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::clusterOf;
using testing::gpuNode;
using testing::kGpuPresentTaint;
using testing::judgeWithCluster;
using testing::onlyRules;
using testing::rulesHit;

// A GFD-labelled 8-GPU node on driver `driver` with `taints`.
std::string node(const std::string& name, const std::string& taints, const std::string& driver = "570") {
  return gpuNode({.name = name, .driver = driver, .taints = taints});
}

// A one-GPU pod pinned to 570 with `tolerations`.
std::string pod(const std::string& tolerations) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  tolerations: " + tolerations +
         "\n  nodeSelector: {nvidia.com/cuda.driver-version.major: \"570\"}\n  containers:\n  - name: c\n"
         "    image: nvidia/cuda:12.8.1-runtime-ubuntu24.04\n    resources: {limits: {nvidia.com/gpu: 1}}\n";
}

const Policy kToleration = onlyRules({"gpu-missing-toleration"});

TEST(NodeTaints, AnEqualTolerationOfAnotherValueThanTheNodesIsAnError) {
  const auto cluster = clusterOf(node("gpu-t", kGpuPresentTaint));
  const auto f = judgeWithCluster(
      pod("[{key: nvidia.com/gpu, operator: Equal, value: \"true\", effect: NoSchedule}]"), *cluster, kToleration);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("no toleration for the taint nvidia.com/gpu=present:NoSchedule"));
  EXPECT_THAT(f[0].message(), HasSubstr("1 node: gpu-t"));
}

TEST(NodeTaints, AnEqualTolerationOfTheNodesValueIsEnough) {
  const auto cluster = clusterOf(node("gpu-t", kGpuPresentTaint));
  const auto f = judgeWithCluster(
      pod("[{key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}]"), *cluster, kToleration);
  EXPECT_THAT(f, IsEmpty());
}

TEST(NodeTaints, AnotherKeyThanThePolicysIsDemandedAndFixed) {
  // AKS's GPU pool taint; the fix is what /mutate adds.
  const auto cluster = clusterOf(node("gpu-t", "[{key: sku, value: gpu, effect: NoSchedule}]"));
  const auto f = judgeWithCluster(pod("[]"), *cluster, kToleration);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("no toleration for the taint sku=gpu:NoSchedule"));
  ASSERT_TRUE(f[0].fix.has_value());
  ASSERT_EQ(f[0].fix->edits.size(), 1u);
  EXPECT_THAT(f[0].fix->description, HasSubstr("{key: sku, operator: Exists, effect: NoSchedule}"));
}

TEST(NodeTaints, ThePolicysKeyWithAnotherEffectIsDemanded) {
  const auto cluster = clusterOf(node("gpu-t", "[{key: nvidia.com/gpu, value: present, effect: NoExecute}]"));
  const auto none = judgeWithCluster(pod("[]"), *cluster, kToleration);
  ASSERT_THAT(rulesHit(none), ElementsAre("gpu-missing-toleration"));
  EXPECT_THAT(none[0].message(), HasSubstr("nvidia.com/gpu=present:NoExecute"));
  // An empty effect matches every effect.
  EXPECT_THAT(judgeWithCluster(pod("[{key: nvidia.com/gpu, operator: Exists}]"), *cluster, kToleration), IsEmpty());
}

TEST(NodeTaints, ThePolicysTaintOnNodesTheSelectionExcludesIsNotDemandedBeside) {
  // gpu-550 carries the policy's taint but is not on 570: only sku=gpu keeps the pod off gpu-t.
  const auto cluster = clusterOf(node("gpu-550", kGpuPresentTaint, "550") +
                                 node("gpu-t", "[{key: sku, value: gpu, effect: NoSchedule}]"));
  const auto f = judgeWithCluster(pod("[]"), *cluster, kToleration);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_THAT(f[0].message(), HasSubstr("taint sku=gpu:NoSchedule"));
}

TEST(NodeTaints, ATaintOfAnUnwellNodeAsksNothing) {
  // TaintNodesByCondition's not-ready taint says the node is unwell, not whom it is for.
  const auto cluster = clusterOf(node("gpu-t", "[{key: node.kubernetes.io/not-ready, effect: NoSchedule}]"));
  EXPECT_THAT(judgeWithCluster(pod("[]"), *cluster, kToleration), IsEmpty());
}

TEST(NodeTaints, ANodeThePodsSelectorExcludesAsksNothing) {
  const auto cluster =
      clusterOf(node("gpu-old", "[{key: sku, value: gpu, effect: NoSchedule}]", "550") + node("gpu-t", "[]"));
  EXPECT_THAT(judgeWithCluster(pod("[]"), *cluster, kToleration), IsEmpty());
}

// Red team 33 C7 with facts: the GPU nodes the pod selects say which taints
// it must tolerate. kube-scheduler's NodeAffinity filter drops gpu-550 (driver
// 550, tainted nvidia.com/gpu) before TaintToleration reads its taints; gpu-t,
// the node the pod selects, carries only sku=gpu (which the pod tolerates) and,
// while it joins, node.kubernetes.io/not-ready. Once ready it takes the pod: no
// nvidia.com/gpu toleration is needed, and none is asked for (nor a --platform
// hint given: that belongs to the verdict judged without facts).
TEST(NodeTaints, GpuNodesThePodNeverSelectsAskNoTolerationEvenWhileItsOwnNodeIsNotReady) {
  const std::string other = node("gpu-550", kGpuPresentTaint, "550");
  const std::string tolerateSku = "[{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]";
  const std::string joining =
      "[{key: sku, value: gpu, effect: NoSchedule}, {key: node.kubernetes.io/not-ready, effect: NoSchedule}]";
  const auto cluster = clusterOf(other + node("gpu-t", joining));
  EXPECT_THAT(judgeWithCluster(pod(tolerateSku), *cluster, kToleration), IsEmpty());
  // Once ready, the same: it lands on gpu-t.
  const auto ready = clusterOf(other + node("gpu-t", "[{key: sku, value: gpu, effect: NoSchedule}]"));
  EXPECT_THAT(judgeWithCluster(pod(tolerateSku), *ready, kToleration), IsEmpty());
}

// A Karpenter NodePool the pod selects launches only nodes tainted
// nvidia.com/gpu: Karpenter provisions for a pod only when it tolerates the
// pool's taints, so the pod stays Pending. The facts say so; that the pod
// tolerates AKS's sku=gpu does not soften it into a --platform aks warning.
TEST(NodeTaints, WithFactsThePoolsTaintIsAnErrorWithoutAPlatformHint) {
  const std::string pool =
      "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n"
      "      requirements: [{key: nvidia.com/cuda.driver-version.major, operator: In, values: [\"570\"]}]\n"
      "      taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]\n---\n";
  const auto cluster = clusterOf(pool);
  const auto f =
      judgeWithCluster(pod("[{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]"), *cluster, kToleration);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("no toleration for the GPU node taint nvidia.com/gpu:NoSchedule"));
  EXPECT_THAT(f[0].message(), Not(HasSubstr("--platform")));
  // Judged blind, the pod naming AKS is told which --platform judges it (a warning).
  const auto blind =
      testing::judgeYaml(pod("[{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]"), kToleration);
  ASSERT_THAT(rulesHit(blind), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(blind[0].severity, Severity::Warning);
  EXPECT_THAT(blind[0].message(), HasSubstr("--platform aks"));
}

// GPU nodes that all carry GKE's own node-pool label are GKE's: its API
// server runs ExtendedResourceToleration, which tolerates their
// nvidia.com/gpu=present:NoSchedule for a pod asking nvidia.com/gpu. Under the
// generic policy the facts' taint is then a warning naming --platform gke,
// not a denial of a pod GKE runs; AKS's nodes (no such plugin) stay an error.
TEST(NodeTaints, GpuNodesOfAPlatformWhosePluginToleratesTheTaintMakeItAWarningThatNamesThePlatform) {
  const auto gke = clusterOf(gpuNode({.name = "gke-gpu-1", .driver = "570", .taints = kGpuPresentTaint,
                                      .labels = "cloud.google.com/gke-nodepool: gpu-pool"}));
  const auto f = judgeWithCluster(pod("[]"), *gke, kToleration);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_THAT(f[0].message(), HasSubstr("its GPU nodes are GKE's (node gke-gpu-1's label "
                                        "cloud.google.com/gke-nodepool=gpu-pool, which only GKE puts on its nodes)"));
  EXPECT_THAT(f[0].message(), HasSubstr("--platform gke"));
  // Nor does gpu-unschedulable say no node can ever take it (red team 35 D2).
  EXPECT_THAT(rulesHit(judgeWithCluster(pod("[]"), *gke, onlyRules({"gpu-missing-toleration", "gpu-unschedulable"}))),
              ElementsAre("gpu-missing-toleration"));
  // With platform: gke the plugin is assumed: nothing to say.
  Policy onGke = checks::asOnPlatform(kToleration, "gke");
  EXPECT_THAT(judgeWithCluster(pod("[]"), *gke, onGke), IsEmpty());

  const auto aks = clusterOf(gpuNode({.name = "aks-gpu-1", .driver = "570", .taints = "[{key: sku, value: gpu, effect: NoSchedule}]",
                                      .labels = "kubernetes.azure.com/agentpool: gpu"}));
  const auto onAks = judgeWithCluster(pod("[]"), *aks, kToleration);
  ASSERT_THAT(rulesHit(onAks), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(onAks[0].severity, Severity::Error);
  EXPECT_THAT(onAks[0].message(), HasSubstr("judge it as on AKS with --platform aks"));
  EXPECT_THAT(rulesHit(judgeWithCluster(pod("[]"), *aks, onlyRules({"gpu-missing-toleration", "gpu-unschedulable"}))),
              ElementsAre("gpu-missing-toleration", "gpu-unschedulable"));

  // Nodes of no platform, or of two, name none.
  const auto mixed = clusterOf(gpuNode({.name = "gke-gpu-1", .driver = "570", .taints = kGpuPresentTaint,
                                        .labels = "cloud.google.com/gke-nodepool: gpu-pool"}) +
                               gpuNode({.name = "gpu-2", .driver = "570", .taints = kGpuPresentTaint}));
  const auto plain = judgeWithCluster(pod("[]"), *mixed, kToleration);
  ASSERT_THAT(rulesHit(plain), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(plain[0].severity, Severity::Error);
  EXPECT_THAT(plain[0].message(), Not(HasSubstr("--platform")));
}

// Red team 32 B9's variant: two GPU nodes the pod selects, tainted differently
// (gpu-a nvidia.com/gpu, gpu-b sku=gpu). kube-scheduler binds the pod to any
// one node whose taints it all tolerates (scheduler oracle:
// facts-taint-two-keys-*: tolerating either one binds it), so one toleration
// is asked for, naming the other as the alternative, and the fix (what
// /mutate adds) makes the pod land.
TEST(NodeTaints, GpuNodesTaintedDifferentlyAreAlternativesOneTolerationIsEnough) {
  const auto cluster =
      clusterOf(node("gpu-a", kGpuPresentTaint) + node("gpu-b", "[{key: sku, value: gpu, effect: NoSchedule}]"));
  const auto f = judgeWithCluster(pod("[]"), *cluster, kToleration);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("kube-scheduler needs only one node whose taints the pod tolerates"));
  ASSERT_TRUE(f[0].fix.has_value());
  ASSERT_EQ(f[0].fix->edits.size(), 1u);
  // The toleration the fix adds, then judged again: the pod lands.
  const bool asksSku = f[0].fix->description.find("{key: sku,") != std::string::npos;
  EXPECT_THAT(f[0].message(), HasSubstr(asksSku ? "nvidia.com/gpu=present:NoSchedule (1 node: gpu-a)"
                                                : "sku=gpu:NoSchedule (1 node: gpu-b)"));
  const std::string fixed = asksSku ? "[{key: sku, operator: Exists, effect: NoSchedule}]"
                                    : "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]";
  EXPECT_THAT(judgeWithCluster(pod(fixed), *cluster, kToleration), IsEmpty());
}

TEST(NodeTaints, TheTaintsOfMostNodesAreAskedForAndEveryTaintOfOneNodeIsNeeded) {
  // Two nodes carry nvidia.com/gpu, one sku=gpu: the pool of two is asked for.
  const auto pools = clusterOf(node("gpu-a", kGpuPresentTaint) + node("gpu-a2", kGpuPresentTaint) +
                               node("gpu-b", "[{key: sku, value: gpu, effect: NoSchedule}]"));
  const auto f = judgeWithCluster(pod("[]"), *pools, kToleration);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_THAT(f[0].message(), HasSubstr("no toleration for the taint nvidia.com/gpu=present:NoSchedule"));
  EXPECT_THAT(f[0].message(), HasSubstr("2 nodes: gpu-a, gpu-a2"));
  // One node with both taints: the pod needs both, one finding each.
  const auto both = clusterOf(node("gpu-t", "[{key: nvidia.com/gpu, value: present, effect: NoSchedule}, "
                                            "{key: sku, value: gpu, effect: NoSchedule}]"));
  const auto two = judgeWithCluster(pod("[]"), *both, kToleration);
  EXPECT_THAT(rulesHit(two), ElementsAre("gpu-missing-toleration", "gpu-missing-toleration"));
  EXPECT_THAT(two[0].message(), Not(HasSubstr("needs only one node")));
}

// Red team 32 B3: namespace ml's defaultTolerations annotation tolerates the
// GPU taint, but PodTolerationRestriction, the plugin that adds it to pods, is
// off by default (kube-apiserver's DefaultOffAdmissionPlugins); the pod stays
// Pending with "untolerated taint(s)" on such an API server.
const std::string kNamespaceDefaults =
    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n  annotations:\n"
    "    scheduler.alpha.kubernetes.io/defaultTolerations: "
    "'[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]'\n---\n";

TEST(NodeTaints, TheNamespacesDefaultTolerationsAreNotCreditedWithoutThePlugin) {
  const auto cluster = clusterOf(node("gpu-t", kGpuPresentTaint) + kNamespaceDefaults);
  const auto f = judgeWithCluster(pod("[]"), *cluster, kToleration);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("only the PodTolerationRestriction admission plugin adds them"));
}

TEST(NodeTaints, TheNamespacesDefaultTolerationsAreCreditedWhenThePolicySaysThePluginRuns) {
  const auto cluster = clusterOf(node("gpu-t", kGpuPresentTaint) + kNamespaceDefaults);
  Policy withPlugin = kToleration;
  withPlugin.assumePodTolerationRestriction = true;
  EXPECT_THAT(judgeWithCluster(pod("[]"), *cluster, withPlugin), IsEmpty());
}

// Red team 34 D5: a taint of the GPU nodes that is no GPU taint (a team's
// dedicated nodes, a health check's NoExecute, the control plane) is the
// admin's way of keeping pods out. It is named, as a warning, and never
// demanded nor added by the fix (what /mutate and --fix apply): tolerating it
// put team-b's pods on team-a's reserved node.
const std::string kTeamA = "[{key: nvidia.com/gpu, value: present, effect: NoSchedule}, "
                           "{key: dedicated, value: team-a, effect: NoSchedule}]";

TEST(NodeTaints, ATaintThatIsNoGpuTaintIsAWarningWithoutAFix) {
  const auto cluster = clusterOf(node("gpu-team-a", kTeamA));
  const auto f = judgeWithCluster(pod("[{key: nvidia.com/gpu, operator: Exists}]"), *cluster, kToleration);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_THAT(f[0].message(), HasSubstr("also carry the taint dedicated=team-a:NoSchedule, which is no GPU taint"));
  EXPECT_THAT(f[0].message(), HasSubstr("1 node: gpu-team-a"));
  EXPECT_FALSE(f[0].fix.has_value() && !f[0].fix->edits.empty());
}

TEST(NodeTaints, OnlyTheGpuTaintIsDemandedAndFixedWhereBothKeepThePodOff) {
  const auto cluster = clusterOf(node("gpu-team-a", kTeamA));
  const auto f = judgeWithCluster(pod("[]"), *cluster, kToleration);
  ASSERT_EQ(f.size(), 2u);
  std::size_t fixes = 0;
  for (const Finding& one : f) {
    const bool gpu = one.message().find("nvidia.com/gpu=present:NoSchedule") != std::string::npos;
    EXPECT_EQ(one.severity, gpu ? Severity::Error : Severity::Warning) << one.message();
    if (one.fix && !one.fix->edits.empty()) {
      ++fixes;
      EXPECT_THAT(one.fix->description, HasSubstr("{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}"));
    }
  }
  EXPECT_EQ(fixes, 1u);
}

TEST(NodeTaints, AHealthChecksNoExecuteTaintIsNeverTolerated) {
  const auto cluster = clusterOf(node(
      "gpu-x", "[{key: nvidia.com/gpu, effect: NoSchedule}, {key: example.com/gpu-xid-error, effect: NoExecute}]"));
  const auto f = judgeWithCluster(pod("[{key: nvidia.com/gpu, operator: Exists}]"), *cluster, kToleration);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_FALSE(f[0].fix.has_value() && !f[0].fix->edits.empty());
}

TEST(NodeTaints, TheGpuTaintsAreThePolicysAndThePlatformsOfAnyEffect) {
  Policy amd = kToleration;
  amd.gpuTaints = {{"amd.com/gpu", std::nullopt, "NoSchedule"}};
  EXPECT_TRUE(checks::isGpuTaint({"amd.com/gpu", "true", "NoSchedule"}, amd));
  EXPECT_TRUE(checks::isGpuTaint({"nvidia.com/gpu", "present", "NoExecute"}, amd));  // generic and GKE's
  EXPECT_TRUE(checks::isGpuTaint({"sku", "gpu", "NoSchedule"}, kToleration));        // AKS's
  EXPECT_FALSE(checks::isGpuTaint({"sku", "compute", "NoSchedule"}, kToleration));
  EXPECT_FALSE(checks::isGpuTaint({"dedicated", "team-a", "NoSchedule"}, kToleration));
  EXPECT_FALSE(checks::isGpuTaint({"node-role.kubernetes.io/control-plane", std::nullopt, "NoSchedule"}, kToleration));
}

// Red team 34 D8: a pod that names its node never meets kube-scheduler; the
// node's kubelet admits it against NoExecute taints and rejects it.
TEST(NodeTaints, APodThatNamesItsNodeIsRejectedByTheKubeletNotLeftPending) {
  const auto cluster = clusterOf(node("gpu-1", "[{key: nvidia.com/gpu, value: present, effect: NoExecute}]"));
  const std::string named =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  nodeName: gpu-1\n  containers:\n"
      "  - name: c\n    image: nvidia/cuda:12.8.1-runtime-ubuntu24.04\n    resources: {limits: {nvidia.com/gpu: 1}}\n";
  const auto f = judgeWithCluster(named, *cluster, kToleration);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_THAT(f[0].message(), HasSubstr("so the node's kubelet rejects it"));
  EXPECT_THAT(f[0].message(), ::testing::Not(HasSubstr("Pending")));
}

// Each differently tainted group is an alternative; a message names three at
// most, whatever the cluster holds.
TEST(NodeTaints, AlternativesAreNamedThreeAtMost) {
  std::string nodes;
  for (int i = 0; i < 6; ++i) {
    nodes += node("gpu-" + std::to_string(i), "[{key: nvidia.com/gpu, value: v" + std::to_string(i) + ", effect: NoSchedule}]");
  }
  const auto cluster = clusterOf(nodes);
  const auto f = judgeWithCluster(pod("[]"), *cluster, kToleration);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_THAT(f[0].message(), HasSubstr(", or 2 more would do as well"));
}

}  // namespace
}  // namespace gpuguard
