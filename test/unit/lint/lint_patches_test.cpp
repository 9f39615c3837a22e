// Which files are kustomize patches (judged as fragments, for what they say)
// and which are pod specs (judged whole): a file is a patch only when a
// kustomization lists it, one of the run's or one in a directory above the
// file; a pod spec without an image (a Spark pod template, an operator's pod
// spec, a Deployment whose image CI sets) is judged for its tolerations and
// resources like any other, and the note about patches names the files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lint/units.h"
#include "test/unit/lint/lint_test_support.h"

namespace gpuguard::lint_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// A Deployment raising the GPU count, no image, no toleration: a patch when
// listed, a pod spec otherwise.
constexpr const char* kImagelessDeployment = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer}
spec:
  selector: {matchLabels: {app: t}}
  template:
    metadata: {labels: {app: t}}
    spec:
      containers:
      - name: t
        resources: {limits: {nvidia.com/gpu: "0.5"}}
)";

// A Spark executor pod template: Spark sets the image; the template is
// where the toleration must be written.
constexpr const char* kSparkTemplate = R"(apiVersion: v1
kind: Pod
metadata:
  labels: {spark-role: executor}
spec:
  containers:
  - name: spark-kubernetes-executor
    resources: {limits: {nvidia.com/gpu: 1}}
)";

TEST(LintPatches, AnImagelessWorkloadNoKustomizationListsIsJudgedWhole) {
  TempDir dir;
  dir.write("deploy/gpu-deployment.yaml", kImagelessDeployment);
  const RunResult r = runLint({"--format", "json", "deploy"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(rulesOf(parseJson(r)), ::testing::IsSupersetOf({"gpu-fractional", "gpu-missing-toleration"}));
  EXPECT_THAT(r.err, Not(HasSubstr("judged as kustomize patches")));
}

TEST(LintPatches, ASparkPodTemplateIsJudgedForItsTolerationsNotForItsImage) {
  const RunResult missing = runLint({"--format", "json", "-"}, kSparkTemplate);
  EXPECT_EQ(missing.exitCode, 1) << missing.out << missing.err;
  EXPECT_THAT(rulesOf(parseJson(missing)), ::testing::UnorderedElementsAre("gpu-missing-toleration", "gpu-missing-driver-pin"));
  // Tolerated and pinned: nothing about the image it does not name; a
  // misspelt resource name is still what it says.
  const std::string ok = R"(apiVersion: v1
kind: Pod
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
  containers:
  - name: spark-kubernetes-executor
    resources: {limits: {nvidia.com/gpu: 1, nvidia.com/GPU: 1}}
)";
  const RunResult r = runLint({"--format", "json", "-"}, ok);
  EXPECT_THAT(rulesOf(parseJson(r)), ElementsAre("gpu-resource-name")) << r.out;
}

TEST(LintPatches, APatchTheKustomizationListsIsAFragmentAndTheNoteNamesTheFile) {
  TempDir dir;
  dir.write("overlay/kustomization.yaml", "resources: [../base]\npatches:\n- path: gpu-patch.yaml\n");
  dir.write("overlay/gpu-patch.yaml", kImagelessDeployment);
  const RunResult r = runLint({"--render", "none", "--format", "json", "overlay"}, "", dir.str());
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(rulesOf(parseJson(r)), ElementsAre("gpu-fractional"));  // not the toleration the base holds
  EXPECT_THAT(r.err, HasSubstr("note: 1 document was judged as kustomize patches (a kustomization lists the file): "
                               "overlay/gpu-patch.yaml; only for what they say"));
}

TEST(LintPatches, APatchListedByAKustomizationAboveItsDirectoryIsAFragment) {
  // pre-commit passes the changed patch alone; its kustomization is a level up.
  TempDir dir;
  dir.write("overlay/kustomization.yaml", "resources: [../base]\npatchesStrategicMerge:\n- patches/gpu.yaml\n");
  dir.write("overlay/patches/gpu.yaml", kImagelessDeployment);
  const RunResult r = runLint({"--format", "json", "overlay/patches/gpu.yaml"}, "", dir.str());
  EXPECT_THAT(rulesOf(parseJson(r)), ElementsAre("gpu-fractional")) << r.err;
  EXPECT_THAT(r.err, HasSubstr("overlay/patches/gpu.yaml"));
}

TEST(LintPatches, EveryKindOfPatchListIsRead) {
  TempDir dir;
  dir.write("app/kustomization.yaml",
            "resources: [deploy.yaml]\n"
            "patches:\n- path: a.yaml\n  target: {kind: Deployment}\n"
            "patchesStrategicMerge:\n- b.yaml\n- |-\n  apiVersion: apps/v1\n  kind: Deployment\n"
            "patchesJson6902:\n- path: c.yaml\n  target: {kind: Deployment, name: trainer}\n");
  dir.write("gpu/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                                      "patches:\n- path: d.yaml\n");
  std::vector<std::string> files;
  for (const char* f : {"app/kustomization.yaml", "gpu/kustomization.yaml"}) files.push_back((dir.path() / f).string());
  for (const char* f : {"app/deploy.yaml", "app/a.yaml", "app/b.yaml", "app/c.yaml", "gpu/d.yaml", "loose.yaml"}) {
    files.push_back(dir.write(f, kImagelessDeployment).string());
  }
  const lint::Plan plan = lint::planUnits(files, lint::Renderers{});
  std::vector<std::string> patches;
  for (const std::string& f : plan.fragments) patches.push_back(std::filesystem::path(f).lexically_relative(dir.path()));
  EXPECT_THAT(patches, ElementsAre("app/a.yaml", "app/b.yaml", "app/c.yaml", "gpu/d.yaml"));
}

TEST(LintPatches, StandardInputIsNeverAPatch) {
  const lint::Plan plan = lint::planUnits({"-"}, lint::Renderers{});
  EXPECT_THAT(plan.fragments, IsEmpty());
}

}  // namespace
}  // namespace gpuguard::lint_test
