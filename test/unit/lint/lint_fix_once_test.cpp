// --fix judges a file once: the report of a fixed file takes the parse of the
// fix's verification and the findings of the documents no fix edited
// (lint/fix/fix.h FixResult::parsed, ::judged), and it is the same report as
// judging the fixed text from scratch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lint/fix/fix.h"
#include "lint/lint_file.h"
#include "lint/report/report.h"
#include "test/unit/shared_manifests.h"

namespace gpuguard::lint {
namespace {

std::string jsonReport(const FileReport& report) {
  std::ostringstream out;
  writeJson(out, {report}, ReportOptions{});
  return out.str();
}

std::string contentOf(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The manifests of the repository's examples and e2e cases: fixable and not,
// several documents, Lists.
std::vector<std::filesystem::path> samples() {
  std::vector<std::filesystem::path> out;
  for (const char* dir : {"manifests/examples", "test/e2e/cases"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(GPUGUARD_SOURCE_DIR) / dir)) {
      if (e.path().extension() == ".yaml") out.push_back(e.path());
    }
  }
  return out;
}

TEST(LintFixOnce, TheReportOfAFixedFileIsTheReportOfItsFixedText) {
  std::size_t changed = 0, reused = 0;
  for (const std::filesystem::path& path : samples()) {
    const std::string text = contentOf(path);
    FixResult fixed = fixText(text, LintPolicy{});
    ASSERT_TRUE(fixed.parsed.has_value()) << path;
    for (const auto& judged : fixed.judged) reused += judged.has_value();
    changed += fixed.changed;
    const FileReport once = lintParsed("f.yaml", fixed.text, std::move(*fixed.parsed), LintPolicy{}, {}, &fixed.judged);
    EXPECT_EQ(jsonReport(once), jsonReport(lintText("f.yaml", fixed.text, LintPolicy{}))) << path;
  }
  EXPECT_GT(changed, 0u) << "some samples are fixed";
  EXPECT_GT(reused, 0u) << "some documents' findings are taken from the fixing";
}

TEST(LintFixOnce, AnEditedDocumentIsJudgedAgainAndTheOthersAreNot) {
  const std::string fixable = gpuguard::testing::kRequestsOnlyPod;
  const std::string untouched = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n";
  const FixResult fixed = fixText(fixable + "---\n" + untouched, LintPolicy{});
  ASSERT_TRUE(fixed.changed);
  ASSERT_EQ(fixed.judged.size(), 2u);
  EXPECT_FALSE(fixed.judged[0].has_value()) << "edited: judged again as it now reads";
  EXPECT_TRUE(fixed.judged[1].has_value()) << "not edited: its findings stand";
}

TEST(LintFixOnce, AnEditThatMayChangeWhatTheInputDefinesJudgesEverythingAgain) {
  const std::string list = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: train
  spec:
    tolerations:
    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
    nodeSelector:
      nvidia.com/cuda.driver-version.major: "550"
    containers:
    - name: cuda
      image: nvidia/cuda:12.4.1-base-ubuntu22.04
      resources:
        requests:
          nvidia.com/gpu: 1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
)";
  const FixResult fixed = fixText(list, LintPolicy{});
  if (!fixed.changed) GTEST_SKIP() << "the List is not fixed here";
  for (const auto& judged : fixed.judged) EXPECT_FALSE(judged.has_value());
}

}  // namespace
}  // namespace gpuguard::lint
