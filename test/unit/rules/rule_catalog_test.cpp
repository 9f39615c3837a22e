// The catalog enforces itself: every registered rule has its check file, its
// whole specification in a test file named after it, its documentation (the
// RuleDoc, and its section in the generated docs/rules.md) and a wrong and a
// right example; the wrong example fires the rule and only it, the right one
// is quiet. A new rule that misses any of these fails here with what to add
// (tools/new-rule.sh creates them all).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "rules/registry.h"
#include "test/unit/gpu_node.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::AllOf;
using ::testing::Each;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::clusterOf;
using testing::judgeFile;
using testing::onlyRules;
using testing::rulesHit;

const std::filesystem::path kSource = GPUGUARD_SOURCE_DIR;

// gpu-missing-toleration -> gpu_missing_toleration: how a rule's files are named.
std::string fileStem(std::string_view id) {
  std::string stem(id);
  for (char& c : stem) c = c == '-' ? '_' : c;
  return stem;
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> allRuleIds() {
  std::vector<std::string> ids;
  for (const Rule* rule : allRules()) ids.emplace_back(rule->id());
  return ids;
}

// The first key an example starts with (comment lines skipped): what it is an excerpt of.
std::string firstKey(std::string_view example) {
  std::istringstream lines{std::string(example)};
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    return line.substr(0, line.find(':'));
  }
  return "";
}

std::string indented(std::string_view text, int spaces) {
  std::istringstream lines{std::string(text)};
  std::string out;
  for (std::string line; std::getline(lines, line);) out += std::string(spaces, ' ') + line + "\n";
  return out;
}

// A documented example as the input it is an excerpt of: whole objects as
// written; `spec:` of a Pod; container fields (resources:, env:, args:) in the
// one container of a Pod; any other key (nodeSelector:, tolerations:) in the
// spec of a Pod beside one container.
std::string exampleInput(std::string_view example) {
  static const std::set<std::string> containerFields = {"resources", "env", "args", "command", "image",
                                                        "resizePolicy", "volumeMounts", "ports"};
  const std::string head = "apiVersion: v1\nkind: Pod\nmetadata: {name: example}\n";
  const std::string key = firstKey(example);
  if (key == "apiVersion" || key == "kind") return std::string(example);
  if (key == "spec") return head + std::string(example);
  const std::string container = "  containers:\n  - name: example\n    image: busybox\n";
  if (containerFields.count(key)) return head + "spec:\n" + container + indented(example, 4);
  return head + "spec:\n" + indented(example, 2) + container;
}

// The cluster an example is written against, for the rules that judge only
// with cluster facts (the example's own comment says which): gpu-unschedulable's
// GPU nodes hold 8 GPUs each, untainted, so the right example fits.
const ClusterFacts* exampleCluster(std::string_view id) {
  static const std::map<std::string, std::shared_ptr<const ClusterFacts>, std::less<>> clusters = {
      {"gpu-unschedulable",
       clusterOf(testing::gpuNode(
           {.name = "gpu-1", .driver = "570", .machine = "cpu: \"95\", memory: 1000Gi, pods: \"110\""}))}};
  const auto found = clusters.find(id);
  return found == clusters.end() ? nullptr : found->second.get();
}

class EveryRule : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryRule, HasItsCheckFileNamedAfterIt) {
  const std::filesystem::path check = kSource / "rules/checks" / (fileStem(GetParam()) + ".cpp");
  EXPECT_TRUE(std::filesystem::exists(check)) << check << " is missing";
}

TEST_P(EveryRule, HasItsWholeSpecificationInATestFileNamedAfterIt) {
  const std::filesystem::path test = kSource / "test/unit/rules/checks" / (fileStem(GetParam()) + "_test.cpp");
  ASSERT_TRUE(std::filesystem::exists(test)) << test << " is missing: the rule's specification lives there";
  EXPECT_NE(readFile(test).find("\"" + GetParam() + "\""), std::string::npos)
      << test << " never names the rule it specifies";
}

TEST_P(EveryRule, IsDocumentedWithAWrongAndARightExample) {
  const RuleDoc& doc = findRule(GetParam())->doc();
  EXPECT_FALSE(doc.summary.empty()) << "summary";
  EXPECT_FALSE(doc.description.empty()) << "description";
  EXPECT_FALSE(doc.remediation.empty()) << "remediation";
  EXPECT_FALSE(doc.wrongExample.empty()) << "wrongExample";
  EXPECT_FALSE(doc.rightExample.empty()) << "rightExample";
  EXPECT_NE(readFile(kSource / "docs/rules.md").find("\n## " + GetParam() + "\n"), std::string::npos)
      << "docs/rules.md has no section for it: run test/lint/update_docs.sh";
}

TEST_P(EveryRule, ItsWrongExampleFiresItAloneAndItsRightExampleIsQuiet) {
  const RuleDoc& doc = findRule(GetParam())->doc();
  const Policy policy = onlyRules({GetParam()});
  const ClusterFacts* cluster = exampleCluster(GetParam());
  const std::string wrong = exampleInput(doc.wrongExample);
  const std::string right = exampleInput(doc.rightExample);
  EXPECT_THAT(rulesHit(judgeFile(wrong, policy, cluster)), AllOf(Not(IsEmpty()), Each(GetParam()))) << wrong;
  EXPECT_THAT(rulesHit(judgeFile(right, policy, cluster)), IsEmpty()) << right;
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryRule, ::testing::ValuesIn(allRuleIds()),
                         [](const auto& info) { return fileStem(info.param); });

// The other way round: a test file in test/unit/rules/checks/ is a rule's
// specification, so its name is a registered rule's.
TEST(RuleTestFiles, AreEachNamedAfterARegisteredRule) {
  std::set<std::string> stems;
  for (const std::string& id : allRuleIds()) stems.insert(fileStem(id) + "_test.cpp");
  for (const auto& entry : std::filesystem::directory_iterator(kSource / "test/unit/rules/checks")) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with("_test.cpp")) continue;
    EXPECT_TRUE(stems.count(name)) << name << " is named after no rule";
  }
}

}  // namespace
}  // namespace gpuguard
