// lint/run.h: one gpuguard-lint run in the test's own process, its streams
// captured: what the command line asks for goes to `out`, what the run has to
// say to `err`, and the exit status says how it went (0 clean, 1 findings,
// 2 trouble).
#include "lint/run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test/unit/lint/lint_test_support.h"
#include "test/unit/shared_manifests.h"

namespace gpuguard::lint_test {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;
using gpuguard::testing::kRequestsOnlyPod;

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs the command with an empty policy file of its own (no .gpuguard.yaml
// from the working directory's parents).
Outcome lint(const TempDir& dir, std::vector<std::string> args) {
  const std::string policy = dir.write("policy.yaml", "rules: {}\n").string();
  args.insert(args.begin(), "--config=" + policy);
  std::ostringstream out, err;
  Outcome r;
  r.status = lint::lintCommand(args, lint::RunStreams{out, err, false});
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::string contentOf(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(LintRun, AFileWithAnErrorExitsOneAndReportsItOnOut) {
  TempDir dir;
  const std::string pod = dir.write("pod.yaml", kRequestsOnlyPod).string();
  const Outcome r = lint(dir, {"--format", "json", pod});
  EXPECT_EQ(r.status, 1) << r.err;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  ASSERT_EQ(report["findings"].size(), 1u) << r.out;
  EXPECT_EQ(report["findings"][0]["rule"], "gpu-requests-without-limits");
  EXPECT_EQ(report["findings"][0]["line"], 14);
  EXPECT_THAT(r.err, IsEmpty());
}

TEST(LintRun, ACleanFileExitsZero) {
  TempDir dir;
  const Outcome r = lint(dir, {dir.write("good.yaml", kGoodPod).string()});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST(LintRun, TheReportGoesToTheOutputFileAndNothingToOut) {
  TempDir dir;
  const std::string pod = dir.write("pod.yaml", kRequestsOnlyPod).string();
  const std::string report = (dir.path() / "report.json").string();
  const Outcome r = lint(dir, {"--format", "json", "--output", report, pod});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(contentOf(report), HasSubstr("gpu-requests-without-limits"));
}

TEST(LintRun, FixDryRunPrintsTheDiffAndLeavesTheFileAlone) {
  TempDir dir;
  const std::filesystem::path pod = dir.write("pod.yaml", kRequestsOnlyPod);
  const Outcome r = lint(dir, {"--fix", "--dry-run", pod.string()});
  EXPECT_EQ(r.status, 0) << "judged as fixed: nothing is left to fail on\n" << r.err;
  EXPECT_THAT(r.out, HasSubstr("-      requests:\n+      limits:\n"));
  EXPECT_THAT(r.err, HasSubstr("would fix: "));
  EXPECT_THAT(r.err, HasSubstr("gpuguard-lint: would fix 1 finding in 1 file"));
  EXPECT_EQ(contentOf(pod), kRequestsOnlyPod);
}

TEST(LintRun, FixWritesTheFileAndReportsWhatIsLeft) {
  TempDir dir;
  const std::filesystem::path pod = dir.write("pod.yaml", kRequestsOnlyPod);
  const Outcome r = lint(dir, {"--fix", "--format", "json", pod.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(contentOf(pod), HasSubstr("      limits:\n        nvidia.com/gpu: 1\n"));
  EXPECT_THAT(nlohmann::json::parse(r.out)["findings"], IsEmpty());
  EXPECT_THAT(r.err, HasSubstr("gpuguard-lint: fixed 1 finding in 1 file"));
}

TEST(LintRun, AMissingInputIsTroubleAndNamedInTheReport) {
  TempDir dir;
  const std::string missing = (dir.path() / "missing.yaml").string();
  const Outcome r = lint(dir, {"--format", "json", missing});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.out, HasSubstr("no such file or directory"));
}

TEST(LintRun, AReportThatWouldOverwriteAnInputIsRefusedBeforeAnythingIsLinted) {
  TempDir dir;
  const std::filesystem::path pod = dir.write("pod.yaml", kRequestsOnlyPod);
  const Outcome r = lint(dir, {"--output", pod.string(), pod.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("refusing to write the report to"));
  EXPECT_EQ(contentOf(pod), kRequestsOnlyPod);
}

TEST(LintRun, BadUsageIsTroubleWithTheUsageOnErr) {
  TempDir dir;
  const Outcome r = lint(dir, {"--no-such-flag"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, StartsWith("gpuguard-lint: "));
  EXPECT_THAT(r.err, HasSubstr("Usage:"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST(LintRun, InformationalFlagsAnswerOnOut) {
  TempDir dir;
  const Outcome version = lint(dir, {"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_THAT(version.out, StartsWith("gpuguard-lint "));
  const Outcome explain = lint(dir, {"--explain", "gpu-fractional"});
  EXPECT_EQ(explain.status, 0);
  EXPECT_THAT(explain.out, HasSubstr("gpu-fractional"));
  const Outcome unknown = lint(dir, {"--explain", "no-such-rule"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_THAT(unknown.err, HasSubstr("unknown rule \"no-such-rule\""));
}

}  // namespace
}  // namespace gpuguard::lint_test
