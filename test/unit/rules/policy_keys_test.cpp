// Each rule declares the policy keys it reads besides `rules`
// (RuleDoc::policyKeys; --explain and docs/rules.md show them). The
// declaration is checked against what the rules do: a key a rule does not
// declare, set to a value far from its default, leaves that rule's findings
// unchanged on every input here (each rule's documented examples, the
// shipped examples and the e2e cases, judged with and without the cluster
// facts of test/data/snapshots/nodes.json). The check is one-sided: a key
// these inputs never make a rule read goes unnoticed.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/registry.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using testing::clusterOf;
using testing::judgeInput;
using testing::judgeWithCluster;

// A policy key, and a document that sets it far from its default.
struct KeyChange {
  std::string_view key;
  const char* document;
};

// `platform` keeps the keys a preset sets at their defaults, so that only
// what the platform itself says (GFD labels present or not) changes.
const std::vector<KeyChange> kChanges{
    {"gpuResources", R"({"gpuResources": ["example.com/accelerator"]})"},
    {"draExtendedResources", R"({"draExtendedResources": ["nvidia.com/gpu", "nvidia.com/mig-*"]})"},
    {"gpuTaints", R"({"gpuTaints": []})"},
    {"driverPinLabels", R"({"driverPinLabels": ["example.com/driver"]})"},
    {"maxGpusPerNode", R"({"maxGpusPerNode": 1})"},
    {"assumeExtendedResourceToleration", R"({"assumeExtendedResourceToleration": true})"},
    {"assumePodTolerationRestriction", R"({"assumePodTolerationRestriction": true})"},
    {"assumePodNodeSelector", R"({"assumePodNodeSelector": true})"},
    {"cudaImages", R"({"cudaImages": [{"image": ".*", "cuda": "13.0"}]})"},
    {"platform", R"({"platform": "eks-auto-mode", "assumeExtendedResourceToleration": false,
                     "driverPinLabels": ["nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver-version.full",
                                         "nvidia.com/cuda.driver.major"]})"},
};

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every input: the rules' documented examples as Pods, and the YAML files of
// manifests/examples and test/e2e/cases.
std::vector<std::string> inputs() {
  std::vector<std::string> out;
  const std::string head = "apiVersion: v1\nkind: Pod\nmetadata: {name: example}\n";
  for (const Rule* rule : allRules()) {
    out.push_back(head + std::string(rule->doc().wrongExample));
    out.push_back(head + std::string(rule->doc().rightExample));
  }
  for (const char* dir : {"manifests/examples", "test/e2e/cases"}) {
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(GPUGUARD_SOURCE_DIR) / dir)) {
      if (entry.path().extension() == ".yaml") out.push_back(readFile(entry.path()));
    }
  }
  return out;
}

// Every rule's findings over every input, rendered, without and with the
// cluster facts: rule id -> findings in input order.
std::map<std::string, std::vector<std::string>, std::less<>> findingsByRule(const Policy& policy,
                                                                            const std::vector<std::string>& texts,
                                                                            const ClusterFacts& cluster) {
  std::map<std::string, std::vector<std::string>, std::less<>> out;
  for (const std::string& text : texts) {
    for (const std::vector<Finding>& findings : {judgeInput(text, policy), judgeWithCluster(text, cluster, policy)}) {
      for (const Finding& f : findings) {
        out[f.rule].push_back(f.fieldError() + " [" + std::string(severityName(f.severity)) + "]");
      }
    }
  }
  return out;
}

TEST(PolicyKeys, EveryDeclaredKeyIsOneThePolicyHas) {
  std::set<std::string_view> known;
  for (const KeyChange& c : kChanges) known.insert(c.key);
  for (const Rule* rule : allRules()) {
    for (std::string_view key : rule->doc().policyKeys) {
      EXPECT_TRUE(known.count(key)) << rule->id() << " declares " << key << ", which is no key of the policy";
    }
  }
}

TEST(PolicyKeys, AKeyARuleDoesNotDeclareLeavesItsFindingsAlone) {
  const std::vector<std::string> texts = inputs();
  const auto cluster = clusterOf(readFile(std::filesystem::path(GPUGUARD_SOURCE_DIR) / "test/data/snapshots/nodes.json"));
  auto usual = findingsByRule(Policy{}, texts, *cluster);
  for (const KeyChange& change : kChanges) {
    const Policy changed = Policy::fromJson(nlohmann::json::parse(change.document), "test");
    auto found = findingsByRule(changed, texts, *cluster);
    for (const Rule* rule : allRules()) {
      const auto declared = rule->doc().policyKeys;
      if (std::find(declared.begin(), declared.end(), change.key) != declared.end()) continue;
      EXPECT_EQ(found[std::string(rule->id())], usual[std::string(rule->id())])
          << rule->id() << " reads " << change.key << " without declaring it (RuleDoc::policyKeys)";
    }
  }
}

// The check above has teeth: the keys it changes do change findings of the
// rules that declare them.
TEST(PolicyKeys, TheChangedKeysChangeTheFindingsOfRulesThatReadThem) {
  const std::vector<std::string> texts = inputs();
  const auto cluster = clusterOf(readFile(std::filesystem::path(GPUGUARD_SOURCE_DIR) / "test/data/snapshots/nodes.json"));
  auto usual = findingsByRule(Policy{}, texts, *cluster);
  for (std::string_view key : {"gpuResources", "gpuTaints", "driverPinLabels", "cudaImages"}) {
    const auto change = std::find_if(kChanges.begin(), kChanges.end(), [&](const KeyChange& c) { return c.key == key; });
    ASSERT_NE(change, kChanges.end());
    auto found = findingsByRule(Policy::fromJson(nlohmann::json::parse(change->document), "test"), texts, *cluster);
    EXPECT_NE(found, usual) << "changing " << key << " changed no finding";
  }
}

}  // namespace
}  // namespace gpuguard
