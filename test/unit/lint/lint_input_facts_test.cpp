// The linter judges each object knowing the DRA objects its input defines
// (a file, a stdin stream, a rendered chart): a DeviceClass that serves
// nvidia.com/gpu (KEP-5004), a claim template's device class and count. The
// webhook sees one object and knows only what it holds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lint/lint_file.h"
#include "lint/lint_policy.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::string kDeviceClass =
    "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\nspec:\n"
    "  selectors: [{cel: {expression: \"device.driver == 'gpu.nvidia.com'\"}}]\n"
    "  extendedResourceName: nvidia.com/gpu\n";
const std::string kPodBothWays =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
    "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n"
    "  containers:\n  - name: c\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
    "    resources: {claims: [{name: gpu}], limits: {nvidia.com/gpu: 1}}\n";

std::vector<std::string> rulesOf(const lint::FileReport& report) {
  std::vector<std::string> ids;
  for (const lint::Located& l : report.findings) ids.push_back(l.finding.rule);
  return ids;
}

// The linter's policy with every rule off but dra-with-device-plugin.
lint::LintPolicy draOnly() {
  lint::LintPolicy policy;
  policy.engine = testing::onlyRules({"dra-with-device-plugin"});
  return policy;
}

TEST(LintInputFacts, ADeviceClassAnywhereInTheFileTellsEveryObjectOfIt) {
  const lint::LintPolicy policy = draOnly();
  // Before or after the pod: the facts are read before any object is judged.
  EXPECT_THAT(rulesOf(lint::lintText("f.yaml", kDeviceClass + "---\n" + kPodBothWays, policy)), IsEmpty());
  EXPECT_THAT(rulesOf(lint::lintText("f.yaml", kPodBothWays + "---\n" + kDeviceClass, policy)), IsEmpty());
  // Another file knows nothing of it.
  EXPECT_THAT(rulesOf(lint::lintText("g.yaml", kPodBothWays, policy)), ElementsAre("dra-with-device-plugin"));
}

TEST(LintInputFacts, EachDocumentAloneJudgesAsTheWebhookDoes) {
  const lint::LintPolicy policy = draOnly();
  lint::LintOptions alone;
  alone.eachDocumentAlone = true;
  const std::string text = kDeviceClass + "---\n" + kPodBothWays;
  EXPECT_THAT(rulesOf(lint::lintText("f.yaml", text, policy, alone)), ElementsAre("dra-with-device-plugin"));
  // The webhook, given the pod: the same.
  const yaml::ParseResult parsed = yaml::parseStream(kPodBothWays);
  ASSERT_EQ(parsed.documents.size(), 1u);
  EXPECT_THAT(testing::rulesHit(judge(parsed.documents[0].value, policy.engine)), ElementsAre("dra-with-device-plugin"));
}

TEST(LintInputFacts, AListHoldsItsOwnFactsForTheWebhookToo) {
  // kubectl get -o yaml of a namespace: the List's items know each other.
  const std::string list =
      "apiVersion: v1\nkind: List\nitems:\n"
      "- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu.nvidia.com}, "
      "spec: {extendedResourceName: nvidia.com/gpu}}\n"
      "- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec:\n"
      "    resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n"
      "    containers: [{name: c, image: x, resources: {claims: [{name: gpu}], limits: {nvidia.com/gpu: 1}}}]\n";
  const yaml::ParseResult parsed = yaml::parseStream(list);
  ASSERT_EQ(parsed.documents.size(), 1u);
  EXPECT_THAT(testing::rulesHit(judge(parsed.documents[0].value, testing::onlyRules({"dra-with-device-plugin"}))),
              IsEmpty());
}

TEST(LintInputFacts, ANamespaceOfTheFileDecidesWhetherItsClaimsMayAskForAdminAccess) {
  const lint::LintPolicy policy = draOnly();
  const std::string ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: monitoring}\n";
  const std::string claim =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: watch, namespace: monitoring}\n"
      "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com, adminAccess: true}}]}}\n";
  const auto severities = [](const lint::FileReport& report) {
    std::vector<Severity> out;
    for (const lint::Located& l : report.findings) out.push_back(l.finding.severity);
    return out;
  };
  // The Namespace, before or after the claim, lacks the label: the API server refuses the claim.
  EXPECT_THAT(severities(lint::lintText("f.yaml", ns + "---\n" + claim, policy)), ElementsAre(Severity::Error));
  EXPECT_THAT(severities(lint::lintText("f.yaml", claim + "---\n" + ns, policy)), ElementsAre(Severity::Error));
  // Each document alone, as the webhook without cluster facts: the namespace is unknown, a reminder.
  lint::LintOptions alone;
  alone.eachDocumentAlone = true;
  EXPECT_THAT(severities(lint::lintText("f.yaml", ns + "---\n" + claim, policy, alone)),
              ElementsAre(Severity::Warning));
}

}  // namespace
}  // namespace gpuguard
