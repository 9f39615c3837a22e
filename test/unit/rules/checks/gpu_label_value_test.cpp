// gpu-label-value: node selection values for GPU labels in the format GPU
// Feature Discovery writes (kubernetes-gpu-semantics.md §8), and the YAML 1.1
// traps (§1.6, §7.1) in GPU quantities and GPU label values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kLabelOnly = onlyRules({"gpu-label-value"});

// A Pod selecting nodes with `key: value` (value written verbatim).
std::string selectorPod(const std::string& key, const std::string& value) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector:\n    " + key + ": " + value +
         "\n  containers:\n  - {name: c, image: busybox}\n";
}

std::string affinityPod(const std::string& expression) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n    nodeAffinity:\n"
         "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
         "        - matchExpressions:\n          - " +
         expression + "\n  containers:\n  - {name: c, image: busybox}\n";
}

std::string gpuQuantityPod(const std::string& quantity) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: busybox\n"
         "    resources:\n      limits:\n        nvidia.com/gpu: " +
         quantity + "\n";
}

std::vector<Finding> judge(const std::string& yaml) { return judgeYaml(yaml, kLabelOnly); }

// --- values in GFD's format match: no finding --------------------------------

struct GoodValue {
  const char* key;
  const char* value;
};

// How GoogleTest and ctest name each case (instead of its bytes).
void PrintTo(const GoodValue& c, std::ostream* os) { *os << c.key << "=" << c.value; }

class GfdFormattedValue : public ::testing::TestWithParam<GoodValue> {};

TEST_P(GfdFormattedValue, IsAccepted) {
  const GoodValue c = GetParam();
  EXPECT_THAT(judge(selectorPod(c.key, c.value)), IsEmpty()) << c.key << ": " << c.value;
}

INSTANTIATE_TEST_SUITE_P(
    ReferenceExamples, GfdFormattedValue,
    ::testing::Values(GoodValue{"nvidia.com/cuda.driver-version.major", "\"535\""},
                      GoodValue{"nvidia.com/cuda.driver.major", "\"550\""},
                      GoodValue{"nvidia.com/cuda.driver-version.full", "\"535.104.05\""},
                      GoodValue{"nvidia.com/cuda.driver-version.full", "\"570.26\""},
                      GoodValue{"nvidia.com/cuda.runtime-version.full", "\"12.5\""},
                      GoodValue{"nvidia.com/gpu.memory", "\"81920\""}, GoodValue{"nvidia.com/gpu.count", "\"8\""},
                      GoodValue{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                      GoodValue{"nvidia.com/gpu.product", "Tesla-T4-SHARED"},
                      GoodValue{"nvidia.com/gpu.family", "ada-lovelace"},
                      GoodValue{"nvidia.com/mig.capable", "\"true\""},
                      GoodValue{"nvidia.com/mig.strategy", "mixed"},
                      GoodValue{"nvidia.com/gpu.sharing-strategy", "time-slicing"},
                      GoodValue{"nvidia.com/mig-1g.10gb.count", "\"7\""},
                      GoodValue{"nvidia.com/cuda.driver-version.revision", "\"02\""},
                      GoodValue{"cloud.google.com/gke-accelerator", "nvidia-l4"},
                      // Not a GPU label: the API server's business.
                      GoodValue{"example.com/zone", "\"not a label value\""},
                      // Template placeholders are not values.
                      GoodValue{"cloud.google.com/gke-accelerator", "${GPU_TYPE}"},
                      GoodValue{"nvidia.com/gpu.product", "\"{{ .Values.gpu }}\""}));

// --- values no node carries ---------------------------------------------------

struct BadValue {
  const char* key;
  const char* value;
  const char* advice;
};

// How GoogleTest and ctest name each case (instead of its bytes).
void PrintTo(const BadValue& c, std::ostream* os) { *os << c.key << "=" << c.value; }

class ValueNoNodeCarries : public ::testing::TestWithParam<BadValue> {};

TEST_P(ValueNoNodeCarries, IsReportedWithTheFix) {
  const BadValue c = GetParam();
  const auto f = judge(selectorPod(c.key, c.value));
  ASSERT_EQ(f.size(), 1u) << c.key << ": " << c.value;
  EXPECT_EQ(f[0].rule, "gpu-label-value");
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.nodeSelector[" + std::string(c.key) + "]");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: "));
  EXPECT_THAT(f[0].message(), HasSubstr(c.advice)) << f[0].message();
}

INSTANTIATE_TEST_SUITE_P(
    Mistakes, ValueNoNodeCarries,
    ::testing::Values(
        BadValue{"nvidia.com/cuda.driver-version.major", "\"535.104\"",
                 "it holds the major version alone: \"535\"; to pin the whole version use "
                 "nvidia.com/cuda.driver-version.full"},
        BadValue{"nvidia.com/cuda.driver-version.major", "\"r535\"", "as a decimal integer"},
        BadValue{"nvidia.com/cuda.driver-version.major", "\"0535\"", "without leading zeros: \"535\""},
        BadValue{"nvidia.com/cuda.runtime-version.major", "\"12.4\"",
                 "to pin major.minor use nvidia.com/cuda.runtime-version.full: \"12.4\""},
        BadValue{"nvidia.com/gpu.memory", "\"80GB\"", "in MiB as NVML reports it, e.g. 81920"},
        BadValue{"nvidia.com/gpu.count", "\"eight\"", "as a decimal integer"},
        BadValue{"nvidia.com/gpu.product", "\"NVIDIA A100-SXM4-80GB\"",
                 "whitespace replaced by '-': \"NVIDIA-A100-SXM4-80GB\""},
        BadValue{"nvidia.com/gpu.product", "\"Tesla T4 (PCIe)\"", "\"Tesla-T4-PCIe\""},
        BadValue{"nvidia.com/cuda.driver-version.full", "\"550\"",
                 "to select by major version use nvidia.com/cuda.driver-version.major: \"550\""},
        BadValue{"nvidia.com/cuda.runtime-version.full", "\"12.4.1\"", "write \"12.4\""},
        BadValue{"nvidia.com/cuda.runtime-version.full", "\"12\"", "nvidia.com/cuda.runtime-version.major: \"12\""},
        BadValue{"nvidia.com/mig.capable", "\"True\"", "write \"true\""},
        BadValue{"nvidia.com/gpu.present", "\"yes\"", "write \"true\""},
        BadValue{"nvidia.com/gpu.family", "Ampere", "write \"ampere\""},
        BadValue{"nvidia.com/gpu.family", "ada", "ada-lovelace"},
        BadValue{"nvidia.com/mig.strategy", "Single", "write \"single\""},
        BadValue{"cloud.google.com/gke-accelerator", "\"nvidia l4\"", "not a valid label value"},
        BadValue{"nvidia.com/gpu.machine", "\"-dgx\"", "not a valid label value"}));

// --- valid label values GFD never writes: warnings ------------------------------

class ValueGfdNeverWrites : public ::testing::TestWithParam<BadValue> {};

TEST_P(ValueGfdNeverWrites, IsAWarning) {
  const BadValue c = GetParam();
  const auto f = judge(selectorPod(c.key, c.value));
  ASSERT_EQ(f.size(), 1u) << c.key << ": " << c.value;
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].field(), "spec.nodeSelector[" + std::string(c.key) + "]");
  EXPECT_THAT(f[0].message(), HasSubstr("so this matches no node"));
  EXPECT_THAT(f[0].message(), HasSubstr(c.advice)) << f[0].message();
}

INSTANTIATE_TEST_SUITE_P(
    GfdValueSets, ValueGfdNeverWrites,
    ::testing::Values(
        BadValue{"nvidia.com/gpu.mode", "display", "compute (a 3D controller), graphics (a VGA controller) or unknown"},
        BadValue{"nvidia.com/gpu.mode", "Compute", "write \"compute\""},
        BadValue{"nvidia.com/gpu.product", "nvidia-a100-sxm4-80gb", "upper-case letters"},
        BadValue{"nvidia.com/gpu.product", "NVIDIA_A100_SXM4_80GB", "did you mean \"NVIDIA-A100-SXM4-80GB\"?"}));

TEST(GpuLabelValue, GfdsOwnModesAndProductNamesAreAccepted) {
  for (const char* mode : {"compute", "graphics", "unknown"}) {
    EXPECT_THAT(judge(selectorPod("nvidia.com/gpu.mode", mode)), IsEmpty()) << mode;
  }
  // Drivers of 2020 named the A100 without the brand: GFD wrote it so.
  for (const char* product : {"A100-SXM4-40GB", "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition",
                              "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "Quadro-RTX-8000"}) {
    EXPECT_THAT(judge(selectorPod("nvidia.com/gpu.product", product)), IsEmpty()) << product;
  }
}

TEST(GpuLabelValue, AffinityInAndNotInValuesAreChecked) {
  const auto f = judge(affinityPod(
      "{key: nvidia.com/cuda.driver-version.major, operator: NotIn, values: [\"470\", \"470.82.01\"]}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(),
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
            "matchExpressions[0].values[1]");
}

TEST(GpuLabelValue, GtAndLtValueFormatsAreLeftToNodeAffinityGtLt) {
  EXPECT_THAT(judge(affinityPod("{key: nvidia.com/gpu.memory, operator: Gt, values: [\"80GB\"]}")), IsEmpty());
}

// --- YAML 1.1 traps: GPU quantities (linter only) -----------------------------

TEST(GpuLabelValue, AnOctalLookingGpuCountIsATrap) {
  const auto f = judge(gpuQuantityPod("010"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.containers[0].resources.limits[nvidia.com/gpu]");
  EXPECT_EQ(f[0].value, "8");
  EXPECT_THAT(f[0].message(), HasSubstr("turns the unquoted 010 into the octal number 8, so the pod asks for 8 "
                                      "nvidia.com/gpu"));
  EXPECT_THAT(f[0].message(), HasSubstr("write 10 (what 010 says in decimal) or 8 (what YAML reads)"));
}

TEST(GpuLabelValue, ATrapTheApiServerAcceptsIsAWarning) {
  // 8 GPUs is a valid request: only the author knows whether 10 was meant.
  const auto octal = judge(gpuQuantityPod("010"));
  ASSERT_EQ(octal.size(), 1u);
  EXPECT_EQ(octal[0].severity, Severity::Warning);
  // A boolean is no quantity: the API server rejects the object.
  const auto boolean = judge(gpuQuantityPod("yes"));
  ASSERT_EQ(boolean.size(), 1u);
  EXPECT_EQ(boolean[0].severity, Severity::Error);
  // A label value must be a string: the API server rejects the number.
  const auto label = judge(selectorPod("nvidia.com/gpu.count", "010"));
  ASSERT_EQ(label.size(), 1u);
  EXPECT_EQ(label[0].severity, Severity::Error);
}

TEST(GpuLabelValue, SexagesimalIsNoTrapForKubectl) {
  // kubectl's YAML reader (go-yaml v2) keeps 1:30 a string, not 90.
  EXPECT_THAT(judge(selectorPod("nvidia.com/gpu.count", "1:30")), Not(IsEmpty()));  // not a count GFD writes
  for (const Finding& f : judge(selectorPod("nvidia.com/gpu.count", "1:30"))) {
    EXPECT_THAT(f.message(), Not(HasSubstr("YAML 1.1"))) << f.message();
  }
}

TEST(GpuLabelValue, HexadecimalAndUnderscoredCountsAreTraps) {
  const auto hex = judge(gpuQuantityPod("0x2"));
  ASSERT_EQ(hex.size(), 1u);
  EXPECT_THAT(hex[0].message(), HasSubstr("the hexadecimal number 2"));
  EXPECT_THAT(rulesHit(judge(gpuQuantityPod("1_0"))), ElementsAre("gpu-label-value"));
}

TEST(GpuLabelValue, ABooleanGpuCountIsATrap) {
  const auto f = judge(gpuQuantityPod("yes"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("turns the unquoted yes into the boolean true"));
}

TEST(GpuLabelValue, CountsThatReadAsWrittenAreNotTraps) {
  for (const char* q : {"1", "8", "1.0", "1e3", "0.5", "08", "\"010\"", "true"}) {
    EXPECT_THAT(judge(gpuQuantityPod(q)), IsEmpty()) << q;
  }
}

TEST(GpuLabelValue, OnlyGpuResourcesAreJudgedForTraps) {
  const std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: busybox\n"
      "    resources:\n      limits:\n        cpu: 010\n";
  EXPECT_THAT(judge(yaml), IsEmpty());
}

// --- YAML 1.1 traps: GPU label values (linter only) ---------------------------

TEST(GpuLabelValue, AnOctalLabelValueIsATrap) {
  const auto f = judge(selectorPod("nvidia.com/gpu.count", "010"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("turns the unquoted 010 into the octal number 8, not the text 010; quote it: "
                                      "\"010\""));
}

TEST(GpuLabelValue, YesOnABooleanLabelIsATrapWithTheGfdSpelling) {
  const auto f = judge(selectorPod("nvidia.com/mig.capable", "yes"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("write \"true\" (GFD writes \"true\"/\"false\")"));
}

TEST(GpuLabelValue, PlainNumbersAndBooleansAreLeftToLabelValueNotString) {
  EXPECT_THAT(judge(selectorPod("nvidia.com/cuda.driver-version.major", "535")), IsEmpty());
  EXPECT_THAT(judge(selectorPod("nvidia.com/mig.capable", "true")), IsEmpty());
  // Both rules together: only label-value-not-string speaks about 535.
  const auto both = judgeYaml(selectorPod("nvidia.com/cuda.driver-version.major", "535"),
                              onlyRules({"gpu-label-value", "label-value-not-string"}));
  EXPECT_THAT(rulesHit(both), ElementsAre("label-value-not-string"));
}

TEST(GpuLabelValue, TrapsInAffinityValuesAreFound) {
  EXPECT_THAT(rulesHit(judge(affinityPod("{key: nvidia.com/gpu.count, operator: Gt, values: [0x10]}"))),
              ElementsAre("gpu-label-value"));
}

TEST(GpuLabelValue, WithoutWrittenTextTheTrapsCannotBeSeen) {
  // The webhook receives JSON: 010 has already become 8.
  const nlohmann::json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "p"}}},
      {"spec",
       {{"nodeSelector", {{"nvidia.com/gpu.count", 8}}},
        {"containers", {{{"name", "c"}, {"image", "busybox"}, {"resources", {{"limits", {{"nvidia.com/gpu", 8}}}}}}}}}}};
  EXPECT_THAT(::gpuguard::judge(pod, kLabelOnly), IsEmpty());
}

TEST(GpuLabelValue, IsOnByDefaultAsAnError) {
  const auto mine = testing::only(judgeYaml(selectorPod("nvidia.com/gpu.memory", "\"80GB\"")), "gpu-label-value");
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].severity, Severity::Error);
}


}  // namespace
}  // namespace gpuguard
