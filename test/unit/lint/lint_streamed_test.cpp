// A stream of several documents is linted in bounded memory: a first pass
// parses only the documents whose text may define input facts (DRA
// objects, Namespaces), then each document is parsed, judged and let go
// before the next. The report is the one judging the stream whole gives.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
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

using Row = std::tuple<std::string, int, int, std::size_t, std::string, std::string, bool, bool>;

std::vector<Row> rowsOf(const lint::FileReport& report) {
  std::vector<Row> rows;
  for (const lint::Located& l : report.findings) {
    rows.emplace_back(l.finding.rule, l.line, l.column, l.document, l.finding.fieldError(), l.object.display(),
                      l.fix.has_value(), l.finding.suppressed);
  }
  for (const lint::InputError& e : report.errors) {
    rows.emplace_back("error", e.line, e.column, 0, e.message, "", false, false);
  }
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
  EXPECT_EQ(streamed.fragments, whole.fragments);
  ASSERT_EQ(streamed.objects.size(), whole.objects.size());
  for (std::size_t i = 0; i < whole.objects.size(); ++i) {
    EXPECT_EQ(streamed.objects[i].document, whole.objects[i].document);
    EXPECT_EQ(streamed.objects[i].ref.pointer, whole.objects[i].ref.pointer);
  }
}

// A List as kubectl writes it: kind and metadata after the items.
std::string kubectlList(const std::string& items, const std::string& metadata = "{resourceVersion: \"\"}") {
  return "apiVersion: v1\nitems:\n" + items + "kind: List\nmetadata: " + metadata + "\n";
}

const std::string kHalfGpuPod =
    "- apiVersion: v1\n  kind: Pod\n  metadata: {name: q, annotations: {ignore.gpuguard.io/no-such-rule: x}}\n"
    "  spec:\n    containers:\n    - name: c\n      image: x\n      image: y\n"
    "      resources: {limits: {nvidia.com/gpu: \"0.5\"}}\n";

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

TEST(LintStreamed, AListsItemsJudgedAsTheyAreParsedReportWhatJudgingTheListWholeReports) {
  const lint::LintPolicy policy;
  // Alone in its file, and among other documents; its suppression
  // annotation after its items suppresses for each of them.
  const std::string list = kubectlList(kHalfGpuPod + kHalfGpuPod);
  const std::string suppressing =
      kubectlList(kHalfGpuPod, "{annotations: {ignore.gpuguard.io/gpu-fractional: \"MIG slices\", "
                               "ignore.gpuguard.io/nope: y}}");
  for (const std::string& text : {list, suppressing, kGpuPod + "---\n" + list + "---\n" + kDeviceClass + "---\n" + list}) {
    expectSameReport(text, policy);
    lint::LintOptions fragments;
    fragments.fragment = true;
    expectSameReport(text, policy, fragments);
  }
  // A DeviceClass among the items defines a fact for the pods of the
  // whole input, before and after the List.
  std::string classItem = "- " + kDeviceClass;
  for (std::size_t at = classItem.find('\n'); at + 1 < classItem.size(); at = classItem.find('\n', at + 1)) {
    classItem.insert(at + 1, "  ");
  }
  expectSameReport(kGpuPod + "---\n" + kubectlList(kHalfGpuPod + classItem) + "---\n" + kGpuPod, policy);
  lint::LintPolicy noSuppressions;
  noSuppressions.allowSuppressions = false;
  expectSameReport(suppressing, noSuppressions);
  const lint::FileReport report = lint::lintText("f.yaml", suppressing, policy);
  EXPECT_TRUE(std::any_of(report.findings.begin(), report.findings.end(),
                          [](const lint::Located& l) { return l.finding.suppressed; }));
}

TEST(LintStreamed, ListsOfListsNotListsAndListsThatDoNotParse) {
  const lint::LintPolicy policy;
  std::string nested = "- apiVersion: v1\n  kind: List\n  items:\n";
  for (std::size_t line = 0; line < kHalfGpuPod.size();) {  // the pod, two columns in
    const std::size_t end = kHalfGpuPod.find('\n', line) + 1;
    nested += "  " + kHalfGpuPod.substr(line, end - line);
    line = end;
  }
  const std::string listOfLists = kubectlList(nested + kHalfGpuPod);
  const std::string template_ = "apiVersion: v1\nitems:\n" + kHalfGpuPod + "kind: Template\n";
  const std::string broken = kubectlList(kHalfGpuPod + "- {name: [\n" + kHalfGpuPod);
  expectSameReport(listOfLists, policy);
  expectSameReport(template_ + "---\n" + kGpuPod, policy);
  expectSameReport(broken + "---\n" + kubectlList(kHalfGpuPod), policy);
  const lint::FileReport report = lint::lintText("f.yaml", broken, policy);
  ASSERT_EQ(report.errors.size(), 1u);
  // Where the parser finds it, as when the List is parsed whole: the next
  // item's "-" (line 13) inside the flow sequence left open on line 12.
  EXPECT_EQ(report.errors[0].line, 13);
  EXPECT_EQ(report.errors[0].column, 1);
  EXPECT_THAT(report.findings, IsEmpty()) << "a List that does not parse is not judged, its first items neither";
}

TEST(LintStreamed, AJsonListsItemsToo) {
  const std::string pod =
      R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", )"
      R"("image": "x", "resources": {"limits": {"nvidia.com/gpu": "0.5"}}}]}})";
  const std::string list = R"({"apiVersion": "v1", "items": [)" + pod + ",\n" + pod +
                           R"(], "kind": "List", "metadata": {"annotations": {"ignore.gpuguard.io/x": ""}}})";
  expectSameReport(list, lint::LintPolicy{});
  expectSameReport(list + "\n" + list + "\n{\"kind\": \"List\", \"items\": [" + pod + ", tru]}", lint::LintPolicy{});
}

TEST(MayDefineFacts, IsTrueForEveryKindInputFactsTakes) {
  const std::vector<std::string> kinds = {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ComputeDomain",
                                          "Namespace",   "RuntimeClass"};
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
