// SARIF `fixes` (sarif-v2.1.0 sections 3.55-3.57): a finding gpuguard-lint
// --fix can fix carries that change as one artifactChange of its file, whose
// replacements delete a region (lines and columns in Unicode code points, the
// end exclusive) and insert text there. Applied to the file, a result's
// replacements give what --fix writes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lint/fix/fix.h"
#include "lint/fix/text_fix.h"
#include "lint/lint_file.h"
#include "lint/report/report.h"
#include "test/unit/shared_manifests.h"

namespace gpuguard::lint {
namespace {

using ::testing::IsEmpty;
using ::testing::SizeIs;
using gpuguard::testing::kRequestsOnlyPod;
using nlohmann::json;

// gpu-missing-toleration: --fix inserts a tolerations block.
constexpr const char* kUntolerated = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      # Pin the driver.
      nodeSelector:
        nvidia.com/cuda.driver-version.major: "550"
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.3
          resources:
            limits:
              nvidia.com/gpu: 1
)";

json sarifOf(const std::string& text, bool textFixes = true) {
  LintOptions options;
  options.textFixes = textFixes;
  std::ostringstream out;
  writeSarif(out, {lintText("pod.yaml", text, LintPolicy{}, options)}, ReportOptions{});
  return json::parse(out.str());
}

std::vector<json> resultsWithFixes(const json& log) {
  std::vector<json> out;
  for (const json& r : log["runs"][0]["results"]) {
    if (r.contains("fixes")) out.push_back(r);
  }
  return out;
}

// The byte offset of a 1-based line and code-point column in `text`.
std::size_t offsetOf(const std::string& text, int line, int column) {
  std::size_t i = 0;
  for (int l = 1; l < line; ++l) i = text.find('\n', i) + 1;
  for (int c = 1; c < column; ++c) {
    ++i;
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
  }
  return i;
}

// Applies the replacements of every fix of `results` to `text`, last first.
std::string applied(std::string text, const std::vector<json>& results) {
  std::vector<json> replacements;
  for (const json& r : results) {
    for (const json& change : r["fixes"][0]["artifactChanges"]) {
      for (const json& rep : change["replacements"]) replacements.push_back(rep);
    }
  }
  auto start = [&](const json& rep) {
    return offsetOf(text, rep["deletedRegion"]["startLine"], rep["deletedRegion"]["startColumn"]);
  };
  std::stable_sort(replacements.begin(), replacements.end(),
                   [&](const json& a, const json& b) { return start(a) > start(b); });
  for (const json& rep : replacements) {
    const json& region = rep["deletedRegion"];
    const std::size_t begin = start(rep);
    const std::size_t end = offsetOf(text, region["endLine"], region["endColumn"]);
    text.replace(begin, end - begin, rep["insertedContent"]["text"].get<std::string>());
  }
  return text;
}

TEST(SarifFixes, ARenameReplacesTheKeysLineUpToItsBreak) {
  const std::vector<json> fixed = resultsWithFixes(sarifOf(kRequestsOnlyPod));
  ASSERT_THAT(fixed, SizeIs(1));
  EXPECT_EQ(fixed[0]["ruleId"], "gpu-requests-without-limits");
  const json& fix = fixed[0]["fixes"][0];
  EXPECT_EQ(fix["description"]["text"], "renamed requests to limits (requests default to limits)")
      << "what --fix says it did";
  ASSERT_THAT(fix["artifactChanges"], SizeIs(1));
  EXPECT_EQ(fix["artifactChanges"][0]["artifactLocation"]["uri"], "pod.yaml");
  EXPECT_EQ(fix["artifactChanges"][0]["replacements"],
            json::parse(R"([{"deletedRegion": {"startLine": 14, "startColumn": 1, "endLine": 14, "endColumn": 16},
                             "insertedContent": {"text": "      limits:"}}])"));
  EXPECT_EQ(applied(kRequestsOnlyPod, fixed), fixText(kRequestsOnlyPod, LintPolicy{}).text);
}

TEST(SarifFixes, AnInsertionIsAnEmptyRegionAtTheStartOfItsLine) {
  const std::vector<json> fixed = resultsWithFixes(sarifOf(kUntolerated));
  ASSERT_THAT(fixed, SizeIs(1));
  EXPECT_EQ(fixed[0]["ruleId"], "gpu-missing-toleration");
  const json& region = fixed[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]["deletedRegion"];
  EXPECT_EQ(region, json::parse(R"({"startLine": 8, "startColumn": 1, "endLine": 8, "endColumn": 1})"));
  EXPECT_EQ(applied(kUntolerated, fixed), fixText(kUntolerated, LintPolicy{}).text);
}

TEST(SarifFixes, EachDocumentOfAStreamHasItsOwnFixAtItsOwnLines) {
  const std::string stream = std::string(kRequestsOnlyPod) + "---\n" + kUntolerated;
  const std::vector<json> fixed = resultsWithFixes(sarifOf(stream));
  ASSERT_THAT(fixed, SizeIs(2));
  EXPECT_EQ(applied(stream, fixed), fixText(stream, LintPolicy{}).text);
  EXPECT_EQ(applied(stream, {fixed[1]}), std::string(kRequestsOnlyPod) + "---\n" + fixText(kUntolerated, LintPolicy{}).text)
      << "each fix stands on its own";
}

TEST(SarifFixes, CrlfLineBreaksAreKept) {
  std::string crlf;
  for (char c : std::string(kRequestsOnlyPod)) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const std::vector<json> fixed = resultsWithFixes(sarifOf(crlf));
  ASSERT_THAT(fixed, SizeIs(1));
  EXPECT_EQ(applied(crlf, fixed), fixText(crlf, LintPolicy{}).text);
}

TEST(SarifFixes, OnlyWhenAskedFor) {
  EXPECT_THAT(resultsWithFixes(sarifOf(kRequestsOnlyPod, false)), IsEmpty());
  const FileReport report = lintText("pod.yaml", kRequestsOnlyPod, LintPolicy{});
  ASSERT_THAT(report.findings, SizeIs(1));
  EXPECT_FALSE(report.findings[0].fix.has_value());
}

TEST(SarifFixes, ADocumentWithMoreFixableFindingsThanTheCapGetsNone) {
  // Each fix is planned alone at the cost of its document: beyond the cap,
  // none, so that a large object stays linear.
  std::string pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: many\nspec:\n  tolerations:\n"
                    "  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n  nodeSelector:\n"
                    "    nvidia.com/cuda.driver-version.major: \"550\"\n  containers:\n";
  for (std::size_t i = 0; i <= TextFixer::kMaxFixesPerDocument; ++i) {
    pod += "  - name: c" + std::to_string(i) + "\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
           "    resources:\n      requests:\n        nvidia.com/gpu: 1\n";
  }
  const json log = sarifOf(pod);
  std::size_t fixable = 0;
  for (const json& r : log["runs"][0]["results"]) fixable += r["ruleId"] == "gpu-requests-without-limits";
  EXPECT_EQ(fixable, TextFixer::kMaxFixesPerDocument + 1);
  EXPECT_THAT(resultsWithFixes(log), IsEmpty());
}

}  // namespace
}  // namespace gpuguard::lint
