// label-value-not-string: nodeSelector, label, selector, annotation and toleration values
// are strings; the API decoder rejects a YAML number or boolean there.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
