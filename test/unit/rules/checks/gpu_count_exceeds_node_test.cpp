// gpu-count-exceeds-node, and the effective pod request it rests on
// (podRequestUnits / podGpus), which follows the scheduler's
// k8s.io/component-helpers resource.PodRequests:
//   reqs = sum(app containers) + sum(sidecars)
//   init peak = max over init containers i of (request(i) + sidecars declared before i),
//               and over sidecars of the running sidecar sum
//   effective = max(reqs, init peak), per resource name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/pod_specs.h"
#include "rules/resources.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::gpuPod;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kCountOnly = onlyRules({"gpu-count-exceeds-node"});

// The one pod site of a JSON object.
PodSite siteOf(const nlohmann::json& object) {
  const std::vector<PodSite> sites = findPodSites(object);
  if (sites.size() != 1) throw std::runtime_error("expected one pod site");
  return sites.front();
}

// A container (or init container) JSON with `gpus` nvidia.com/gpu.
std::string container(const std::string& name, int gpus, bool sidecar = false) {
  return R"({"name":")" + name + R"(","image":"x",)" + (sidecar ? R"("restartPolicy":"Always",)" : "") +
         R"("resources":{"limits":{"nvidia.com/gpu":)" + std::to_string(gpus) + "}}}";
}

long long effective(const std::string& initContainers, const std::string& containers) {
  const auto pod = nlohmann::json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{)" +
                                         (initContainers.empty() ? "" : R"("initContainers":[)" + initContainers + "],") +
                                         R"("containers":[)" + containers + "]}}");
  return podRequestUnits(siteOf(pod), "nvidia.com/gpu");
}

// --- the effective request ---------------------------------------------------

TEST(PodRequestUnits, AppContainersAddUp) {
  EXPECT_EQ(effective("", container("a", 2) + "," + container("b", 3)), 5);
}

TEST(PodRequestUnits, AnInitContainerCountsOnlyWhenItNeedsMoreThanTheApp) {
  EXPECT_EQ(effective(container("init", 4), container("a", 1)), 4);
  EXPECT_EQ(effective(container("init", 1), container("a", 2) + "," + container("b", 2)), 4);
}

TEST(PodRequestUnits, InitContainersRunOneAtATime) {
  EXPECT_EQ(effective(container("i1", 3) + "," + container("i2", 5), container("a", 1)), 5);
}

TEST(PodRequestUnits, SidecarsRunBesideTheAppContainers) {
  EXPECT_EQ(effective(container("proxy", 1, true), container("a", 2)), 3);
}

TEST(PodRequestUnits, AnInitContainerRunsBesideTheSidecarsDeclaredBeforeIt) {
  // sidecar(2) then init(3): while init runs, 2 + 3 = 5 are held; the app phase needs 2 + 1 = 3.
  EXPECT_EQ(effective(container("sidecar", 2, true) + "," + container("init", 3), container("a", 1)), 5);
}

TEST(PodRequestUnits, SidecarsDeclaredAfterAnInitContainerDoNotAddToIt) {
  // init(3) then sidecar(2): init runs alone (3); the app phase needs 2 + 1 = 3.
  EXPECT_EQ(effective(container("init", 3) + "," + container("sidecar", 2, true), container("a", 1)), 3);
}

TEST(PodRequestUnits, EphemeralContainersCountNothing) {
  const auto pod = nlohmann::json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{
    "containers":[)" + container("a", 1) + R"(],
    "ephemeralContainers":[)" + container("debug", 4) + R"(]}})");
  EXPECT_EQ(podRequestUnits(siteOf(pod), "nvidia.com/gpu"), 1);
}

TEST(PodGpus, EachResourceIsTakenOnItsOwnThenSummed) {
  // The scheduler takes the max per resource: nvidia.com/gpu is max(app 0,
  // init 2) = 2 and the MIG slice max(app 2, init 0) = 2, so the node must
  // have 2 GPUs and 2 slices free: 4 GPU resources (a max of sums says 2).
  const auto pod = nlohmann::json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{
    "initContainers":[{"name":"i","image":"x","resources":{"limits":{"nvidia.com/gpu":2}}}],
    "containers":[{"name":"a","image":"x","resources":{"limits":{"nvidia.com/mig-1g.10gb":2}}}]}})");
  const PodSite site = siteOf(pod);
  EXPECT_EQ(podRequestUnits(site, "nvidia.com/gpu"), 2);
  EXPECT_EQ(podRequestUnits(site, "nvidia.com/mig-1g.10gb"), 2);
  EXPECT_EQ(podGpus(site, Policy{}), 4);
}

TEST(PodGpus, AnInitContainerAfterASidecarIsCounted) {
  const auto pod = nlohmann::json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{
    "initContainers":[)" + container("sidecar", 1, true) + "," + container("init", 2) + R"(],
    "containers":[)" + container("a", 1) + "]}}");
  EXPECT_EQ(podGpus(siteOf(pod), Policy{}), 3);
}

// --- the rule -----------------------------------------------------------------

TEST(GpuCountExceedsNode, MoreGpusThanANodeHoldsIsAWarning) {
  const auto f = judgeYaml(gpuPod("limits:\n  nvidia.com/gpu: 16"), kCountOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "gpu-count-exceeds-node");
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.limits[nvidia.com/gpu]");
  EXPECT_EQ(f[0].value, "16");
  EXPECT_THAT(f[0].message(), HasSubstr("the pod needs 16 nvidia.com/gpu at once"));
  EXPECT_THAT(f[0].message(), HasSubstr("maxGpusPerNode: 8"));
  EXPECT_THAT(f[0].message(), HasSubstr("Insufficient nvidia.com/gpu"));
}

TEST(GpuCountExceedsNode, ExactlyANodeIsFine) {
  EXPECT_THAT(rulesHit(judgeYaml(gpuPod("limits:\n  nvidia.com/gpu: 8"), kCountOnly)), IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(gpuPod("limits:\n  nvidia.com/gpu: 9"), kCountOnly)),
              ElementsAre("gpu-count-exceeds-node"));
}

TEST(GpuCountExceedsNode, ThePolicySetsTheNodeSize) {
  Policy big = kCountOnly;
  big.maxGpusPerNode = 16;
  EXPECT_THAT(rulesHit(judgeYaml(gpuPod("limits:\n  nvidia.com/gpu: 16"), big)), IsEmpty());
  Policy small = kCountOnly;
  small.maxGpusPerNode = 4;
  EXPECT_THAT(rulesHit(judgeYaml(gpuPod("limits:\n  nvidia.com/gpu: 8"), small)),
              ElementsAre("gpu-count-exceeds-node"));
}

TEST(GpuCountExceedsNode, ContainersAddUpAndTheBiggestIsReported) {
  const auto f = judgeYaml(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - {name: a, image: x, resources: {limits: {nvidia.com/gpu: 4}}}
      - {name: b, image: x, resources: {limits: {nvidia.com/gpu: 6}}}
)",
                           kCountOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.template.spec.containers[1].resources.limits[nvidia.com/gpu]");
  EXPECT_THAT(f[0].message(), HasSubstr("needs 10 nvidia.com/gpu at once (containers[0]: 4, containers[1]: 6)"));
}

TEST(GpuCountExceedsNode, ABigInitContainerCounts) {
  const auto f = judgeYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
  - {name: warmup, image: x, resources: {limits: {nvidia.com/gpu: 12}}}
  containers:
  - {name: a, image: x, resources: {limits: {nvidia.com/gpu: 1}}}
)",
                           kCountOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.initContainers[0].resources.limits[nvidia.com/gpu]");
}

TEST(GpuCountExceedsNode, InitContainersThatEachFitAreFine) {
  EXPECT_THAT(rulesHit(judgeYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
  - {name: i1, image: x, resources: {limits: {nvidia.com/gpu: 8}}}
  - {name: i2, image: x, resources: {limits: {nvidia.com/gpu: 8}}}
  containers:
  - {name: a, image: x, resources: {limits: {nvidia.com/gpu: 8}}}
)",
                                 kCountOnly)),
              IsEmpty());
}

TEST(GpuCountExceedsNode, MigSlicesAndSharedGpusAreNotWholeGpus) {
  EXPECT_THAT(rulesHit(judgeYaml(gpuPod("limits:\n  nvidia.com/mig-1g.10gb: 14"), kCountOnly)), IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(gpuPod("limits:\n  nvidia.com/gpu.shared: 16"), kCountOnly)), IsEmpty());
}

TEST(GpuCountExceedsNode, NonGpuResourcesAreNotCounted) {
  EXPECT_THAT(rulesHit(judgeYaml(gpuPod("limits:\n  example.com/foo: 100"), kCountOnly)), IsEmpty());
}

TEST(GpuCountExceedsNode, OtherPolicyGpuResourcesAreCounted) {
  Policy amd = kCountOnly;
  amd.gpuResources.push_back("amd.com/gpu");
  EXPECT_THAT(rulesHit(judgeYaml(gpuPod("limits:\n  amd.com/gpu: 16"), amd)), ElementsAre("gpu-count-exceeds-node"));
  EXPECT_THAT(rulesHit(judgeYaml(gpuPod("limits:\n  amd.com/gpu: 16"), kCountOnly)), IsEmpty());
}

TEST(GpuCountExceedsNode, EachPodOfAMultiPodWorkloadIsJudgedAlone) {
  EXPECT_THAT(rulesHit(judgeYaml(R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: t}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 4
      template:
        spec:
          containers:
          - {name: pytorch, image: x, resources: {limits: {nvidia.com/gpu: 8}}}
)",
                                 kCountOnly)),
              IsEmpty());
}

// --- the node selection states the nodes' GPU count (reference §15.6) ----------

// A Pod asking `gpus` nvidia.com/gpu whose spec holds `selection` (two-space indented lines).
std::string selectedPod(const std::string& selection, int gpus) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + selection +
         "  containers:\n  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: " + std::to_string(gpus) +
         "}}}\n";
}

TEST(GpuCountExceedsNode, A16GpuMachineTypeHolds16) {
  const std::string a2 = "  nodeSelector: {node.kubernetes.io/instance-type: a2-megagpu-16g}\n";
  EXPECT_THAT(judgeYaml(selectedPod(a2, 16), kCountOnly), IsEmpty());
  const auto f = judgeYaml(selectedPod(a2, 17), kCountOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("at most 16: nodeSelector node.kubernetes.io/instance-type=a2-megagpu-16g"));
  EXPECT_THAT(f[0].message(), Not(HasSubstr("maxGpusPerNode: 8")));
}

// Red team 33 C11: GKE's a2-megagpu-16g holds 16 A100 40GB (nvidia-tesla-a100);
// with --platform gke (or without) 16 of them fit one node.
TEST(GpuCountExceedsNode, AGkeAcceleratorBoundsThePodByItsLargestMachine) {
  const std::string a100 = "  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-tesla-a100}\n";
  EXPECT_THAT(judgeYaml(selectedPod(a100, 16), kCountOnly), IsEmpty());
  Policy gke = Policy::fromJson(nlohmann::json::object(), "test", "gke");
  gke.rules = kCountOnly.rules;
  EXPECT_THAT(judgeYaml(selectedPod(a100, 16), gke), IsEmpty());
  const auto f = judgeYaml(selectedPod(a100, 17), kCountOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("at most 16: nodeSelector cloud.google.com/gke-accelerator=nvidia-tesla-a100"));
  // N1 machines take at most 4 T4s.
  EXPECT_THAT(rulesHit(judgeYaml(selectedPod("  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-tesla-t4}\n", 8),
                                 kCountOnly)),
              ElementsAre("gpu-count-exceeds-node"));
  // An accelerator the table does not know leaves the policy's limit.
  EXPECT_THAT(judgeYaml(selectedPod("  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-x9}\n", 8), kCountOnly),
              IsEmpty());
}

TEST(GpuCountExceedsNode, AnInstanceTypeWhoseCountIsUnknownLeavesThePolicysLimit) {
  EXPECT_THAT(rulesHit(judgeYaml(selectedPod("  nodeSelector: {node.kubernetes.io/instance-type: x9-huge}\n", 16),
                                 kCountOnly)),
              ElementsAre("gpu-count-exceeds-node"));
}

TEST(GpuCountExceedsNode, ANodeGpuCountLabelBoundsThePod) {
  const auto f = judgeYaml(selectedPod("  nodeSelector: {nvidia.com/gpu.count: \"4\"}\n", 8), kCountOnly);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("more than the nodes its node selection admits hold (at most 4"));
  EXPECT_THAT(judgeYaml(selectedPod("  nodeSelector: {eks.amazonaws.com/instance-gpu-count: \"4\"}\n", 8),
                        kCountOnly),
              ::testing::SizeIs(1));
}

TEST(GpuCountExceedsNode, OredTermsTakeTheLargestBound) {
  const std::string karpenter =
      "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "        nodeSelectorTerms:\n"
      "        - matchExpressions: [{key: karpenter.k8s.aws/instance-gpu-count, operator: In, values: [\"1\", \"4\"]}]\n";
  EXPECT_THAT(rulesHit(judgeYaml(selectedPod(karpenter, 8), kCountOnly)), ElementsAre("gpu-count-exceeds-node"));
  EXPECT_THAT(judgeYaml(selectedPod(karpenter, 4), kCountOnly), IsEmpty());
  // A second term without a bound: the pod may land anywhere; the policy's limit holds.
  const std::string open = karpenter + "        - matchExpressions: [{key: kubernetes.io/os, operator: In, values: [linux]}]\n";
  EXPECT_THAT(judgeYaml(selectedPod(open, 8), kCountOnly), IsEmpty());
}

TEST(GpuCountExceedsNode, LtOnACountLabelBoundsBelowIt) {
  const std::string lt =
      "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "        nodeSelectorTerms:\n"
      "        - matchExpressions: [{key: nvidia.com/gpu.count, operator: Lt, values: [\"3\"]}]\n";
  EXPECT_THAT(rulesHit(judgeYaml(selectedPod(lt, 3), kCountOnly)), ElementsAre("gpu-count-exceeds-node"));
  EXPECT_THAT(judgeYaml(selectedPod(lt, 2), kCountOnly), IsEmpty());
  const std::string ltMin =
      "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "        nodeSelectorTerms:\n"
      "        - matchExpressions: [{key: nvidia.com/gpu.count, operator: Lt, values: [\"-9223372036854775808\"]}]\n";
  // The int64 minimum: no N - 1 to take (no overflow), so no bound.
  EXPECT_THAT(judgeYaml(selectedPod(ltMin, 1), kCountOnly), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
