// Which units are rendered, and how: a chart is rendered for the Kubernetes
// version gpuguard judges for, also with --fix and when only its values file
// changed; a library chart renders nothing and is no error; a kustomization
// with helmCharts is rendered with --enable-helm, and kustomize's reason for
// a failure is kept; --namespace sets the namespace a chart is rendered
// into, and helm's reason is kept from its "Error:" sentence on; a unit named
// with a trailing slash counts its objects. Fake renderers on PATH record how
// they were called.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "test/unit/lint/lint_test_support.h"

namespace gpuguard::lint_test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// A pod asking for a GPU without the toleration: gpu-missing-toleration.
constexpr const char* kPodWithoutToleration = R"(apiVersion: v1
kind: Pod
metadata:
  name: untolerated
spec:
  nodeSelector:
    nvidia.com/cuda.driver-version.major: "550"
  containers:
  - name: cuda
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      limits:
        nvidia.com/gpu: 1
)";

// A renderer that appends its arguments to dir/args and prints `manifest`.
std::string recordingRenderer(const TempDir& dir, const std::string& manifest) {
  return "echo \"$@\" >> " + (dir.path() / "args").string() + "\ncat <<'EOF'\n" + manifest + "EOF\n";
}

void writeChart(const TempDir& dir, const std::string& chart, const std::string& chartYamlExtra = "") {
  dir.write(chart + "/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n" + chartYamlExtra);
  dir.write(chart + "/values.yaml", "gpus: 1\n");
  dir.write(chart + "/templates/pod.yaml", "# rendered by the fake helm\n");
}

TEST(LintRenderUnits, AChartIsRenderedForKubernetes137UnlessKubeVersionSaysOtherwise) {
  TempDir dir;
  writeScript(dir, "helm", recordingRenderer(dir, kGoodPod));
  writeChart(dir, "chart");
  EXPECT_EQ(runLintWithFakes({"chart"}, dir).exitCode, 0);
  EXPECT_EQ(readFile(dir.path() / "args"), "template chart --kube-version 1.37.0\n");
  fs::remove(dir.path() / "args");
  EXPECT_EQ(runLintWithFakes({"--kube-version", "1.36.2", "chart"}, dir).exitCode, 0);
  EXPECT_EQ(readFile(dir.path() / "args"), "template chart --kube-version 1.36.2\n");
  EXPECT_THAT(runLint({"--kube-version", "", "-"}, std::string(kGoodPod)).err,
              HasSubstr("--kube-version needs a version such as 1.37.0"));
}

TEST(LintRenderUnits, ALibraryChartRendersNothingAndIsANoteNotAnError) {
  TempDir dir;
  writeScript(dir, "helm", "echo 'Error: library charts are not installable' >&2\nexit 1\n");
  writeChart(dir, "lib", "type: library\n");
  const RunResult r = runLintWithFakes({"lib"}, dir);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("note: Helm chart lib is a library chart (type: library): it renders no objects of its "
                               "own, and is judged through the charts that use it"));
}

TEST(LintRenderUnits, WithFixAChartIsStillRenderedAndItsFindingsReported) {
  // --fix rewrites YAML files; a chart's templates are not YAML, so its
  // findings remain: reported, with the exit status they call for.
  TempDir dir;
  writeScript(dir, "helm", recordingRenderer(dir, kPodWithoutToleration));
  writeChart(dir, "chart");
  const RunResult fixed = runLintWithFakes({"--fix", "chart"}, dir);
  EXPECT_EQ(fixed.exitCode, 1) << fixed.out << fixed.err;
  EXPECT_THAT(fixed.out, HasSubstr("[gpu-missing-toleration]"));
  // --dry-run prints the diff (none: nothing to rewrite) and keeps the status.
  const RunResult dryRun = runLintWithFakes({"--fix", "--dry-run", "chart"}, dir);
  EXPECT_EQ(dryRun.exitCode, 1) << dryRun.out << dryRun.err;
  for (const RunResult& r : {fixed, dryRun}) {
    EXPECT_THAT(r.err, HasSubstr("note: Helm chart chart judged as rendered, not fixed (--fix rewrites YAML files; fix "
                                 "the chart's templates or values)"));
    EXPECT_THAT(r.err, Not(HasSubstr("helm is not on PATH")));
  }
  EXPECT_EQ(readFile(dir.path() / "chart/templates/pod.yaml"), "# rendered by the fake helm\n");
}

TEST(LintRenderUnits, AValuesFileNamedAloneRendersItsChart) {
  // pre-commit passes only the changed file; a values change changes what the chart renders.
  TempDir dir;
  writeScript(dir, "helm", recordingRenderer(dir, kPodWithoutToleration));
  writeChart(dir, "chart");
  const RunResult r = runLintWithFakes({"chart/values.yaml"}, dir);
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("[gpu-missing-toleration]"));
  EXPECT_EQ(readFile(dir.path() / "args"), "template chart --kube-version 1.37.0\n");
}

TEST(LintRenderUnits, AKustomizationWithHelmChartsIsRenderedWithEnableHelm) {
  TempDir dir;
  writeScript(dir, "kustomize", recordingRenderer(dir, kGoodPod));
  dir.write("app/kustomization.yaml", "helmCharts:\n- name: parent\n  repo: https://charts.example.com\n");
  dir.write("app/charts/parent/Chart.yaml", "apiVersion: v2\nname: parent\nversion: 0.1.0\n");
  const RunResult r = runLintWithFakes({"--render", "kustomize", "app"}, dir);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_THAT(readFile(dir.path() / "args"), HasSubstr("build --enable-helm "));
}

TEST(LintRenderUnits, AHelmChartKustomizeWouldPullIsARemoteReference) {
  TempDir dir;
  writeScript(dir, "kustomize", recordingRenderer(dir, kGoodPod));
  dir.write("app/kustomization.yaml",
            "helmGlobals:\n  chartHome: vendored\nhelmCharts:\n- name: parent\n  repo: https://charts.example.com\n");
  const RunResult r = runLintWithFakes({"--render", "kustomize", "app"}, dir);
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("not rendered: app/kustomization.yaml names the remote base https://charts.example.com"));
  EXPECT_FALSE(fs::exists(dir.path() / "args"));
}

TEST(LintRenderUnits, KustomizesReasonOnItsLastLineIsKept) {
  TempDir dir;
  writeScript(dir, "kustomize",
              "printf 'error: trouble configuring builtin HelmChartInflationGenerator with config: `\\n"
              "chartHome: charts\\nname: parent\\nrepo: https://x\\nversion: 1\\n`: must specify --enable-helm\\n' >&2\n"
              "exit 1\n");
  dir.write("app/kustomization.yaml", "resources:\n- pod.yaml\n");
  dir.write("app/pod.yaml", kGoodPod);
  const RunResult r = runLintWithFakes({"--render", "kustomize", "app"}, dir);
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("error: trouble configuring builtin HelmChartInflationGenerator with config: ` "
                               "chartHome: charts name: parent ... `: must specify --enable-helm"));
}

// Red team 33 C8: NVIDIA's device-plugin and DRA-driver charts refuse the
// namespace "default" (templates/validation.yml); helm users give -n.
TEST(LintRenderUnits, NamespaceSetsTheNamespaceAChartIsRenderedInto) {
  TempDir dir;
  writeScript(dir, "helm", recordingRenderer(dir, kGoodPod));
  writeChart(dir, "chart");
  EXPECT_EQ(runLintWithFakes({"--namespace", "nvidia-device-plugin", "chart"}, dir).exitCode, 0);
  EXPECT_EQ(readFile(dir.path() / "args"), "template chart --kube-version 1.37.0 --namespace nvidia-device-plugin\n");
  fs::remove(dir.path() / "args");
  EXPECT_EQ(runLintWithFakes({"-n", "gpu", "chart"}, dir).exitCode, 0);
  EXPECT_EQ(readFile(dir.path() / "args"), "template chart --kube-version 1.37.0 --namespace gpu\n");
}

TEST(LintRenderUnits, AChartRefusingTheDefaultNamespaceSaysHowToChooseAnother) {
  TempDir dir;
  writeScript(dir, "helm",
              "echo \"Error: execution error at (nvidia-device-plugin/templates/validation.yml:19:4): Running in the "
              "'default' namespace is not recommended. Set 'allowDefaultNamespace=true' to bypass this error.\" >&2\n"
              "echo 'Use --debug flag to render out invalid YAML' >&2\nexit 1\n");
  writeChart(dir, "chart");
  const RunResult r = runLintWithFakes({"chart"}, dir);
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Set 'allowDefaultNamespace=true' to bypass this error. (rendered into helm's default "
                               "namespace \"default\"; --namespace NS renders into another)"));
  EXPECT_THAT(r.out, Not(HasSubstr("--debug")));
}

// Red team 33 C9: the DRA driver chart's reason is a page long; the sentence
// that says what to set is in its middle, the tail is background.
TEST(LintRenderUnits, HelmsReasonIsKeptFromItsErrorLineNotCutToItsTail) {
  TempDir dir;
  std::string background;
  for (int i = 0; i < 12; ++i) background += "Once KEP 5004 has reached GA, this DRA driver will honour requests. ";
  writeScript(dir, "helm",
              "echo 'walk.go:74: found symbolic link in path' >&2\n"
              "printf 'Error: execution error at (dra-driver-nvidia-gpu/templates/validation.yaml:42:4): \\n\\n"
              "The default value of resources.gpus.enabled is true.\\n\\nyou must also:\\n\\n"
              "    --set gpuResourcesEnabledOverride=true\\n\\n" + background + "\\n' >&2\nexit 1\n");
  writeChart(dir, "chart");
  const RunResult r = runLintWithFakes({"chart"}, dir);
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("cannot render the chart (helm template chart): Error: execution error at "
                               "(dra-driver-nvidia-gpu/templates/validation.yaml:42:4): The default value of "
                               "resources.gpus.enabled is true. you must also: --set gpuResourcesEnabledOverride=true "
                               "Once KEP 5004"));
  EXPECT_THAT(r.out, Not(HasSubstr("walk.go")));
}

// Red team 33 C10: "dir/" (shell completion) named a chart whose objects were
// linted, yet the run said it held none.
TEST(LintRenderUnits, AUnitNamedWithATrailingSlashCountsItsObjects) {
  TempDir dir;
  writeScript(dir, "helm", recordingRenderer(dir, kGoodPod));
  writeChart(dir, "chart");
  const RunResult r = runLintWithFakes({"--fail-on-empty", "chart/"}, dir);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("no Kubernetes objects found")));
}

}  // namespace
}  // namespace gpuguard::lint_test
