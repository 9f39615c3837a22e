// gpuguard-lint --fix: surgical text edits that keep comments and the
// formatting of untouched lines, verified by parsing the result again;
// --fix --dry-run prints a unified diff.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lint/fix/fix.h"
#include "lint/lint_file.h"
#include "test/unit/lint/lint_test_support.h"
#include "test/unit/test_support.h"

namespace gpuguard::lint_test {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using lint::fixText;
using lint::unifiedDiff;

std::vector<std::string> rulesLeft(const std::string& text) {
  std::vector<std::string> out;
  for (const lint::Located& l : lint::lintText("x.yaml", text, lint::LintPolicy{}).findings) {
    if (!l.finding.suppressed) out.push_back(l.finding.rule);
  }
  return out;
}

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

TEST(LintFix, RequestsOnlyBecomesLimitsByRenamingTheKey) {
  const std::string before = podWithResources(
      "      # one GPU\n"
      "      requests:    # GPUs cannot be overcommitted\n"
      "        nvidia.com/gpu: 1   # keep this comment\n");
  const lint::FixResult r = fixText(before, lint::LintPolicy{});
  EXPECT_TRUE(r.changed) << notesOf(r);
  EXPECT_EQ(r.fixed, 1u);
  EXPECT_EQ(r.text, podWithResources(
                        "      # one GPU\n"
                        "      limits:    # GPUs cannot be overcommitted\n"
                        "        nvidia.com/gpu: 1   # keep this comment\n"));
  EXPECT_THAT(rulesLeft(r.text), IsEmpty());
  EXPECT_THAT(notesOf(r), HasSubstr("fixed gpu-requests-without-limits: renamed requests to limits"));
}

TEST(LintFix, MixedRequestsGetALimitsBlockWithTheValueAsWritten) {
  const std::string before = podWithResources(
      "      requests:\n"
      "        cpu: \"4\"         # four cores\n"
      "        memory: 16Gi\n"
      "        nvidia.com/gpu: \"2\"\n"
      "        example.com/fpga: 0x1\n");
  const lint::FixResult r = fixText(before, lint::LintPolicy{});
  EXPECT_EQ(r.fixed, 2u) << notesOf(r);
  EXPECT_EQ(r.text, podWithResources(
                        "      limits:\n"
                        "        nvidia.com/gpu: \"2\"\n"
                        "        example.com/fpga: 0x1\n"
                        "      requests:\n"
                        "        cpu: \"4\"         # four cores\n"
                        "        memory: 16Gi\n"
                        "        nvidia.com/gpu: \"2\"\n"
                        "        example.com/fpga: 0x1\n"));
  EXPECT_THAT(rulesLeft(r.text), IsEmpty());
}

TEST(LintFix, AMissingLimitIsAddedToAnExistingLimitsMap) {
  const std::string before = podWithResources(
      "      limits:\n"
      "        # CPU cap\n"
      "        cpu: 8\n"
      "      requests:\n"
      "        cpu: 4\n"
      "        nvidia.com/gpu: 1\n");
  const lint::FixResult r = fixText(before, lint::LintPolicy{});
  EXPECT_EQ(r.text, podWithResources(
                        "      limits:\n"
                        "        nvidia.com/gpu: 1\n"
                        "        # CPU cap\n"
                        "        cpu: 8\n"
                        "      requests:\n"
                        "        cpu: 4\n"
                        "        nvidia.com/gpu: 1\n"))
      << notesOf(r);
  EXPECT_THAT(rulesLeft(r.text), IsEmpty());
}

TEST(LintFix, AnEmptyLimitsMapIsFilledIn) {
  const std::string before = podWithResources(
      "      limits: {}   # none yet\n"
      "      requests:\n"
      "        cpu: 4\n"
      "        nvidia.com/gpu: 1\n");
  const lint::FixResult r = fixText(before, lint::LintPolicy{});
  EXPECT_EQ(r.text, podWithResources(
                        "      limits: # none yet\n"
                        "        nvidia.com/gpu: 1\n"
                        "      requests:\n"
                        "        cpu: 4\n"
                        "        nvidia.com/gpu: 1\n"))
      << notesOf(r);
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

TEST(LintFix, AMissingTolerationIsAddedAsABlockInTheFilesStyle) {
  const lint::FixResult r = fixText(kUntolerated, lint::LintPolicy{});
  EXPECT_EQ(r.fixed, 1u) << notesOf(r);
  std::string expected = kUntolerated;
  expected.replace(expected.find("      # Pin the driver.\n"), 0,
                   "      tolerations:\n"
                   "        - key: nvidia.com/gpu\n"
                   "          operator: Exists\n"
                   "          effect: NoSchedule\n");
  EXPECT_EQ(r.text, expected);
  EXPECT_THAT(rulesLeft(r.text), IsEmpty());
}

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

TEST(LintFix, ATolerationIsPrependedToAnExistingList) {
  const std::string before = R"(apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
      tolerations:
      # spot nodes
      - key: cloud.google.com/gke-spot
        operator: Equal
        value: "true"
        effect: NoSchedule
      containers:
      - name: c
        image: busybox
        resources: {limits: {nvidia.com/gpu: 8}}
)";
  const lint::FixResult r = fixText(before, lint::LintPolicy{});
  std::string expected = before;
  expected.replace(expected.find("      # spot nodes\n"), 0,
                   "      - key: nvidia.com/gpu\n"
                   "        operator: Exists\n"
                   "        effect: NoSchedule\n");
  EXPECT_EQ(r.text, expected) << notesOf(r);
  EXPECT_THAT(rulesLeft(r.text), IsEmpty());
}

TEST(LintFix, AnEmptyTolerationListIsReplaced) {
  const std::string before = R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  tolerations: []
  nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
  containers:
    - name: c
      image: busybox
      resources: {limits: {nvidia.com/gpu: 1}}
)";
  const lint::FixResult r = fixText(before, lint::LintPolicy{});
  std::string expected = before;
  expected.replace(expected.find("  tolerations: []\n"), 18,
                   "  tolerations:\n"
                   "    - key: nvidia.com/gpu\n"
                   "      operator: Exists\n"
                   "      effect: NoSchedule\n");
  EXPECT_EQ(r.text, expected) << notesOf(r);
}

// Sites that are a single container take their tolerations from the object
// around them (an Argo template, a KServe predictor, a TrainJob's override):
// the toleration is added there, never inside the container, which has no
// such field.
constexpr const char* kArgoGpuContainer = R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: w-}
spec:
  entrypoint: main
  templates:
  - name: main
    nodeSelector:
      nvidia.com/cuda.driver-version.major: "550"
    container:
      image: nvidia/cuda:12.4.1-base-ubuntu22.04
      resources:
        limits:
          nvidia.com/gpu: 1
)";

TEST(LintFix, AnArgoContainersTolerationGoesIntoItsTemplate) {
  const lint::FixResult r = fixText(kArgoGpuContainer, lint::LintPolicy{});
  EXPECT_EQ(r.fixed, 1u) << notesOf(r);
  std::string expected = kArgoGpuContainer;
  expected.replace(expected.find("    nodeSelector:\n"), 0,
                   "    tolerations:\n"
                   "    - key: nvidia.com/gpu\n"
                   "      operator: Exists\n"
                   "      effect: NoSchedule\n");
  EXPECT_EQ(r.text, expected);
  EXPECT_THAT(rulesLeft(r.text), IsEmpty());
}

TEST(LintFix, AKServeModelsTolerationGoesIntoItsPredictor) {
  const std::string before = R"(apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llm}
spec:
  predictor:
    nodeSelector:
      nvidia.com/cuda.driver-version.major: "550"
    model:
      modelFormat: {name: huggingface}
      resources:
        limits:
          nvidia.com/gpu: 1
)";
  const lint::FixResult r = fixText(before, lint::LintPolicy{});
  EXPECT_EQ(r.fixed, 1u) << notesOf(r);
  std::string expected = before;
  expected.replace(expected.find("    nodeSelector:\n"), 0,
                   "    tolerations:\n"
                   "    - key: nvidia.com/gpu\n"
                   "      operator: Exists\n"
                   "      effect: NoSchedule\n");
  EXPECT_EQ(r.text, expected);
  EXPECT_THAT(rulesLeft(r.text), IsEmpty());
}

constexpr const char* kTrainJob = R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    resourcesPerNode:
      limits: {nvidia.com/gpu: 8}
)";

TEST(LintFix, ATrainersTolerationGoesIntoThePodSpecOverrideForItsJob) {
  const std::string before = std::string(kTrainJob) +
                             "  podSpecOverrides:\n"
                             "  - targetJobs: [{name: node}]\n"
                             "    nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n";
  const lint::FixResult r = fixText(before, lint::LintPolicy{});
  EXPECT_EQ(r.fixed, 1u) << notesOf(r);
  std::string expected = before;
  expected.replace(expected.find("    nodeSelector:"), 0,
                   "    tolerations:\n"
                   "    - key: nvidia.com/gpu\n"
                   "      operator: Exists\n"
                   "      effect: NoSchedule\n");
  EXPECT_EQ(r.text, expected);
  EXPECT_THAT(rulesLeft(r.text), IsEmpty());
}

TEST(LintFix, ATrainJobWithoutAnOverrideForItsTrainerIsLeftAloneWithAReason) {
  const lint::FixResult r = fixText(kTrainJob, lint::LintPolicy{});
  EXPECT_EQ(r.fixed, 0u);
  EXPECT_EQ(r.text, kTrainJob);
  EXPECT_THAT(notesOf(r), HasSubstr("not fixed gpu-missing-toleration: spec.podSpecOverrides[0] does not exist"));
}

// spec.runtimePatches, the current Trainer API: a patch by `manager` of the
// replicated job `job`, whose pod spec patch has the given lines.
std::string trainJobWithRuntimePatch(const std::string& manager, const std::string& job,
                                     const std::string& podSpecLines) {
  return std::string(kTrainJob) + "  runtimePatches:\n  - manager: " + manager +
         "\n    trainingRuntimeSpec:\n      template:\n        spec:\n          replicatedJobs:\n"
         "          - name: " + job + "\n            template:\n              spec:\n                template:\n"
         "                  spec:\n" + podSpecLines;
}

TEST(LintFix, ATrainersTolerationGoesIntoTheRuntimePatchForItsJob) {
  const std::string before = trainJobWithRuntimePatch(
      "me", "node",
      "                    nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n"
      "                    containers:\n"
      "                    - name: node\n"
      "                      env: [{name: NCCL_DEBUG, value: INFO}]\n");
  const lint::FixResult r = fixText(before, lint::LintPolicy{});
  EXPECT_EQ(r.fixed, 1u) << notesOf(r);
  std::string expected = before;
  expected.replace(expected.find("                    nodeSelector:"), 0,
                   "                    tolerations:\n"
                   "                    - key: nvidia.com/gpu\n"
                   "                      operator: Exists\n"
                   "                      effect: NoSchedule\n");
  EXPECT_EQ(r.text, expected);
  EXPECT_THAT(rulesLeft(r.text), IsEmpty());
}

// A new patch needs a manager, and the trainer's job its name: only the
// author knows them.
TEST(LintFix, ATrainJobWhoseRuntimePatchesAreNotForItsTrainerIsLeftAloneWithAReason) {
  const std::string before =
      trainJobWithRuntimePatch("me", "dataset-initializer",
                               "                    nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}\n");
  const lint::FixResult r = fixText(before, lint::LintPolicy{});
  EXPECT_EQ(r.fixed, 0u);
  EXPECT_EQ(r.text, before);
  EXPECT_THAT(notesOf(r), HasSubstr("not fixed gpu-missing-toleration: spec.runtimePatches[1].trainingRuntimeSpec."
                                    "template.spec.replicatedJobs[0].template.spec.template.spec does not exist"));
}

TEST(LintFix, EveryUntoleratedPolicyTaintGetsItsToleration) {
  lint::LintPolicy policy;
  policy.engine.gpuTaints = {{"nvidia.com/gpu", std::nullopt, "NoSchedule"}, {"sku", std::string("gpu"), "NoExecute"}};
  const lint::FixResult r = fixText(kUntolerated, policy);
  EXPECT_EQ(r.fixed, 2u) << notesOf(r);
  EXPECT_THAT(r.text, HasSubstr("        - key: sku\n          operator: Exists\n          effect: NoExecute\n"));
  EXPECT_TRUE(lint::lintText("x.yaml", r.text, policy).findings.empty());
}

TEST(LintFix, BothFixesInOneObjectAndManyDocumentsInOneStream) {
  const std::string pod = R"(apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  nodeSelector:
    nvidia.com/cuda.driver-version.major: "550"
  containers:
  - name: c
    image: busybox
    resources:
      requests:
        nvidia.com/gpu: 1
)";
  const std::string stream = "---\n# Source: a.yaml\n" + pod + "--- # second\n" + pod;
  const lint::FixResult r = fixText(stream, lint::LintPolicy{});
  EXPECT_EQ(r.fixed, 4u) << notesOf(r);
  EXPECT_THAT(rulesLeft(r.text), IsEmpty());
  // Fixing again changes nothing.
  const lint::FixResult again = fixText(r.text, lint::LintPolicy{});
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(again.text, r.text);
}

TEST(LintFix, CrlfBomAndAMissingFinalNewlineAreKept) {
  std::string crlf = "\xEF\xBB\xBF";
  for (char c : std::string(kUntolerated)) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  crlf.resize(crlf.size() - 2);  // no line break at the end
  const lint::FixResult r = fixText(crlf, lint::LintPolicy{});
  ASSERT_TRUE(r.changed) << notesOf(r);
  EXPECT_TRUE(r.text.starts_with("\xEF\xBB\xBF# Inference server.\r\n"));
  EXPECT_THAT(r.text, HasSubstr("      tolerations:\r\n        - key: nvidia.com/gpu\r\n"));
  EXPECT_TRUE(r.text.ends_with("nvidia.com/gpu: 1"));
  EXPECT_EQ(r.text.find("\n", 0) - 1, r.text.find("\r\n"));  // every break stays CRLF
  for (std::size_t i = 0; i < r.text.size(); ++i) {
    if (r.text[i] == '\n') {
      EXPECT_EQ(r.text[i - 1], '\r') << "at byte " << i;
    }
  }
}

TEST(LintFix, FlowStyleAnchorsAndMismatchesAreLeftAloneWithAReason) {
  const std::string flow =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
      "spec: {nodeSelector: {nvidia.com/cuda.driver-version.major: \"550\"}, containers: [{name: c, image: busybox, resources: "
      "{limits: {nvidia.com/gpu: 1}}}]}\n";
  lint::FixResult r = fixText(flow, lint::LintPolicy{});
  EXPECT_FALSE(r.changed);
  EXPECT_THAT(notesOf(r), HasSubstr("not fixed gpu-missing-toleration: spec is written in flow style"));

  const std::string anchors = R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists}]
  nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
  containers:
  - name: a
    image: busybox
    resources: &gpu
      requests:
        nvidia.com/gpu: 1
  - name: b
    image: busybox
    resources: *gpu
)";
  r = fixText(anchors, lint::LintPolicy{});
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.text, anchors);
  EXPECT_THAT(notesOf(r), HasSubstr("anchors, aliases or merge keys"));

  const std::string mismatch = podWithResources(
      "      requests:\n"
      "        nvidia.com/gpu: 2\n"
      "      limits:\n"
      "        nvidia.com/gpu: 1\n");
  r = fixText(mismatch, lint::LintPolicy{});
  EXPECT_FALSE(r.changed);
  EXPECT_THAT(notesOf(r), HasSubstr("not fixed gpu-requests-limits-mismatch: requests and limits differ"));
}

TEST(LintFix, ATolerationTheApiServerRejectsIsLeftToTheAuthor) {
  const std::string rejected = R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, value: present, effect: NoSchedule}
  nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
  containers:
  - name: c
    image: busybox
    resources: {limits: {nvidia.com/gpu: 1}}
)";
  lint::FixResult r = fixText(rejected, lint::LintPolicy{});
  EXPECT_FALSE(r.changed);
  EXPECT_THAT(notesOf(r), HasSubstr("6:37 not fixed gpu-missing-toleration: a toleration the API server rejects"));
}

TEST(LintFix, ShellHeredocsAndAndAndInScriptsAreNotMistakenForAnchors) {
  const std::string before = R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
  containers:
  - name: c
    image: busybox
    command: [sh, -c, "a && b"]
    args:
    - |
      cat >/x.sh <<EOF
      *star && &amp
      - &notanchor
      EOF
    resources:
      requests:
        nvidia.com/gpu: 1
)";
  const lint::FixResult r = fixText(before, lint::LintPolicy{});
  EXPECT_EQ(r.fixed, 2u) << notesOf(r);
  EXPECT_THAT(rulesLeft(r.text), IsEmpty());
}

TEST(LintFix, SuppressedFindingsAndUnparsableFilesAreNotTouched) {
  std::string suppressed = kUntolerated;
  suppressed.replace(suppressed.find("  name: llm\n"), 12,
                     "  name: llm\n  annotations:\n    ignore.gpuguard.io/gpu-missing-toleration: \"ERT plugin\"\n");
  EXPECT_FALSE(fixText(suppressed, lint::LintPolicy{}).changed);
  const lint::FixResult broken = fixText("a: [\n", lint::LintPolicy{});
  EXPECT_FALSE(broken.changed);
  EXPECT_THAT(notesOf(broken), HasSubstr("does not parse"));
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
