// rules/serving/shell_words.h: what a `sh -c` script runs. A here-document's
// body is data the shell feeds to a command (POSIX "Here-Document"), never run
// by this shell; launches in different branches of an if/elif/else, a case or
// a `||` list run at most one, decided at run time, so the container's
// launches are left unjudged rather than judged on a branch that may not run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rules/serving/launch.h"
#include "rules/serving/shell_words.h"
#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::onlyRules;

json bashRunning(const std::string& script) {
  return {{"name", "vllm"}, {"image", "vllm/vllm-openai:v0.10.1"}, {"command", {"/bin/bash", "-c"}}, {"args", {script}}};
}

ContainerRef refTo(const json& container) {
  ContainerRef ref;
  ref.container = &container;
  ref.path = FieldPath{}.field("spec").field("containers").index(0);
  return ref;
}

// The first word of each command the script runs.
std::vector<std::string> commandNames(const std::string& script) {
  const json container = bashRunning(script);
  std::vector<std::string> names;
  const ContainerCommands words = containerCommands(refTo(container));
  for (const ShellCommand& cmd : words.commands()) names.push_back(cmd.front().text);
  return names;
}

// The tensor-parallel sizes of the launches read from the script.
std::vector<std::string> tensorParallelSizes(const std::string& script) {
  const json container = bashRunning(script);
  std::vector<std::string> sizes;
  for (const ServingLaunch& l : findServingLaunches(refTo(container))) sizes.push_back(l.tensor.text);
  return sizes;
}

// --- here-documents -----------------------------------------------------------

TEST(ShellScript, AHereDocumentsBodyIsNotRun) {
  EXPECT_THAT(commandNames("cat > /tmp/big.sh <<'X'\nvllm serve m --tensor-parallel-size 8\nX\n"
                           "exec vllm serve m --tensor-parallel-size 2\n"),
              ElementsAre("cat", "exec"));
  EXPECT_THAT(tensorParallelSizes("cat > /tmp/big.sh <<'X'\nvllm serve m --tensor-parallel-size 8\nX\n"
                                  "exec vllm serve m --tensor-parallel-size 2\n"),
              ElementsAre("--tensor-parallel-size 2"));
}

TEST(ShellScript, EveryDelimiterSpellingEndsItsBody) {
  // Unquoted, double-quoted, escaped; <<- strips leading tabs of the body and the delimiter line.
  EXPECT_THAT(commandNames("cat <<EOF >a\nvllm serve x\nEOF\necho done"), ElementsAre("cat", "echo"));
  EXPECT_THAT(commandNames("cat <<\"EOF\"\nvllm serve x\nEOF\necho done"), ElementsAre("cat", "echo"));
  EXPECT_THAT(commandNames("cat <<\\EOF\nvllm serve x\nEOF\necho done"), ElementsAre("cat", "echo"));
  EXPECT_THAT(commandNames("cat <<-EOF\n\tvllm serve x\n\tEOF\necho done"), ElementsAre("cat", "echo"));
  // Two here-documents on one line: their bodies follow one after the other.
  EXPECT_THAT(commandNames("paste <<A <<B\na\nA\nb\nB\necho done"), ElementsAre("paste", "echo"));
}

TEST(ShellScript, AnUnterminatedHereDocumentRunsToTheEndOfTheScript) {
  EXPECT_THAT(commandNames("cat <<EOF\nvllm serve x --tensor-parallel-size 8\n"), ElementsAre("cat"));
}

TEST(ShellScript, AHereStringAndShiftsInsideExpansionsAreNotHereDocuments) {
  EXPECT_THAT(commandNames("cat <<< hello\nvllm serve m"), ElementsAre("cat", "vllm"));
  EXPECT_THAT(commandNames("N=$((1 << 3))\nvllm serve m"), ElementsAre("N=$((1 << 3))", "vllm"));
}

// --- alternative branches ---------------------------------------------------------

TEST(ShellScript, LaunchesInTheBranchesOfAnIfAreLeftUnjudged) {
  EXPECT_THAT(tensorParallelSizes("if [ \"$(nvidia-smi -L | wc -l)\" -ge 8 ]; then\n"
                                  "  exec vllm serve m --tensor-parallel-size 8\nelse\n"
                                  "  exec vllm serve m --tensor-parallel-size 2\nfi\n"),
              IsEmpty());
  EXPECT_THAT(tensorParallelSizes("if a; then vllm serve m -tp 8; elif b; then vllm serve m -tp 4; fi"), IsEmpty());
}

TEST(ShellScript, LaunchesInTheItemsOfACaseAreLeftUnjudged) {
  EXPECT_THAT(tensorParallelSizes("case \"$GPUS\" in\n  8) exec vllm serve m -tp 8;;\n  *) exec vllm serve m -tp 2;;\nesac"),
              IsEmpty());
}

TEST(ShellScript, LaunchesOnEitherSideOfOrAreLeftUnjudged) {
  EXPECT_THAT(tensorParallelSizes("vllm serve m -tp 8 || vllm serve m -tp 2"), IsEmpty());
  EXPECT_THAT(tensorParallelSizes("vllm serve m -tp 8 ||\n  vllm serve m -tp 2"), IsEmpty());
}

TEST(ShellScript, OneLaunchInOneBranchIsStillJudged) {
  // The leader/worker split of a LeaderWorkerSet: only the leader launches.
  EXPECT_THAT(tensorParallelSizes("if [ \"$LWS_WORKER_INDEX\" = 0 ]; then vllm serve m -tp 8; else ray start --block; fi"),
              ElementsAre("-tp 8"));
  EXPECT_THAT(tensorParallelSizes("vllm serve m -tp 8 || echo failed"), ElementsAre("-tp 8"));
}

TEST(ShellScript, LaunchesOneAfterAnotherOrInOneBranchAreAllJudged) {
  EXPECT_THAT(tensorParallelSizes("vllm serve a -tp 2 &\nvllm serve b -tp 2 &\nwait"), ElementsAre("-tp 2", "-tp 2"));
  // Separate constructs: the second if is not an alternative to the first.
  EXPECT_THAT(tensorParallelSizes("if a; then vllm serve a -tp 2 & fi\nif b; then vllm serve b -tp 2; fi"),
              ElementsAre("-tp 2", "-tp 2"));
  // An or-list ends with its line: the next line's launch always runs after it.
  EXPECT_THAT(tensorParallelSizes("pip install x || true\nvllm serve a -tp 2 &\nvllm serve b -tp 2"),
              ElementsAre("-tp 2", "-tp 2"));
}

// --- how the shell is started ------------------------------------------------

// The -c script argv runs, read with the shell's option syntax (bash(1)
// OPTIONS, POSIX sh); "" when it runs none.
std::string scriptOf(const json& argv) {
  const json container = {{"name", "c"}, {"image", "vllm/vllm-openai:v0.10.1"}, {"command", argv}};
  const ContainerCommands words = containerCommands(refTo(container));
  if (!words.runsShell || words.script.empty()) return "";
  return words.script.front().front().text;
}

TEST(ShellStart, OptionsBeforeTheScriptAreTheShellsNotTheScript) {
  // Red team 33 C2: each of these runs `vllm ...` as the -c script.
  EXPECT_EQ(scriptOf({"/bin/bash", "-lc", "--", "vllm serve m"}), "vllm");  // KubeRay's and AIBrix's samples
  EXPECT_EQ(scriptOf({"bash", "-o", "pipefail", "-c", "vllm serve m"}), "vllm");
  EXPECT_EQ(scriptOf({"bash", "-euxo", "pipefail", "-c", "vllm serve m"}), "vllm");
  EXPECT_EQ(scriptOf({"bash", "--login", "-c", "vllm serve m"}), "vllm");
  EXPECT_EQ(scriptOf({"bash", "--rcfile", "/etc/rc", "-c", "vllm serve m"}), "vllm");
  EXPECT_EQ(scriptOf({"/bin/sh", "-c", "--", "vllm serve m"}), "vllm");
  EXPECT_EQ(scriptOf({"sh", "-c", "-e", "vllm serve m"}), "vllm");  // POSIX: options may follow -c
  EXPECT_EQ(scriptOf({"bash", "+o", "history", "-O", "extglob", "-c", "vllm serve m"}), "vllm");
}

TEST(ShellStart, WithoutMinusCTheShellRunsAFileNotAScript) {
  EXPECT_EQ(scriptOf({"bash", "-l", "start.sh", "-c", "vllm serve m"}), "");  // -c is start.sh's argument
  EXPECT_EQ(scriptOf({"bash", "-o", "c", "vllm serve m"}), "");              // `c` is -o's value
  EXPECT_EQ(scriptOf({"bash", "+c", "vllm serve m"}), "");
  EXPECT_EQ(scriptOf({"bash", "-c", "--"}), "");                             // no script after the options
}

TEST(ShellStart, InitWrappersAndEnvExecTheShell) {
  EXPECT_EQ(scriptOf({"tini", "--", "bash", "-c", "vllm serve m"}), "vllm");
  EXPECT_EQ(scriptOf({"/usr/bin/tini", "-s", "-p", "SIGTERM", "--", "bash", "-c", "vllm serve m"}), "vllm");
  EXPECT_EQ(scriptOf({"dumb-init", "-c", "--", "sh", "-c", "vllm serve m"}), "vllm");  // dumb-init's -c: single child
  EXPECT_EQ(scriptOf({"dumb-init", "--rewrite", "15:2", "sh", "-c", "vllm serve m"}), "vllm");
  EXPECT_EQ(scriptOf({"dumb-init", "-r", "15:2", "--", "sh", "-c", "vllm serve m"}), "vllm");
  EXPECT_EQ(scriptOf({"/usr/bin/env", "-u", "HOME", "A=1", "bash", "-c", "vllm serve m"}), "vllm");
  EXPECT_EQ(scriptOf({"tini", "--", "env", "A=1", "bash", "-c", "vllm serve m"}), "vllm");
  EXPECT_EQ(scriptOf({"env", "-S", "bash -c", "vllm serve m"}), "");  // a string env splits: not read
}

TEST(ShellStart, TensorParallelOverTheGpusIsJudgedWhateverTheShellsOptions) {
  // Red team 33 C2 (R/m/c2-bash-dashdash.yaml): TP 16 on 8 GPUs passed.
  const std::string pod = R"YAML(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: vllm/vllm-openai:v0.8.0
    command: ["/bin/bash", "-lc", "--"]
    args: ["ulimit -n 65536; vllm serve m --tensor-parallel-size 16"]
    resources: {limits: {nvidia.com/gpu: 8}}
)YAML";
  const auto f = judgeYaml(pod, onlyRules({"tensor-parallel-gpu-count"}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.containers[0].args[0]");
}

// --- the red team's pod (session 31, A5) --------------------------------------------

TEST(ShellScript, NeitherAHereDocumentNorTheBranchNotTakenIsDenied) {
  const std::string pod = R"YAML(apiVersion: v1
kind: Pod
metadata: {name: s1}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  nodeSelector: {nvidia.com/cuda.driver-version.major: "570"}
  containers:
  - name: heredoc
    image: vllm/vllm-openai:v0.10.1
    command: ["/bin/bash", "-c"]
    args:
    - |
      cat > /tmp/big.sh <<'X'
      vllm serve m --tensor-parallel-size 8
      X
      exec vllm serve m --tensor-parallel-size 2
    resources: {limits: {nvidia.com/gpu: 2}}
  - name: conditional
    image: vllm/vllm-openai:v0.10.1
    command: ["/bin/bash", "-c"]
    args:
    - |
      if [ "$(nvidia-smi -L | wc -l)" -ge 8 ]; then
        exec vllm serve m --tensor-parallel-size 8
      else
        exec vllm serve m --tensor-parallel-size 2
      fi
    resources: {limits: {nvidia.com/gpu: 2}}
)YAML";
  EXPECT_THAT(judgeYaml(pod, onlyRules({"tensor-parallel-gpu-count"})), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
