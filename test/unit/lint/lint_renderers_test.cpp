// Renderers (helm, kustomize) run in a process group of their own, stopped
// as a whole after --render-timeout, and kustomize never reaches the
// network unless --allow-remote (issue 23). Fake renderers on PATH stand in
// for the real ones.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "test/unit/lint/lint_test_support.h"

namespace gpuguard::lint_test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A renderer that starts a grandchild sleeping forever (holding the output
// open), writes its pid to `pidFile`, and hangs itself.
std::string hangingRenderer(const fs::path& pidFile) {
  return "sleep 100000 &\necho $! > " + pidFile.string() + "\nsleep 100000\n";
}

// Whether `pid` still runs (a zombie waiting for its reaper does not).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const std::size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// Waits up to 20 s for `pid` to end: the kill is immediate, reaping by init may lag.
bool endsSoon(pid_t pid) {
  for (int i = 0; i < 200 && running(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return !running(pid);
}

pid_t pidIn(const fs::path& file) {
  std::ifstream in(file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

TEST(LintRenderers, AHelmThatHangsIsStoppedWithEverythingItStarted) {
  TempDir dir;
  writeScript(dir, "helm", hangingRenderer(dir.path() / "grandchild.pid"));
  dir.write("chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n");
  dir.write("chart/templates/pod.yaml", kGoodPod);
  const RunResult r = runLintWithFakes({"--render-timeout", "1s", "chart"}, dir);
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("did not finish within 1 s (--render-timeout); it and every process it started were "
                               "stopped"));
  const pid_t grandchild = pidIn(dir.path() / "grandchild.pid");
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(endsSoon(grandchild)) << "the renderer's grandchild " << grandchild << " still runs";
  if (running(grandchild)) ::kill(grandchild, SIGKILL);
}

TEST(LintRenderers, AKustomizeThatHangsIsStoppedWithEverythingItStarted) {
  TempDir dir;
  writeScript(dir, "kustomize", hangingRenderer(dir.path() / "grandchild.pid"));
  dir.write("app/kustomization.yaml", "resources:\n- pod.yaml\n");
  dir.write("app/pod.yaml", kGoodPod);
  const RunResult r = runLintWithFakes({"--render", "kustomize", "--render-timeout", "1500ms", "app"}, dir);
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("did not finish within 1.5 s"));
  const pid_t grandchild = pidIn(dir.path() / "grandchild.pid");
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(endsSoon(grandchild));
  if (running(grandchild)) ::kill(grandchild, SIGKILL);
}

TEST(LintRenderers, RenderTimeoutTakesADuration) {
  for (const char* bad : {"0s", "fast", "-1", "10x", "2d"}) {
    const RunResult r = runLint({"--render-timeout", bad, "-"}, std::string(kGoodPod));
    EXPECT_EQ(r.exitCode, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr("--render-timeout takes a duration")) << bad;
  }
  EXPECT_EQ(runLint({"--render-timeout", "5m", "-"}, std::string(kGoodPod)).exitCode, 0);
}

// A kustomize that records that it ran and prints the pod.
std::string recordingKustomize(const fs::path& marker) {
  return "touch " + marker.string() + "\ncat <<'EOF'\n" + std::string(kGoodPod) + "EOF\n";
}

TEST(LintRenderers, ARemoteBaseIsRefusedBeforeKustomizeRuns) {
  for (const char* remote : {"https://github.com/org/repo//deploy?ref=v1", "github.com/org/repo/deploy",
                             "git::https://example.com/repo.git", "ssh://git@example.com/repo.git",
                             "git@github.com:org/repo.git"}) {
    TempDir dir;
    writeScript(dir, "kustomize", recordingKustomize(dir.path() / "ran"));
    dir.write("app/kustomization.yaml", std::string("resources:\n- ") + remote + "\n- pod.yaml\n");
    dir.write("app/pod.yaml", kGoodPod);
    const RunResult r = runLintWithFakes({"--render", "kustomize", "app"}, dir);
    EXPECT_EQ(r.exitCode, 2) << remote << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr(std::string("not rendered: app/kustomization.yaml names the remote base ") + remote +
                                 ", which kustomize would fetch from the network; vendor it into the tree, or pass "
                                 "--allow-remote"));
    EXPECT_FALSE(fs::exists(dir.path() / "ran")) << remote;
  }
}

TEST(LintRenderers, ARemoteBaseOfAnIncludedKustomizationIsNamedWithItsFile) {
  TempDir dir;
  writeScript(dir, "kustomize", recordingKustomize(dir.path() / "ran"));
  dir.write("overlay/kustomization.yaml", "resources:\n- ../base\n");
  dir.write("base/kustomization.yaml", "components:\n- https://example.com/c.git\n");
  const RunResult r = runLintWithFakes({"--render", "kustomize", "overlay"}, dir);
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("not rendered: base/kustomization.yaml names the remote base https://example.com/c.git"));
  EXPECT_FALSE(fs::exists(dir.path() / "ran"));
}

TEST(LintRenderers, KustomizationsInACycleAreRenderedAndTheirErrorFailsTheRun) {
  // a lists b and b lists a: each is referenced, so neither was a root, and
  // the directory linted to "no Kubernetes objects found", exit 0, while
  // b's pod asks for half a GPU. kustomize refuses the cycle: an input error.
  TempDir dir;
  writeScript(dir, "kustomize", "touch " + (dir.path() / "ran").string() +
                                    "\necho 'Error: cycle detected: a -> b -> a' >&2\nexit 1\n");
  dir.write("tree/a/kustomization.yaml", "resources:\n- ../b\n");
  dir.write("tree/b/kustomization.yaml", "resources:\n- ../a\n- pod.yaml\n");
  dir.write("tree/b/pod.yaml", kGoodPod);
  const RunResult r = runLintWithFakes({"--render", "kustomize", "tree"}, dir);
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("cycle detected"));
  EXPECT_TRUE(fs::exists(dir.path() / "ran"));
}

TEST(LintRenderers, AllowRemoteLetsKustomizeRender) {
  TempDir dir;
  writeScript(dir, "kustomize", recordingKustomize(dir.path() / "ran"));
  dir.write("app/kustomization.yaml", "resources:\n- https://example.com/base.yaml\n");
  const RunResult r = runLintWithFakes({"--render", "kustomize", "--allow-remote", "app"}, dir);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / "ran"));
}

}  // namespace
}  // namespace gpuguard::lint_test
