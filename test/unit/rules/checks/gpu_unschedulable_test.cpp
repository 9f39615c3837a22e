// gpu-unschedulable, and what the cluster's facts change in the driver pin
// and the GPU count (rules/cluster_reach.h): the pod against the nodes of a
// snapshot with kube-scheduler's static filters, and Karpenter NodePools as
// the nodes they may launch. Without facts every rule judges as before.
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
using testing::judgeInput;
using testing::judgeWithCluster;
using testing::onlyRules;
using testing::rulesHit;

// An H100 node whose allocatable is short of its capacity by what the system
// reserves; `spec` adds lines under spec (a cordon).
std::string h100Node(const std::string& name, const std::string& driver, int gpus, const std::string& spec = "",
                     const std::string& taints = testing::kGpuTaint) {
  const std::string count = "nvidia.com/gpu: \"" + std::to_string(gpus) + "\"";
  return testing::gpuNode({.name = name,
                           .driver = driver,
                           .taints = taints,
                           .gpus = count,
                           .labels = "nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3",
                           .spec = spec,
                           .machine = "cpu: \"95\", memory: 1000Gi, pods: \"110\"",
                           .capacity = "cpu: \"96\", memory: 1Ti, pods: \"110\", " + count});
}

const std::string kCpuNode =
    "apiVersion: v1\nkind: Node\nmetadata: {name: cpu-1}\nstatus:\n  allocatable: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n---\n";

std::string gpuPod(int gpus, const std::string& podLines = "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: train, namespace: ml}\nspec:\n" + podLines +
         "  containers:\n  - name: app\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n    resources:\n      limits: {nvidia.com/gpu: " +
         std::to_string(gpus) + "}\n";
}

const Policy kUnschedulable = onlyRules({"gpu-unschedulable"});

TEST(GpuUnschedulable, SaysNothingWithoutClusterFacts) {
  EXPECT_THAT(judgeInput(gpuPod(64), kUnschedulable), IsEmpty());
}

TEST(GpuUnschedulable, TooManyGpusForEveryNodeInTheSchedulersWords) {
  const auto cluster = clusterOf(h100Node("gpu-a", "570", 8) + h100Node("gpu-b", "570", 4) + kCpuNode);
  const auto findings = judgeWithCluster(gpuPod(16), *cluster, kUnschedulable);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-unschedulable"));
  EXPECT_EQ(findings[0].severity, Severity::Warning);
  EXPECT_EQ(findings[0].field(), "spec.containers[0].resources.limits[nvidia.com/gpu]");
  EXPECT_THAT(findings[0].message(), HasSubstr("0/3 nodes are available: 3 Insufficient nvidia.com/gpu."));
  EXPECT_THAT(findings[0].message(), HasSubstr("the most a node offers is 8 (gpu-a)"));
  EXPECT_THAT(findings[0].message(), HasSubstr("snapshot test"));
  EXPECT_THAT(judgeWithCluster(gpuPod(8), *cluster, kUnschedulable), IsEmpty());
}

TEST(GpuUnschedulable, AnUntoleratedTaintIsNamedAndPointsAtTheTolerations) {
  const auto cluster = clusterOf(h100Node("gpu-a", "570", 8) + h100Node("gpu-b", "570", 8) + kCpuNode);
  const auto findings = judgeWithCluster(gpuPod(1, ""), *cluster, kUnschedulable);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-unschedulable"));
  EXPECT_EQ(findings[0].field(), "spec.tolerations");
  EXPECT_THAT(findings[0].message(),
              HasSubstr("0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint(s)."));
  EXPECT_THAT(findings[0].message(), HasSubstr("tolerate nvidia.com/gpu:NoSchedule (on 2 nodes)"));
}

TEST(GpuUnschedulable, TheChangeComesBeforeTheSchedulersSummaryAndTheSource) {
  // The API server keeps 256 characters of a warning (red team 32 B10): the
  // advice was cut after the summary and the facts' source.
  const auto cluster = clusterOf(h100Node("gpu-a", "570", 8) + h100Node("gpu-b", "570", 8) + kCpuNode);
  const auto findings = judgeWithCluster(gpuPod(1, ""), *cluster, kUnschedulable);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-unschedulable"));
  const std::string m = findings[0].message();
  EXPECT_THAT(m, ::testing::StartsWith("no node of the cluster can ever take this pod; to change: "));
  EXPECT_LT(m.find("tolerate nvidia.com/gpu:NoSchedule (on 2 nodes)"), m.find("0/3 nodes are available"));
  EXPECT_LT(m.find("0/3 nodes are available"), m.find("snapshot test"));
}

TEST(GpuUnschedulable, TheNamespacesDefaultTolerationsCountWhenPodTolerationRestrictionRuns) {
  const std::string ns =
      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n  annotations:\n"
      "    scheduler.alpha.kubernetes.io/defaultTolerations: '[{\"key\": \"nvidia.com/gpu\", \"operator\": \"Exists\"}]'\n---\n";
  const auto cluster = clusterOf(h100Node("gpu-a", "570", 8) + ns);
  Policy withPlugin = kUnschedulable;
  withPlugin.assumePodTolerationRestriction = true;
  EXPECT_THAT(judgeWithCluster(gpuPod(1, ""), *cluster, withPlugin), IsEmpty());
  // The plugin is off by default upstream (red team 32 B3): without it the
  // annotation adds nothing, and kube-scheduler leaves the pod Pending.
  const auto f = judgeWithCluster(gpuPod(1, ""), *cluster, kUnschedulable);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-unschedulable"));
  EXPECT_THAT(f[0].message(), HasSubstr("untolerated taint"));
}

TEST(GpuUnschedulable, AProductNoNodeCarriesAndACordonedNode) {
  const auto cluster = clusterOf(h100Node("gpu-a", "570", 8) + h100Node("gpu-b", "570", 8, "  unschedulable: true\n"));
  const auto product = judgeWithCluster(
      gpuPod(1, "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-B200}\n  tolerations: [{operator: Exists}]\n"), *cluster,
      kUnschedulable);
  ASSERT_THAT(rulesHit(product), ElementsAre("gpu-unschedulable"));
  EXPECT_EQ(product[0].field(), "spec.nodeSelector");
  EXPECT_THAT(product[0].message(), HasSubstr("2 node(s) didn't match Pod's node affinity/selector"));
  EXPECT_THAT(product[0].message(), HasSubstr("no node matches nvidia.com/gpu.product=NVIDIA-B200"));

  const auto cordon = clusterOf(h100Node("gpu-b", "570", 8, "  unschedulable: true\n"));
  const auto cordoned = judgeWithCluster(gpuPod(1), *cordon, kUnschedulable);
  ASSERT_THAT(rulesHit(cordoned), ElementsAre("gpu-unschedulable"));
  EXPECT_THAT(cordoned[0].message(), HasSubstr("0/1 nodes are available: 1 node(s) were unschedulable."));
}

TEST(GpuUnschedulable, NodesOfOneGroupCountEachAndAHostnameSelectorJudgesEachNode) {
  const auto cluster =
      clusterOf(h100Node("gpu-a", "570", 4) + h100Node("gpu-b", "570", 4) + h100Node("gpu-c", "570", 4));
  ASSERT_EQ(cluster->nodeGroups().size(), 1u);
  const auto findings = judgeWithCluster(gpuPod(8), *cluster, kUnschedulable);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-unschedulable"));
  EXPECT_THAT(findings[0].message(), HasSubstr("0/3 nodes are available: 3 Insufficient nvidia.com/gpu."));
  EXPECT_THAT(findings[0].message(), HasSubstr("the most a node offers is 4 (gpu-a, gpu-b, gpu-c)"));
  const auto hostname = judgeWithCluster(
      gpuPod(1, "  nodeSelector: {kubernetes.io/hostname: gpu-z}\n  tolerations: [{operator: Exists}]\n"), *cluster,
      kUnschedulable);
  ASSERT_THAT(rulesHit(hostname), ElementsAre("gpu-unschedulable"));
  EXPECT_THAT(hostname[0].message(), HasSubstr("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."));
}

TEST(GpuUnschedulable, ANodeNameTheClusterDoesNotHave) {
  const auto cluster = clusterOf(h100Node("gpu-a", "570", 8));
  const auto findings = judgeWithCluster(gpuPod(1, "  nodeName: gpu-z\n"), *cluster, kUnschedulable);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-unschedulable"));
  EXPECT_EQ(findings[0].field(), "spec.nodeName");
  EXPECT_THAT(findings[0].message(), HasSubstr("the cluster has no node gpu-z"));
  // A node it does have: the kubelet runs it, NoSchedule taints and all (no scheduler).
  EXPECT_THAT(judgeWithCluster(gpuPod(1, "  nodeName: gpu-a\n"), *cluster, kUnschedulable), IsEmpty());
}

TEST(GpuUnschedulable, ANodeNameOfANodeWithoutGpusFailsAtTheKubelet) {
  // spec.nodeName skips the scheduler; the kubelet's admission (NodeResourcesFit) finds no
  // nvidia.com/gpu on cpu-1 and the pod fails with OutOfnvidia.com/gpu (red team 32 B16).
  const auto cluster = clusterOf(h100Node("gpu-a", "570", 8) + kCpuNode);
  const auto findings = judgeWithCluster(gpuPod(1, "  nodeName: cpu-1\n"), *cluster, kUnschedulable);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-unschedulable"));
  EXPECT_EQ(findings[0].field(), "spec.containers[0].resources.limits[nvidia.com/gpu]");
  EXPECT_THAT(findings[0].message(), HasSubstr("the pod names node cpu-1 (spec.nodeName)"));
  EXPECT_THAT(findings[0].message(), HasSubstr("it fails with reason OutOfnvidia.com/gpu"));
  // Too few GPUs on the node it names: gpu-count-exceeds-node says the same of the count.
  const auto tooMany = judgeWithCluster(gpuPod(16, "  nodeName: gpu-a\n"), *cluster,
                                        onlyRules({"gpu-unschedulable", "gpu-count-exceeds-node"}));
  ASSERT_THAT(rulesHit(tooMany), ElementsAre("gpu-count-exceeds-node"));
  EXPECT_THAT(tooMany[0].message(), HasSubstr("the kubelet of the node it names (spec.nodeName) rejects it and it "
                                              "fails with reason OutOfnvidia.com/gpu"));
}

TEST(GpuUnschedulable, AKarpenterNodePoolThatCanLaunchANodeIsEnough) {
  const std::string pool =
      "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n"
      "      requirements:\n      - {key: karpenter.k8s.aws/instance-gpu-count, operator: In, values: [\"8\"]}\n"
      "      taints: [{key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}]\n  limits: {nvidia.com/gpu: 64}\n---\n";
  const auto cluster = clusterOf(kCpuNode + pool);
  EXPECT_THAT(judgeWithCluster(gpuPod(8), *cluster, kUnschedulable), IsEmpty());
  const auto tooMany = judgeWithCluster(gpuPod(16), *cluster, kUnschedulable);
  ASSERT_THAT(rulesHit(tooMany), ElementsAre("gpu-unschedulable"));
  EXPECT_THAT(tooMany[0].message(), HasSubstr("No NodePool can launch a node for it: gpu: its nodes hold at most 8 GPUs."));
  // A label the pool neither sets nor requires is absent on its nodes.
  const auto product = judgeWithCluster(gpuPod(1, "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
                                                  "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"),
                                        *cluster, kUnschedulable);
  ASSERT_THAT(rulesHit(product), ElementsAre("gpu-unschedulable"));
  EXPECT_THAT(product[0].message(), HasSubstr("gpu: its nodes cannot satisfy nodeSelector nvidia.com/gpu.product=NVIDIA-L4"));
  const auto untolerated = judgeWithCluster(gpuPod(1, ""), *cluster, kUnschedulable);
  ASSERT_THAT(rulesHit(untolerated), ElementsAre("gpu-unschedulable"));
  EXPECT_THAT(untolerated[0].message(), HasSubstr("gpu: untolerated taint nvidia.com/gpu=true:NoSchedule"));
}

const Policy kPin = onlyRules({"gpu-missing-driver-pin"});

TEST(GpuMissingDriverPinWithFacts, MixedDriversAmongTheReachableNodesAreAnError) {
  const auto mixed = clusterOf(h100Node("gpu-a", "535", 8) + h100Node("gpu-b", "570", 8) + h100Node("gpu-c", "570", 8));
  const auto findings = judgeWithCluster(gpuPod(1), *mixed, kPin);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_EQ(findings[0].severity, Severity::Error);
  EXPECT_THAT(findings[0].message(), HasSubstr("run 2 CUDA driver majors: 535 (1 node: gpu-a), 570 (2 nodes: gpu-b, gpu-c)"));
  EXPECT_THAT(findings[0].message(), HasSubstr("(snapshot test)"));
  // The policy still decides.
  Policy warningOnly = kPin;
  warningOnly.rules["gpu-missing-driver-pin"] = RuleSetting::Warning;
  EXPECT_EQ(judgeWithCluster(gpuPod(1), *mixed, warningOnly).at(0).severity, Severity::Warning);
}

TEST(GpuMissingDriverPinWithFacts, MixedDriversThatAllRunTheImagesCudaAreAWarning) {
  // A rollout from 550 to 570: both branches support CUDA 12.2 and 12.4 natively.
  const auto rollout = clusterOf(h100Node("gpu-a", "550", 8) + h100Node("gpu-b", "570", 8));
  const auto podOf = [](const std::string& image) {
    return "apiVersion: v1\nkind: Pod\nmetadata: {name: train, namespace: ml}\nspec:\n"
           "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n  containers:\n  - name: app\n    image: " +
           image + "\n    resources:\n      limits: {nvidia.com/gpu: 1}\n";
  };
  for (const char* image : {"nvidia/cuda:12.2.2-runtime-ubuntu22.04", "nvidia/cuda:12.4.1-base-ubuntu22.04"}) {
    const auto findings = judgeWithCluster(podOf(image), *rollout, kPin);
    ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-missing-driver-pin")) << image;
    EXPECT_EQ(findings[0].severity, Severity::Warning) << image;
    EXPECT_THAT(findings[0].message(), HasSubstr("natively, but the next node group may not")) << image;
  }
  // CUDA 12.8 needs the 570 branch: the 550 node is too old for it.
  EXPECT_EQ(judgeWithCluster(podOf("nvidia/cuda:12.8.0-base-ubuntu24.04"), *rollout, kPin).at(0).severity,
            Severity::Error);
  // An image that names no CUDA version may need either: still the error, and it says why.
  const auto unknown = judgeWithCluster(podOf("busybox:1.36"), *rollout, kPin);
  EXPECT_EQ(unknown.at(0).severity, Severity::Error);
  EXPECT_THAT(unknown.at(0).message(), HasSubstr("no container names its CUDA version"));
  // Red team 35 D3: an image that runs on the oldest driver says so without a pin (a pin to one major
  // would strand it when the rollout ends): env CUDA_VERSION on the container.
  EXPECT_THAT(unknown.at(0).message(), HasSubstr("env CUDA_VERSION: \"<its CUDA version>\" on the container"));
  const std::string declared =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: serve, namespace: ml}\nspec:\n"
      "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n  containers:\n  - name: vllm\n"
      "    image: vllm/vllm-openai:v0.11.0\n    env: [{name: CUDA_VERSION, value: \"12.4\"}]\n"
      "    resources:\n      limits: {nvidia.com/gpu: 1}\n";
  EXPECT_EQ(judgeWithCluster(declared, *rollout, kPin).at(0).severity, Severity::Warning);
}

// A DaemonSet runs one pod on every node it can reach: a GPU node agent
// (health check, exporter, burn-in) must run on every driver during a
// rollout, so a pin would be wrong advice, and a denial would keep it off.
TEST(GpuMissingDriverPinWithFacts, ADaemonSetOnMixedDriversIsAWarningThatSaysItRunsOnEach) {
  const auto rollout = clusterOf(h100Node("gpu-a", "550", 8) + h100Node("gpu-b", "570", 8));
  const std::string agent =
      "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: gpu-burn, namespace: ops}\nspec:\n"
      "  selector: {matchLabels: {app: gpu-burn}}\n  template:\n    metadata: {labels: {app: gpu-burn}}\n    spec:\n"
      "      nodeSelector: {nvidia.com/gpu.present: \"true\"}\n"
      "      tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n      containers:\n      - name: burn\n"
      "        image: myorg/gpu-burn:v3\n        resources:\n          limits: {nvidia.com/gpu: 8}\n";
  const auto findings = judgeWithCluster(agent, *rollout, kPin);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_EQ(findings[0].severity, Severity::Warning);
  EXPECT_THAT(findings[0].message(), HasSubstr("this DaemonSet runs a pod on each GPU node it can reach, and they run "
                                               "2 CUDA driver majors: 550 (1 node: gpu-a), 570 (1 node: gpu-b)"));
  // The same template in a Deployment lands on one node of either driver: the error stays.
  std::string deployment = agent;
  deployment.replace(deployment.find("DaemonSet"), 9, "Deployment");
  EXPECT_EQ(judgeWithCluster(deployment, *rollout, kPin).at(0).severity, Severity::Error);
}

TEST(GpuMissingDriverPinWithFacts, OneDriverIsAWarningAndABoundPodNothing) {
  const auto one = clusterOf(h100Node("gpu-a", "570", 8) + h100Node("gpu-b", "570", 8));
  const auto findings = judgeWithCluster(gpuPod(1), *one, kPin);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_EQ(findings[0].severity, Severity::Warning);
  EXPECT_THAT(findings[0].message(), HasSubstr("all run CUDA driver 570 (2 nodes: gpu-a, gpu-b)"));
  EXPECT_THAT(judgeWithCluster(gpuPod(1, "  nodeName: gpu-a\n"), *one, kPin), IsEmpty());
}

TEST(GpuMissingDriverPinWithFacts, OnlyTheNodesThePodCanReachCount) {
  // The 535 node is tainted for another team: the pod cannot land there.
  const auto cluster = clusterOf(h100Node("gpu-a", "570", 8) +
                                 h100Node("team-b", "535", 8, "", "[{key: team, value: b, effect: NoSchedule}]"));
  const auto findings = judgeWithCluster(gpuPod(1, "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"), *cluster, kPin);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-missing-driver-pin"));
  EXPECT_EQ(findings[0].severity, Severity::Warning);
}

const Policy kCount = onlyRules({"gpu-count-exceeds-node"});

TEST(GpuCountExceedsNodeWithFacts, TheLargestReachableNodeIsTheLimit) {
  const auto small = clusterOf(h100Node("gpu-a", "570", 4) + h100Node("gpu-b", "570", 4));
  const auto findings = judgeWithCluster(gpuPod(6), *small, kCount);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-count-exceeds-node"));
  EXPECT_THAT(findings[0].message(), HasSubstr("more than any node it can reach holds (at most 4: gpu-a, gpu-b; snapshot test)"));
  EXPECT_THAT(judgeInput(gpuPod(6), kCount), IsEmpty());  // without facts: the policy's 8
  const auto big = clusterOf(h100Node("gpu-a", "570", 16));
  EXPECT_THAT(judgeWithCluster(gpuPod(12), *big, kCount), IsEmpty());
}


namespace gpuguard {
namespace {

TEST(CudaDriverTooOldWithFacts, AnUnpinnedPodIsJudgedAgainstTheDriversItCanReach) {
  const Policy cuda = testing::onlyRules({"cuda-driver-too-old"});
  const std::string pod =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
      "  containers:\n  - name: app\n    image: nvidia/cuda:12.8.1-base-ubuntu22.04\n"
      "    resources:\n      limits: {nvidia.com/gpu: 1}\n";
  EXPECT_THAT(testing::judgeInput(pod, cuda), ::testing::IsEmpty());  // no pin, no facts: nothing to judge
  const auto old = testing::clusterOf(h100Node("gpu-old", "470", 8) + h100Node("gpu-new", "570", 8));
  const auto findings = testing::judgeWithCluster(pod, *old, cuda);
  ASSERT_THAT(testing::rulesHit(findings), ::testing::ElementsAre("cuda-driver-too-old"));
  EXPECT_EQ(findings[0].severity, Severity::Error);
  EXPECT_THAT(findings[0].message(), ::testing::HasSubstr("GPU nodes this pod can reach run driver 470 (1 node: gpu-old)"));
  const auto recent = testing::clusterOf(h100Node("gpu-new", "570", 8));
  EXPECT_THAT(testing::judgeWithCluster(pod, *recent, cuda), ::testing::IsEmpty());
}

}  // namespace
}  // namespace gpuguard

// --- gpu-missing-toleration with node facts: the nodes' taints decide -----

const Policy kToleration = onlyRules({"gpu-missing-toleration"});

std::string untaintedGpuNode(const std::string& name, const std::string& taints = "") {
  return testing::gpuNode(
      {.name = name, .driver = "550", .taints = taints, .machine = "cpu: \"32\", memory: 256Gi, pods: \"110\""});
}

TEST(GpuMissingTolerationWithFacts, APodThatReachesAnUntaintedGpuNodeNeedsNoToleration) {
  // AKS taints its GPU nodes with nothing by default: the scheduler binds the pod.
  const auto cluster = clusterOf(untaintedGpuNode("gpu-a") + kCpuNode);
  EXPECT_THAT(judgeWithCluster(gpuPod(1, ""), *cluster, kToleration), IsEmpty());
  // Without the facts the policy's nvidia.com/gpu:NoSchedule still speaks.
  EXPECT_THAT(rulesHit(judgeInput(gpuPod(1, ""), kToleration)), ElementsAre("gpu-missing-toleration"));
}

TEST(GpuMissingTolerationWithFacts, TheTaintTheNodesCarryIsTheOneToTolerate) {
  // AKS's documented sku=gpu:NoSchedule, tolerated as AKS's docs write it.
  const auto cluster = clusterOf(untaintedGpuNode("gpu-a", "[{key: sku, value: gpu, effect: NoSchedule}]"));
  EXPECT_THAT(judgeWithCluster(gpuPod(1, "  tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]\n"),
                               *cluster, kToleration),
              IsEmpty());
  // Not tolerated: the sku taint alone keeps the pod off the GPU node, so it is the one demanded
  // (red team 32 B9; nvidia.com/gpu is on no node and is not).
  const auto f = judgeWithCluster(gpuPod(1, ""), *cluster, kToleration);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_THAT(f[0].message(), HasSubstr("no toleration for the taint sku=gpu:NoSchedule"));
}

TEST(GpuMissingTolerationWithFacts, ThePolicysTaintIsDemandedWhereAGpuNodeCarriesIt) {
  const auto cluster = clusterOf(h100Node("gpu-a", "550", 8) + kCpuNode);
  const auto findings = judgeWithCluster(gpuPod(1, ""), *cluster, kToleration);
  ASSERT_THAT(rulesHit(findings), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(findings[0].field(), "spec.tolerations");
  // A pod whose selector keeps it to the tainted nodes needs the toleration even when an untainted one exists.
  const auto mixed = clusterOf(h100Node("gpu-a", "550", 8) + untaintedGpuNode("gpu-b"));
  EXPECT_THAT(rulesHit(judgeWithCluster(gpuPod(1, "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"), *mixed, kToleration)),
              ElementsAre("gpu-missing-toleration"));
  EXPECT_THAT(judgeWithCluster(gpuPod(1, ""), *mixed, kToleration), IsEmpty());
}

TEST(GpuMissingTolerationWithFacts, FactsWithoutAnyGpuNodeLeaveItToThePolicy) {
  // GPU nodes scaled to zero: the ones to come carry the policy's taint.
  const auto cluster = clusterOf(kCpuNode);
  EXPECT_THAT(rulesHit(judgeWithCluster(gpuPod(1, ""), *cluster, kToleration)), ElementsAre("gpu-missing-toleration"));
}

// Red team 35 D6: a NodePool applied with its workload (or before Karpenter's
// CRD is watched) is not in the facts when the workload is judged. A pod whose
// node selection requires a NodePool the facts do not hold may land on the
// nodes it launches, untainted for all the facts tell: the policy's verdict
// is a warning that names the pool, and nothing "can never schedule".
TEST(GpuMissingTolerationWithFacts, ANodePoolTheFactsDoNotHoldYetMakesTheVerdictAWarningThatNamesIt) {
  const auto cluster = clusterOf(kCpuNode);
  const Policy rules = onlyRules({"gpu-missing-toleration", "gpu-unschedulable"});
  const auto f = judgeWithCluster(gpuPod(8, "  nodeSelector: {karpenter.sh/nodepool: p5}\n"), *cluster, rules);
  ASSERT_THAT(rulesHit(f), ElementsAre("gpu-missing-toleration"));
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_THAT(f[0].message(), HasSubstr("requires Karpenter NodePool p5 (karpenter.sh/nodepool), which the cluster facts "
                                        "(snapshot test) do not hold (yet)"));
  // Once the facts hold it, the pool decides: untainted, nothing to say.
  const std::string pool =
      "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p5}\nspec:\n  template:\n    spec:\n"
      "      requirements:\n      - {key: karpenter.k8s.aws/instance-gpu-count, operator: In, values: [\"8\"]}\n---\n";
  const auto withPool = clusterOf(kCpuNode + pool);
  EXPECT_THAT(judgeWithCluster(gpuPod(8, "  nodeSelector: {karpenter.sh/nodepool: p5}\n"), *withPool, rules), IsEmpty());
  // Without a NodePool in its selection the policy's error stands.
  EXPECT_EQ(judgeWithCluster(gpuPod(8, ""), *cluster, rules).at(0).severity, Severity::Error);
}

}  // namespace
}  // namespace gpuguard
