// A stream of several documents is linted in bounded memory: a first pass
// parses only the documents whose text may define input facts (DRA
// objects, Namespaces), then each document is parsed, judged and let go
// before the next. The report is the one judging the stream whole gives.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "lint/lint_file.h"
#include "lint/lint_policy.h"
#include "rules/input_facts.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::string kGpuPod =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {ignore.gpuguard.io/no-such-rule: x}}\nspec:\n"
    "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n"
    "  containers:\n  - name: c\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    image: nvidia/cuda:12.4.1\n"
    "    resources: {claims: [{name: gpu}], requests: {nvidia.com/gpu: 1}}\n";
const std::string kDeviceClass =
    "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\n"
    "spec: {extendedResourceName: nvidia.com/gpu}\n";
const std::string kList =
    "apiVersion: v1\nkind: List\nitems:\n"
    "- {apiVersion: v1, kind: Pod, metadata: {name: q}, spec: {containers: [{name: c, image: x, "
    "resources: {limits: {nvidia.com/gpu: \"0.5\"}}}]}}\n";

using Row = std::tuple<std::string, int, int, std::size_t, std::string, std::string, bool>;

std::vector<Row> rowsOf(const lint::FileReport& report) {
  std::vector<Row> rows;
  for (const lint::Located& l : report.findings) {
    rows.emplace_back(l.finding.rule, l.line, l.column, l.document, l.finding.fieldError(), l.object.display(),
                      l.fix.has_value());
  }
  for (const lint::InputError& e : report.errors) rows.emplace_back("error", e.line, e.column, 0, e.message, "", false);
  return rows;
}

// The report of the stream judged whole (every document parsed first).
lint::FileReport judgedWhole(const std::string& text, const lint::LintPolicy& policy, const lint::LintOptions& options) {
  return lint::lintParsed("f.yaml", text, yaml::parseStream(text, lint::manifestLimits()), policy, options);
}

void expectSameReport(const std::string& text, const lint::LintPolicy& policy, const lint::LintOptions& options = {}) {
  const lint::FileReport streamed = lint::lintText("f.yaml", text, policy, options);
  const lint::FileReport whole = judgedWhole(text, policy, options);
  EXPECT_EQ(rowsOf(streamed), rowsOf(whole)) << text;
  EXPECT_FALSE(rowsOf(streamed).empty());
  EXPECT_EQ(streamed.documents, whole.documents);
  EXPECT_EQ(streamed.objects.size(), whole.objects.size());
}

TEST(LintStreamed, AStreamJudgedDocumentByDocumentReportsWhatJudgingItWholeReports) {
  const lint::LintPolicy policy;
  // Facts after the pod, a section that does not parse, a List, duplicate
  // keys, a suppression that suppresses nothing: each in its place.
  const std::string text = kGpuPod + "---\nname: [\n---\n" + kList + "---\n" + kDeviceClass + "---\n" + kGpuPod;
  expectSameReport(text, policy);
  lint::LintOptions alone;
  alone.eachDocumentAlone = true;
  expectSameReport(text, policy, alone);
  lint::LintOptions sarif;  // each finding's fix as text, which needs where the next document starts
  sarif.textFixes = true;
  expectSameReport(text, policy, sarif);
}

TEST(LintStreamed, AJsonStreamToo) {
  const std::string pod =
      R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", )"
      R"("image": "x", "resources": {"limits": {"nvidia.com/gpu": "0.5"}}}]}})";
  const std::string deviceClass =
      R"({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"}, )"
      R"("spec": {"extendedResourceName": "nvidia.com/gpu"}})";
  expectSameReport(pod + "\n" + deviceClass + "\n" + pod + "\n{\"kind\": tru}\n" + pod + "\n", lint::LintPolicy{});
}

TEST(LintStreamed, AFactKindWrittenWithAnEscapeIsStillReadBeforeAnyObjectIsJudged) {
  lint::LintPolicy policy;
  policy.engine = testing::onlyRules({"dra-with-device-plugin"});
  const std::string pod =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
      "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n"
      "  containers: [{name: c, image: x, resources: {claims: [{name: gpu}], limits: {nvidia.com/gpu: 1}}}]\n";
  for (const std::string kind : {"\"Device\\x43lass\"", "\"\\u0044eviceClass\"", "\"Device\\\n  Class\""}) {
    const std::string deviceClass = "apiVersion: resource.k8s.io/v1\nkind: " + kind +
                                    "\nmetadata: {name: gpu.nvidia.com}\nspec: {extendedResourceName: nvidia.com/gpu}\n";
    const lint::FileReport report = lint::lintText("f.yaml", pod + "---\n" + deviceClass, policy);
    EXPECT_THAT(report.findings, IsEmpty()) << kind;
  }
  // Without the class the pod's GPU is served two ways.
  EXPECT_EQ(lint::lintText("f.yaml", pod + "---\n" + pod, policy).findings.size(), 2u);
}

TEST(MayDefineFacts, IsTrueForEveryKindInputFactsTakes) {
  const std::vector<std::string> kinds = {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ComputeDomain",
                                          "Namespace"};
  for (const std::string& kind : kinds) EXPECT_TRUE(mayDefineFacts("kind: " + kind + "\n")) << kind;
  EXPECT_TRUE(mayDefineFacts("{\"kind\": \"\\u0044eviceClass\"}"));
  EXPECT_TRUE(mayDefineFacts("kind: \"Device\\x43lass\"\n"));
  EXPECT_TRUE(mayDefineFacts("kind: !!binary RGV2aWNlQ2xhc3M=\n"));
  // A pod that claims a device names the claim in lower camel case: no fact.
  EXPECT_FALSE(mayDefineFacts(kGpuPod));
  EXPECT_FALSE(mayDefineFacts("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"));
}

TEST(MayDefineFacts, AgreesWithWhatInputFactsTakes) {
  // Each kind's object defines a fact, and its text says it may.
  InputFacts facts;
  const std::string ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n";
  const yaml::ParseResult parsed = yaml::parseStream(kDeviceClass + "---\n" + ns);
  for (const yaml::Document& doc : parsed.documents) facts.add(doc.value);
  EXPECT_NE(facts.deviceClass("gpu.nvidia.com"), nullptr);
  EXPECT_NE(facts.namespaceFacts("ml"), nullptr);
  EXPECT_TRUE(mayDefineFacts(kDeviceClass));
  EXPECT_TRUE(mayDefineFacts(ns));
}

}  // namespace
}  // namespace gpuguard
