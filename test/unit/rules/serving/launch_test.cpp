// rules/serving/launch.h, torchrun: which words start it, which of them are
// its own options (they end at the training script), where
// --nproc-per-node comes from and how its value reads (Python's int()).
// Facts: torch/distributed/run.py get_args_parser and
// determine_local_world_size; kubernetes-gpu-semantics.md §15.8.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include <nlohmann/json.hpp>

#include "rules/serving/launch.h"

namespace gpuguard {
namespace {

using nlohmann::json;
using ::testing::Optional;

// The launches of a container whose fields are `container` (command, args, env).
std::vector<ServingLaunch> launchesOf(const json& container) {
  ContainerRef ref;
  ref.container = &container;
  ref.path = FieldPath{}.field("spec").field("containers").index(0);
  return findServingLaunches(ref);
}

// The --nproc-per-node torchrun reads in a container running `command`.
ParallelFlag nprocOf(const json& command, const json& env = json::array()) {
  const json container = {{"name", "t"}, {"image", "pytorch"}, {"command", command}, {"env", env}};
  const auto launches = launchesOf(container);
  if (launches.size() != 1 || launches[0].engine != ServingEngine::Torchrun) return {};
  return launches[0].nprocPerNode;
}

TEST(TorchrunLaunch, TorchrunAndTheDistributedRunAndLaunchModulesStartIt) {
  EXPECT_THAT(nprocOf({"torchrun", "--nproc-per-node=8", "train.py"}).value, Optional(8));
  EXPECT_THAT(nprocOf({"/usr/local/bin/torchrun", "--nproc-per-node", "8", "train.py"}).value, Optional(8));
  EXPECT_THAT(nprocOf({"python", "-m", "torch.distributed.run", "--nproc_per_node", "8", "train.py"}).value,
              Optional(8));
  EXPECT_THAT(nprocOf({"python3", "-m", "torch.distributed.launch", "--nproc_per_node=8", "--use_env", "t.py"}).value,
              Optional(8));
  const std::string script = "pip install -r req.txt && torchrun --standalone --nproc_per_node=8 train.py";
  EXPECT_THAT(nprocOf({"bash", "-c", script}).value, Optional(8));
}

TEST(TorchrunLaunch, TheFlagIsWhereItIsWrittenAsWritten) {
  const ParallelFlag f = nprocOf({"torchrun", "--standalone", "--nproc_per_node", "8", "train.py"});
  EXPECT_TRUE(f.present);
  EXPECT_EQ(f.name, "--nproc-per-node");
  EXPECT_EQ(f.text, "--nproc_per_node 8");
  EXPECT_EQ(f.path.apiPath(), "spec.containers[0].command[2]");
}

TEST(TorchrunLaunch, ItsOptionsEndAtTheTrainingScript) {
  // The words after the script are the script's own, whatever they look like.
  EXPECT_THAT(nprocOf({"torchrun", "--nproc-per-node", "2", "train.py", "--nproc-per-node", "8"}).value, Optional(2));
  EXPECT_FALSE(nprocOf({"torchrun", "train.py", "--nproc-per-node=8"}).present);
  // Boolean options take no value, so the script after them is still the script.
  EXPECT_FALSE(nprocOf({"torchrun", "--standalone", "train.py", "--nproc-per-node=8"}).present);
  EXPECT_FALSE(nprocOf({"torchrun", "-m", "pkg.train", "--nproc-per-node=8"}).present);
  EXPECT_FALSE(nprocOf({"torchrun", "--no-python", "./train.sh", "--nproc-per-node=8"}).present);
}

TEST(TorchrunLaunch, TheLastOccurrenceWins) {
  EXPECT_THAT(nprocOf({"torchrun", "--nproc-per-node=8", "--nproc_per_node=4", "train.py"}).value, Optional(4));
}

TEST(TorchrunLaunch, PetNprocPerNodeIsTheDefaultTheFlagOverrides) {
  const json env = json::array({{{"name", "PET_NPROC_PER_NODE"}, {"value", "8"}}});
  const ParallelFlag fromEnv = nprocOf({"torchrun", "train.py"}, env);
  EXPECT_EQ(fromEnv.name, "PET_NPROC_PER_NODE");
  EXPECT_THAT(fromEnv.value, Optional(8));
  EXPECT_EQ(fromEnv.path.apiPath(), "spec.containers[0].env[0].value");
  EXPECT_THAT(nprocOf({"torchrun", "--nproc-per-node=2", "train.py"}, env).value, Optional(2));
  // A value the input does not hold is unknown.
  const json fromSecret = json::array({{{"name", "PET_NPROC_PER_NODE"}, {"valueFrom", {{"secretKeyRef", {}}}}}});
  EXPECT_EQ(nprocOf({"torchrun", "train.py"}, fromSecret).value, std::nullopt);
}

TEST(TorchrunLaunch, VarReferencesAreExpandedFromLiteralEnvFirst) {
  const json env = json::array({{{"name", "NPROC"}, {"value", "8"}}});
  EXPECT_THAT(nprocOf({"torchrun", "--nproc-per-node=$(NPROC)", "train.py"}, env).value, Optional(8));
  EXPECT_EQ(nprocOf({"torchrun", "--nproc-per-node=$(NPROC)", "train.py"}).value, std::nullopt);
  EXPECT_EQ(nprocOf({"sh", "-c", "torchrun --nproc-per-node=$NPROC train.py"}, env).value, std::nullopt);
}

TEST(TorchrunLaunch, VarReferencesInTheArgsAreExpandedAndDoubledDollarsAreLiteral) {
  const json env = json::array({{{"name", "NPROC"}, {"value", "4"}}});
  const auto nprocWithArgs = [&](const json& args) {
    const json container = {{"name", "t"}, {"command", {"torchrun"}}, {"args", args}, {"env", env}};
    const auto launches = launchesOf(container);
    return launches.size() == 1 ? launches[0].nprocPerNode.value : std::nullopt;
  };
  EXPECT_THAT(nprocWithArgs({"--nproc-per-node=$(NPROC)", "train.py"}), Optional(4));
  EXPECT_EQ(nprocWithArgs({"--nproc-per-node=$$(NPROC)", "train.py"}), std::nullopt);  // the text $(NPROC)
}

TEST(TorchrunLaunch, HiddenArgumentsMakeTheLaunchOpaque) {
  const json container = {{"name", "t"}, {"command", {"sh", "-c", "torchrun --nproc-per-node=8 \"$@\""}}};
  const auto launches = launchesOf(container);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_TRUE(launches[0].opaqueArgs);
}

TEST(TorchrunLaunch, ProcessCountsReadAsPythonsIntDoes) {
  EXPECT_THAT(torchrunProcesses("8"), Optional(8));
  EXPECT_THAT(torchrunProcesses(" +8 "), Optional(8));
  EXPECT_THAT(torchrunProcesses("08"), Optional(8));
  EXPECT_THAT(torchrunProcesses("1_6"), Optional(16));
  EXPECT_THAT(torchrunProcesses("9223372036854775807"), Optional(std::numeric_limits<long long>::max()));
  EXPECT_THAT(torchrunProcesses("99999999999999999999999999"), Optional(std::numeric_limits<long long>::max()));
  // Counted on the node (auto, gpu, cpu, xpu), or no count at all.
  for (const char* other : {"auto", "gpu", "cpu", "xpu", "0", "-1", "", " ", "+", "8.0", "eight", "1__6", "_8", "8_",
                            "1e3", "0x8"}) {
    EXPECT_EQ(torchrunProcesses(other), std::nullopt) << other;
  }
}

}  // namespace
}  // namespace gpuguard
