// The cluster facts (rules/cluster_facts.h, rules/cluster_reduce.h): one
// object in, the record the rules read out; a builder that keeps the latest
// record of each object by kind and name (a watch's ADDED, MODIFIED,
// DELETED) and makes an immutable model that shares the records.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/cluster_facts.h"
#include "rules/cluster_reduce.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using nlohmann::json;
using testing::clusterOf;

json gpuNode(const std::string& name, const std::string& driverMajor, int gpus) {
  return json::parse(R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": ")" + name +
                     R"(", "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                     "nvidia.com/cuda.driver-version.major": ")" + driverMajor + R"("}},
                     "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
                     "status": {"capacity": {"cpu": "96", "nvidia.com/gpu": ")" + std::to_string(gpus) +
                     R"("}, "allocatable": {"cpu": "95500m", "nvidia.com/gpu": ")" + std::to_string(gpus) + R"("}}})");
}

TEST(ReduceNode, KeepsLabelsTaintsCordonAndResources) {
  std::vector<std::string> warnings;
  json node = gpuNode("gpu-1", "570", 8);
  node["spec"]["unschedulable"] = true;
  node["metadata"]["managedFields"] = json::array({{{"manager", "kubelet"}}});
  const NodeFacts n = reduceNode(node, warnings);
  EXPECT_EQ(n.name, "gpu-1");
  ASSERT_NE(n.label("nvidia.com/cuda.driver-version.major"), nullptr);
  EXPECT_EQ(*n.label("nvidia.com/cuda.driver-version.major"), "570");
  EXPECT_EQ(n.label("kubernetes.io/hostname"), nullptr);
  ASSERT_EQ(n.taints.size(), 1u);
  EXPECT_EQ(describeTaint(n.taints[0]), "nvidia.com/gpu:NoSchedule");
  EXPECT_TRUE(n.unschedulable);
  EXPECT_EQ(n.allocatable.at("nvidia.com/gpu").str(), "8");
  EXPECT_EQ(n.allocatable.at("cpu").str(), "95500m");
  EXPECT_THAT(warnings, IsEmpty());
}

TEST(ReduceNode, AllocatableDefaultsToCapacityAndBadQuantitiesAreWarnedNotFatal) {
  std::vector<std::string> warnings;
  json node = gpuNode("gpu-1", "570", 4);
  node["status"].erase("allocatable");
  node["status"]["capacity"]["memory"] = "lots";
  const NodeFacts n = reduceNode(node, warnings);
  EXPECT_EQ(n.allocatable.at("nvidia.com/gpu").str(), "4");
  EXPECT_EQ(n.allocatable.count("memory"), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("node gpu-1 status.capacity: memory \"lots\" is not a quantity"));
}

TEST(ReduceNodePool, ReadsTheTemplateRequirementsTaintsAndLimits) {
  std::vector<std::string> warnings;
  const json pool = json::parse(R"({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
    "spec": {"template": {"metadata": {"labels": {"team": "ml"}},
      "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Lt", "values": ["5"]},
                                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6.12xlarge"], "minValues": 1}],
               "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
               "startupTaints": [{"key": "ready", "effect": "NoExecute"}]}},
      "limits": {"nvidia.com/gpu": 16, "cpu": "1000"}}})");
  const NodePoolFacts p = reduceNodePool(pool, warnings);
  EXPECT_EQ(p.name, "gpu");
  EXPECT_EQ(p.labels.at("team"), "ml");
  ASSERT_EQ(p.requirements.size(), 2u);
  EXPECT_EQ(p.requirements[0].op, "Lt");
  EXPECT_THAT(p.requirements[0].values, ElementsAre("5"));
  EXPECT_THAT(p.requirements[1].values, ElementsAre("g6.12xlarge"));
  ASSERT_EQ(p.taints.size(), 1u);
  EXPECT_EQ(describeTaint(p.taints[0]), "nvidia.com/gpu=true:NoSchedule");
  ASSERT_EQ(p.startupTaints.size(), 1u);
  EXPECT_EQ(p.limits.at("nvidia.com/gpu").str(), "16");
  EXPECT_THAT(warnings, IsEmpty());
}

TEST(ReduceNamespace, ReadsDefaultTolerationsAsPodTolerationRestrictionDoes) {
  std::vector<std::string> warnings;
  const NamespaceFacts ok = reduceNamespace(json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
    "metadata": {"name": "ml", "labels": {"team": "ml"}, "annotations": {"scheduler.alpha.kubernetes.io/defaultTolerations":
    "[{\"key\": \"nvidia.com/gpu\", \"operator\": \"Exists\", \"effect\": \"NoSchedule\"}]"}}})"), warnings);
  EXPECT_EQ(ok.labels.at("team"), "ml");
  ASSERT_EQ(ok.defaultTolerations.size(), 1u);
  EXPECT_EQ(ok.defaultTolerations[0]["key"], "nvidia.com/gpu");
  EXPECT_THAT(warnings, IsEmpty());

  const NamespaceFacts bad = reduceNamespace(json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
    "metadata": {"name": "x", "annotations": {"scheduler.alpha.kubernetes.io/defaultTolerations": "{not json"}}})"),
                                             warnings);
  EXPECT_TRUE(bad.defaultTolerations.empty());
  EXPECT_THAT(bad.defaultTolerationsError, HasSubstr("is not a JSON list of tolerations"));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("namespace x"));
}

TEST(FactKindOf, KnowsTheKindsByGroupNotByKindAlone) {
  EXPECT_EQ(factKindOf(json{{"apiVersion", "v1"}, {"kind", "Node"}}), FactKind::Node);
  EXPECT_EQ(factKindOf(json{{"apiVersion", "karpenter.sh/v1"}, {"kind", "NodePool"}}), FactKind::NodePool);
  EXPECT_EQ(factKindOf(json{{"apiVersion", "resource.k8s.io/v1"}, {"kind", "DeviceClass"}}), FactKind::DeviceClass);
  // Some other project's NodePool (AKS's, GKE's) is not Karpenter's.
  EXPECT_EQ(factKindOf(json{{"apiVersion", "example.com/v1"}, {"kind", "NodePool"}}), std::nullopt);
  EXPECT_EQ(factKindOf(json{{"apiVersion", "v1"}, {"kind", "Pod"}}), std::nullopt);
  EXPECT_EQ(factKindOf(json("Node")), std::nullopt);
}

TEST(ClusterFactsBuilder, TakesAKubectlListOfMixedKindsAndSaysWhatWasListed) {
  json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", json::array()}};
  list["items"].push_back(gpuNode("b", "570", 8));
  list["items"].push_back(gpuNode("a", "535", 4));
  list["items"].push_back(json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
    "metadata": {"name": "gpu.nvidia.com"}, "spec": {"extendedResourceName": "nvidia.com/gpu",
    "selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}})"));
  list["items"].push_back(json::parse(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})"));
  ClusterFactsBuilder builder;
  EXPECT_EQ(builder.add(list), 3u);
  const auto facts = builder.build();
  ASSERT_EQ(facts->nodes().size(), 2u);
  EXPECT_EQ(facts->nodes()[0]->name, "a");  // by name
  EXPECT_EQ(facts->node("b")->allocatable.at("nvidia.com/gpu").str(), "8");
  EXPECT_TRUE(facts->listed(FactKind::Node));
  EXPECT_TRUE(facts->listed(FactKind::DeviceClass));
  EXPECT_FALSE(facts->listed(FactKind::NodePool));  // unknown, not "none"
  ASSERT_NE(facts->classServing("nvidia.com/gpu"), nullptr);
  EXPECT_EQ(*facts->classServing("nvidia.com/gpu"), "gpu.nvidia.com");
}

TEST(ClusterFactsBuilder, AWatchReplacesAndDeletesRecordsAndEarlierModelsStayAsTheyWere) {
  ClusterFactsBuilder builder;
  builder.add(gpuNode("gpu-1", "535", 8));
  const auto before = builder.build();
  builder.add(gpuNode("gpu-1", "570", 8));  // MODIFIED: relabelled
  builder.add(gpuNode("gpu-2", "570", 8));  // ADDED
  const auto after = builder.build();
  EXPECT_EQ(*before->node("gpu-1")->label("nvidia.com/cuda.driver-version.major"), "535");
  EXPECT_EQ(*after->node("gpu-1")->label("nvidia.com/cuda.driver-version.major"), "570");
  EXPECT_EQ(after->nodes().size(), 2u);
  // Unchanged records are shared, not copied.
  EXPECT_EQ(after->node("gpu-2"), builder.build()->node("gpu-2"));

  EXPECT_TRUE(builder.remove(FactKind::Node, "", "gpu-2"));
  EXPECT_FALSE(builder.remove(FactKind::Node, "", "gpu-2"));
  EXPECT_EQ(builder.build()->nodes().size(), 1u);
  builder.clear(FactKind::Node);
  EXPECT_EQ(builder.size(FactKind::Node), 0u);
}

TEST(ClusterFactsBuilder, ClaimsAndTemplatesAreLookedUpInTheirNamespace) {
  const auto facts = clusterOf(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, count: 2}
)");
  ASSERT_NE(facts->claimTemplate("ml", "one-gpu"), nullptr);
  EXPECT_EQ(facts->claimTemplate("ml", "one-gpu")->requests[0][0].count, 2);
  EXPECT_EQ(facts->claimTemplate("default", "one-gpu"), nullptr);
}

TEST(ClusterFactsBuilder, NodesThatDifferOnlyInTheirNamesFormOneGroup) {
  ClusterFactsBuilder builder;
  for (const char* name : {"h100-a", "h100-b", "h100-c"}) {
    json node = gpuNode(name, "570", 8);
    node["metadata"]["labels"]["kubernetes.io/hostname"] = name;
    node["metadata"]["labels"]["nvidia.com/gfd.timestamp"] = std::string("17000") + name;
    builder.add(node);
  }
  builder.add(gpuNode("h100-old", "535", 8));
  const auto facts = builder.build();
  ASSERT_EQ(facts->nodeGroups().size(), 2u);
  EXPECT_EQ(facts->nodeGroups()[0].members.size(), 3u);
  EXPECT_EQ(facts->nodeGroups()[0].representative->name, "h100-a");
  EXPECT_EQ(facts->nodeGroups()[1].members.size(), 1u);
}

json resourceSlice(const std::string& name, const std::string& driver, const json& where, int devices) {
  json s = {{"apiVersion", "resource.k8s.io/v1"}, {"kind", "ResourceSlice"}, {"metadata", {{"name", name}}},
            {"spec", {{"driver", driver}, {"pool", {{"name", name}, {"generation", 1}, {"resourceSliceCount", 1}}},
                      {"devices", json::array()}}}};
  s["spec"].update(where);
  for (int i = 0; i < devices; ++i) s["spec"]["devices"].push_back({{"name", "gpu-" + std::to_string(i)}});
  return s;
}

TEST(ReduceResourceSlice, KeepsTheDriverTheNodeAndHowManyDevices) {
  const ResourceSliceFacts local = reduceResourceSlice(resourceSlice("a", "gpu.nvidia.com", {{"nodeName", "n1"}}, 4));
  EXPECT_EQ(local.driver, "gpu.nvidia.com");
  EXPECT_EQ(local.nodeName, "n1");
  EXPECT_EQ(local.devices, 4u);
  // Network-attached devices name no node.
  EXPECT_EQ(reduceResourceSlice(resourceSlice("b", "gpu.nvidia.com", {{"allNodes", true}}, 1)).nodeName, "");
  EXPECT_EQ(factKindOf(resourceSlice("a", "gpu.nvidia.com", {{"nodeName", "n1"}}, 1)), FactKind::ResourceSlice);
}

TEST(ClusterFactsBuilder, SlicesSayWhichDriversServeEachNode) {
  ClusterFactsBuilder builder;
  builder.add(gpuNode("n1", "570", 0));
  builder.add(gpuNode("n2", "570", 0));
  builder.add(resourceSlice("n1-gpus", "gpu.nvidia.com", {{"nodeName", "n1"}}, 4));
  builder.add(resourceSlice("n2-empty", "gpu.nvidia.com", {{"nodeName", "n2"}}, 0));  // a pool's empty slice
  builder.add(json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
    "metadata": {"name": "gpu.nvidia.com"},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}})"));
  auto facts = builder.build();
  EXPECT_TRUE(facts->listed(FactKind::ResourceSlice));
  EXPECT_THAT(facts->sliceDriversOn("n1"), ElementsAre("gpu.nvidia.com"));
  EXPECT_THAT(facts->sliceDriversOn("n2"), IsEmpty());
  EXPECT_THAT(facts->classesSelecting("gpu.nvidia.com"), ElementsAre("gpu.nvidia.com"));
  // Alike but for their DRA devices: two node groups, so each is judged.
  EXPECT_EQ(facts->nodeGroups().size(), 2u);

  // Devices reachable from every node count on each; a DELETED slice is gone.
  builder.add(resourceSlice("fabric", "fabric.example.com", {{"allNodes", true}}, 2));
  EXPECT_TRUE(builder.remove(FactKind::ResourceSlice, "", "n1-gpus"));
  facts = builder.build();
  EXPECT_THAT(facts->sliceDriversOn("n1"), ElementsAre("fabric.example.com"));
  EXPECT_THAT(facts->sliceDriversOn("n2"), ElementsAre("fabric.example.com"));
  EXPECT_EQ(facts->nodeGroups().size(), 1u);
}

TEST(ClusterFactsBuilder, ObjectsWithoutANameAreSkippedWithAWarning) {
  ClusterFactsBuilder builder;
  EXPECT_EQ(builder.add(json{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", json::object()}}), 0u);
  ASSERT_EQ(builder.warnings().size(), 1u);
  EXPECT_THAT(builder.warnings()[0], HasSubstr("nodes: an object without metadata.name was skipped"));
}

}  // namespace
}  // namespace gpuguard
