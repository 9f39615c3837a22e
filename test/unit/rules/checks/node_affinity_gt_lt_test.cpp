// node-affinity-gt-lt: only six operators exist, each takes its own number of
// values (required terms: label values), and Gt/Lt need exactly one integer
// value on an integer label (kubernetes-gpu-semantics.md §7.3, §8).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kGtLtOnly = onlyRules({"node-affinity-gt-lt"});

// A Pod whose required node affinity has one term with this expression.
std::string requiredPod(const std::string& expression) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n    nodeAffinity:\n"
         "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
         "        - matchExpressions:\n          - " +
         expression + "\n  containers:\n  - {name: c, image: busybox}\n";
}

std::string preferredPod(const std::string& expression) {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n    nodeAffinity:\n"
         "      preferredDuringSchedulingIgnoredDuringExecution:\n      - weight: 10\n        preference:\n"
         "          matchExpressions:\n          - " +
         expression + "\n  containers:\n  - {name: c, image: busybox}\n";
}

const std::string kExpr = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                          "nodeSelectorTerms[0].matchExpressions[0]";

std::vector<Finding> judge(const std::string& yaml) { return judgeYaml(yaml, kGtLtOnly); }

// --- Gt/Lt on an integer label with one integer value: fine --------------------

TEST(NodeAffinityGtLt, GtWithOneIntegerOnAnIntegerLabelIsFine) {
  EXPECT_THAT(judge(requiredPod("{key: nvidia.com/cuda.driver-version.major, operator: Gt, values: [\"534\"]}")),
              IsEmpty());
  EXPECT_THAT(judge(requiredPod("{key: nvidia.com/gpu.memory, operator: Lt, values: [\"40000\"]}")), IsEmpty());
}

TEST(NodeAffinityGtLt, ParseIntAcceptsLeadingZeros) {
  EXPECT_THAT(judge(requiredPod("{key: example.com/rank, operator: Gt, values: [\"007\"]}")), IsEmpty());
}

TEST(NodeAffinityGtLt, SignedValuesAreFineInPreferredTerms) {
  // ParseInt reads them, and preferred terms may hold invalid label values.
  EXPECT_THAT(judge(preferredPod("{key: example.com/rank, operator: Gt, values: [\"-1\"]}")), IsEmpty());
  EXPECT_THAT(judge(preferredPod("{key: nvidia.com/gpu.memory, operator: Gt, values: [\"+40000\"]}")), IsEmpty());
}

TEST(NodeAffinityGtLt, SignedValuesAreNotLabelValuesSoARequiredTermIsRejected) {
  const auto plus = judge(requiredPod("{key: nvidia.com/gpu.memory, operator: Gt, values: [\"+40000\"]}"));
  ASSERT_EQ(plus.size(), 1u);
  EXPECT_EQ(plus[0].field(), kExpr + ".values[0]");
  EXPECT_EQ(plus[0].value, "\"+40000\"");
  EXPECT_THAT(plus[0].message(),
              HasSubstr("Invalid value: \"+40000\": a valid label must be an empty string or consist of alphanumeric "
                        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                        "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"));
  EXPECT_THAT(plus[0].message(), HasSubstr("the API server rejects the object"));
  EXPECT_THAT(plus[0].message(), HasSubstr("write \"40000\" without the sign"));
  const auto minus = judge(requiredPod("{key: example.com/rank, operator: Gt, values: [\"-1\"]}"));
  ASSERT_EQ(minus.size(), 1u);
  EXPECT_THAT(minus[0].message(), HasSubstr("node label values are never negative either"));
}

TEST(NodeAffinityGtLt, ARequiredValueThatIsNeitherALabelValueNorAnIntegerIsReportedOnceAsRejected) {
  const auto required = judge(requiredPod("{key: example.com/n, operator: Lt, values: [\" 10\"]}"));
  ASSERT_EQ(required.size(), 1u);
  EXPECT_THAT(required[0].message(), HasSubstr("a valid label must be an empty string"));
  const auto preferred = judge(preferredPod("{key: example.com/n, operator: Lt, values: [\" 10\"]}"));
  ASSERT_EQ(preferred.size(), 1u);
  EXPECT_THAT(preferred[0].message(), HasSubstr("never matches any node"));
}

TEST(NodeAffinityGtLt, InWithValuesAndExistsWithoutAreFine) {
  EXPECT_THAT(judge(requiredPod("{key: nvidia.com/cuda.driver-version.full, operator: In, values: [\"550.54.15\"]}")),
              IsEmpty());
  EXPECT_THAT(judge(requiredPod("{key: nvidia.com/gpu.product, operator: NotIn, values: [x, y]}")), IsEmpty());
  EXPECT_THAT(judge(requiredPod("{key: nvidia.com/gpu.product, operator: Exists}")), IsEmpty());
  // An empty list is no values.
  EXPECT_THAT(judge(requiredPod("{key: nvidia.com/gpu.product, operator: DoesNotExist, values: []}")), IsEmpty());
}

// --- values each operator takes (ValidateNodeSelectorRequirement) -----------------

TEST(NodeAffinityGtLt, InNeedsAtLeastOneValue) {
  const auto f = judge(requiredPod("{key: nvidia.com/gpu.product, operator: In, values: []}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), kExpr + ".values");
  EXPECT_EQ(f[0].value, "[]");
  EXPECT_THAT(f[0].message(), HasSubstr("Required value: must be specified when `operator` is 'In' or 'NotIn', so the "
                                      "API server rejects the object"));
  EXPECT_THAT(f[0].message(), HasSubstr("or use Exists to match any value"));
}

TEST(NodeAffinityGtLt, NotInWithoutValuesIsRejectedToo) {
  const auto f = judge(requiredPod("{key: nvidia.com/gpu.product, operator: NotIn}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].value, "");
  EXPECT_THAT(f[0].message(), HasSubstr("or use DoesNotExist to exclude every value"));
}

TEST(NodeAffinityGtLt, ExistsAndDoesNotExistTakeNoValues) {
  const auto f = judge(requiredPod("{key: nvidia.com/mig.capable, operator: Exists, values: [\"true\"]}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), kExpr + ".values");
  EXPECT_EQ(f[0].value, "[\"true\"]");
  EXPECT_THAT(f[0].message(), HasSubstr("Forbidden: may not be specified when `operator` is 'Exists' or "
                                      "'DoesNotExist', so the API server rejects the object"));
  EXPECT_THAT(f[0].message(), HasSubstr("or write In to match these"));
  const auto absent = judge(requiredPod("{key: nvidia.com/gpu.present, operator: DoesNotExist, values: [x]}"));
  ASSERT_EQ(absent.size(), 1u);
  EXPECT_THAT(absent[0].message(), HasSubstr("or write NotIn to exclude these"));
}

TEST(NodeAffinityGtLt, PreferredTermsAreValidatedTheSameWay) {
  EXPECT_THAT(rulesHit(judge(preferredPod("{key: nvidia.com/gpu.product, operator: In, values: []}"))),
              ElementsAre("node-affinity-gt-lt"));
  EXPECT_THAT(rulesHit(judge(preferredPod("{key: nvidia.com/gpu.product, operator: Exists, values: [x]}"))),
              ElementsAre("node-affinity-gt-lt"));
}

TEST(NodeAffinityGtLt, EveryRejectedRequirementOfATermIsReported) {
  const std::string pod =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n    nodeAffinity:\n"
      "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
      "        - matchExpressions:\n"
      "          - {key: nvidia.com/gpu.product, operator: In, values: []}\n"
      "          - {key: nvidia.com/mig.capable, operator: Exists, values: [\"true\"]}\n"
      "          - {key: nvidia.com/gpu.memory, operator: Gt, values: [\"+40000\"]}\n"
      "  containers:\n  - {name: c, image: busybox}\n";
  std::vector<std::string> fields;
  for (const Finding& f : judge(pod)) fields.push_back(f.field());
  const std::string term = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                           "nodeSelectorTerms[0].matchExpressions";
  EXPECT_THAT(fields, ElementsAre(term + "[0].values", term + "[1].values", term + "[2].values[0]"));
}

// --- Gt/Lt values ---------------------------------------------------------------

TEST(NodeAffinityGtLt, ADecimalValueSilentlyNeverMatches) {
  const auto f = judge(requiredPod("{key: nvidia.com/cuda.runtime-version.major, operator: Gt, values: [\"12.4\"]}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), kExpr + ".values[0]");
  EXPECT_EQ(f[0].value, "\"12.4\"");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"12.4\": Gt compares integers (strconv.ParseInt)"));
  EXPECT_THAT(f[0].message(), HasSubstr("never matches any node"));
  EXPECT_THAT(f[0].message(), HasSubstr("Gt \"12\" admits 13 and above"));
}

// What a term that never matches costs depends on where it sits (kube-scheduler, as the
// scheduler oracle shows: test/e2e/scheduler/cases.yaml affinity-ored-bad-gt).
TEST(NodeAffinityGtLt, TheOnlyRequiredTermThatNeverMatchesKeepsThePodPending) {
  const auto f = judge(requiredPod("{key: nvidia.com/cuda.driver-version.major, operator: Gt, values: [\"550.54\"]}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("never matches any node: the pod stays Pending;"));
}

TEST(NodeAffinityGtLt, OneOfSeveralOredTermsDoesNotKeepThePodPending) {
  const std::string pod =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n    nodeAffinity:\n"
      "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
      "        - matchExpressions:\n          - {key: nvidia.com/cuda.driver-version.major, operator: Gt, "
      "values: [\"550.54\"]}\n"
      "        - matchExpressions:\n          - {key: nvidia.com/gpu.product, operator: Gt, values: [\"100\"]}\n"
      "  containers:\n  - {name: c, image: busybox}\n";
  const auto f = judge(pod);
  ASSERT_EQ(f.size(), 2u);
  for (const Finding& finding : f) {
    EXPECT_THAT(finding.message(), HasSubstr("the pod can only land on a node that another term matches"));
    EXPECT_THAT(finding.message(), ::testing::Not(HasSubstr("Pending")));
  }
}

TEST(NodeAffinityGtLt, APreferredTermThatNeverMatchesNeverApplies) {
  const auto f = judge(preferredPod("{key: nvidia.com/gpu.product, operator: Gt, values: [\"100\"]}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("never matches any node and the preference never applies"));
  EXPECT_THAT(f[0].message(), ::testing::Not(HasSubstr("Pending")));
}

TEST(NodeAffinityGtLt, LtWithADecimalSuggestsTheIntegerAbove) {
  const auto f = judge(requiredPod("{key: example.com/version, operator: Lt, values: [\"2.5\"]}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("Lt \"3\" admits 2 and below"));
}

TEST(NodeAffinityGtLt, AnUnquotedFloatIsReportedToo) {
  // label-value-not-string reports the type; quoting it still never matches.
  const auto f = judge(requiredPod("{key: example.com/version, operator: Gt, values: [12.4]}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].value, "12.4");
}

TEST(NodeAffinityGtLt, AnUnquotedIntegerIsLeftToLabelValueNotString) {
  EXPECT_THAT(judge(requiredPod("{key: nvidia.com/cuda.driver-version.major, operator: Gt, values: [534]}")),
              IsEmpty());
}

TEST(NodeAffinityGtLt, WordsAndSpacesAreNotIntegers) {
  EXPECT_THAT(rulesHit(judge(requiredPod("{key: example.com/n, operator: Gt, values: [\"ten\"]}"))),
              ElementsAre("node-affinity-gt-lt"));
  EXPECT_THAT(rulesHit(judge(requiredPod("{key: example.com/n, operator: Lt, values: [\" 10\"]}"))),
              ElementsAre("node-affinity-gt-lt"));
  EXPECT_THAT(rulesHit(judge(requiredPod("{key: example.com/n, operator: Lt, values: [\"99999999999999999999\"]}"))),
              ElementsAre("node-affinity-gt-lt"));
}

TEST(NodeAffinityGtLt, TemplatedValuesAreNotJudged) {
  EXPECT_THAT(judge(requiredPod("{key: example.com/n, operator: Gt, values: [\"${MIN_DRIVER}\"]}")), IsEmpty());
}

TEST(NodeAffinityGtLt, GtNeedsExactlyOneValue) {
  const auto two = judge(requiredPod("{key: nvidia.com/gpu.count, operator: Gt, values: [\"1\", \"2\"]}"));
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two[0].field(), kExpr + ".values");
  EXPECT_THAT(two[0].message(), HasSubstr("Required value: Gt takes exactly one value, found 2"));
  EXPECT_THAT(two[0].message(), HasSubstr("so the API server rejects the object"));
  const auto none = judge(requiredPod("{key: nvidia.com/gpu.count, operator: Lt}"));
  ASSERT_EQ(none.size(), 1u);
  EXPECT_THAT(none[0].message(), HasSubstr("found 0"));
}

// --- Gt/Lt on labels whose values are not integers ------------------------------

struct TextLabel {
  const char* key;
  const char* advice;
};

// How GoogleTest and ctest name each case (instead of its bytes).
void PrintTo(const TextLabel& c, std::ostream* os) { *os << c.key; }

class GtOnATextLabel : public ::testing::TestWithParam<TextLabel> {};

TEST_P(GtOnATextLabel, NeverMatchesAndSaysWhatToUse) {
  const TextLabel c = GetParam();
  const auto f = judge(requiredPod(std::string("{key: ") + c.key + ", operator: Gt, values: [\"1\"]}"));
  ASSERT_EQ(f.size(), 1u) << c.key;
  EXPECT_EQ(f[0].field(), kExpr + ".key");
  EXPECT_THAT(f[0].message(), HasSubstr("but the node's " + std::string(c.key) + " label is not one"));
  EXPECT_THAT(f[0].message(), HasSubstr(c.advice)) << f[0].message();
}

INSTANTIATE_TEST_SUITE_P(
    GfdAndWellKnownLabels, GtOnATextLabel,
    ::testing::Values(
        TextLabel{"nvidia.com/cuda.driver-version.full", "nvidia.com/cuda.driver-version.major Gt \"534\""},
        TextLabel{"nvidia.com/cuda.runtime-version.full", "nvidia.com/cuda.runtime-version.major"},
        TextLabel{"nvidia.com/gpu.product", "nvidia.com/gpu.memory"},
        TextLabel{"nvidia.com/gpu.family", "nvidia.com/gpu.compute.major Gt \"7\""},
        TextLabel{"nvidia.com/mig.capable", "use In [\"true\"] or Exists"},
        TextLabel{"nvidia.com/mig.strategy", "use In/NotIn"},
        TextLabel{"nvidia.com/gpu.machine", "use In/NotIn"},
        TextLabel{"nvidia.com/mig-1g.10gb.product", "use In with the product names"},
        TextLabel{"node.kubernetes.io/instance-type", "use In/NotIn"},
        TextLabel{"cloud.google.com/gke-accelerator", "use In/NotIn"}));

TEST(NodeAffinityGtLt, DriverFullWithAVersionValueIsOneFindingOnTheKey) {
  const auto f = judge(requiredPod("{key: nvidia.com/cuda.driver-version.full, operator: Gt, values: [\"535.104.05\"]}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), kExpr + ".key");
  EXPECT_THAT(f[0].message(), HasSubstr("(\"550.107.02\")"));
}

TEST(NodeAffinityGtLt, IntegerGfdLabelsAndUnknownLabelsAreFine) {
  for (const char* key : {"nvidia.com/gpu.count", "nvidia.com/gpu.compute.major", "nvidia.com/cuda.driver.major",
                          "nvidia.com/mig-1g.10gb.count", "nvidia.com/gfd.timestamp", "example.com/anything",
                          "nvidia.com/cuda.driver-version.revision"}) {
    EXPECT_THAT(judge(requiredPod(std::string("{key: ") + key + ", operator: Gt, values: [\"1\"]}")), IsEmpty())
        << key;
  }
}

// --- operators that do not exist ------------------------------------------------

struct BadOperator {
  const char* op;
  const char* values;
  const char* fix;
};

// How GoogleTest and ctest name each case (instead of its bytes).
void PrintTo(const BadOperator& c, std::ostream* os) { *os << c.op << " " << c.values; }

class NonexistentOperator : public ::testing::TestWithParam<BadOperator> {};

TEST_P(NonexistentOperator, IsReportedWithTheFix) {
  const BadOperator c = GetParam();
  const auto f = judge(requiredPod(std::string("{key: nvidia.com/cuda.driver-version.major, operator: ") + c.op +
                                   ", values: " + c.values + "}"));
  ASSERT_EQ(f.size(), 1u) << c.op;
  EXPECT_EQ(f[0].field(), kExpr + ".operator");
  EXPECT_EQ(f[0].value, "\"" + std::string(c.op) + "\"");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"" + std::string(c.op) + "\": not a valid selector operator"));
  EXPECT_THAT(f[0].message(), HasSubstr(c.fix)) << f[0].message();
}

INSTANTIATE_TEST_SUITE_P(
    Misspellings, NonexistentOperator,
    ::testing::Values(
        BadOperator{"Gte", "[\"535\"]", "write operator Gt with values [\"534\"]"},
        BadOperator{"Ge", "[\"535\"]", "Gt \"534\" admits 535 and above"},
        BadOperator{"Lte", "[\"550\"]", "write operator Lt with values [\"551\"]"},
        BadOperator{"Gte", "[\"a\", \"b\"]", "\">= 535\" is Gt \"534\""},
        BadOperator{"Equals", "[\"550\"]", "write In"}, BadOperator{"NotEqual", "[\"550\"]", "write NotIn"},
        BadOperator{"in", "[\"550\"]", "operators are case-sensitive: write In"},
        BadOperator{"gt", "[\"534\"]", "operators are case-sensitive: write Gt"},
        BadOperator{"exists", "[]", "operators are case-sensitive: write Exists"},
        BadOperator{"Matches", "[\"5.*\"]", "use In, NotIn, Exists, DoesNotExist, Gt or Lt"}));

TEST(NodeAffinityGtLt, BoundsAtTheInt64LimitGetTheGenericFix) {
  const auto f = judge(requiredPod("{key: example.com/n, operator: Gte, values: [\"-9223372036854775808\"]}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("write Gt with one integer one below the bound"));
}

// --- where node affinity lives ------------------------------------------------

TEST(NodeAffinityGtLt, PreferredTermsAreCheckedToo) {
  const auto f = judge(preferredPod("{key: nvidia.com/gpu.memory, operator: Gt, values: [\"80GB\"]}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(),
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference."
            "matchExpressions[0].values[0]");
}

TEST(NodeAffinityGtLt, CustomResourcesAndPersistentVolumesAreChecked) {
  const std::string ray =
      "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\nspec:\n  workerGroupSpecs:\n"
      "  - groupName: gpu\n    template:\n      spec:\n        affinity:\n          nodeAffinity:\n"
      "            requiredDuringSchedulingIgnoredDuringExecution:\n              nodeSelectorTerms:\n"
      "              - matchExpressions:\n"
      "                - {key: nvidia.com/cuda.driver-version.major, operator: Gte, values: [\"535\"]}\n"
      "        containers:\n        - {name: w, image: rayproject/ray}\n";
  const auto f = judge(ray);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(),
            "spec.workerGroupSpecs[0].template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
            "Execution.nodeSelectorTerms[0].matchExpressions[0].operator");
  const std::string pv =
      "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nspec:\n  nodeAffinity:\n    required:\n"
      "      nodeSelectorTerms:\n      - matchExpressions:\n"
      "        - {key: nvidia.com/gpu.count, operator: Gt, values: [\"1.5\"]}\n";
  EXPECT_THAT(rulesHit(judge(pv)), ElementsAre("node-affinity-gt-lt"));
}

TEST(NodeAffinityGtLt, IsOnByDefaultAsAnError) {
  const auto f = judgeYaml(requiredPod("{key: nvidia.com/gpu.count, operator: Gte, values: [\"2\"]}"));
  const auto mine = testing::only(f, "node-affinity-gt-lt");
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].severity, Severity::Error);
}


}  // namespace
}  // namespace gpuguard
