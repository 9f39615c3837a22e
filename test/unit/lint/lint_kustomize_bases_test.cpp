// A kustomize base (or component) named alone, as pre-commit passes only the
// changed file, is judged through the kustomizations of the repository that
// include it, as when the whole tree is linted: never rendered on its own.
// Each including root is rendered once and reports the base's objects only;
// a base nothing includes is a root as before; a root that does not render
// says which base it left unjudged. The rendering tests use kubectl
// kustomize and skip without it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lint/render/kustomize_includers.h"
#include "lint/units.h"
#include "test/unit/lint/lint_test_support.h"

namespace gpuguard::lint_test {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// The base: a GPU Deployment without the toleration and the driver pin,
// which each environment's overlay adds.
constexpr const char* kBaseDeployment = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: infer}
spec:
  selector: {matchLabels: {app: i}}
  template:
    metadata: {labels: {app: i}}
    spec:
      containers:
      - name: m
        image: vllm/vllm-openai:v0.10.1
        args: ["m"]
        resources:
          limits: {nvidia.com/gpu: 1}
)";

// An overlay of ../../base adding the toleration and the driver pin.
constexpr const char* kTolerating = R"(resources: [../../base]
patches:
- target: {kind: Deployment, name: infer}
  patch: |-
    - op: add
      path: /spec/template/spec/tolerations
      value: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
    - op: add
      path: /spec/template/spec/nodeSelector
      value: {nvidia.com/cuda.driver-version.major: "570"}
)";

// An overlay of ../../base that pins the driver and forgets the toleration.
constexpr const char* kUntolerating = R"(resources: [../../base]
namePrefix: b-
patches:
- target: {kind: Deployment, name: infer}
  patch: |-
    - op: add
      path: /spec/template/spec/nodeSelector
      value: {nvidia.com/cuda.driver-version.major: "570"}
)";

// A repository (a .git directory) with base/ and the overlays given.
void writeRepository(const TempDir& dir, const std::vector<std::pair<std::string, std::string>>& overlays) {
  fs::create_directories(dir.path() / ".git");
  dir.write("base/kustomization.yaml", "resources:\n- deploy.yaml\n");
  dir.write("base/deploy.yaml", kBaseDeployment);
  for (const auto& [name, kustomization] : overlays) {
    dir.write("overlays/" + name + "/kustomization.yaml", kustomization);
  }
}

bool haveKubectl() { return runCommand({"sh", "-c", "command -v kubectl"}).exitCode == 0; }

lint::Renderers withKustomize() {
  lint::Renderers r;
  r.kustomize = lint::RenderCommand{"kustomize", "build"};
  return r;
}

// --- the plan: which roots are rendered, without rendering them -----------------------

TEST(LintKustomizeBasesPlan, ABaseNamedAloneIsRenderedThroughTheOverlayThatIncludesIt) {
  TempDir dir;
  writeRepository(dir, {{"prod", kTolerating}});
  const lint::Plan plan = lint::planUnits({dir.str() + "/base/deploy.yaml"}, withKustomize());
  ASSERT_EQ(plan.roots.size(), 1u);
  EXPECT_EQ(lint::directoryKey(plan.tree[plan.roots[0]].dir), lint::directoryKey(dir.str() + "/overlays/prod"));
  EXPECT_THAT(plan.files, IsEmpty());  // the base's file is judged through the render
  ASSERT_EQ(plan.judgedThrough.size(), 1u);
  EXPECT_EQ(plan.judgedThrough[0].dir, dir.str() + "/base");
  // The overlay reports only the base's objects.
  EXPECT_THAT(plan.reportOnly.at(plan.roots[0]), ElementsAre(lint::directoryKey(dir.str() + "/base")));
}

TEST(LintKustomizeBasesPlan, WithoutARendererTheBaseIsJudgedAsWrittenAsBefore) {
  TempDir dir;
  writeRepository(dir, {{"prod", kTolerating}});
  const lint::Plan plan = lint::planUnits({dir.str() + "/base/deploy.yaml"}, lint::Renderers{});
  EXPECT_THAT(plan.roots, IsEmpty());
  EXPECT_THAT(plan.judgedThrough, IsEmpty());
  EXPECT_THAT(plan.files, ElementsAre(dir.str() + "/base/deploy.yaml"));
}

TEST(LintKustomizeBasesPlan, ABaseOfSeveralOverlaysIsRenderedThroughEachOnce) {
  TempDir dir;
  writeRepository(dir, {{"a", kTolerating}, {"b", kUntolerating}});
  // Both of the base's files changed: one search, each overlay rendered once.
  const lint::Plan plan =
      lint::planUnits({dir.str() + "/base/deploy.yaml", dir.str() + "/base/kustomization.yaml"}, withKustomize());
  std::vector<std::string> roots;
  for (std::size_t i : plan.roots) roots.push_back(lint::directoryKey(plan.tree[i].dir));
  EXPECT_THAT(roots, ElementsAre(lint::directoryKey(dir.str() + "/overlays/a"),
                                 lint::directoryKey(dir.str() + "/overlays/b")));
}

TEST(LintKustomizeBasesPlan, ARepositoryTooLargeToSearchLeavesTheBaseARootAndSaysSo) {
  TempDir dir;
  writeRepository(dir, {{"prod", kTolerating}});
  lint::KustomizationIncluders includers(2);  // base, overlays, overlays/prod: three directories
  const lint::Inclusion inclusion = includers.includingRoots(dir.str() + "/base");
  EXPECT_THAT(inclusion.roots, IsEmpty());
  EXPECT_THAT(inclusion.unsearched, HasSubstr("has more than 2 directories"));
  lint::KustomizationIncluders enough(3);
  EXPECT_THAT(enough.includingRoots(dir.str() + "/base").roots, ElementsAre(dir.str() + "/overlays/prod"));
}

TEST(LintKustomizeBasesPlan, HiddenAndVendoredDirectoriesAreNotSearched) {
  TempDir dir;
  writeRepository(dir, {});
  dir.write(".github/ci/kustomization.yaml", "resources: [../../base]\n");
  dir.write("vendor/app/kustomization.yaml", "resources: [../../base]\n");
  lint::KustomizationIncluders includers;
  EXPECT_THAT(includers.includingRoots(dir.str() + "/base").roots, IsEmpty());
}

TEST(LintKustomizeBasesPlan, AComponentNamedAloneIsRenderedThroughTheOverlayThatListsIt) {
  TempDir dir;
  writeRepository(dir, {{"prod", "resources: [../../base]\ncomponents: [../../components/gpu]\n"}});
  dir.write("components/gpu/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: gpu.yaml\n");
  dir.write("components/gpu/gpu.yaml", kBaseDeployment);
  const lint::Plan plan = lint::planUnits({dir.str() + "/components/gpu/gpu.yaml"}, withKustomize());
  ASSERT_EQ(plan.roots.size(), 1u);
  EXPECT_EQ(lint::directoryKey(plan.tree[plan.roots[0]].dir), lint::directoryKey(dir.str() + "/overlays/prod"));
  EXPECT_THAT(plan.files, IsEmpty());  // the patch is judged in the render, not as a fragment
}

// --- rendered with kubectl kustomize ----------------------------------------------------

RunResult lintIn(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"--render", "kubectl"});
  return runLint(args, "", dir.str());
}

TEST(LintKustomizeBases, ABaseNamedAlonePassesWhenItsOverlayAddsTheToleration) {
  if (!haveKubectl()) GTEST_SKIP() << "kubectl not installed";
  TempDir dir;
  writeRepository(dir, {{"prod", kTolerating}});
  const RunResult alone = lintIn(dir, {"base/deploy.yaml"});
  EXPECT_EQ(alone.exitCode, 0) << alone.out << alone.err;
  EXPECT_THAT(alone.err, HasSubstr("note: kustomization base is included by overlays/prod: judged as that renders "
                                   "it, not on its own"));
  // The same as the whole tree, which says nothing of it.
  const RunResult whole = lintIn(dir, {"."});
  EXPECT_EQ(whole.exitCode, 0) << whole.out << whole.err;
  EXPECT_THAT(whole.err, Not(HasSubstr("is included by")));
}

TEST(LintKustomizeBases, ABaseNothingIncludesIsJudgedAsARoot) {
  if (!haveKubectl()) GTEST_SKIP() << "kubectl not installed";
  TempDir dir;
  writeRepository(dir, {});
  const RunResult r = lintIn(dir, {"--format", "json", "base/deploy.yaml"});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(rulesOf(parseJson(r)), ::testing::Contains("gpu-missing-toleration"));
  EXPECT_THAT(r.err, Not(HasSubstr("is included by")));
}

TEST(LintKustomizeBases, TheOverlayThatForgetsTheTolerationIsTheOneTheFindingNames) {
  if (!haveKubectl()) GTEST_SKIP() << "kubectl not installed";
  TempDir dir;
  writeRepository(dir, {{"a", kTolerating}, {"b", kUntolerating}});
  const RunResult r = lintIn(dir, {"--format", "json", "base/deploy.yaml"});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  const nlohmann::json report = parseJson(r);
  EXPECT_THAT(rulesOf(report), ElementsAre("gpu-missing-toleration"));
  ASSERT_EQ(report["findings"].size(), 1u);
  const nlohmann::json& finding = report["findings"][0];
  EXPECT_EQ(finding["file"], "base/deploy.yaml");     // where the toleration belongs
  EXPECT_EQ(finding["renderedFrom"], "overlays/b");   // the overlay that renders it without
  EXPECT_EQ(finding["object"]["name"], "b-infer");
  EXPECT_THAT(r.err, HasSubstr("kustomization base is included by overlays/a, overlays/b: judged as each renders it"));
}

TEST(LintKustomizeBases, AFindingTwoOverlaysPlaceOnTheSameLineIsReportedOnce) {
  if (!haveKubectl()) GTEST_SKIP() << "kubectl not installed";
  TempDir dir;
  const std::string noToleration = "resources: [../../base]\n";
  writeRepository(dir, {{"a", noToleration}, {"b", noToleration}});
  const RunResult r = lintIn(dir, {"--format", "json", "base/deploy.yaml"});
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  const std::vector<std::string> rules = rulesOf(parseJson(r));
  EXPECT_EQ(std::count(rules.begin(), rules.end(), "gpu-missing-toleration"), 1) << r.out;
}

TEST(LintKustomizeBases, AnOverlayThatIncludesOtherAppsReportsOnlyTheBasesObjects) {
  if (!haveKubectl()) GTEST_SKIP() << "kubectl not installed";
  TempDir dir;
  const std::string tolerating(kTolerating);  // with ../../other among its resources
  const std::string patches = tolerating.substr(tolerating.find('\n') + 1);
  writeRepository(dir, {{"prod", "resources: [../../base, ../../other]\n" + patches}});
  dir.write("other/kustomization.yaml", "resources: [pod.yaml]\n");
  dir.write("other/pod.yaml", kFractionalPod);  // another team's problem, not this commit's
  const RunResult alone = lintIn(dir, {"base/deploy.yaml"});
  EXPECT_EQ(alone.exitCode, 0) << alone.out << alone.err;
  const RunResult whole = lintIn(dir, {"."});
  EXPECT_EQ(whole.exitCode, 1) << whole.out << whole.err;
  EXPECT_THAT(whole.out, HasSubstr("other/pod.yaml:17:25: error:"));
}

TEST(LintKustomizeBases, AnOverlayThatDoesNotRenderSaysWhichBaseWasLeftUnjudged) {
  if (!haveKubectl()) GTEST_SKIP() << "kubectl not installed";
  TempDir dir;
  writeRepository(dir, {{"prod", "resources: [../../base, missing.yaml]\n"}});
  const RunResult r = lintIn(dir, {"base/deploy.yaml"});
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("cannot render the kustomization (kubectl kustomize overlays/prod)"));
  EXPECT_THAT(r.err, HasSubstr("note: kustomization base is judged through overlays/prod, which did not render (the "
                               "error above): not judged there"));
}

TEST(LintKustomizeBases, AnOverlayNamingARemoteBaseIsRefusedAsInAWholeTreeRun) {
  // Remote references are unchanged: never fetched without --allow-remote,
  // and the base the overlay was to judge is named beside the error.
  TempDir dir;
  writeRepository(dir, {{"prod", "resources:\n- ../../base\n- https://github.com/org/repo//deploy?ref=v1\n"}});
  writeScript(dir, "kubectl", "touch " + (dir.path() / "rendered").string() + "\nexit 1\n");
  const RunResult r = runLintWithFakes({"--render", "kubectl", "base/deploy.yaml"}, dir);
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "rendered"));
  EXPECT_THAT(r.out, HasSubstr("not rendered: overlays/prod/kustomization.yaml names the remote base "
                               "https://github.com/org/repo//deploy?ref=v1"));
  EXPECT_THAT(r.err, HasSubstr("note: kustomization base is judged through overlays/prod, which did not render"));
}

TEST(LintKustomizeBases, FixOnABaseEditsItAsWrittenAndRendersNoOverlay) {
  // --fix rewrites files as written and renders no kustomization (docs/linter.md):
  // a base named alone is fixed as a whole-tree --fix fixes it, never from an overlay's output.
  TempDir dir;
  writeRepository(dir, {{"prod", kTolerating}});
  writeScript(dir, "kubectl", "touch " + (dir.path() / "rendered").string() + "\nexit 1\n");
  const RunResult r = runLintWithFakes({"--fix", "base/deploy.yaml"}, dir);
  EXPECT_FALSE(fs::exists(dir.path() / "rendered")) << r.err;
  EXPECT_THAT(readFile(dir.path() / "base/deploy.yaml"), HasSubstr("tolerations:"));
  EXPECT_THAT(r.err, Not(HasSubstr("is included by")));
}

}  // namespace
}  // namespace gpuguard::lint_test
