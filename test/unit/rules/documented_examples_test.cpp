// The wrong and right examples in a rule's documentation (--explain,
// docs/rules.md) are whole pod specs for these rules: the wrong one must fire
// the rule and nothing else, the right one must stay quiet.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/registry.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::Each;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

class DocumentedExamples : public ::testing::TestWithParam<const char*> {};

TEST_P(DocumentedExamples, TheWrongExampleFiresAndTheRightOneDoesNot) {
  const Rule* rule = findRule(GetParam());
  ASSERT_NE(rule, nullptr);
  const std::string head = "apiVersion: v1\nkind: Pod\nmetadata: {name: example}\n";
  const Policy policy = onlyRules({GetParam()});
  const auto wrong = rulesHit(judgeYaml(head + std::string(rule->doc().wrongExample), policy));
  EXPECT_THAT(wrong, ::testing::AllOf(Not(IsEmpty()), Each(std::string(GetParam()))));
  EXPECT_THAT(judgeYaml(head + std::string(rule->doc().rightExample), policy), IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(PodSpecRules, DocumentedExamples,
                         ::testing::Values("cuda-driver-too-old",
                                           "cuda-visible-devices-index",
                                           "dra-claim-with-node-name",
                                           "gpu-label-value",
                                           "gpu-resize-policy",
                                           "gpu-toleration-without-request",
                                           "node-affinity-gt-lt",
                                           "nvidia-visible-devices-env",
                                           "shared-gpu-request-gt-one",
                                           "tensor-parallel-gpu-count",
                                           "tensor-parallel-without-nvlink"),
                         [](const auto& info) {
                           std::string name;
                           for (const char* c = info.param; *c; ++c) name += *c == '-' ? '_' : *c;
                           return name;
                         });

}  // namespace
}  // namespace gpuguard
