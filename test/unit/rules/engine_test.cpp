// The engine's contract: severities from the policy, suppressions by
// annotation, and objects that are not Kubernetes objects.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/registry.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::gpuPod;
using testing::judgeYaml;
using testing::rulesHit;

const std::string kHalfGpu = gpuPod("limits:\n  nvidia.com/gpu: 0.5");

TEST(Engine, EveryRuleHasAnIdDocsAndExamples) {
  ASSERT_FALSE(allRules().empty());
  for (const Rule* r : allRules()) {
    EXPECT_FALSE(r->doc().id.empty());
    EXPECT_FALSE(r->doc().summary.empty()) << r->id();
    EXPECT_FALSE(r->doc().description.empty()) << r->id();
    EXPECT_FALSE(r->doc().remediation.empty()) << r->id();
    EXPECT_FALSE(r->doc().wrongExample.empty()) << r->id();
    EXPECT_FALSE(r->doc().rightExample.empty()) << r->id();
    EXPECT_EQ(findRule(r->id()), r);
  }
}

TEST(Engine, ThePolicyCanTurnARuleIntoAWarningOrOff) {
  Policy warn;
  warn.rules["gpu-fractional"] = RuleSetting::Warning;
  const auto f = judgeYaml(kHalfGpu, warn);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_FALSE(hasErrors(f));

  Policy off;
  off.rules["gpu-fractional"] = RuleSetting::Off;
  EXPECT_THAT(judgeYaml(kHalfGpu, off), IsEmpty());
}

std::string withAnnotation(const std::string& yaml, const std::string& annotation) {
  std::string out = yaml;
  out.replace(out.find("metadata: {name: p}"), 19, "metadata: {name: p, annotations: {" + annotation + "}}");
  return out;
}

TEST(Engine, AnAnnotationWithAReasonSuppressesOneRule) {
  const auto f = judgeYaml(withAnnotation(kHalfGpu, "ignore.gpuguard.io/gpu-fractional: \"MIG via HAMi\""));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].suppressed);
  EXPECT_EQ(f[0].suppressionReason, "MIG via HAMi");
  EXPECT_FALSE(hasErrors(f));
}

TEST(Engine, ASuppressionWithoutAReasonDoesNothing) {
  EXPECT_TRUE(hasErrors(judgeYaml(withAnnotation(kHalfGpu, "ignore.gpuguard.io/gpu-fractional: \"\""))));
}

TEST(Engine, ASuppressionOfAnotherRuleDoesNothing) {
  EXPECT_TRUE(hasErrors(judgeYaml(withAnnotation(kHalfGpu, "ignore.gpuguard.io/gpu-missing-toleration: why"))));
}

TEST(Engine, AFrontEndThatDisallowsSuppressionsForgetsTheMarks) {
  auto f = judgeYaml(withAnnotation(kHalfGpu, "ignore.gpuguard.io/gpu-fractional: why"));
  ASSERT_FALSE(hasErrors(f));
  forgetSuppressions(f);
  EXPECT_TRUE(hasErrors(f));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_FALSE(f[0].suppressed);
  EXPECT_EQ(f[0].suppressionReason, "");
}

TEST(Engine, APodTemplateAnnotationSuppressesFindingsInsideIt) {
  const std::string yaml =
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
      "    metadata: {annotations: {ignore.gpuguard.io/gpu-fractional: shared via HAMi}}\n    spec:\n"
      "      tolerations: [{operator: Exists}]\n      nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n"
      "      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 0.5}}}]\n";
  const auto f = judgeYaml(yaml);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].suppressed);
}

TEST(Engine, NonObjectsAreJudgedAsNothing) {
  EXPECT_THAT(judge(nlohmann::json::array(), Policy{}), IsEmpty());
  EXPECT_THAT(judge(nlohmann::json("x"), Policy{}), IsEmpty());
}

TEST(Engine, FindingsRenderAsApiFieldErrors) {
  const auto f = judgeYaml(kHalfGpu);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].fieldError(),
              HasSubstr("spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: \"0.5\": must be an integer"));
}

TEST(Policy, ReadsEveryKey) {
  const auto doc = nlohmann::json::parse(R"({
    "rules": {"gpu-fractional": "warning", "gpu-missing-driver-pin": false, "gpu-missing-toleration": "off"},
    "gpuResources": ["nvidia.com/gpu", "amd.com/gpu"],
    "gpuTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
    "driverPinLabels": ["nvidia.com/cuda.driver-version.major"],
    "maxGpusPerNode": 16, "assumeExtendedResourceToleration": true,
    "cudaImages": [{"image": "corp/legacy:.*", "cuda": "11.8"}]})");
  const Policy p = Policy::fromJson(doc, "p.yaml");
  EXPECT_EQ(p.severityOf("gpu-fractional", Severity::Error), Severity::Warning);
  EXPECT_EQ(p.severityOf("gpu-missing-driver-pin", Severity::Error), std::nullopt);
  EXPECT_EQ(p.severityOf("gpu-missing-toleration", Severity::Error), std::nullopt);
  EXPECT_TRUE(p.isGpuResource("amd.com/gpu"));
  EXPECT_FALSE(p.isGpuResource("nvidia.com/mig-1g.10gb"));
  EXPECT_EQ(p.gpuTaints.at(0).value, "present");
  EXPECT_EQ(p.maxGpusPerNode, 16);
  EXPECT_TRUE(p.assumeExtendedResourceToleration);
  EXPECT_EQ(p.cudaVersionOfImage("corp/legacy:2024"), "11.8");
}

TEST(Policy, AStarSetsEveryRuleWithoutAnEntryOfItsOwn) {
  const Policy p = Policy::fromJson(nlohmann::json::parse(R"({"rules": {"*": "warning", "gpu-fractional": "error"}})"),
                                    "p.yaml");
  EXPECT_EQ(p.severityOf("gpu-missing-toleration", Severity::Error), Severity::Warning);
  EXPECT_EQ(p.severityOf("gpu-fractional", Severity::Warning), Severity::Error);
}

TEST(Policy, GpuResourcePatternsEndingInAStarMatchPrefixes) {
  const Policy p;
  EXPECT_TRUE(p.isGpuResource("nvidia.com/mig-3g.40gb"));
  EXPECT_TRUE(p.isGpuResource("nvidia.com/gpu.shared"));
  EXPECT_FALSE(p.isGpuResource("nvidia.com/gpus"));
}

bool isRegisteredRule(std::string_view id) { return findRule(id) != nullptr; }

void expectPolicyError(const std::string& json, const std::string& needle) {
  try {
    Policy::fromJson(nlohmann::json::parse(json), "policy.yaml", {}, {}, isRegisteredRule);
    ADD_FAILURE() << "accepted: " << json;
  } catch (const PolicyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("policy.yaml"));
    EXPECT_THAT(e.what(), HasSubstr(needle));
  }
}

// Configuration flows one way: the engine's Policy checks the shape of the
// document, and whoever reads a policy file says which rule ids exist
// (yaml/policy_file.cpp passes the registry's answer).
TEST(Policy, ChecksRuleIdsOnlyAgainstTheKnownRulesItIsGiven) {
  const auto doc = nlohmann::json::parse(R"({"rules": {"gpu-fractionl": "off"}})");
  EXPECT_EQ(Policy::fromJson(doc, "p.yaml").severityOf("gpu-fractionl", Severity::Error), std::nullopt);
  EXPECT_THROW((void)Policy::fromJson(doc, "p.yaml", {}, {}, isRegisteredRule), PolicyError);
  EXPECT_THROW((void)Policy::fromJson(nlohmann::json::parse(R"({"rules": {"gpu-fractionl": "fatal"}})"), "p.yaml"),
               PolicyError);
}

TEST(Policy, UnknownKeysAndBadValuesNameTheKeyAndTheFile) {
  expectPolicyError(R"({"rulez": {}})", "rulez: unknown key");
  expectPolicyError(R"({"rules": {"gpu-fractionl": "error"}})", "rules.gpu-fractionl: unknown rule id");
  expectPolicyError(R"({"rules": {"gpu-fractional": "fatal"}})", "rules.gpu-fractional: must be one of");
  expectPolicyError(R"({"maxGpusPerNode": "8"})", "maxGpusPerNode: must be a positive integer");
  expectPolicyError(R"({"gpuResources": "nvidia.com/gpu"})", "gpuResources: must be a list");
  expectPolicyError(R"({"gpuTaints": [{"key": "k", "effect": "Sometimes"}]})", "gpuTaints[0].effect");
  expectPolicyError(R"({"exemptNamespaces": ["kube-system"]})", "exemptNamespaces: unknown key");  // a front end's key
  expectPolicyError(R"([1])", "must be a map");
}

}  // namespace
}  // namespace gpuguard
