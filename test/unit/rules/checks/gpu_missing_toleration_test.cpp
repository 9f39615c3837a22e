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
using ::testing::Not;
using ::testing::StartsWith;
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

std::vector<Finding> tolerationOnlyYaml(const std::string& yaml) {
  return judgeYaml(yaml, onlyRules({"gpu-missing-toleration"}));
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
  // A valid value against the open default taint value: the warning on the entry itself.
  EXPECT_THAT(fieldsOf(tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Equal, value: present}]\n")),
              ElementsAre("spec.tolerations[0]"));
}

TEST(GpuMissingToleration, AnUnknownOperatorIsAnUnsupportedValueAsTheApiServerSaysIt) {
  const auto f = tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: exists, effect: NoSchedule}]\n");
  ASSERT_EQ(f.size(), 1u);  // no "no toleration" finding beside it: this one is the cause
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.tolerations[0].operator");
  EXPECT_EQ(f[0].value, "\"exists\"");
  EXPECT_THAT(f[0].message(), StartsWith("Unsupported value: \"exists\": supported values: \"Equal\", \"Exists\"; "
                                         "the API server rejects the pod"));
  EXPECT_THAT(f[0].message(), HasSubstr("operators are case-sensitive"));
}

TEST(GpuMissingToleration, LtAndGtNeedAnAlphaGateADefaultApiServerLacks) {
  Policy numeric;
  numeric.gpuTaints = {{"nvidia.com/gpu", "5", "NoSchedule"}};
  const auto f = tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Lt, value: \"9\"}]\n", numeric);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.tolerations[0].operator");
  EXPECT_THAT(f[0].message(), HasSubstr("Unsupported value: \"Lt\": supported values: \"Equal\", \"Exists\""));
  EXPECT_THAT(f[0].message(), HasSubstr("TaintTolerationComparisonOperators"));
}

TEST(GpuMissingToleration, AnUnknownEffectIsAnUnsupportedValueAsTheApiServerSaysIt) {
  const auto f = tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoScheduled}]\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.tolerations[0].effect");
  EXPECT_EQ(f[0].value, "\"NoScheduled\"");
  EXPECT_THAT(f[0].message(), StartsWith("Unsupported value: \"NoScheduled\": supported values: \"NoSchedule\", "
                                         "\"PreferNoSchedule\", \"NoExecute\"; the API server rejects the pod"));
  // A valid effect (even another one) is no Unsupported value.
  EXPECT_THAT(fieldsOf(tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]\n")),
              ElementsAre("spec.tolerations"));
}

TEST(GpuMissingToleration, UnsupportedValuesOfOtherKeysAreNotThisRulesBusiness) {
  EXPECT_THAT(tolerationOnly("  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists}\n"
                             "  - {key: example.com/spot, operator: exists, effect: NoScheduled}\n"),
              IsEmpty());
}

// --- Equal against a taint value the policy leaves open -------------------------

TEST(GpuMissingToleration, EqualAgainstAnOpenTaintValueIsAWarningNotAnError) {
  // GKE taints nvidia.com/gpu=present: this pod schedules there; the default
  // policy does not know the cluster's value.
  const auto f =
      tolerationOnly("  tolerations:\n  - {key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].field(), "spec.tolerations[0]");
  EXPECT_THAT(f[0].message(), HasSubstr("operator Equal tolerates only GPU nodes tainted nvidia.com/gpu=present:"
                                        "NoSchedule, and the policy's gpuTaints leave the taint's value open"));
  EXPECT_THAT(f[0].message(), HasSubstr("write operator: Exists without a value"));
  EXPECT_THAT(f[0].message(), Not(HasSubstr("cannot schedule")));
  ASSERT_TRUE(f[0].fix.has_value());
  EXPECT_EQ(f[0].fix->edits.size(), 1u);
}

TEST(GpuMissingToleration, AnEqualTolerationWithoutAValueMatchesOnlyAnEmptyTaintValue) {
  const auto f = tolerationOnly("  tolerations: [{key: nvidia.com/gpu, effect: NoSchedule}]\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_THAT(f[0].message(), HasSubstr("tainted nvidia.com/gpu with an empty value:NoSchedule"));
}

TEST(GpuMissingToleration, EqualAgainstAValueThePolicyNamesStaysAnError) {
  Policy named;
  named.gpuTaints = {{"nvidia.com/gpu", "true", "NoSchedule"}};
  const auto f = tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Equal, value: present}]\n", named);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.tolerations");
  EXPECT_THAT(f[0].message(), HasSubstr("does not match the taint's value \"true\""));
}

TEST(GpuMissingToleration, EqualWithAnotherEffectOrKeyIsNoOpenValueWarning) {
  const auto other = tolerationOnly("  tolerations: [{key: nvidia.com/gpu, operator: Equal, value: present, "
                                    "effect: NoExecute}]\n");
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].severity, Severity::Error);
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

// --- where the toleration comes from: Kueue, Argo templateDefaults, TrainJob overrides --

// A GPU Job with `labels` (flow map) on the Job.
std::string kueueJob(const std::string& labels) {
  return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: kueue-gpu\n  labels: " + labels +
         "\nspec:\n  suspend: true\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
         "      - {name: c, image: nvidia/cuda:12.4.1-base-ubuntu22.04, resources: {limits: {nvidia.com/gpu: 1}}}\n";
}

TEST(GpuMissingToleration, AWorkloadQueuedByKueueMayGetItFromTheResourceFlavorSoItIsAWarning) {
  const auto f = judgeYaml(kueueJob("{kueue.x-k8s.io/queue-name: gpu-queue}"), onlyRules({"gpu-missing-toleration"}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].field(), "spec.template.spec.tolerations");
  EXPECT_THAT(f[0].message(), HasSubstr("queued by Kueue (kueue.x-k8s.io/queue-name: gpu-queue)"));
  EXPECT_THAT(f[0].message(), HasSubstr("ResourceFlavor spec.tolerations"));
  // Without the queue label it is the error it always was.
  const auto plain = judgeYaml(kueueJob("{app: train}"), onlyRules({"gpu-missing-toleration"}));
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].severity, Severity::Error);
}

TEST(GpuMissingToleration, ArgoTemplateDefaultsReachEveryTemplate) {
  const std::string workflow =
      "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: gpu-}\nspec:\n"
      "  entrypoint: train\n  templateDefaults:\n"
      "    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
      "  templates:\n  - name: train\n    container:\n      image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
      "      resources: {limits: {nvidia.com/gpu: 1}}\n";
  EXPECT_THAT(tolerationOnlyYaml(workflow), IsEmpty());
  // The template's own tolerations still win (and here miss the taint).
  std::string own = workflow;
  own.replace(own.find("    container:"), 0, "    tolerations: [{key: other, operator: Exists}]\n");
  EXPECT_THAT(fieldsOf(tolerationOnlyYaml(own)), ElementsAre("spec.templates[0].tolerations"));
}

TEST(GpuMissingToleration, AnArgoPodSpecPatchThatSetsTolerationsDecidesThemAtRunTime) {
  // Argo merges podSpecPatch (YAML or JSON text, often with {{...}}
  // parameters) into every pod it creates: what it sets cannot be judged
  // from the template, so it is not reported missing.
  const std::string workflow =
      "apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: gpu-train}\nspec:\n"
      "  entrypoint: train\nPATCH"
      "  templates:\n  - name: train\n    TEMPLATE_PATCH"
      "container:\n      image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
      "      resources: {limits: {nvidia.com/gpu: 1}}\n";
  const auto with = [&](const std::string& workflowPatch, const std::string& templatePatch) {
    std::string w = workflow;
    w.replace(w.find("PATCH"), 5, workflowPatch);
    w.replace(w.find("TEMPLATE_PATCH"), 14, templatePatch);
    return w;
  };
  EXPECT_THAT(tolerationOnlyYaml(with("  podSpecPatch: |\n    tolerations:\n    - {key: nvidia.com/gpu, operator: Exists}\n", "")),
              IsEmpty());
  EXPECT_THAT(tolerationOnlyYaml(with("", "podSpecPatch: '{\"tolerations\": {{inputs.parameters.tolerations}}}'\n    ")),
              IsEmpty());
  // A patch of other fields leaves the toleration to the template, which lacks it.
  EXPECT_THAT(fieldsOf(tolerationOnlyYaml(with("  podSpecPatch: '{\"priorityClassName\": \"high\"}'\n", ""))),
              ElementsAre("spec.templates[0].tolerations"));
}

// Without spec.runtimeRef (a fragment): with it, the runtime supplies what
// no override sets (runtime_supplied_fields_test.cpp).
TEST(GpuMissingToleration, ATrainJobsPodTemplateOverrideForTheNodeJobTolerates) {
  const std::string trainJob =
      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj}\nspec:\n"
      "  trainer:\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n"
      "    resourcesPerNode: {limits: {nvidia.com/gpu: 8}}\n  podTemplateOverrides:\n"
      "  - targetJobs: [{name: TARGET}]\n    spec:\n"
      "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n";
  std::string node = trainJob;
  node.replace(node.find("TARGET"), 6, "node");
  EXPECT_THAT(tolerationOnlyYaml(node), IsEmpty());
  // Aimed at the initializer only: reported where the trainer's entry would go, a path of this API.
  std::string initializer = trainJob;
  initializer.replace(initializer.find("TARGET"), 6, "dataset-initializer");
  EXPECT_THAT(fieldsOf(tolerationOnlyYaml(initializer)), ElementsAre("spec.podTemplateOverrides[1].spec.tolerations"));
}

TEST(GpuMissingToleration, PolicyAndDeployKindsHoldNoPods) {
  const std::string kyverno =
      "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: require-gpu-limits}\nspec:\n  rules:\n"
      "  - name: gpu\n    validate:\n      pattern:\n        spec:\n          containers:\n"
      "          - resources: {limits: {nvidia.com/gpu: \"?*\"}}\n";
  EXPECT_THAT(judgeYaml(kyverno), IsEmpty());  // no rule at all: not a pod
  const std::string gatekeeper =
      "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sContainerLimits\nmetadata: {name: gpu}\nspec:\n"
      "  parameters:\n    containers:\n    - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}\n";
  EXPECT_THAT(judgeYaml(gatekeeper), IsEmpty());
  const std::string argoCd =
      "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: vllm}\nspec:\n  source:\n"
      "    helm:\n      valuesObject:\n        resources: {limits: {nvidia.com/gpu: 1}}\n"
      "        args: [--tensor-parallel-size, \"8\"]\n";
  EXPECT_THAT(judgeYaml(argoCd), IsEmpty());
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
using ::testing::StartsWith;
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

TEST(GpuMissingTolerationNearMiss, EqualAgainstATaintValueThePolicyLeavesOpenWithAnotherEffect) {
  // gpuTaints without a value: the nodes' value is unknown, only Exists is sure to match.
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpu, operator: Equal, value: \"true\", effect: NoExecute}]"),
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

TEST(GpuMissingTolerationNearMiss, AnOperatorThatIsNeitherExistsNorEqualIsTheApiServersUnsupportedValue) {
  EXPECT_THAT(messageFor("[{key: nvidia.com/gpu, operator: exists}]"),
              StartsWith("Unsupported value: \"exists\": supported values: \"Equal\", \"Exists\""));
}

TEST(GpuMissingTolerationNearMiss, AMatchingTolerationIsNoFinding) {
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{key: nvidia.com/gpu, operator: Exists}]"), kTolerationOnly)), IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(pod("[{operator: Exists}]"), kTolerationOnly)), IsEmpty());
}

}  // namespace
}  // namespace gpuguard::near_miss
