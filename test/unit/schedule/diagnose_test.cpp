// "Why is my GPU pod Pending?" (schedule/): GPU pods against the hand-written
// cluster snapshot in test/data/snapshots (nodes.json: a CPU node, a T4 node
// with one Unhealthy GPU, two A100 nodes (one full, one cordoned), an H100
// node with an extra taint, a MIG node and a time-sliced L4 node;
// pods.json: what is bound to them), one cause per test, then the scheduler
// semantics in detail, the report, and the gpuguard-lint --nodes front end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "schedule/diagnose.h"
#include "schedule/node_snapshot.h"
#include "schedule/report.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::schedule {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using nlohmann::json;

const std::string kSnapshots = GPUGUARD_SOURCE_DIR "/test/data/snapshots/";

json loadJson(const std::string& name) {
  std::ifstream in(kSnapshots + name);
  if (!in) throw std::runtime_error("cannot read " + kSnapshots + name);
  return json::parse(in);
}

json yamlDoc(const std::string& text) {
  yaml::ParseResult parsed = yaml::parseStream(text);
  if (parsed.error || parsed.documents.size() != 1) throw std::runtime_error("test YAML must hold one document");
  return parsed.documents.front().value;
}

const Snapshot& cluster() {
  static const json nodes = loadJson("nodes.json");
  static const json pods = loadJson("pods.json");
  static const Snapshot snapshot = makeSnapshot(nodes, &pods);
  return snapshot;
}

std::vector<PodDiagnosis> diagnoseYaml(const std::string& text, const Snapshot& s = cluster(), const Policy& p = {}) {
  return diagnoseObject(yamlDoc(text), s, p);
}

PodDiagnosis one(const std::string& text, const Snapshot& s = cluster(), const Policy& p = {}) {
  std::vector<PodDiagnosis> all = diagnoseYaml(text, s, p);
  if (all.size() != 1) throw std::runtime_error("expected one GPU pod, got " + std::to_string(all.size()));
  return all.front();
}

const NodeVerdict& on(const PodDiagnosis& d, const std::string& node) {
  for (const NodeVerdict& v : d.nodes) {
    if (v.node == node) return v;
  }
  throw std::runtime_error("no node " + node);
}

const ResourceFit& fit(const NodeVerdict& v, const std::string& resource) {
  for (const ResourceFit& f : v.resources) {
    if (f.name == resource) return f;
  }
  throw std::runtime_error("no resource " + resource + " on " + v.node);
}

constexpr const char* kTolerateGpu = "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]";

// A Pod with one container; `spec` holds extra pod-spec lines, indented by 2.
std::string pod(const std::string& limits, const std::string& spec = "",
                const std::string& tolerations = kTolerateGpu) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec:\n" +
         (tolerations.empty() ? std::string() : "  tolerations: " + tolerations + "\n") + spec +
         "  containers:\n  - name: c\n    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n"
         "    resources:\n      limits: " + limits + "\n";
}

// --- the snapshot ------------------------------------------------------------

TEST(DiagnoseSnapshot, ReadsNodesAndCountsOnlyPodsThatHoldSomething) {
  const Snapshot& s = cluster();
  ASSERT_THAT(s.nodes, SizeIs(7));
  EXPECT_EQ(s.error, "");
  EXPECT_THAT(s.warnings, IsEmpty());
  EXPECT_EQ(s.boundPods, 9u);         // the Pending pod holds nothing
  EXPECT_EQ(s.finishedPods, 1u);      // ml/old-job-7x2kq Succeeded on gpu-a100-2
  EXPECT_EQ(s.podsOnOtherNodes, 1u);  // kube-system/gone-pod on gpu-old-9
  const NodeInfo* a100 = s.node("gpu-a100-1");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->used("nvidia.com/gpu").str(), "8");
  EXPECT_EQ(a100->used("cpu").str(), "32");
  EXPECT_EQ(s.node("gpu-a100-2")->used("nvidia.com/gpu").str(), "0");
  EXPECT_TRUE(s.node("gpu-a100-2")->unschedulable);
  // infer-0: max(init cpu 2, app cpu 8) = 8; its GPU request comes from the limit.
  EXPECT_EQ(s.node("gpu-h100-1")->used("cpu").str(), "8");
  EXPECT_EQ(s.node("gpu-h100-1")->used("nvidia.com/gpu").str(), "4");
  EXPECT_EQ(s.node("cpu-1")->allocatable.at("memory").str(true), "63512708Ki");
}

TEST(DiagnoseSnapshot, RejectsSomethingThatIsNotANodeList) {
  EXPECT_THAT(makeSnapshot(json::parse(R"({"kind": "Deployment"})")).error, HasSubstr("kubectl get nodes -o json"));
  EXPECT_EQ(makeSnapshot(json::parse(R"({"kind": "List", "items": []})")).error, "");
  const Snapshot single = makeSnapshot(json::parse(R"({"kind": "Node", "metadata": {"name": "n"}})"));
  ASSERT_THAT(single.nodes, SizeIs(1));
  EXPECT_EQ(single.nodes[0].name, "n");
}

// --- one test per cause ------------------------------------------------------------

TEST(Diagnose, NoDevicePluginOnTheNode) {
  const PodDiagnosis d = one(pod("{nvidia.com/gpu: 1}"));
  const NodeVerdict& cpu = on(d, "cpu-1");
  EXPECT_FALSE(cpu.schedulable);
  EXPECT_THAT(cpu.reasons, ElementsAre("Insufficient nvidia.com/gpu"));
  const ResourceFit& gpu = fit(cpu, "nvidia.com/gpu");
  EXPECT_FALSE(gpu.advertised);
  EXPECT_EQ(gpu.cause, "device plugin not registered on this node");
  EXPECT_EQ(cpu.cause, "nvidia.com/gpu: device plugin not registered on this node");
  EXPECT_EQ(cpu.verdict, cpu.cause);
}

TEST(Diagnose, UnhealthyDeviceShowsAllocatableBelowCapacity) {
  const PodDiagnosis d = one(pod("{nvidia.com/gpu: 4}", "  nodeSelector: {nvidia.com/gpu.product: Tesla-T4}\n"));
  const NodeVerdict& t4 = on(d, "gpu-t4-1");
  const ResourceFit& gpu = fit(t4, "nvidia.com/gpu");
  EXPECT_TRUE(gpu.advertised);
  EXPECT_EQ(gpu.capacity.str(), "4");
  EXPECT_EQ(gpu.allocatable.str(), "3");
  EXPECT_EQ(gpu.free.str(), "3");
  EXPECT_FALSE(gpu.fits);
  EXPECT_EQ(gpu.cause, "needs 4, allocatable 3 < capacity 4: 1 device(s) reported Unhealthy");
  EXPECT_FALSE(d.schedulable());
  EXPECT_EQ(d.verdict,
            "0/7 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint(s), "
            "1 node(s) were unschedulable, 4 node(s) didn't match Pod's node "
            "affinity/selector.");
  EXPECT_EQ(d.dominantReason, "node(s) didn't match Pod's node affinity/selector");
  // Three GPUs still fit: the gap only matters when it is the gap.
  EXPECT_TRUE(one(pod("{nvidia.com/gpu: 3}", "  nodeSelector: {nvidia.com/gpu.product: Tesla-T4}\n")).schedulable());
}

TEST(Diagnose, BoundPodsHoldEveryGpu) {
  const PodDiagnosis d =
      one(pod("{nvidia.com/gpu: 1}", "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"));
  const ResourceFit& gpu = fit(on(d, "gpu-a100-1"), "nvidia.com/gpu");
  EXPECT_EQ(gpu.allocatable.str(), "8");
  EXPECT_EQ(gpu.used.str(), "8");
  EXPECT_EQ(gpu.free.str(), "0");
  EXPECT_EQ(gpu.holders, 2u);
  EXPECT_EQ(gpu.cause, "needs 1, 0 free: 8 of 8 held by 2 bound pods");
  // The MIG node is an A100 too, but advertises no whole GPU.
  EXPECT_EQ(fit(on(d, "gpu-mig-1"), "nvidia.com/gpu").cause, "the device plugin advertises 0 nvidia.com/gpu");
  EXPECT_EQ(d.dominantReason, "node(s) didn't match Pod's node affinity/selector");
  EXPECT_THAT(d.verdict, HasSubstr("2 Insufficient nvidia.com/gpu"));
}

TEST(Diagnose, SelectorMismatchShowsTheNodesActualValue) {
  const PodDiagnosis d = one(pod("{nvidia.com/gpu: 1}", "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-T4}\n"));
  const NodeVerdict& t4 = on(d, "gpu-t4-1");
  ASSERT_THAT(t4.selectorFailures, SizeIs(1));
  EXPECT_EQ(t4.selectorFailures[0].requirement, "nvidia.com/gpu.product=NVIDIA-T4");
  EXPECT_EQ(t4.selectorFailures[0].nodeValue, "Tesla-T4");
  EXPECT_EQ(t4.selectorFailures[0].why, "node has Tesla-T4");
  EXPECT_THAT(t4.reasons, ElementsAre("node(s) didn't match Pod's node affinity/selector"));
  EXPECT_EQ(t4.selectorFailures[0].observed, "nvidia.com/gpu.product is Tesla-T4");
  EXPECT_EQ(t4.cause, "nodeSelector: nvidia.com/gpu.product is Tesla-T4");
  EXPECT_EQ(t4.verdict, "nodeSelector mismatch");
  const NodeVerdict& cpu = on(d, "cpu-1");
  ASSERT_THAT(cpu.selectorFailures, SizeIs(1));
  EXPECT_FALSE(cpu.selectorFailures[0].nodeValue.has_value());
  EXPECT_EQ(cpu.selectorFailures[0].why, "label absent");
  EXPECT_EQ(cpu.cause, "nodeSelector: nvidia.com/gpu.product absent");
  // The value no node has, and the values the nodes do have.
  EXPECT_THAT(d.notes, Contains(std::string(
                           "no node in the snapshot has nvidia.com/gpu.product=NVIDIA-T4; the nodes have "
                           "NVIDIA-A100-SXM4-80GB (3 nodes), NVIDIA-H100-80GB-HBM3 (1 node), NVIDIA-L4 (1 node), "
                           "Tesla-T4 (1 node)")));
}

TEST(Diagnose, AffinityGtFailsOnOlderDriversAndPassesOnNewer) {
  const std::string affinity =
      "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "        nodeSelectorTerms:\n        - matchExpressions:\n"
      "          - {key: nvidia.com/cuda.driver-version.major, operator: Gt, values: [\"560\"]}\n";
  const PodDiagnosis d = one(pod("{nvidia.com/gpu: 1}", affinity, "[{operator: Exists}]"));
  const NodeVerdict& a100 = on(d, "gpu-a100-1");
  EXPECT_FALSE(a100.affinityMatches);
  ASSERT_THAT(a100.terms, SizeIs(1));
  ASSERT_THAT(a100.terms[0].failing, SizeIs(1));
  EXPECT_EQ(a100.terms[0].failing[0].requirement, "nvidia.com/cuda.driver-version.major Gt 560");
  EXPECT_EQ(a100.terms[0].failing[0].why, "node has 550");
  EXPECT_EQ(a100.cause, "affinity: nvidia.com/cuda.driver-version.major is 550");
  EXPECT_EQ(a100.verdict, "affinity mismatch");
  EXPECT_EQ(on(d, "cpu-1").terms[0].failing[0].why, "label absent");
  EXPECT_TRUE(on(d, "gpu-h100-1").affinityMatches);
  EXPECT_EQ(d.verdict, "schedulable on 1 node: gpu-h100-1");
  EXPECT_THAT(d.schedulableNodes, ElementsAre("gpu-h100-1"));
}

TEST(Diagnose, UntoleratedTaintIsNamedInTheCauseAndPreferNoScheduleIsIgnored) {
  const PodDiagnosis d = one(pod("{nvidia.com/gpu: 1}"));
  const NodeVerdict& h100 = on(d, "gpu-h100-1");
  ASSERT_THAT(h100.untoleratedTaints, SizeIs(1));  // not spot=true:PreferNoSchedule
  EXPECT_EQ(describeTaint(h100.untoleratedTaints[0]), "dedicated=inference:NoSchedule");
  EXPECT_THAT(h100.reasons, ElementsAre("node(s) had untolerated taint(s)"));
  EXPECT_EQ(h100.cause, "untolerated taint dedicated=inference:NoSchedule");
  EXPECT_EQ(h100.verdict, "untolerated taint");
  // Without any toleration both NoSchedule taints count, in the node's order;
  // the scheduler's reason (1.37) names neither.
  const PodDiagnosis bare = one(pod("{nvidia.com/gpu: 1}", "", ""));
  const NodeVerdict& bareH100 = on(bare, "gpu-h100-1");
  EXPECT_THAT(bareH100.reasons, ElementsAre("node(s) had untolerated taint(s)"));
  ASSERT_THAT(bareH100.untoleratedTaints, SizeIs(2));
  EXPECT_EQ(bareH100.untoleratedTaints[0].key, "nvidia.com/gpu");
  EXPECT_EQ(bareH100.cause, "untolerated taints nvidia.com/gpu=present:NoSchedule, dedicated=inference:NoSchedule");
}

TEST(Diagnose, APodNamingItsNodeMeetsOnlyTheKubeletsNoExecuteCheck) {
  // spec.nodeName: kube-scheduler never sees the pod; the kubelet admits it
  // against NoExecute taints only, and a cordon does not stop it (§15.1).
  const PodDiagnosis d = one(pod("{nvidia.com/gpu: 1}", "  nodeName: gpu-h100-1\n", ""));
  const NodeVerdict& h100 = on(d, "gpu-h100-1");
  EXPECT_THAT(h100.untoleratedTaints, IsEmpty());
  EXPECT_THAT(d.schedulableNodes, ElementsAre("gpu-h100-1"));
  EXPECT_FALSE(on(one(pod("{nvidia.com/gpu: 1}", "  nodeName: gpu-a100-2\n", "")), "gpu-a100-2").cordoned);
}

TEST(Diagnose, CordonedNode) {
  const PodDiagnosis d = one(pod("{nvidia.com/gpu: 1}"));
  const NodeVerdict& a100 = on(d, "gpu-a100-2");
  EXPECT_TRUE(a100.cordoned);
  EXPECT_THAT(a100.reasons, ElementsAre("node(s) were unschedulable"));
  EXPECT_EQ(a100.cause, "cordoned (spec.unschedulable)");
  // Tolerating everything tolerates the cordon too; the Succeeded pod there holds nothing.
  const PodDiagnosis all = one(pod("{nvidia.com/gpu: 8}", "", "[{operator: Exists}]"));
  EXPECT_FALSE(on(all, "gpu-a100-2").cordoned);
  EXPECT_TRUE(on(all, "gpu-a100-2").schedulable);
  EXPECT_EQ(fit(on(all, "gpu-a100-2"), "nvidia.com/gpu").free.str(), "8");
}

TEST(Diagnose, MigSlicesAreJustAnotherExtendedResource) {
  const PodDiagnosis small = one(pod("{nvidia.com/mig-1g.10gb: 1}"));
  EXPECT_EQ(small.verdict, "schedulable on 1 node: gpu-mig-1");
  EXPECT_THAT(small.gpuResources, ElementsAre("nvidia.com/mig-1g.10gb"));
  EXPECT_EQ(fit(on(small, "gpu-mig-1"), "nvidia.com/mig-1g.10gb").free.str(), "12");
  EXPECT_THAT(fit(on(small, "gpu-a100-1"), "nvidia.com/mig-1g.10gb").cause,
              HasSubstr("device plugin not registered on this node"));

  const PodDiagnosis big = one(pod("{nvidia.com/mig-3g.40gb: 1}"));
  EXPECT_FALSE(big.schedulable());
  EXPECT_EQ(fit(on(big, "gpu-mig-1"), "nvidia.com/mig-3g.40gb").cause, "needs 1, 0 free: 4 of 4 held by 2 bound pods");
  EXPECT_EQ(big.dominantReason, "Insufficient nvidia.com/mig-3g.40gb");
  EXPECT_THAT(big.dominantDetails,
              ElementsAre("cpu-1, gpu-t4-1, gpu-a100-1, gpu-l4-shared-1: nvidia.com/mig-3g.40gb: device plugin not "
                          "registered on this node",
                          "gpu-mig-1: nvidia.com/mig-3g.40gb: needs 1, 0 free: 4 of 4 held by 2 bound pods"));

  const PodDiagnosis absent = one(pod("{nvidia.com/mig-2g.20gb: 1}"));
  EXPECT_THAT(absent.notes, Contains(AllOf(HasSubstr("no node in the snapshot advertises nvidia.com/mig-2g.20gb"),
                                           HasSubstr("nvidia.com/mig-1g.10gb"))));
}

TEST(Diagnose, SharedGpusAreJustAnotherExtendedResource) {
  const PodDiagnosis fits = one(pod("{nvidia.com/gpu.shared: 2}"));
  EXPECT_EQ(fits.verdict, "schedulable on 1 node: gpu-l4-shared-1");
  const PodDiagnosis tooMany = one(pod("{nvidia.com/gpu.shared: 3}"));
  EXPECT_FALSE(tooMany.schedulable());
  EXPECT_EQ(fit(on(tooMany, "gpu-l4-shared-1"), "nvidia.com/gpu.shared").cause,
            "needs 3, 2 free: 14 of 16 held by 3 bound pods");
}

TEST(Diagnose, SchedulableDeploymentTemplate) {
  const PodDiagnosis d = one(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: serve}
spec:
  template:
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists}]
      containers:
      - name: c
        image: x
        resources:
          requests: {cpu: 500m, memory: 1Gi}
          limits: {nvidia.com/gpu: 1}
)");
  EXPECT_EQ(d.title(), "Deployment serve/web (spec.template.spec)");
  EXPECT_TRUE(d.schedulable());
  EXPECT_EQ(d.verdict, "schedulable on 1 node: gpu-t4-1");
  EXPECT_EQ(d.dominantReason, "");
  EXPECT_EQ(d.requests.at("cpu").str(), "500m");
  EXPECT_EQ(d.requests.at("memory").str(true), "1Gi");
  EXPECT_EQ(d.gpus, 1);
}

TEST(Diagnose, DriverMajorPinnedToAValueNoNodeHas) {
  const PodDiagnosis d =
      one(pod("{nvidia.com/gpu: 1}", "  nodeSelector: {nvidia.com/cuda.driver-version.major: \"525\"}\n"));
  ASSERT_TRUE(d.driverPin.has_value());
  EXPECT_EQ(d.driverPin->label, "nvidia.com/cuda.driver-version.major");
  EXPECT_THAT(d.driverPin->missing, ElementsAre("525"));
  EXPECT_EQ(d.driverPin->where, "nodeSelector");
  EXPECT_THAT(d.notes, Contains(std::string(
                           "nvidia.com/cuda.driver-version.major is pinned to 525 (nodeSelector), but no node in the "
                           "snapshot has driver major 525; the nodes have 535 (1 node), 550 (4 nodes), 570 (1 node)")));

  // The same through required affinity In; a pin some node has says nothing.
  const std::string affinity =
      "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "        nodeSelectorTerms:\n        - matchExpressions:\n"
      "          - {key: nvidia.com/cuda.driver-version.major, operator: In, values: [\"520\", \"525\"]}\n";
  const PodDiagnosis viaAffinity = one(pod("{nvidia.com/gpu: 1}", affinity));
  ASSERT_TRUE(viaAffinity.driverPin.has_value());
  EXPECT_THAT(viaAffinity.driverPin->missing, ElementsAre("520", "525"));
  EXPECT_EQ(viaAffinity.driverPin->where, "required node affinity term 0");
  EXPECT_FALSE(one(pod("{nvidia.com/gpu: 1}", "  nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n"))
                   .driverPin.has_value());
}

// --- scheduler semantics in detail ---------------------------------------------

Snapshot oneNode(const std::string& labels, const std::string& extra = "") {
  return makeSnapshot(yamlDoc("kind: List\nitems:\n- kind: Node\n  metadata: {name: n1, labels: " + labels + "}\n" +
                              extra + "  status: {capacity: {nvidia.com/gpu: \"8\", pods: \"110\"}}\n"));
}

std::string withAffinity(const std::string& terms) {
  return pod("{nvidia.com/gpu: 1}",
             "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
             "        nodeSelectorTerms: " + terms + "\n");
}

bool admits(const std::string& terms, const std::string& labels) {
  return one(withAffinity(terms), oneNode(labels)).schedulable();
}

TEST(DiagnoseAffinity, OperatorsFollowKubernetes) {
  const std::string gpu = "{nvidia.com/gpu.product: NVIDIA-L4, nvidia.com/cuda.driver-version.major: \"550\", "
                          "nvidia.com/cuda.driver-version.full: 550.127.05}";
  auto term = [](const std::string& expr) { return "[{matchExpressions: [" + expr + "]}]"; };
  EXPECT_TRUE(admits(term("{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4, Tesla-T4]}"), gpu));
  EXPECT_FALSE(admits(term("{key: nvidia.com/gpu.product, operator: In, values: [Tesla-T4]}"), gpu));
  EXPECT_TRUE(admits(term("{key: nvidia.com/mig.strategy, operator: NotIn, values: [mixed]}"), gpu));  // absent matches
  EXPECT_FALSE(admits(term("{key: nvidia.com/gpu.product, operator: NotIn, values: [NVIDIA-L4]}"), gpu));
  EXPECT_TRUE(admits(term("{key: nvidia.com/gpu.product, operator: Exists}"), gpu));
  EXPECT_FALSE(admits(term("{key: nvidia.com/mig.capable, operator: Exists}"), gpu));
  EXPECT_TRUE(admits(term("{key: nvidia.com/mig.capable, operator: DoesNotExist}"), gpu));
  EXPECT_FALSE(admits(term("{key: nvidia.com/gpu.product, operator: DoesNotExist}"), gpu));
  EXPECT_TRUE(admits(term("{key: nvidia.com/cuda.driver-version.major, operator: Lt, values: [\"560\"]}"), gpu));
  EXPECT_FALSE(admits(term("{key: nvidia.com/cuda.driver-version.major, operator: Gt, values: [\"550\"]}"), gpu));
  EXPECT_TRUE(admits(term("{key: nvidia.com/cuda.driver-version.major, operator: Gt, values: [\"549\"]}"), gpu));
  // Gt needs integers on both sides.
  EXPECT_FALSE(admits(term("{key: nvidia.com/cuda.driver-version.full, operator: Gt, values: [\"500\"]}"), gpu));
  EXPECT_FALSE(admits(term("{key: nvidia.com/cuda.driver-version.major, operator: Gt, values: [\"535.104\"]}"), gpu));
  EXPECT_FALSE(admits(term("{key: nvidia.com/gpu.product, operator: Gte, values: [\"1\"]}"), gpu));
  // matchFields: metadata.name.
  EXPECT_TRUE(admits("[{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]", gpu));
  EXPECT_FALSE(admits("[{matchFields: [{key: metadata.name, operator: NotIn, values: [n1]}]}]", gpu));
}

TEST(DiagnoseAffinity, TermsAreOredExpressionsAnded) {
  const std::string labels = "{nvidia.com/gpu.product: NVIDIA-L4, nvidia.com/cuda.driver-version.major: \"550\"}";
  EXPECT_TRUE(admits("[{matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [Tesla-T4]}]},"
                     " {matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4]}]}]",
                     labels));
  EXPECT_FALSE(admits("[{matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4]},"
                      " {key: nvidia.com/cuda.driver-version.major, operator: Gt, values: [\"560\"]}]}]",
                      labels));
  EXPECT_FALSE(admits("[{}]", labels));  // an empty term matches nothing

  const PodDiagnosis d = one(
      withAffinity("[{matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [Tesla-T4]}]},"
                   " {matchExpressions: [{key: nvidia.com/cuda.driver-version.major, operator: Gt, values: [\"12.4\"]}]}]"),
      oneNode(labels));
  const NodeVerdict& v = d.nodes.at(0);
  ASSERT_THAT(v.terms, SizeIs(2));
  EXPECT_EQ(v.terms[0].failing.at(0).why, "node has NVIDIA-L4");
  EXPECT_THAT(v.terms[1].invalid, HasSubstr("Gt needs an integer, \"12.4\" is not one"));
  EXPECT_EQ(v.cause,
            "affinity: term 0: nvidia.com/gpu.product is NVIDIA-L4 | term 1: invalid: nvidia.com/cuda.driver-version.major "
            "Gt 12.4: Gt needs an integer, \"12.4\" is not one");
  EXPECT_THAT(d.affinityText, ElementsAre("nvidia.com/gpu.product In [Tesla-T4]",
                                          "nvidia.com/cuda.driver-version.major Gt 12.4"));
}

TEST(DiagnoseAffinity, NodeSelectorAndAffinityMustBothMatch) {
  const std::string labels = "{nvidia.com/gpu.product: NVIDIA-L4}";
  const PodDiagnosis d = one(pod("{nvidia.com/gpu: 1}",
                                 "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4, team: ml}\n"
                                 "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                                 "        nodeSelectorTerms: [{matchExpressions: [{key: nvidia.com/gpu.product, "
                                 "operator: Exists}]}]\n"),
                             oneNode(labels));
  EXPECT_TRUE(d.nodes[0].affinityMatches);
  ASSERT_THAT(d.nodes[0].selectorFailures, SizeIs(1));
  EXPECT_EQ(d.nodes[0].selectorFailures[0].requirement, "team=ml");
  EXPECT_FALSE(d.schedulable());
}

TEST(DiagnoseTaints, TolerationsTheApiServerAddsCount) {
  // DefaultTolerationSeconds adds not-ready/unreachable NoExecute tolerations to every pod.
  const Snapshot notReady = oneNode("{}", "  spec: {taints: [{key: node.kubernetes.io/not-ready, effect: NoExecute}]}\n");
  EXPECT_TRUE(one(pod("{nvidia.com/gpu: 1}", "", ""), notReady).schedulable());
  const Snapshot notReadyNoSchedule =
      oneNode("{}", "  spec: {taints: [{key: node.kubernetes.io/not-ready, effect: NoSchedule}]}\n");
  EXPECT_FALSE(one(pod("{nvidia.com/gpu: 1}", "", ""), notReadyNoSchedule).schedulable());
  // ExtendedResourceToleration, when the policy says it is on.
  const Snapshot tainted = oneNode("{}", "  spec: {taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}\n");
  EXPECT_FALSE(one(pod("{nvidia.com/gpu: 1}", "", ""), tainted).schedulable());
  Policy withPlugin;
  withPlugin.assumeExtendedResourceToleration = true;
  EXPECT_TRUE(one(pod("{nvidia.com/gpu: 1}", "", ""), tainted, withPlugin).schedulable());
}

TEST(DiagnoseRequests, InitContainersSidecarsLimitsAndOverhead) {
  const json p = yamlDoc(R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  overhead: {cpu: 250m}
  initContainers:
  - {name: fetch, image: x, resources: {requests: {cpu: "4"}, limits: {nvidia.com/gpu: 1}}}
  - {name: proxy, image: x, restartPolicy: Always, resources: {requests: {cpu: 500m}}}
  - {name: warm, image: x, resources: {requests: {cpu: "3"}}}
  containers:
  - {name: a, image: x, resources: {limits: {cpu: "1.5", nvidia.com/gpu: 2}}}
  - {name: b, image: x, resources: {requests: {cpu: 0.0001, memory: 1Gi}}}
)");
  const std::vector<PodSite> sites = findPodSites(p);
  ASSERT_THAT(sites, SizeIs(1));
  const PodRequests r = podRequests(sites[0]);
  EXPECT_THAT(r.problems, IsEmpty());
  // cpu: max(init 4, warm 3 + proxy 0.5, apps 1.5 + 0.001 + proxy 0.5) + overhead 0.25.
  EXPECT_EQ(r.resources.at("cpu").str(), "4250m");
  EXPECT_EQ(r.resources.at("nvidia.com/gpu").str(), "2");  // max(init 1, apps 2), limits default requests
  EXPECT_EQ(r.resources.at("memory").str(true), "1Gi");
}

TEST(DiagnoseRequests, TheDiagnosedPodDoesNotCompeteWithItself) {
  // ml/train-a, re-applied from the pods file, still fits where it runs.
  const Snapshot& s = cluster();
  const json pods = loadJson("pods.json");
  json trainA;
  for (const json& item : pods["items"]) {
    if (item["metadata"]["name"] == "train-a") trainA = item;
  }
  trainA["status"].erase("phase");
  const std::vector<PodDiagnosis> d = diagnoseObject(trainA, s, Policy{});
  ASSERT_THAT(d, SizeIs(1));
  EXPECT_EQ(fit(on(d[0], "gpu-a100-1"), "nvidia.com/gpu").free.str(), "4");
}

TEST(DiagnoseRequests, ThePodsFileCanBeDiagnosedForItsPendingPods) {
  const std::vector<PodDiagnosis> d = diagnoseObject(loadJson("pods.json"), cluster(), Policy{});
  ASSERT_THAT(d, SizeIs(1));  // bound pods (nodeName and a phase) are skipped
  EXPECT_EQ(d[0].title(), "Pod default/pending-train (spec)");
  EXPECT_FALSE(d[0].schedulable());
  EXPECT_EQ(d[0].dominantReason, "node(s) didn't match Pod's node affinity/selector");
}

TEST(DiagnoseRequests, NonGpuPodsAreNotDiagnosed) {
  EXPECT_THAT(diagnoseYaml(pod("{cpu: \"1\"}")), IsEmpty());
}

// --- extended resources a DRA driver serves (KEP-5004) ---------------------------

// `kubectl get nodes,deviceclasses -o json`: a node whose GPUs come from a DRA
// driver (no nvidia.com/gpu in its status), a node with the device plugin's 2
// GPUs, and, when `withClass`, the DeviceClass that maps nvidia.com/gpu to DRA.
Snapshot draCluster(bool withClass) {
  json items = json::array({
      {{"kind", "Node"}, {"metadata", {{"name", "dra-node"}}},
       {"status", {{"allocatable", {{"cpu", "8"}, {"pods", "110"}}}, {"capacity", {{"cpu", "8"}, {"pods", "110"}}}}}},
      {{"kind", "Node"}, {"metadata", {{"name", "plugin-node"}}},
       {"status", {{"allocatable", {{"cpu", "8"}, {"nvidia.com/gpu", "2"}, {"pods", "110"}}},
                   {"capacity", {{"cpu", "8"}, {"nvidia.com/gpu", "2"}, {"pods", "110"}}}}}},
  });
  if (withClass) {
    items.push_back({{"apiVersion", "resource.k8s.io/v1"}, {"kind", "DeviceClass"},
                     {"metadata", {{"name", "gpu.nvidia.com"}}},
                     {"spec", {{"extendedResourceName", "nvidia.com/gpu"}}}});
  }
  return makeSnapshot(json{{"kind", "List"}, {"items", items}});
}

TEST(DiagnoseDra, ADeviceClassInTheSnapshotMakesTheResourceDraBacked) {
  const Snapshot s = draCluster(true);
  EXPECT_THAT(s.nodes, SizeIs(2));
  EXPECT_EQ(s.draExtendedResources.at("nvidia.com/gpu"), "gpu.nvidia.com");
}

TEST(DiagnoseDra, ANodeWithoutTheResourceLeavesItToTheDraAllocatorNotInsufficient) {
  // The scheduler's NodeResourcesFit skips a DRA-backed extended resource the
  // node does not advertise; its DynamicResources filter allocates devices.
  const PodDiagnosis d = one(pod("{nvidia.com/gpu: 4}"), draCluster(true));
  const ResourceFit& viaDra = fit(on(d, "dra-node"), "nvidia.com/gpu");
  EXPECT_TRUE(viaDra.viaDra);
  EXPECT_TRUE(viaDra.fits);
  EXPECT_EQ(viaDra.cause, "served by DRA (DeviceClass gpu.nvidia.com): ResourceSlice devices are not counted");
  EXPECT_TRUE(on(d, "dra-node").schedulable);
  // Where the device plugin advertises it, the node's own count decides.
  const NodeVerdict& plugin = on(d, "plugin-node");
  EXPECT_FALSE(fit(plugin, "nvidia.com/gpu").viaDra);
  EXPECT_THAT(plugin.reasons, ElementsAre("Insufficient nvidia.com/gpu"));
  EXPECT_EQ(d.verdict, "schedulable on 1 node: dra-node");
  EXPECT_THAT(d.notes, Contains(HasSubstr("nvidia.com/gpu is served by DRA (DeviceClass gpu.nvidia.com) on nodes that "
                                          "do not advertise it: --nodes does not count ResourceSlice devices")));
  EXPECT_THAT(d.notes, Not(Contains(HasSubstr("no node in the snapshot advertises"))));
}

TEST(DiagnoseDra, WithoutTheDeviceClassOrThePolicyTheNodeLacksTheResource) {
  const PodDiagnosis d = one(pod("{nvidia.com/gpu: 1}"), draCluster(false));
  const ResourceFit& f = fit(on(d, "dra-node"), "nvidia.com/gpu");
  EXPECT_FALSE(f.viaDra);
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(f.cause, "device plugin not registered on this node");
}

TEST(DiagnoseDra, ThePolicySaysWhichResourcesDraServes) {
  Policy policy;
  policy.draExtendedResources = {"nvidia.com/gpu"};
  const PodDiagnosis d = one(pod("{nvidia.com/gpu: 1}"), draCluster(false), policy);
  EXPECT_EQ(fit(on(d, "dra-node"), "nvidia.com/gpu").cause,
            "served by DRA (policy draExtendedResources): ResourceSlice devices are not counted");
  EXPECT_TRUE(d.schedulable());
}

TEST(DiagnoseDra, TheTableShowsDraAndTheJsonSaysSo) {
  const Snapshot s = draCluster(true);
  const PodDiagnosis d = one(pod("{nvidia.com/gpu: 1}"), s);
  std::ostringstream out;
  writeText(out, {d}, s);
  EXPECT_THAT(out.str(), HasSubstr("dra-node     DRA"));
  const json j = toJson(d);
  EXPECT_EQ(j["nodes"][0]["resources"][0]["name"], "nvidia.com/gpu");
  EXPECT_EQ(j["nodes"][0]["resources"][0]["viaDra"], true);
  EXPECT_EQ(j["nodes"][1]["resources"][0]["viaDra"], false);
}

// --- the summary and the report ------------------------------------------------

TEST(DiagnoseReport, SummaryCountsAndSortsLikeTheScheduler) {
  std::vector<NodeVerdict> nodes(5);
  for (int i = 0; i < 3; ++i) nodes[i].reasons = {"Insufficient nvidia.com/gpu"};
  for (int i = 3; i < 5; ++i) nodes[i].reasons = {"node(s) had untolerated taint(s)"};
  EXPECT_EQ(schedulerSummary(nodes),
            "0/5 nodes are available: 2 node(s) had untolerated taint(s), "
            "3 Insufficient nvidia.com/gpu.");
  EXPECT_EQ(schedulerSummary({}), "0/0 nodes are available: no nodes available to schedule pods.");
}

TEST(DiagnoseReport, TextTableAndJson) {
  std::ifstream in(kSnapshots + "pending.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::vector<PodDiagnosis> pods;
  for (const yaml::Document& doc : yaml::parseStream(text.str()).documents) {
    for (PodDiagnosis& d : diagnoseObject(doc.value, cluster(), Policy{})) pods.push_back(std::move(d));
  }
  ASSERT_THAT(pods, SizeIs(2));
  std::ostringstream out;
  writeText(out, pods, cluster());
  const std::string s = out.str();
  EXPECT_THAT(s, HasSubstr("Deployment serve/vllm-t4 (spec.template.spec)"));
  EXPECT_THAT(s, HasSubstr("NODE"));
  EXPECT_THAT(s, HasSubstr("nvidia.com/gpu CAP/ALLOC/FREE"));
  EXPECT_THAT(s, HasSubstr("  nodeSelector: nvidia.com/gpu.product=NVIDIA-T4\n"));
  EXPECT_THAT(s, HasSubstr("nvidia.com/gpu.product is Tesla-T4"));
  EXPECT_THAT(s, HasSubstr("  required node affinity: nvidia.com/gpu.product In [NVIDIA-A100-SXM4-80GB, "
                           "NVIDIA-H100-80GB-HBM3], nvidia.com/cuda.driver-version.major Gt 540\n"));
  EXPECT_THAT(s, HasSubstr("4/3/3"));
  EXPECT_THAT(s, HasSubstr("verdict: Pending: 0/7 nodes are available:"));
  EXPECT_THAT(s, HasSubstr("dominant reason: node(s) didn't match Pod's node affinity/selector (3 of 7 nodes)\n"
                           "    cpu-1: affinity: nvidia.com/gpu.product absent, nvidia.com/cuda.driver-version.major "
                           "absent\n"));
  EXPECT_THAT(s, HasSubstr("2 GPU pods against 7 nodes: 0 schedulable, 2 Pending"));

  const json j = toJson(pods, cluster());
  EXPECT_EQ(j["schedulable"], false);
  EXPECT_EQ(j["snapshot"]["nodes"], 7);
  ASSERT_EQ(j["pods"].size(), 2u);
  const json& job = j["pods"][1];
  EXPECT_EQ(job["kind"], "Job");
  EXPECT_EQ(job["requests"]["nvidia.com/gpu"], "4");
  EXPECT_EQ(job["requests"]["memory"], "128Gi");
  EXPECT_EQ(job["nodes"].size(), 7u);
  const json& a100 = job["nodes"][2];
  EXPECT_EQ(a100["name"], "gpu-a100-1");
  EXPECT_EQ(a100["reasons"], json::array({"Insufficient nvidia.com/gpu"}));
  EXPECT_EQ(a100["resources"][2]["name"], "nvidia.com/gpu");
  EXPECT_EQ(a100["resources"][2]["free"], "0");
  EXPECT_EQ(job["nodes"][1]["affinity"]["terms"][0]["failing"][0]["nodeValue"], "Tesla-T4");
  EXPECT_EQ(job["nodes"][1]["verdict"], "affinity mismatch");
}

// --- gpuguard-lint --nodes ---------------------------------------------------------

struct CliRun {
  int status = -1;
  std::string out;
};

CliRun runLint(const std::string& args) {
  const std::string binary = GPUGUARD_BINARY_DIR "/gpuguard-lint";
  CliRun r;
  if (!std::filesystem::exists(binary)) return r;
  const std::string command = "cd " + kSnapshots + " && " + binary + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) r.out.append(buffer, n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(DiagnoseCli, TableVerdictAndExitStatus) {
  if (!std::filesystem::exists(GPUGUARD_BINARY_DIR "/gpuguard-lint")) GTEST_SKIP() << "gpuguard-lint not built";
  const CliRun pending = runLint("--nodes nodes.json --pods pods.json pending.yaml");
  EXPECT_EQ(pending.status, 1) << pending.out;
  EXPECT_THAT(pending.out, HasSubstr("Job ml/finetune (spec.template.spec) in pending.yaml"));
  EXPECT_THAT(pending.out, HasSubstr("verdict: Pending: 0/7 nodes are available: 1 node(s) had untolerated taint(s), "
                                     "1 node(s) were unschedulable, 2 Insufficient "
                                     "nvidia.com/gpu, 3 node(s) didn't match Pod's node affinity/selector."));

  const CliRun asJson = runLint("--nodes nodes.json --pods pods.json --format json schedulable.yaml");
  EXPECT_EQ(asJson.status, 0) << asJson.out;
  const nlohmann::json j = nlohmann::json::parse(asJson.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << asJson.out;
  EXPECT_EQ(j["schedulable"], true);
  EXPECT_EQ(j["pods"][0]["verdict"], "schedulable on 1 node: gpu-mig-1");
  EXPECT_EQ(j["pods"][0]["source"], "schedulable.yaml");

  const CliRun bad = runLint("--nodes pending.yaml schedulable.yaml");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_THAT(bad.out, HasSubstr("kubectl get nodes -o json"));
}

}  // namespace
}  // namespace gpuguard::schedule
