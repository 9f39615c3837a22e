// gpu-missing-toleration: a GPU pod must tolerate the GPU nodes' taint as the scheduler
// decides it (ToleratesTaint), with tolerations the API server accepts
// (ValidateTolerations); when none tolerates it, the finding names the near miss.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

// === Which tolerations tolerate the GPU taint, and which the API server rejects ========

namespace gpuguard::tolerates_taint {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::only;
using testing::onlyRules;
using testing::rulesHit;

// A GPU pod with the given extra lines under `spec:` (two-space indented).
std::string podWith(const std::string& specLines, const std::string& gpus = "1") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + specLines +
         "  containers:\n  - name: c\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
         "    resources: {limits: {nvidia.com/gpu: " + gpus + "}}\n";
}

std::vector<std::string> tolerationFindings(const std::string& specLines, const Policy& base = {}) {
  Policy p = base;
  p.rules = onlyRules({"gpu-missing-toleration"}).rules;
  return rulesHit(judgeYaml(podWith(specLines), p));
}

// --- ToleratesTaint, exactly ----------------------------------------------

struct TolerationCase {
  const char* toleration;
  bool tolerates;
};

// How GoogleTest and ctest name each case (instead of its bytes).
void PrintTo(const TolerationCase& c, std::ostream* os) { *os << c.toleration; }

class TolerationOfNvidiaGpuPresentNoSchedule : public ::testing::TestWithParam<TolerationCase> {};

// The truth table of kubernetes-gpu-semantics.md §6.1 for the taint
// nvidia.com/gpu=present:NoSchedule.
TEST_P(TolerationOfNvidiaGpuPresentNoSchedule, MatchesLikeKubernetes) {
  const Taint taint{"nvidia.com/gpu", "present", "NoSchedule"};
  const auto toleration = nlohmann::json::parse(GetParam().toleration);
  EXPECT_EQ(toleratesTaint(toleration, taint), GetParam().tolerates) << GetParam().toleration;
}

INSTANTIATE_TEST_SUITE_P(
    TruthTable, TolerationOfNvidiaGpuPresentNoSchedule,
    ::testing::Values(
        TolerationCase{R"({"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"})", true},
        TolerationCase{R"({"key":"nvidia.com/gpu","operator":"Exists"})", true},
        TolerationCase{R"({"operator":"Exists"})", true},
        TolerationCase{R"({"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"})", true},
        TolerationCase{R"({"key":"nvidia.com/gpu","operator":"Equal","value":"true","effect":"NoSchedule"})", false},
        TolerationCase{R"({"key":"nvidia.com/gpu","operator":"Exists","effect":"NoExecute"})", false},
        TolerationCase{R"({"key":"nvidia.com/GPU","operator":"Exists"})", false},
        TolerationCase{R"({"key":"nvidia.com/gpu","operator":"Gte","value":"present"})", false}));

TEST(GpuMissingToleration, AGpuPodWithoutTolerationsIsReported) {
  const auto f = only(judgeYaml(podWith("")), "gpu-missing-toleration");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.tolerations");
  EXPECT_THAT(f[0].message(), HasSubstr("nvidia.com/gpu:NoSchedule"));
  EXPECT_THAT(f[0].message(), HasSubstr("operator: Exists"));
}

TEST(GpuMissingToleration, ExistsOnTheKeyTolerates) {
  EXPECT_THAT(tolerationFindings("  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"), IsEmpty());
}

TEST(GpuMissingToleration, EqualOnlyToleratesAValueThePolicyNames) {
  const std::string equalTrue = "  tolerations: [{key: nvidia.com/gpu, operator: Equal, value: \"true\"}]\n";
  EXPECT_THAT(tolerationFindings(equalTrue), ElementsAre("gpu-missing-toleration"));
  Policy named;
  named.gpuTaints = {{"nvidia.com/gpu", "true", "NoSchedule"}};
  EXPECT_THAT(tolerationFindings(equalTrue, named), IsEmpty());
}

TEST(GpuMissingToleration, AWrongEffectDoesNotTolerate) {
  EXPECT_THAT(tolerationFindings("  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]\n"),
              ElementsAre("gpu-missing-toleration"));
}

TEST(GpuMissingToleration, PodsWithoutGpusNeedNoToleration) {
  Policy p;
  p.rules = onlyRules({"gpu-missing-toleration"}).rules;
  EXPECT_THAT(rulesHit(judgeYaml(podWith("", "0"), p)), IsEmpty());
}

TEST(GpuMissingToleration, TheExtendedResourceTolerationPluginCanBeAssumed) {
  Policy p;
  p.assumeExtendedResourceToleration = true;
  EXPECT_THAT(tolerationFindings("", p), IsEmpty());
}

TEST(GpuMissingToleration, MigResourcesAreGpusToo) {
  Policy p;
  p.rules = onlyRules({"gpu-missing-toleration"}).rules;
  const std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x\n"
      "    resources: {limits: {nvidia.com/mig-1g.10gb: 1}}\n";
  EXPECT_THAT(rulesHit(judgeYaml(yaml, p)), ElementsAre("gpu-missing-toleration"));
}

TEST(GpuMissingToleration, APreferNoScheduleTaintKeepsNoPodOff) {
  // The scheduler's TaintToleration filter ignores PreferNoSchedule (§6.1).
  Policy soft;
  soft.gpuTaints = {{"nvidia.com/gpu", std::nullopt, "PreferNoSchedule"}};
  EXPECT_THAT(tolerationFindings("", soft), IsEmpty());
  Policy both;
  both.gpuTaints = {{"nvidia.com/gpu", std::nullopt, "PreferNoSchedule"}, {"dedicated", "gpu", "NoExecute"}};
  both.rules = onlyRules({"gpu-missing-toleration"}).rules;
  const auto f = judgeYaml(podWith(""), both);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("taint dedicated=gpu:NoExecute"));
}

// --- tolerations the API server rejects (ValidateTolerations, §6.3) -------------

std::vector<Finding> tolerationOnly(const std::string& specLines, const Policy& base = {},
                                    const std::string& gpus = "1") {
  Policy p = base;
  p.rules = onlyRules({"gpu-missing-toleration"}).rules;
  return judgeYaml(podWith(specLines, gpus), p);
}

std::vector<std::string> fieldsOf(const std::vector<Finding>& findings) {
  std::vector<std::string> fields;
  for (const Finding& f : findings) fields.push_back(f.field());
  return fields;
}

TEST(GpuMissingToleration, ExistsWithAValueIsRejectedThoughItWouldTolerate) {
  const auto f = tolerationOnly(
      "  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists, value: present, effect: NoSchedule}\n");
  ASSERT_EQ(f.size(), 1u);  // no "no toleration" finding: the fix keeps it tolerating
  EXPECT_EQ(f[0].field(), "spec.tolerations[0].operator");
  EXPECT_EQ(f[0].value, R"({"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists","value":"present"})");
  EXPECT_THAT(f[0].message(), HasSubstr(": value must be empty when `operator` is 'Exists'; the API server rejects "
                                      "the pod"));
  EXPECT_THAT(f[0].message(), HasSubstr("remove value: \"present\""));
  EXPECT_THAT(tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Exists, value: \"\"}]\n"), IsEmpty());
}

TEST(GpuMissingToleration, TolerationSecondsNeedsEffectNoExecute) {
  const auto f = tolerationOnly(
      "  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule, tolerationSeconds: 300}\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.tolerations[0].effect");
  EXPECT_EQ(f[0].value, "\"NoSchedule\"");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
                                      "`tolerationSeconds` is set; the API server rejects the pod"));
  EXPECT_THAT(f[0].message(), HasSubstr("remove tolerationSeconds"));
  // An empty effect is not NoExecute either.
  EXPECT_THAT(fieldsOf(tolerationOnly(
                  "  tolerations: [{key: nvidia.com/gpu, operator: Exists, tolerationSeconds: 300}]\n")),
              ElementsAre("spec.tolerations[0].effect"));
  // null is not set.
  EXPECT_THAT(tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule, "
                             "tolerationSeconds: null}]\n"),
              IsEmpty());
}

TEST(GpuMissingToleration, TolerationSecondsWithNoExecuteIsValid) {
  Policy noExecute;
  noExecute.gpuTaints = {{"nvidia.com/gpu", std::nullopt, "NoExecute"}};
  EXPECT_THAT(tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoExecute, "
                             "tolerationSeconds: 300}]\n",
                             noExecute),
              IsEmpty());
}

TEST(GpuMissingToleration, TolerationSecondsMustDecodeAsAnInteger) {
  Policy noExecute;
  noExecute.gpuTaints = {{"nvidia.com/gpu", std::nullopt, "NoExecute"}};
  const auto f = tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoExecute, "
                                "tolerationSeconds: \"10\"}]\n",
                                noExecute);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.tolerations[0].tolerationSeconds");
  EXPECT_EQ(f[0].value, "\"10\"");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"10\": json: cannot unmarshal string into Go struct field "
                                      "Toleration.spec.tolerations.tolerationSeconds of type int64"));
  EXPECT_THAT(f[0].message(), HasSubstr("write tolerationSeconds: 10, unquoted"));
  const auto fraction = tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoExecute, "
                                       "tolerationSeconds: 1.5}]\n",
                                       noExecute);
  ASSERT_EQ(fraction.size(), 1u);
  EXPECT_THAT(fraction[0].message(), HasSubstr("cannot unmarshal number 1.5 into"));
  // A YAML 300.0 reaches the API server as 300.
  EXPECT_THAT(tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoExecute, "
                             "tolerationSeconds: 300.0}]\n",
                             noExecute),
              IsEmpty());
}

TEST(GpuMissingToleration, TheDecodeErrorNamesTheFieldPathWithoutIndexes) {
  Policy p;
  p.rules = onlyRules({"gpu-missing-toleration"}).rules;
  const std::string deployment =
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
      "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule, tolerationSeconds: \"10\"}]\n"
      "      containers:\n      - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}\n";
  const auto f = judgeYaml(deployment, p);
  EXPECT_THAT(fieldsOf(f), ElementsAre("spec.template.spec.tolerations[0].effect",
                                       "spec.template.spec.tolerations[0].tolerationSeconds"));
  EXPECT_THAT(f[1].message(), HasSubstr("Go struct field Toleration.spec.template.spec.tolerations.tolerationSeconds"));
}

TEST(GpuMissingToleration, AnEmptyKeyNeedsOperatorExists) {
  const auto f = tolerationOnly("  tolerations: [{operator: Equal, value: x}]\n");
  // It tolerates no GPU taint (whose value is unknown) either.
  EXPECT_THAT(fieldsOf(f), ElementsAre("spec.tolerations", "spec.tolerations[0].operator"));
  EXPECT_EQ(f[1].value, "\"Equal\"");
  EXPECT_THAT(f[1].message(), HasSubstr("Invalid value: \"Equal\": operator must be Exists when `key` is empty, which "
                                      "means \"match all values and all keys\"; the API server rejects the pod"));
  const auto omitted = tolerationOnly("  tolerations: [{value: x}]\n");
  ASSERT_EQ(omitted.size(), 2u);
  EXPECT_EQ(omitted[1].value, "\"\"");
  EXPECT_THAT(tolerationOnly("  tolerations: [{operator: Exists}]\n"), IsEmpty());
}

TEST(GpuMissingToleration, AnEqualValueMustBeALabelValue) {
  const auto f = tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Equal, value: \"a b\"}]\n");
  EXPECT_THAT(fieldsOf(f), ElementsAre("spec.tolerations", "spec.tolerations[0].operator"));
  EXPECT_THAT(f[1].message(), HasSubstr("Invalid value: \"a b\": a valid label must be an empty string or consist of "
                                      "alphanumeric characters"));
  EXPECT_THAT(fieldsOf(tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Equal, value: present}]\n")),
              ElementsAre("spec.tolerations"));
}

TEST(GpuMissingToleration, OnlyTolerationsThatCanMatchAGpuTaintAreValidated) {
  // Other keys are the API server's business, not a GPU rule's.
  EXPECT_THAT(tolerationOnly("  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists}\n"
                             "  - {key: example.com/spot, operator: Exists, value: \"yes\", tolerationSeconds: 5}\n"),
              IsEmpty());
  // Pods that ask for no GPU are not this rule's.
  EXPECT_THAT(tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Exists, value: present}]\n", {}, "0"),
              IsEmpty());
}

TEST(GpuMissingToleration, AValidTolerationBesideAnInvalidOneDoesNotHideIt) {
  EXPECT_THAT(fieldsOf(tolerationOnly("  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists}\n"
                                      "  - {key: nvidia.com/gpu, operator: Exists, value: present}\n")),
              ElementsAre("spec.tolerations[1].operator"));
}

}  // namespace
}  // namespace gpuguard::tolerates_taint

// === The near miss =====================================================================

namespace gpuguard::near_miss {
namespace {

// gpu-missing-toleration names the near miss: when a GPU pod has tolerations
// but none tolerates the GPU taint (ToleratesTaint, kubernetes-gpu-semantics
// §6.1), the finding says which one comes closest and why, as the scheduler's
// rules decide it: keys are compared exactly, an empty effect matches every
// effect, Equal compares values, Exists ignores them.


using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kTolerationOnly = onlyRules({"gpu-missing-toleration"});

// A GPU Pod with the given tolerations (flow YAML, "" for none) and extra
// lines inside its container.
std::string pod(const std::string& tolerations, const std::string& containerLines = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" +
         (tolerations.empty() ? std::string() : "  tolerations: " + tolerations + "\n") +
         "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n" + containerLines +
         "    resources: {limits: {nvidia.com/gpu: 1}}\n";
}

std::string messageFor(const std::string& tolerations, const std::string& containerLines = "",
                       const Policy& policy = kTolerationOnly) {
  const auto f = judgeYaml(pod(tolerations, containerLines), policy);
  if (f.size() != 1) return "expected one finding, got " + std::to_string(f.size());
  return f[0].message();
}

TEST(GpuMissingTolerationNearMiss, AKeyOneLetterOffIsNamed) {
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpus, operator: Exists, effect: NoSchedule}]"),
              EndsWith("; the closest is spec.tolerations[0] "
                       "{\"effect\":\"NoSchedule\",\"key\":\"nvidia.com/gpus\",\"operator\":\"Exists\"}: the key "
                       "nvidia.com/gpus is not nvidia.com/gpu"));
}

TEST(GpuMissingTolerationNearMiss, KeysAreCaseSensitive) {
  EXPECT_THAT(messageFor("[{key: nvidia.com/GPU, operator: Exists}]"),
              HasSubstr("the key nvidia.com/GPU is not nvidia.com/gpu (keys are case-sensitive)"));
}

TEST(GpuMissingTolerationNearMiss, AnotherEffectIsNamed) {
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]"),
              HasSubstr("it tolerates the effect NoExecute, not NoSchedule"));
}

TEST(GpuMissingTolerationNearMiss, EqualAgainstATaintValueThePolicyLeavesOpen) {
  // gpuTaints without a value: the nodes' value is unknown, only Exists is sure to match.
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpu, operator: Equal, value: \"true\", effect: NoSchedule}]"),
              HasSubstr("operator Equal with value \"true\" matches one taint value, and the policy's gpuTaints "
                        "leave the GPU nodes' value open"));
}

TEST(GpuMissingTolerationNearMiss, EqualWithAnotherValueThanTheTaints) {
  Policy policy = kTolerationOnly;
  policy.gpuTaints = {{"nvidia.com/gpu", std::string("present"), "NoSchedule"}};
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpu, value: \"true\"}]", "", policy),
              HasSubstr("operator Equal (the default) with value \"true\" does not match the taint's value "
                        "\"present\""));
  // The right value tolerates it: nothing to report.
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{key: nvidia.com/gpu, value: present}]"), policy)), IsEmpty());
}

TEST(GpuMissingTolerationNearMiss, TheTolerationWithTheFewestDifferencesIsTheClosest) {
  const std::string m = messageFor(
      "[{key: nvidia.com/gpus, operator: Exists, effect: NoExecute}, {key: nvidia.com/gpu, operator: Exists, "
      "effect: NoExecute}]");
  EXPECT_THAT(m, HasSubstr("the closest is spec.tolerations[1] "));
  EXPECT_THAT(m, Not(HasSubstr("nvidia.com/gpus is not")));
  // Several differences of one toleration are all named.
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpus, operator: Exists, effect: NoExecute}]"),
              HasSubstr("the key nvidia.com/gpus is not nvidia.com/gpu, and it tolerates the effect NoExecute"));
}

TEST(GpuMissingTolerationNearMiss, AnUnrelatedKeyIsNoNearMiss) {
  const std::string m = messageFor("[{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}]");
  EXPECT_THAT(m, HasSubstr("no toleration for the GPU node taint nvidia.com/gpu:NoSchedule"));
  EXPECT_THAT(m, Not(HasSubstr("closest")));
}

TEST(GpuMissingTolerationNearMiss, AToleratingEntryInsideAContainerIsNamed) {
  const std::string m =
      messageFor("", "    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n");
  EXPECT_THAT(m, HasSubstr("the closest is spec.containers[0].tolerations[0] "));
  EXPECT_THAT(m, HasSubstr("a container has no tolerations field"));
  EXPECT_THAT(m, HasSubstr("move it to spec.tolerations"));
}

TEST(GpuMissingTolerationNearMiss, AnOperatorThatIsNeitherExistsNorEqual) {
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpu, operator: exists}]"),
              HasSubstr("the operator \"exists\" is neither Exists nor Equal, and tolerates nothing"));
}

TEST(GpuMissingTolerationNearMiss, AMatchingTolerationIsNoFinding) {
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{key: nvidia.com/gpu, operator: Exists}]"), kTolerationOnly)), IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{operator: Exists}]"), kTolerationOnly)), IsEmpty());
}

}  // namespace
}  // namespace gpuguard::near_miss
