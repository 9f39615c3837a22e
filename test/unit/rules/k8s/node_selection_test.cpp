// rules/k8s/node_selection: nodeSelector AND the required node affinity's
// ORed terms, as one list of ORed terms of ANDed requirements.
#include "rules/k8s/node_selection.h"

#include "rules/pod_constraints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuguard {
namespace {

using nlohmann::json;

std::vector<NodeTerm> termsOf(const char* podSpec) {
  const json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"spec", json::parse(podSpec)}};
  const std::vector<PodSite> sites = findPodSites(pod);
  return sites.empty() ? std::vector<NodeTerm>{} : nodeSelectionTerms(sites.front());
}

TEST(NodeSelectionTerms, WithoutRequiredAffinityTheNodeSelectorIsTheOneTerm) {
  const auto terms = termsOf(R"({"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4"}, "containers": [{"name": "c", "image": "i"}]})");
  ASSERT_EQ(terms.size(), 1u);
  EXPECT_FALSE(terms[0].termIndex.has_value());
  ASSERT_EQ(terms[0].requirements.size(), 1u);
  EXPECT_EQ(describeRequirement(terms[0].requirements[0], terms[0]), "nodeSelector nvidia.com/gpu.product=NVIDIA-L4");
  EXPECT_EQ(terms[0].requirements[0].path.apiPath(), "spec.nodeSelector[nvidia.com/gpu.product]");
}

TEST(NodeSelectionTerms, TheNodeSelectorIsFoldedIntoEveryOredTerm) {
  const auto terms = termsOf(R"({"nodeSelector": {"a": "1"}, "containers": [{"name": "c", "image": "i"}],
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
      {"matchExpressions": [{"key": "b", "operator": "In", "values": ["x", 2]}]},
      {"matchExpressions": [{"key": "c", "operator": "Exists"}]}]}}}})");
  ASSERT_EQ(terms.size(), 2u);
  ASSERT_EQ(terms[0].requirements.size(), 2u);
  EXPECT_EQ(terms[0].requirements[0].key, "a");
  // An unquoted integer reads as its decimal text, as a stringifying controller sees it.
  EXPECT_THAT(terms[0].requirements[1].values, ::testing::ElementsAre("x", "2"));
  EXPECT_EQ(describeRequirement(terms[0].requirements[1], terms[0]),
            "required node affinity nodeSelectorTerms[0]: b In [x, 2]");
  EXPECT_EQ(terms[1].requirements[1].op, "Exists");
}

TEST(NodeSelectionTerms, AnEmptyTermMatchesNothing) {
  const auto terms = termsOf(R"({"containers": [{"name": "c", "image": "i"}], "affinity": {"nodeAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}}}})");
  ASSERT_EQ(terms.size(), 1u);
  EXPECT_TRUE(terms[0].matchesNothing);
}

}  // namespace
}  // namespace gpuguard
