// tensor-parallel-gpu-count: tensor x pipeline (x data) parallelism of vLLM,
// SGLang and TGI must equal the GPUs the container (or the pod group) gets
// (kubernetes-gpu-semantics.md §12).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kTpOnly = onlyRules({"tensor-parallel-gpu-count"});

// A Deployment whose one container has this image, command/args block
// (indented like container fields) and GPU limit.
std::string server(const std::string& image, const std::string& launch, const std::string& gpus) {
  return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  template:\n    spec:\n"
         "      containers:\n      - name: server\n        image: " +
         image + "\n" + launch + (gpus.empty() ? "" : "        resources:\n          limits:\n            nvidia.com/gpu: " + gpus + "\n");
}

std::string vllmArgs(const std::string& args, const std::string& gpus) {
  return server("vllm/vllm-openai:v0.8.5", "        args: [" + args + "]\n", gpus);
}

std::vector<Finding> judge(const std::string& yaml) { return judgeYaml(yaml, kTpOnly); }

// --- single pod ---------------------------------------------------------------

TEST(TensorParallelGpuCount, MoreWorkersThanGpusCrashes) {
  const auto f = judge(vllmArgs("\"--model=meta-llama/Llama-3.1-70B-Instruct\", \"--tensor-parallel-size=4\"", "2"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "tensor-parallel-gpu-count");
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.template.spec.containers[0].args[1]");
  EXPECT_EQ(f[0].value, "\"--tensor-parallel-size=4\"");
  EXPECT_THAT(f[0].message(), HasSubstr("vLLM runs tensor-parallel 4 = 4 GPU workers per replica, but the container "
                                      "gets 2 GPUs"));
  EXPECT_THAT(f[0].message(), HasSubstr("World size (4) is larger than the number of available GPUs (2)"));
  EXPECT_THAT(f[0].message(), HasSubstr("request 4 GPUs or lower the parallelism to 2"));
}

TEST(TensorParallelGpuCount, MatchingGpusAreFine) {
  EXPECT_THAT(judge(vllmArgs("\"--tensor-parallel-size=4\"", "4")), IsEmpty());
  EXPECT_THAT(judge(vllmArgs("\"--tensor-parallel-size\", \"2\", \"--pipeline-parallel-size\", \"2\"", "4")),
              IsEmpty());
}

TEST(TensorParallelGpuCount, MoreGpusThanWorkersLeavesGpusIdleWhichIsAWarning) {
  // The server starts and serves; idle GPUs cost money but break nothing.
  const auto f = judge(vllmArgs("\"--tensor-parallel-size\", \"2\"", "4"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_EQ(f[0].value, "\"--tensor-parallel-size 2\"");
  EXPECT_THAT(f[0].message(), HasSubstr("2 GPUs would sit idle"));
  EXPECT_THAT(f[0].message(), HasSubstr("request 2 GPUs or raise the parallelism to 4"));
}

TEST(TensorParallelGpuCount, PipelineParallelismMultiplies) {
  const auto f = judge(vllmArgs("\"-tp\", \"4\", \"-pp\", \"2\"", "4"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("tensor-parallel 4 x pipeline-parallel 2 = 8 GPU workers"));
}

TEST(TensorParallelGpuCount, DataParallelismInThePodMultiplies) {
  EXPECT_THAT(judge(vllmArgs("\"--tensor-parallel-size=2\", \"--data-parallel-size=2\"", "4")), IsEmpty());
  EXPECT_THAT(rulesHit(judge(vllmArgs("\"--tensor-parallel-size=2\", \"--data-parallel-size=2\"", "2"))),
              ElementsAre("tensor-parallel-gpu-count"));
}

TEST(TensorParallelGpuCount, DataParallelismAloneCounts) {
  const auto f = judge(vllmArgs("\"--data-parallel-size=4\"", "2"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("tensor-parallel 1 x data-parallel 4 = 4 GPU workers"));
}

TEST(TensorParallelGpuCount, VllmUnderscoreFlagsAreRead) {
  EXPECT_THAT(rulesHit(judge(vllmArgs("\"--tensor_parallel_size=4\"", "1"))), ElementsAre("tensor-parallel-gpu-count"));
}

TEST(TensorParallelGpuCount, TheLastOccurrenceWins) {
  EXPECT_THAT(judge(vllmArgs("\"--tensor-parallel-size=8\", \"--tensor-parallel-size=2\"", "2")), IsEmpty());
}

TEST(TensorParallelGpuCount, VllmServeAndTheApiServerModuleAreRecognised) {
  const std::string serve =
      server("example.com/llm:v1", "        command: [vllm, serve, meta-llama/Llama-3.1-8B, --tensor-parallel-size, \"2\"]\n", "1");
  EXPECT_THAT(rulesHit(judge(serve)), ElementsAre("tensor-parallel-gpu-count"));
  const std::string module = server(
      "example.com/llm:v1",
      "        command: [python3, -m, vllm.entrypoints.openai.api_server]\n        args: [--tensor-parallel-size=2]\n",
      "1");
  EXPECT_THAT(rulesHit(judge(module)), ElementsAre("tensor-parallel-gpu-count"));
}

TEST(TensorParallelGpuCount, ShellScriptsAreRead) {
  const std::string script = server(
      "vllm/vllm-openai:v0.8.5",
      "        command: [\"/bin/sh\", \"-c\"]\n"
      "        args:\n        - |\n          set -e\n          echo starting\n"
      "          exec python3 -m vllm.entrypoints.openai.api_server --model \"$MODEL\" \\\n"
      "            --tensor-parallel-size 8 --port 8000\n",
      "4");
  const auto f = judge(script);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.template.spec.containers[0].args[0]");
  EXPECT_EQ(f[0].value, "\"--tensor-parallel-size 8\"");
}

TEST(TensorParallelGpuCount, SglangFlagsAreRead) {
  const std::string tp = server("lmsysorg/sglang:latest",
                                "        command: [python3, -m, sglang.launch_server, --model-path, m, --tp, \"2\"]\n", "1");
  const auto f = judge(tp);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("SGLang runs tensor-parallel 2"));
  EXPECT_THAT(judge(server("lmsysorg/sglang:latest",
                           "        command: [python3, -m, sglang.launch_server, --tp-size=2, --pp-size=2]\n", "4")),
              IsEmpty());
  // Data parallelism multiplies, unless it lives inside the TP group.
  EXPECT_THAT(judge(server("lmsysorg/sglang:latest",
                           "        command: [python3, -m, sglang.launch_server, --tp, \"2\", --dp, \"2\"]\n", "4")),
              IsEmpty());
  EXPECT_THAT(judge(server("lmsysorg/sglang:latest",
                           "        command: [python3, -m, sglang.launch_server, --tp, \"4\", --dp, \"2\", "
                           "--enable-dp-attention]\n",
                           "4")),
              IsEmpty());
}

TEST(TensorParallelGpuCount, TgiNumShardIsRead) {
  const std::string args =
      server("ghcr.io/huggingface/text-generation-inference:2.4", "        args: [--model-id=m, --num-shard=2]\n", "1");
  const auto f = judge(args);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("TGI runs --num-shard 2 shards = 2 GPU workers"));
  const std::string env = server("ghcr.io/huggingface/text-generation-inference:2.4",
                                 "        env: [{name: NUM_SHARD, value: \"4\"}]\n", "2");
  const auto e = judge(env);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].field(), "spec.template.spec.containers[0].env[0].value");
  EXPECT_EQ(e[0].value, "\"4\"");
  EXPECT_THAT(e[0].message(), HasSubstr("Invalid value: \"4\" (NUM_SHARD): TGI runs NUM_SHARD=4 shards"));
}

// TGI's find_num_shards (launcher/src/main.rs).
const char* const kTgi = "ghcr.io/huggingface/text-generation-inference:3.3";

TEST(TensorParallelGpuCount, TgiShardedFalseRunsOneShard) {
  const auto f = judge(server(kTgi, "        args: [--model-id=m, --sharded, \"false\"]\n", "4"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.template.spec.containers[0].args[1]");
  EXPECT_THAT(f[0].message(), HasSubstr("TGI runs 1 shard (--sharded false) = 1 GPU workers per replica"));
  EXPECT_THAT(f[0].message(), HasSubstr("3 GPUs would sit idle"));
  EXPECT_THAT(judge(server(kTgi, "        env: [{name: SHARDED, value: \"false\"}]\n", "1")), IsEmpty());
  // --num-shard wins over --sharded false.
  EXPECT_THAT(judge(server(kTgi, "        args: [--sharded=false, --num-shard=2]\n", "2")), IsEmpty());
}

TEST(TensorParallelGpuCount, TgiShardedTrueNeedsTwoGpus) {
  const auto f = judge(server(kTgi, "        args: [--model-id=m, --sharded=true]\n", "1"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("(\"`sharded` is true but only found 1 CUDA devices\")"));
  EXPECT_THAT(rulesHit(judge(server(kTgi, "        args: [--sharded=true, --num-shard=1]\n", "1"))),
              ElementsAre("tensor-parallel-gpu-count"));
  EXPECT_THAT(judge(server(kTgi, "        args: [--sharded=true]\n", "4")), IsEmpty());  // every visible GPU
  EXPECT_THAT(judge(server(kTgi, "        env: [{name: SHARDED, value: $(S)}]\n", "1")), IsEmpty());
}

TEST(TensorParallelGpuCount, TgiWithoutNumShardUsesEveryGpu) {
  EXPECT_THAT(judge(server("ghcr.io/huggingface/text-generation-inference:2.4", "        args: [--model-id=m]\n", "4")),
              IsEmpty());
}

// --- what the rule cannot know: no finding ----------------------------------

TEST(TensorParallelGpuCount, WithoutParallelFlagsNothingIsClaimed) {
  EXPECT_THAT(judge(vllmArgs("\"--model=m\"", "4")), IsEmpty());
}

TEST(TensorParallelGpuCount, EnvReferencesAndTemplatesAreNotJudged) {
  EXPECT_THAT(judge(vllmArgs("\"--tensor-parallel-size=$(TP)\"", "1")), IsEmpty());
  EXPECT_THAT(judge(vllmArgs("\"--tensor-parallel-size\", \"{{ .Values.tp }}\"", "1")), IsEmpty());
}

TEST(TensorParallelGpuCount, HiddenArgumentsAreNotJudged) {
  EXPECT_THAT(judge(server("vllm/vllm-openai:v0.8.5",
                           "        command: [sh, -c, \"vllm serve m --tensor-parallel-size 2 $EXTRA_ARGS\"]\n", "1")),
              IsEmpty());
  EXPECT_THAT(judge(vllmArgs("\"--config\", \"/etc/vllm.yaml\", \"--tensor-parallel-size=2\"", "1")), IsEmpty());
}

TEST(TensorParallelGpuCount, OtherProgramsAreNotJudged) {
  // TensorRT-LLM's launcher script also says --tp; it is not one of ours.
  EXPECT_THAT(judge(server("example.com/trtllm:v1", "        command: [python3, server.py, --tp=2, --pp=8]\n", "8")),
              IsEmpty());
  // An image that is not a server, with a --tensor-parallel-size flag of its own.
  EXPECT_THAT(judge(server("example.com/bench:v1", "        args: [--tensor-parallel-size=2]\n", "1")), IsEmpty());
}

TEST(TensorParallelGpuCount, AContainerWithoutAGpuRequestIsNotJudged) {
  EXPECT_THAT(judge(vllmArgs("\"--tensor-parallel-size=8\"", "")), IsEmpty());
}

// --- current vLLM flags (vllm/engine/arg_utils.py) ------------------------------

TEST(TensorParallelGpuCount, PrefillContextParallelismMultipliesTheWorldSize) {
  EXPECT_THAT(judge(vllmArgs("\"-tp\", \"2\", \"-pcp\", \"2\"", "4")), IsEmpty());
  const auto f = judge(vllmArgs("\"--tensor-parallel-size=2\", \"--prefill-context-parallel-size=2\"", "2"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("tensor-parallel 2 x prefill-context-parallel 2 = 4 GPU workers"));
}

TEST(TensorParallelGpuCount, DecodeContextAndExpertParallelismReuseTheTensorParallelRanks) {
  EXPECT_THAT(judge(vllmArgs("\"-tp\", \"4\", \"-dcp\", \"2\", \"--enable-expert-parallel\"", "4")), IsEmpty());
}

TEST(TensorParallelGpuCount, ShortNnodesSpreadsTheReplicaOverPods) {
  // -n 2 -r 0: two pods of 8 GPUs run tensor-parallel 16.
  EXPECT_THAT(judge(vllmArgs("\"-tp\", \"16\", \"-n\", \"2\", \"-r\", \"0\", \"--master-addr\", \"head\"", "8")),
              IsEmpty());
  EXPECT_THAT(rulesHit(judge(vllmArgs("\"-tp\", \"16\", \"-n\", \"2\", \"-r\", \"0\"", "4"))),
              ElementsAre("tensor-parallel-gpu-count"));
}

TEST(TensorParallelGpuCount, LocalDataParallelReplicasShareThePod) {
  EXPECT_THAT(judge(vllmArgs("\"-tp\", \"2\", \"-dpl\", \"2\"", "4")), IsEmpty());
  EXPECT_THAT(rulesHit(judge(vllmArgs("\"-tp\", \"2\", \"-dp\", \"4\"", "4"))), ElementsAre("tensor-parallel-gpu-count"));
  // External or hybrid load balancing places the ranks elsewhere.
  EXPECT_THAT(judge(vllmArgs("\"-tp\", \"2\", \"-dp\", \"4\", \"-dpe\"", "4")), IsEmpty());
}

TEST(TensorParallelGpuCount, RayExecutorInALonePodStillNeedsTheWholeWorldInThePod) {
  const auto f = judge(vllmArgs("\"--tensor-parallel-size=8\", \"--distributed-executor-backend=ray\"", "1"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("vLLM starts a local Ray instance that holds only this pod's GPUs"));
  EXPECT_THAT(f[0].message(), HasSubstr("\"Cannot provide a placement group requiring 8 GPUs\""));
  EXPECT_THAT(judge(vllmArgs("\"--tensor-parallel-size=8\", \"--distributed-executor-backend\", \"ray\"", "8")), IsEmpty());
}

TEST(TensorParallelGpuCount, RayExecutorOnARayClusterIsNotJudged) {
  const std::string rayStart =
      "        command: [sh, -c, \"ray start --address=$(HEAD):6379; vllm serve m --tensor-parallel-size 8 "
      "--distributed-executor-backend ray\"]\n";
  EXPECT_THAT(judge(server("vllm/vllm-openai:v0.8.5", rayStart, "1")), IsEmpty());
  const std::string rayAddress =
      "        args: [--tensor-parallel-size=8, --distributed-executor-backend=ray]\n"
      "        env: [{name: RAY_ADDRESS, value: \"ray://head:10001\"}]\n";
  EXPECT_THAT(judge(server("vllm/vllm-openai:v0.8.5", rayAddress, "1")), IsEmpty());
  const std::string rayCluster =
      "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: r}\nspec:\n  rayClusterConfig:\n"
      "    headGroupSpec:\n      template:\n        spec:\n          containers:\n          - name: head\n"
      "            image: vllm/vllm-openai:v0.8.5\n"
      "            args: [--tensor-parallel-size=8, --distributed-executor-backend=ray]\n"
      "            resources: {limits: {nvidia.com/gpu: 1}}\n";
  EXPECT_THAT(judge(rayCluster), IsEmpty());
}

// AIBrix's RayClusterFleet (and RayClusterReplicaSet) is a Deployment-like
// set of RayClusters: spec.template.spec is a KubeRay RayClusterSpec, and its
// head and worker pods form one Ray cluster, as in a RayCluster (red team 33
// C1: vllm-project/aibrix samples/distributed/fleet-two-node.yaml, TP 2 over
// a 1-GPU head and a 1-GPU worker, was an error).
std::string rayClusterSpecIn(const std::string& apiVersion, const std::string& kind) {
  return "apiVersion: " + apiVersion + "\nkind: " + kind +
         "\nmetadata: {name: qwen}\nspec:\n  replicas: 1\n  template:\n    spec:\n"
         "      headGroupSpec:\n        template:\n          spec:\n            containers:\n"
         "            - name: ray-head\n              image: vllm/vllm-openai:v0.7.1\n"
         "              command: [/bin/bash, -c]\n"
         "              args: [\"eval \\\"$KUBERAY_GEN_RAY_START_CMD\\\" & vllm serve Qwen/Qwen2.5-Coder-7B-Instruct "
         "--tensor-parallel-size 2 --distributed-executor-backend ray\"]\n"
         "              resources: {limits: {nvidia.com/gpu: 1}}\n"
         "      workerGroupSpecs:\n      - groupName: worker\n        replicas: 1\n        template:\n"
         "          spec:\n            containers:\n            - name: ray-worker\n"
         "              image: vllm/vllm-openai:v0.7.1\n              resources: {limits: {nvidia.com/gpu: 1}}\n";
}

TEST(TensorParallelGpuCount, RayExecutorInAnAibrixRayClusterFleetIsNotJudged) {
  EXPECT_THAT(judge(rayClusterSpecIn("orchestration.aibrix.ai/v1alpha1", "RayClusterFleet")), IsEmpty());
  EXPECT_THAT(judge(rayClusterSpecIn("orchestration.aibrix.ai/v1alpha1", "RayClusterReplicaSet")), IsEmpty());
}

TEST(TensorParallelGpuCount, TheSameLaunchOutsideARayClusterSpecIsStillJudged) {
  // The fleet's head container as a Deployment's: no Ray cluster around it.
  const std::string head =
      "        command: [/bin/bash, -c]\n"
      "        args: [\"vllm serve m --tensor-parallel-size 2 --distributed-executor-backend ray\"]\n";
  EXPECT_THAT(rulesHit(judge(server("vllm/vllm-openai:v0.7.1", head, "1"))), ElementsAre("tensor-parallel-gpu-count"));
}

TEST(TensorParallelGpuCount, RayDataParallelBackendIsNotJudged) {
  EXPECT_THAT(judge(vllmArgs("\"-tp\", \"2\", \"-dp\", \"4\", \"-dpb\", \"ray\"", "2")), IsEmpty());
}

TEST(TensorParallelGpuCount, DynamoLaunchesTakeTheEnginesFlags) {
  EXPECT_THAT(rulesHit(judge(server("nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0",
                                    "        command: [python3, -m, dynamo.vllm]\n"
                                    "        args: [--model, Qwen/Qwen3-0.6B, --tensor-parallel-size, \"2\"]\n",
                                    "1"))),
              ElementsAre("tensor-parallel-gpu-count"));
  EXPECT_THAT(judge(server("nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.6.0",
                           "        command: [python3, -m, dynamo.sglang, --model-path, m, --tp, \"2\"]\n", "2")),
              IsEmpty());
}

TEST(TensorParallelGpuCount, SglangExpertAndAttentionContextParallelismStayInsideTheTensorParallelGroup) {
  EXPECT_THAT(judge(server("lmsysorg/sglang:latest",
                           "        command: [python3, -m, sglang.launch_server, --tp, \"8\", --ep-size, \"8\", "
                           "--attn-cp-size, \"4\"]\n",
                           "8")),
              IsEmpty());
}

// --- pod groups ---------------------------------------------------------------

std::string lws(const std::string& size, const std::string& leaderLaunch, const std::string& leaderGpus,
                const std::string& workerGpus) {
  return "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: vllm}\nspec:\n"
         "  replicas: 2\n  leaderWorkerTemplate:\n    size: " +
         size +
         "\n    leaderTemplate:\n      spec:\n        containers:\n        - name: leader\n"
         "          image: vllm/vllm-openai:v0.8.5\n" +
         leaderLaunch + "          resources: {limits: {nvidia.com/gpu: \"" + leaderGpus +
         "\"}}\n    workerTemplate:\n      spec:\n        containers:\n        - name: worker\n"
         "          image: vllm/vllm-openai:v0.8.5\n"
         "          command: [sh, -c, \"bash multi-node-serving.sh worker --ray_address=$(LWS_LEADER_ADDRESS)\"]\n"
         "          resources: {limits: {nvidia.com/gpu: \"" +
         workerGpus + "\"}}\n";
}

const std::string kLeaderTp8Pp2 =
    "          command: [sh, -c, \"bash multi-node-serving.sh leader --ray_cluster_size=$(LWS_GROUP_SIZE); "
    "python3 -m vllm.entrypoints.openai.api_server --model m --tensor-parallel-size 8 --pipeline_parallel_size 2\"]\n";

TEST(TensorParallelGpuCount, LeaderWorkerSetGroupsCountEveryPod) {
  EXPECT_THAT(judge(lws("2", kLeaderTp8Pp2, "8", "8")), IsEmpty());
  const auto f = judge(lws("2", kLeaderTp8Pp2, "8", "4"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.leaderWorkerTemplate.leaderTemplate.spec.containers[0].command[2]");
  EXPECT_THAT(f[0].message(), HasSubstr("the LeaderWorkerSet group of 2 pods gets 12 GPUs (leader 8 + 1 x worker 4)"));
}

TEST(TensorParallelGpuCount, ALeaderWorkerSetOfOneIsASinglePod) {
  EXPECT_THAT(rulesHit(judge(lws("1", "          args: [--tensor-parallel-size=8, --pipeline-parallel-size=2]\n", "8",
                                 "8"))),
              ElementsAre("tensor-parallel-gpu-count"));
}

TEST(TensorParallelGpuCount, SglangNnodesFromTheGroupSize) {
  const std::string yaml =
      "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: sglang}\nspec:\n"
      "  leaderWorkerTemplate:\n    size: 2\n    workerTemplate:\n      spec:\n        containers:\n"
      "        - name: sglang\n          image: lmsysorg/sglang:latest\n"
      "          command: [python3, -m, sglang.launch_server, --tp, \"2\", --dist-init-addr, "
      "\"$(LWS_LEADER_ADDRESS):20000\", --nnodes, $(LWS_GROUP_SIZE), --node-rank, $(LWS_WORKER_INDEX)]\n"
      "          resources: {limits: {nvidia.com/gpu: \"1\"}}\n";
  EXPECT_THAT(judge(yaml), IsEmpty());
  std::string tp4 = yaml;
  tp4.replace(tp4.find("--tp, \"2\""), 9, "--tp, \"4\"");
  EXPECT_THAT(rulesHit(judge(tp4)), ElementsAre("tensor-parallel-gpu-count"));
}

TEST(TensorParallelGpuCount, LiteralNnodesOutsideALeaderWorkerSet) {
  EXPECT_THAT(judge(server("lmsysorg/sglang:latest",
                           "        command: [python3, -m, sglang.launch_server, --tp, \"16\", --nnodes, \"2\", "
                           "--node-rank, \"0\"]\n",
                           "8")),
              IsEmpty());
  EXPECT_THAT(judge(server("lmsysorg/sglang:latest",
                           "        command: [python3, -m, sglang.launch_server, --tp, \"16\", --nnodes, $(N)]\n", "8")),
              IsEmpty());
}

TEST(TensorParallelGpuCount, AbsurdGroupSizesAreNotJudged) {
  EXPECT_THAT(judge(lws("9223372036854775807", kLeaderTp8Pp2, "8", "8")), IsEmpty());
  EXPECT_THAT(judge(server("lmsysorg/sglang:latest",
                           "        command: [python3, -m, sglang.launch_server, --tp, \"16\", --nnodes, "
                           "\"999999999999999999\"]\n",
                           "8")),
              IsEmpty());
}

// --- several launches, and CUDA_VISIBLE_DEVICES -------------------------------

// A vLLM container running `script` under sh -c with `gpus` GPUs (and extra container lines).
std::string vllmScript(const std::string& script, const std::string& gpus, const std::string& extra = "") {
  return server("vllm/vllm-openai:v0.11.0",
                extra + "        command: [\"sh\", \"-c\"]\n        args:\n        - |\n" + script, gpus);
}

TEST(TensorParallelGpuCount, LaunchesOnTheirOwnCudaVisibleDevicesShareAreAddedUp) {
  EXPECT_THAT(judge(vllmScript("          CUDA_VISIBLE_DEVICES=0,1 vllm serve m1 --port 8000 --tensor-parallel-size 2 &\n"
                               "          CUDA_VISIBLE_DEVICES=2,3 vllm serve m2 --port 8001 --tensor-parallel-size 2 &\n"
                               "          wait\n",
                               "4")),
              IsEmpty());
}

TEST(TensorParallelGpuCount, AnExportedCudaVisibleDevicesHoldsForTheLaunchesAfterIt) {
  EXPECT_THAT(judge(vllmScript("          export CUDA_VISIBLE_DEVICES=0,1\n"
                               "          vllm serve m1 --tensor-parallel-size 2 &\n"
                               "          export CUDA_VISIBLE_DEVICES=2,3\n"
                               "          vllm serve m2 --tensor-parallel-size 2 --port 8001\n",
                               "4")),
              IsEmpty());
}

TEST(TensorParallelGpuCount, GpusNoLaunchUsesAreIdleAndTheWarningAddsTheLaunchesUp) {
  const auto f = judge(vllmScript("          CUDA_VISIBLE_DEVICES=0,1 vllm serve m1 --tensor-parallel-size 2 &\n"
                                  "          CUDA_VISIBLE_DEVICES=2 vllm serve m2 --tensor-parallel-size 1 --port 8001\n",
                                  "4"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_THAT(f[0].message(), HasSubstr("vLLM runs 2 launches of 2 + 1 = 3 GPU workers per replica, but the "
                                        "container gets 4 GPUs; 1 GPU would sit idle"));
  EXPECT_THAT(f[0].message(), HasSubstr("give the idle GPUs a launch of their own"));
}

TEST(TensorParallelGpuCount, ALaunchNeedingMoreThanItsCudaVisibleDevicesShareCrashes) {
  const auto f = judge(vllmScript("          CUDA_VISIBLE_DEVICES=0,1 vllm serve m1 --tensor-parallel-size 4 &\n"
                                  "          CUDA_VISIBLE_DEVICES=2,3 vllm serve m2 --tensor-parallel-size 2\n",
                                  "4"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("CUDA_VISIBLE_DEVICES=0,1 shows it 2 of the container's 4 GPUs"));
  EXPECT_THAT(f[0].message(), HasSubstr("World size (4) is larger than the number of available GPUs (2)"));
}

TEST(TensorParallelGpuCount, CudaVisibleDevicesEnvNarrowsWhatTheLaunchSees) {
  const std::string env = "        env: [{name: CUDA_VISIBLE_DEVICES, value: \"0,1\"}]\n";
  // TP 2 on the 2 GPUs it sees: it runs; the other 2 are idle, a warning.
  const auto f = judge(server("vllm/vllm-openai:v0.11.0", env + "        args: [\"--tensor-parallel-size\", \"2\"]\n", "4"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Warning);
  EXPECT_THAT(f[0].message(), HasSubstr("2 GPUs would sit idle"));
  EXPECT_THAT(f[0].message(), Not(HasSubstr("raise the parallelism")));
  // TP 4 on 2 visible GPUs crashes.
  const auto crash = judge(server("vllm/vllm-openai:v0.11.0", env + "        args: [\"--tensor-parallel-size\", \"4\"]\n", "4"));
  ASSERT_EQ(crash.size(), 1u);
  EXPECT_EQ(crash[0].severity, Severity::Error);
  EXPECT_THAT(crash[0].message(), HasSubstr("CUDA_VISIBLE_DEVICES=0,1 (env) shows it 2"));
}

TEST(TensorParallelGpuCount, ACudaVisibleDevicesThatIsNoLiteralLeavesTheLaunchUnjudged) {
  EXPECT_THAT(judge(vllmScript("          CUDA_VISIBLE_DEVICES=$DEVS vllm serve m1 --tensor-parallel-size 2\n", "4")),
              IsEmpty());
}

TEST(TensorParallelGpuCount, ParallelismBeyond4096IsReportedNotDropped) {
  const auto f = judge(vllmArgs("\"--tensor-parallel-size\", \"5000\"", "2"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("tensor-parallel 5000 = 5000 GPU workers"));
  // A product beyond int64 saturates instead of wrapping (UBSan).
  const auto huge = judge(vllmArgs("\"-tp\", \"999999999999999999\", \"-pp\", \"999999999999999999\"", "2"));
  ASSERT_EQ(huge.size(), 1u);
  EXPECT_THAT(huge[0].message(), HasSubstr("= 9223372036854775807 GPU workers"));
}

// --- $(VAR) in command and args (reference §15.8) -------------------------------

TEST(TensorParallelGpuCount, VarReferencesAreExpandedFromLiteralEnvFirst) {
  const std::string env = "        env: [{name: TP, value: \"8\"}]\n";
  const auto f = judge(server("vllm/vllm-openai:v0.11.0", env + "        args: [\"--tensor-parallel-size=$(TP)\"]\n", "4"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("tensor-parallel 8 = 8 GPU workers"));
  // $$(TP) is the literal text $(TP), and an unknown or valueFrom variable stays unknown.
  EXPECT_THAT(judge(server("vllm/vllm-openai:v0.11.0", env + "        args: [\"--tensor-parallel-size=$$(TP)\"]\n", "4")),
              IsEmpty());
  EXPECT_THAT(judge(server("vllm/vllm-openai:v0.11.0", "        args: [\"--tensor-parallel-size=$(TP)\"]\n", "4")),
              IsEmpty());
  EXPECT_THAT(judge(server("vllm/vllm-openai:v0.11.0",
                           "        env: [{name: TP, valueFrom: {configMapKeyRef: {name: c, key: tp}}}]\n"
                           "        args: [\"--tensor-parallel-size=$(TP)\"]\n",
                           "4")),
              IsEmpty());
}

TEST(TensorParallelGpuCount, UnclosedVarReferencesAreReadInLinearTime) {
  std::string unclosed;
  for (int i = 0; i < 100000; ++i) unclosed += "$(";
  EXPECT_THAT(judge(server("vllm/vllm-openai:v0.11.0",
                           "        env: [{name: TP, value: \"8\"}]\n        args: [\"--tensor-parallel-size=" +
                               unclosed + "\"]\n",
                           "4")),
              IsEmpty());
}

// --- GPUs from DRA and MIG (reference §15.7) -------------------------------------

TEST(TensorParallelGpuCount, GpusFromADraClaimCount) {
  const std::string yaml =
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\nspec:\n"
      "  selectors: [{cel: {expression: \"device.driver == 'gpu.nvidia.com'\"}}]\n---\n"
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: two-gpus}\nspec:\n  spec:\n"
      "    devices:\n      requests:\n      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com, count: 2}\n"
      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
      "  resourceClaims: [{name: g, resourceClaimTemplateName: two-gpus}]\n  containers:\n  - name: vllm\n"
      "    image: vllm/vllm-openai:v0.11.0\n    args: [\"--tensor-parallel-size\", \"TP\"]\n"
      "    resources: {claims: [{name: g}]}\n";
  std::string four = yaml;
  four.replace(four.find("TP"), 2, "4");
  const auto f = testing::only(testing::judgeInput(four, kTpOnly), "tensor-parallel-gpu-count");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message(), HasSubstr("the container gets 2 GPUs"));
  std::string two = yaml;
  two.replace(two.find("TP"), 2, "2");
  EXPECT_THAT(testing::only(testing::judgeInput(two, kTpOnly), "tensor-parallel-gpu-count"), IsEmpty());
}

TEST(TensorParallelGpuCount, AProcessSeesOneMigDevice) {
  const auto f = judge(server("vllm/vllm-openai:v0.11.0", "        args: [\"--tensor-parallel-size\", \"2\"]\n",
                              "").append("        resources: {limits: {nvidia.com/mig-3g.40gb: 2}}\n"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_THAT(f[0].message(), HasSubstr("the container gets 2 MIG devices, of which a CUDA process sees one"));
}

// --- torchrun --nproc-per-node and the operators that set it (reference §15.8) ---
// How the launcher's words are read is specified in test/unit/rules/serving/launch_test.cpp.

std::string torchrun(const std::string& fields, const std::string& gpus) {
  return server("nvcr.io/nvidia/pytorch:24.05-py3", fields, gpus);
}

// `torchrun --nproc-per-node=<nproc> train.py` on `gpus` GPUs.
std::vector<Finding> judgeNproc(const std::string& nproc, const std::string& gpus) {
  return judge(torchrun("        command: [torchrun, \"--nproc-per-node=" + nproc + "\", train.py]\n", gpus));
}

TEST(TensorParallelGpuCount, TorchrunWithMoreProcessesThanGpusMakesNcclAbort) {
  const auto f = judgeNproc("8", "4");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.template.spec.containers[0].command[1]");
  EXPECT_EQ(f[0].value, "\"--nproc-per-node=8\"");
  EXPECT_THAT(f[0].message(), HasSubstr("torchrun starts 8 processes per pod, one per GPU, but the container gets 4 "
                                        "GPUs; two ranks on one GPU make NCCL abort (\"Duplicate GPU detected\")"));
  EXPECT_THAT(f[0].message(), HasSubstr("set --nproc-per-node to 4 (or gpu, one process per visible GPU), or "
                                        "request 8 GPUs"));
}

TEST(TensorParallelGpuCount, TorchrunWithAsManyOrFewerProcessesIsNotJudged) {
  EXPECT_THAT(judge(torchrun("        command: [torchrun, --nproc_per_node, \"4\", train.py]\n", "4")), IsEmpty());
  EXPECT_THAT(judgeNproc("1", "4"), IsEmpty()) << "one process may drive several GPUs";
  EXPECT_THAT(judgeNproc("auto", "4"), IsEmpty()) << "one per visible GPU";
  EXPECT_THAT(judgeNproc("gpu", "4"), IsEmpty());
  EXPECT_THAT(judgeNproc("8", ""), IsEmpty()) << "CPU training asks for no GPU";
}

TEST(TensorParallelGpuCount, TorchrunEdgeValues) {
  const auto huge = judgeNproc("9223372036854775807", "4");
  ASSERT_EQ(huge.size(), 1u);
  EXPECT_THAT(huge[0].message(), HasSubstr("starts 9223372036854775807 processes"));
  // int() refuses these, or they start no process: torchrun fails before any GPU is touched.
  for (const char* none : {"1e30", "0", "-1", "", "eight"}) EXPECT_THAT(judgeNproc(none, "4"), IsEmpty()) << none;
  EXPECT_THAT(judgeNproc("8", "\"9223372036854775807\""), IsEmpty()) << "2^63-1 GPUs hold any process count";
}

TEST(TensorParallelGpuCount, TorchrunSeesWhatCudaVisibleDevicesAndMigLeaveIt) {
  const auto narrowed =
      judge(torchrun("        command: [sh, -c, \"CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc-per-node=4 t.py\"]\n", "4"));
  ASSERT_EQ(narrowed.size(), 1u);
  EXPECT_THAT(narrowed[0].message(), HasSubstr("CUDA_VISIBLE_DEVICES=0,1 shows it 2 of the container's 4 GPUs"));
  const auto mig = judge(torchrun("        command: [torchrun, \"--nproc-per-node=2\", t.py]\n", "")
                             .append("        resources: {limits: {nvidia.com/mig-3g.40gb: 2}}\n"));
  ASSERT_EQ(mig.size(), 1u);
  EXPECT_THAT(mig[0].message(), HasSubstr("set --nproc-per-node to 1"));
}

TEST(TensorParallelGpuCount, PetNprocPerNodeCountsLikeTheFlag) {
  const std::string env = "        env: [{name: PET_NPROC_PER_NODE, value: \"8\"}]\n";
  const auto f = judge(torchrun(env + "        command: [torchrun, train.py]\n", "4"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.template.spec.containers[0].env[0].value");
  EXPECT_THAT(f[0].message(), HasSubstr("Invalid value: \"8\" (PET_NPROC_PER_NODE): torchrun, which reads "
                                        "PET_NPROC_PER_NODE as --nproc-per-node, starts 8 processes"));
  EXPECT_THAT(f[0].message(), HasSubstr("set PET_NPROC_PER_NODE to 4"));
  // The flag overrides the env; a container that runs no torchrun reads neither.
  EXPECT_THAT(judge(torchrun(env + "        command: [torchrun, \"--nproc-per-node=4\", train.py]\n", "4")), IsEmpty());
  EXPECT_THAT(judge(torchrun(env + "        command: [python, train.py]\n", "4")), IsEmpty());
}

// A PyTorchJob with these spec fields whose Master and Worker run `command` on 4 GPUs.
std::string pyTorchJob(const std::string& specFields, const std::string& command, const std::string& env = "") {
  std::string replica = "      template:\n        spec:\n          containers:\n          - name: pytorch\n"
                        "            image: nvcr.io/nvidia/pytorch:24.05-py3\n            command: " + command + "\n" +
                        env + "            resources: {limits: {nvidia.com/gpu: 4}}\n";
  return "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: ptj}\nspec:\n" + specFields +
         "  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n" + replica + "    Worker:\n      replicas: 2\n" + replica;
}

TEST(TensorParallelGpuCount, APyTorchJobsNprocPerNodeReachesTorchrunThroughTheOperator) {
  const auto f = judge(pyTorchJob("  nprocPerNode: \"8\"\n", "[torchrun, train.py]"));
  ASSERT_EQ(f.size(), 1u) << "one finding on the field both replicas read";
  EXPECT_EQ(f[0].field(), "spec.nprocPerNode");
  EXPECT_THAT(f[0].message(), HasSubstr("torchrun, given --nproc-per-node by the training operator "
                                        "(PET_NPROC_PER_NODE), starts 8 processes per pod"));
  EXPECT_THAT(f[0].message(), HasSubstr("set spec.nprocPerNode to 4 (or \"gpu\"), or request 8 GPUs"));
  // An integer counts the same; the deprecated elasticPolicy.nProcPerNode is appended after it, so it wins.
  EXPECT_THAT(rulesHit(judge(pyTorchJob("  nprocPerNode: 8\n", "[torchrun, train.py]"))),
              ElementsAre("tensor-parallel-gpu-count"));
  const auto elastic =
      judge(pyTorchJob("  elasticPolicy: {nProcPerNode: 8}\n  nprocPerNode: \"4\"\n", "[torchrun, t.py]"));
  ASSERT_EQ(elastic.size(), 1u);
  EXPECT_EQ(elastic[0].field(), "spec.elasticPolicy.nProcPerNode");
}

TEST(TensorParallelGpuCount, APyTorchJobsNprocPerNodeReplacesTheContainersEnvButNotItsFlag) {
  const std::string env8 = "            env: [{name: PET_NPROC_PER_NODE, value: \"8\"}]\n";
  EXPECT_THAT(judge(pyTorchJob("  nprocPerNode: \"4\"\n", "[torchrun, t.py]", env8)), IsEmpty());
  EXPECT_THAT(judge(pyTorchJob("  nprocPerNode: \"8\"\n", "[torchrun, \"--nproc-per-node=4\", t.py]")), IsEmpty());
  EXPECT_THAT(judge(pyTorchJob("  nprocPerNode: auto\n", "[torchrun, t.py]")), IsEmpty());
  EXPECT_THAT(judge(pyTorchJob("  nprocPerNode: \"8\"\n", "[python, t.py]")), IsEmpty()) << "no torchrun reads it";
  for (const char* odd : {"0", "-2", "\"\"", "\"-1\"", "\"9.5\""}) {
    EXPECT_THAT(judge(pyTorchJob(std::string("  nprocPerNode: ") + odd + "\n", "[torchrun, t.py]")), IsEmpty()) << odd;
  }
  const auto huge = judge(pyTorchJob("  nprocPerNode: 18446744073709551615\n", "[torchrun, t.py]"));
  ASSERT_EQ(huge.size(), 1u);
  EXPECT_THAT(huge[0].message(), HasSubstr("starts 9223372036854775807 processes"));
}

TEST(TensorParallelGpuCount, ATrainJobsNumProcPerNodeReachesTorchrun) {
  const std::string head = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj}\nspec:\n"
                           "  runtimeRef: {name: torch-distributed}\n  trainer:\n    command: [torchrun, train.py]\n"
                           "    resourcesPerNode: {limits: {nvidia.com/gpu: 4}}\n";
  const auto f = judge(head + "    numProcPerNode: 8\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field(), "spec.trainer.numProcPerNode");
  EXPECT_THAT(f[0].message(), HasSubstr("given --nproc-per-node by Kubeflow Trainer (PET_NPROC_PER_NODE)"));
  EXPECT_THAT(f[0].message(), HasSubstr("set numProcPerNode to 4, or leave it out"));
  EXPECT_THAT(judge(head + "    numProcPerNode: 4\n"), IsEmpty());
  // Without it the torch runtime passes auto, replacing the trainer's own PET_NPROC_PER_NODE.
  EXPECT_THAT(judge(head + "    env: [{name: PET_NPROC_PER_NODE, value: \"8\"}]\n"), IsEmpty());
}

TEST(TensorParallelGpuCount, IsOnByDefaultAsAnError) {
  const auto mine = testing::only(judgeYaml(vllmArgs("\"--tensor-parallel-size=4\"", "2")), "tensor-parallel-gpu-count");
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].severity, Severity::Error);
}

}  // namespace
}  // namespace gpuguard
