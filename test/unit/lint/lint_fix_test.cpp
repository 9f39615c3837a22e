// gpuguard-lint --fix: surgical text edits that keep comments and the
// formatting of untouched lines, verified by parsing the result again;
// --fix --dry-run prints a unified diff. What a file becomes when fixed with
// the default policy is specified by the file pairs in test/data/fix/
// (lint_fix_cases_test.cpp); here: other policies, the diff, the CLI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lint/fix/fix.h"
#include "lint/lint_file.h"
#include "test/unit/lint/lint_test_support.h"
#include "test/unit/test_support.h"

namespace gpuguard::lint_test {
namespace {

using ::testing::HasSubstr;
using lint::fixText;
using lint::unifiedDiff;

std::string notesOf(const lint::FixResult& r) {
  std::string s;
  for (const lint::FixNote& n : r.notes) {
    s += std::to_string(n.line) + ":" + std::to_string(n.column) + " " + (n.fixed ? "fixed " : "not fixed ") + n.rule +
         ": " + n.message + "\n";
  }
  return s;
}

// A pinned, tolerating pod, so only the requests matter.
std::string podWithResources(const std::string& resources) {
  return "# A training pod.\n"
         "apiVersion: v1\n"
         "kind: Pod\n"
         "metadata:\n"
         "  name: train  # the name\n"
         "spec:\n"
         "  tolerations:\n"
         "  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
         "  nodeSelector:\n"
         "    nvidia.com/cuda.driver-version.major: \"550\"\n"
         "  containers:\n"
         "  - name: cuda   # CUDA base\n"
         "    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
         "    resources:\n" +
         resources;
}

// A GPU pod without the toleration, in the style of the file (indented or
// not indented sequences).
constexpr const char* kUntolerated = R"(# Inference server.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  replicas: 2
  template:
    metadata:
      labels: {app: llm}
    spec:
      # Pin the driver.
      nodeSelector:
        nvidia.com/cuda.driver-version.major: "550"
      containers:
        - name: vllm    # the server
          image: vllm/vllm-openai:v0.6.3
          resources:
            limits:
              nvidia.com/gpu: 1
)";

TEST(LintFix, ATolerationAddedToAKnativeServiceSaysItNeedsKnativesFeatureFlag) {
  const std::string before = R"(apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: llm}
spec:
  template:
    spec:
      containers:
      - image: vllm/vllm-openai:v0.8.5
        resources:
          limits:
            nvidia.com/gpu: 1
)";
  const lint::FixResult r = fixText(before, lint::LintPolicy{gpuguard::testing::onlyRules({"gpu-missing-toleration"})});
  EXPECT_EQ(r.fixed, 1u) << notesOf(r);
  EXPECT_THAT(r.text, HasSubstr("      tolerations:\n"));
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_TRUE(r.notes[0].fixed);
  EXPECT_THAT(r.notes[0].message, HasSubstr("added toleration {key: nvidia.com/gpu, operator: Exists, effect: "
                                            "NoSchedule}; in a Knative Service, tolerations, nodeSelector and "
                                            "affinity are accepted only when Knative's feature flags"));
}

TEST(LintFix, EveryUntoleratedPolicyTaintGetsItsToleration) {
  lint::LintPolicy policy;
  policy.engine.gpuTaints = {{"nvidia.com/gpu", std::nullopt, "NoSchedule"}, {"sku", std::string("gpu"), "NoExecute"}};
  const lint::FixResult r = fixText(kUntolerated, policy);
  EXPECT_EQ(r.fixed, 2u) << notesOf(r);
  EXPECT_THAT(r.text, HasSubstr("        - key: sku\n          operator: Exists\n          effect: NoExecute\n"));
  EXPECT_TRUE(lint::lintText("x.yaml", r.text, policy).findings.empty());
}

TEST(LintFix, UnifiedDiffHasHunksWithContext) {
  const std::string a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n";
  std::string b = a;
  b.replace(b.find("2\n"), 2, "two\n");
  b.replace(b.find("14\n"), 3, "14\n14.5\n");
  EXPECT_EQ(unifiedDiff(a, b, "f.yaml"),
            "--- a/f.yaml\n+++ b/f.yaml\n"
            "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n"
            "@@ -12,4 +12,5 @@\n 12\n 13\n 14\n+14.5\n 15\n");
  EXPECT_EQ(unifiedDiff(a, a, "f.yaml"), "");
  EXPECT_EQ(unifiedDiff("x", "y", "f"), "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n"
                                         "\\ No newline at end of file\n");
}

// --- through the CLI ---------------------------------------------------------------

TEST(LintFixCli, FixRewritesFilesInPlaceAndReportsWhatRemains) {
  TempDir dir;
  dir.write("deploy.yaml", kUntolerated);
  const RunResult r = runLint({"--fix", "deploy.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("deploy.yaml:13:7: fixed: added toleration {key: nvidia.com/gpu, operator: Exists, "
                               "effect: NoSchedule} [gpu-missing-toleration]"));
  EXPECT_THAT(r.err, HasSubstr("gpuguard-lint: fixed 1 finding in 1 file"));
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(readFile(dir.path() / "deploy.yaml"), HasSubstr("      tolerations:\n        - key: nvidia.com/gpu\n"));
  EXPECT_EQ(runLint({"deploy.yaml"}, "", dir.str()).exitCode, 0);
}

TEST(LintFixCli, DryRunPrintsAPatchThatAppliesAndChangesNothing) {
  TempDir dir;
  dir.write("deploy.yaml", kUntolerated);
  const RunResult r = runLint({"--fix", "--dry-run", "deploy.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out,
            "--- a/deploy.yaml\n+++ b/deploy.yaml\n"
            "@@ -9,6 +9,10 @@\n"
            "     metadata:\n"
            "       labels: {app: llm}\n"
            "     spec:\n"
            "+      tolerations:\n"
            "+        - key: nvidia.com/gpu\n"
            "+          operator: Exists\n"
            "+          effect: NoSchedule\n"
            "       # Pin the driver.\n"
            "       nodeSelector:\n"
            "         nvidia.com/cuda.driver-version.major: \"550\"\n");
  EXPECT_THAT(r.err, HasSubstr("would fix"));
  EXPECT_EQ(readFile(dir.path() / "deploy.yaml"), kUntolerated);
  if (runCommand({"sh", "-c", "command -v patch"}).exitCode == 0) {
    const RunResult p = runCommand({"patch", "-p1", "--quiet"}, r.out, dir.str());
    EXPECT_EQ(p.exitCode, 0) << p.out << p.err;
    EXPECT_EQ(runLint({"deploy.yaml"}, "", dir.str()).exitCode, 0);
  }
}

TEST(LintFixCli, DryRunOnStdinAndFixOnStdinSaysItCannotWrite) {
  RunResult r = runLint({"--fix", "--dry-run", "-"}, kUntolerated);
  EXPECT_THAT(r.out, HasSubstr("--- a/stdin\n+++ b/stdin\n"));
  EXPECT_EQ(r.exitCode, 0);
  r = runLint({"--fix", "-"}, kUntolerated);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.err, HasSubstr("standard input cannot be fixed in place"));
}

TEST(LintFixCli, WhatCannotBeFixedIsSaidOnStderrAndStillFails) {
  TempDir dir;
  dir.write("mismatch.yaml", podWithResources("      requests: {nvidia.com/gpu: 2}\n      limits: {nvidia.com/gpu: 1}\n"));
  const RunResult r = runLint({"--fix", "mismatch.yaml"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.err, HasSubstr("not fixed: requests and limits differ"));
  EXPECT_THAT(r.out, HasSubstr("[gpu-requests-limits-mismatch]"));
}

}  // namespace
}  // namespace gpuguard::lint_test
