// gpu-missing-driver-pin: a GPU pod pins the node's CUDA driver through GPU Feature
// Discovery labels (node selector or required affinity, in every term), or through a
// DRA claim's selector on the NVIDIA DRA driver's version attributes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

// === What pins, in the pod's node selection ============================================

namespace gpuguard::pins {
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

}  // namespace
}  // namespace gpuguard::pins

// === Which labels pin, shared with cuda-driver-too-old =================================

namespace gpuguard::pin_labels {
namespace {

// What pins the driver (rules/nvidia/gfd_labels.h pinsDriver), and that
// gpu-missing-driver-pin and cuda-driver-too-old agree on it. GPU Feature
// Discovery derives nvidia.com/cuda.runtime-version.* from the driver: it is
// the newest CUDA the driver supports (kubernetes-gpu-semantics §14.8), so a
// required selector on it bounds the driver like driver-version.major does.


using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kPinRules = onlyRules({"gpu-missing-driver-pin", "cuda-driver-too-old"});

// A CUDA 13 GPU Pod whose node selection is `selection` (pod-level lines).
std::string cuda13Pod(const std::string& selection) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + selection +
         "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
         "  containers:\n  - name: cuda\n    image: nvidia/cuda:13.0.1-runtime-ubuntu24.04\n"
         "    resources: {limits: {nvidia.com/gpu: 1}}\n";
}

std::string requiredAffinity(const std::string& key, const std::string& op, const std::string& values) {
  return "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
         "        nodeSelectorTerms:\n        - matchExpressions:\n          - {key: " + key + ", operator: " + op +
         ", values: " + values + "}\n";
}

TEST(DriverPin, ARequiredRuntimeVersionSelectorPinsTheDriver) {
  // runtime-version.major > 12 holds exactly on drivers >= 580, which run CUDA 13.
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod(requiredAffinity("nvidia.com/cuda.runtime-version.major", "Gt", "[\"12\"]")),
                                 kPinRules)),
              IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod("  nodeSelector: {nvidia.com/cuda.runtime-version.full: \"13.0\"}\n"),
                                 kPinRules)),
              IsEmpty());
  // The deprecated name GFD still writes.
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod("  nodeSelector: {nvidia.com/cuda.runtime.major: \"13\"}\n"), kPinRules)),
              IsEmpty());
}

TEST(DriverPin, BothRulesReadTheSameRuntimePinAsTooOldForCuda13) {
  // Drivers that support CUDA 12 at most: pinned (no missing-pin finding), and too old for a CUDA 13 image.
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod("  nodeSelector: {nvidia.com/cuda.runtime-version.major: \"12\"}\n"),
                                 kPinRules)),
              ElementsAre("cuda-driver-too-old"));
}

TEST(DriverPin, TheRuntimeMinorAloneIsNoPin) {
  // 12.0 and 13.0 share the minor 0: it says nothing of the driver branch.
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod("  nodeSelector: {nvidia.com/cuda.runtime-version.minor: \"0\"}\n"),
                                 kPinRules)),
              ElementsAre("gpu-missing-driver-pin"));
}

TEST(DriverPin, ExclusionsAndPreferencesAreNoPin) {
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod(requiredAffinity("nvidia.com/cuda.runtime-version.major", "NotIn",
                                                            "[\"11\"]")),
                                 kPinRules)),
              ElementsAre("gpu-missing-driver-pin"));
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod(requiredAffinity("nvidia.com/cuda.runtime-version.major", "Exists", "[]")),
                                 kPinRules)),
              ElementsAre("gpu-missing-driver-pin"));
}

TEST(DriverPin, APolicyPinLabelCountsForBothRules) {
  // A node pool label the policy names as a pin: pinned, but its value says
  // nothing of the driver version, so cuda-driver-too-old has nothing to judge.
  Policy policy = kPinRules;
  policy.driverPinLabels = {"karpenter.sh/nodepool"};
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod("  nodeSelector: {karpenter.sh/nodepool: gpu-580}\n"), policy)), IsEmpty());
  EXPECT_THAT(rulesHit(judgeYaml(cuda13Pod(""), policy)), ElementsAre("gpu-missing-driver-pin"));
}

}  // namespace
}  // namespace gpuguard::pin_labels

// === A DRA claim's CEL selector ========================================================

namespace gpuguard::dra_pin {
namespace {

// A CEL selector on the NVIDIA DRA driver's driverVersion or cudaDriverVersion
// attribute pins the driver as a GFD label selector does
// (kubernetes-gpu-semantics.md §15.2): gpu-missing-driver-pin is satisfied.


using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::judgeInput;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kRule = onlyRules({"gpu-missing-driver-pin"});

std::string input(const std::string& selectors) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\nspec:\n  spec:\n"
         "    devices:\n      requests:\n      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n" +
         selectors +
         "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims: [{name: c, "
         "resourceClaimTemplateName: t}]\n  containers:\n  - name: app\n    image: busybox\n"
         "    resources: {claims: [{name: c}]}\n";
}

TEST(DraDriverPin, ADriverVersionSelectorPinsTheDriver) {
  EXPECT_THAT(judgeInput(input("          selectors:\n          - cel:\n              expression: "
                               "\"device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('550.0.0')) >= 0\"\n"),
                         kRule),
              IsEmpty());
  EXPECT_THAT(judgeInput(input("          selectors:\n          - cel:\n              expression: "
                               "\"device.attributes['gpu.nvidia.com'].cudaDriverVersion.isGreaterThan(semver('12.4.0'))\"\n"),
                         kRule),
              IsEmpty());
}

TEST(DraDriverPin, OtherSelectorsDoNot) {
  EXPECT_THAT(rulesHit(judgeInput(input("          selectors:\n          - cel:\n              expression: "
                                        "\"device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'\"\n"),
                                  kRule)),
              ElementsAre("gpu-missing-driver-pin"));
  EXPECT_THAT(rulesHit(judgeInput(input(""), kRule)), ElementsAre("gpu-missing-driver-pin"));
}

TEST(GpuMissingDriverPin, AWorkloadQueuedByKueueGetsItsNodeLabelsFromTheResourceFlavor) {
  const std::string job =
      "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  labels: {kueue.x-k8s.io/queue-name: gpu-queue}\n"
      "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
      "      - {name: c, image: nvidia/cuda:12.4.1-base-ubuntu22.04, resources: {limits: {nvidia.com/gpu: 1}}}\n";
  EXPECT_THAT(judgeYaml(job, onlyRules({"gpu-missing-driver-pin"})), IsEmpty());
  // The label on the pod template counts as well.
  std::string onTemplate = job;
  onTemplate.replace(onTemplate.find("  labels: {kueue"), std::string("  labels: {kueue.x-k8s.io/queue-name: gpu-queue}\n").size(), "");
  onTemplate.replace(onTemplate.find("    spec:\n      restartPolicy"), 0,
                     "    metadata: {labels: {kueue.x-k8s.io/queue-name: gpu-queue}}\n");
  EXPECT_THAT(judgeYaml(onTemplate, onlyRules({"gpu-missing-driver-pin"})), IsEmpty());
  std::string unqueued = job;
  unqueued.replace(unqueued.find("kueue.x-k8s.io/queue-name: gpu-queue"), 36, "app: x");
  EXPECT_THAT(rulesHit(judgeYaml(unqueued, onlyRules({"gpu-missing-driver-pin"}))), ElementsAre("gpu-missing-driver-pin"));
}

}  // namespace
}  // namespace gpuguard::dra_pin
