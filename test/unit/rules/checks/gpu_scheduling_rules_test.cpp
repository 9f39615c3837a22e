// gpu-missing-toleration, gpu-missing-driver-pin and label-value-not-string:
// where a GPU pod may run, judged like the scheduler and the API decoder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/k8s/taints.h"
#include "test/unit/test_support.h"

namespace gpuguard {
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

// --- driver pins -------------------------------------------------------------

std::vector<std::string> pinFindings(const std::string& specLines) {
  Policy p;
  p.rules = onlyRules({"gpu-missing-driver-pin"}).rules;
  return rulesHit(judgeYaml(podWith(specLines), p));
}

TEST(GpuMissingDriverPin, AGpuPodWithoutAPinIsReportedAtNodeSelector) {
  const auto f = only(judgeYaml(podWith("")), "gpu-missing-driver-pin");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.nodeSelector");
  EXPECT_THAT(f[0].message(), HasSubstr("CUDA driver version is insufficient"));
}

TEST(GpuMissingDriverPin, ANodeSelectorOnAnyPinLabelPins) {
  EXPECT_THAT(pinFindings("  nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n"), IsEmpty());
  EXPECT_THAT(pinFindings("  nodeSelector: {nvidia.com/cuda.driver-version.full: \"550.54.15\"}\n"), IsEmpty());
  EXPECT_THAT(pinFindings("  nodeSelector: {nvidia.com/cuda.driver.major: \"550\"}\n"), IsEmpty());
}

TEST(GpuMissingDriverPin, OtherLabelsDoNotPin) {
  EXPECT_THAT(pinFindings("  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"),
              ElementsAre("gpu-missing-driver-pin"));
}

const char* const kRequiredAffinity =
    "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "        nodeSelectorTerms:\n";

TEST(GpuMissingDriverPin, ARequiredAffinityWithInOrGtPins) {
  EXPECT_THAT(pinFindings(std::string(kRequiredAffinity) +
                          "        - matchExpressions: [{key: nvidia.com/cuda.driver-version.major, operator: Gt, "
                          "values: [\"534\"]}]\n"),
              IsEmpty());
  EXPECT_THAT(pinFindings(std::string(kRequiredAffinity) +
                          "        - matchExpressions: [{key: nvidia.com/cuda.driver-version.major, operator: In, "
                          "values: [\"550\", \"560\"]}]\n"),
              IsEmpty());
}

TEST(GpuMissingDriverPin, EveryOredTermMustPin) {
  EXPECT_THAT(pinFindings(std::string(kRequiredAffinity) +
                          "        - matchExpressions: [{key: nvidia.com/cuda.driver-version.major, operator: Gt, "
                          "values: [\"534\"]}]\n"
                          "        - matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [x]}]\n"),
              ElementsAre("gpu-missing-driver-pin"));
}

TEST(GpuMissingDriverPin, AnEmptyTermMatchesNoNodeSoItNeedsNoPin) {
  // component-helpers nodeaffinity: "nil or empty term selects no objects".
  const std::string pinned = "        - matchExpressions: [{key: nvidia.com/cuda.driver-version.major, operator: Gt, "
                             "values: [\"534\"]}]\n";
  EXPECT_THAT(pinFindings(std::string(kRequiredAffinity) + pinned + "        - matchExpressions: []\n"), IsEmpty());
  EXPECT_THAT(pinFindings(std::string(kRequiredAffinity) + pinned + "        - {}\n"), IsEmpty());
}

TEST(GpuMissingDriverPin, ATermWithOnlyMatchFieldsCanMatchAndMustPin) {
  EXPECT_THAT(pinFindings(std::string(kRequiredAffinity) +
                          "        - matchExpressions: [{key: nvidia.com/cuda.driver-version.major, operator: Gt, "
                          "values: [\"534\"]}]\n"
                          "        - matchFields: [{key: metadata.name, operator: In, values: [gpu-node-1]}]\n"),
              ElementsAre("gpu-missing-driver-pin"));
}

TEST(GpuMissingDriverPin, ANodeSelectorPinHoldsInEveryTerm) {
  EXPECT_THAT(pinFindings("  nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n" +
                          std::string(kRequiredAffinity) +
                          "        - matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [x]}]\n"),
              IsEmpty());
}

TEST(GpuMissingDriverPin, ExistsIsNotAPin) {
  EXPECT_THAT(pinFindings(std::string(kRequiredAffinity) +
                          "        - matchExpressions: [{key: nvidia.com/cuda.driver-version.major, operator: "
                          "Exists}]\n"),
              ElementsAre("gpu-missing-driver-pin"));
}

TEST(GpuMissingDriverPin, PreferredAffinityIsNotAPin) {
  EXPECT_THAT(pinFindings("  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
                          "      - weight: 1\n        preference:\n          matchExpressions: [{key: "
                          "nvidia.com/cuda.driver-version.major, operator: In, values: [\"550\"]}]\n"),
              ElementsAre("gpu-missing-driver-pin"));
}

// --- label values must be strings ---------------------------------------------

std::vector<Finding> labelFindings(const std::string& yaml) {
  Policy p;
  p.rules = onlyRules({"label-value-not-string"}).rules;
  return judgeYaml(yaml, p);
}

TEST(LabelValueNotString, AnUnquotedNumberInNodeSelectorIsReportedWithTheQuotedForm) {
  const auto f = labelFindings(podWith("  nodeSelector: {nvidia.com/cuda.driver-version.major: 535}\n"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.nodeSelector[nvidia.com/cuda.driver-version.major]");
  EXPECT_THAT(f[0].message(), HasSubstr("write \"535\""));
}

TEST(LabelValueNotString, Yaml11BooleansAndOctalsAreExplained) {
  const auto yes = labelFindings(podWith("  nodeSelector: {nvidia.com/mig.capable: yes}\n"));
  ASSERT_EQ(yes.size(), 1u);
  EXPECT_THAT(yes[0].message(), HasSubstr("write \"yes\" (YAML 1.1 reads yes as true)"));
  const auto octal = labelFindings(podWith("  nodeSelector: {team: 010}\n"));
  ASSERT_EQ(octal.size(), 1u);
  EXPECT_THAT(octal[0].message(), HasSubstr("YAML 1.1 reads 010 as 8"));
}

TEST(LabelValueNotString, QuotedValuesAreFine) {
  EXPECT_THAT(labelFindings(podWith("  nodeSelector: {nvidia.com/cuda.driver-version.major: \"535\"}\n")), IsEmpty());
}

TEST(LabelValueNotString, LabelsMatchLabelsAndAffinityValuesAreCheckedToo) {
  const std::string yaml =
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, labels: {tier: 1}}\nspec:\n"
      "  selector: {matchLabels: {app: true}}\n  template:\n    metadata: {labels: {gpu: on}}\n    spec:\n"
      "      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
      "[{matchExpressions: [{key: k, operator: In, values: [535]}]}]}}}\n"
      "      containers: [{name: c, image: x}]\n";
  std::vector<std::string> fields;
  for (const Finding& f : labelFindings(yaml)) fields.push_back(f.field());
  EXPECT_THAT(fields, ElementsAre("metadata.labels[tier]", "spec.selector.matchLabels[app]",
                                  "spec.template.metadata.labels[gpu]",
                                  "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                                  ".nodeSelectorTerms[0].matchExpressions[0].values[0]"));
}

TEST(LabelValueNotString, AnnotationsAndTolerationValuesMustBeStringsToo) {
  const std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {prometheus.io/scrape: true}}\nspec:\n"
      "  tolerations: [{key: nvidia.com/gpu, operator: Equal, value: 8, effect: NoSchedule, tolerationSeconds: 30}]\n"
      "  containers: [{name: c, image: x}]\n";
  std::vector<std::string> fields;
  for (const Finding& f : labelFindings(yaml)) fields.push_back(f.field());
  EXPECT_THAT(fields, ElementsAre("metadata.annotations[prometheus.io/scrape]", "spec.tolerations[0].value"));
}

}  // namespace
}  // namespace gpuguard
