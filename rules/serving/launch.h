// How an inference server (or torchrun) in a container is told to spread
// work over GPUs, read from the container's command and args (also inside
// `sh -c` scripts; rules/serving/shell_words.h reads the words). Shared by
// tensor-parallel-gpu-count and tensor-parallel-without-nvlink. Facts:
// kubernetes-gpu-semantics.md §12, §15.8; flag names from vLLM's EngineArgs
// (vllm/engine/arg_utils.py), SGLang's ServerArgs
// (python/sglang/srt/server_args.py), TGI's launcher and torchrun's
// get_args_parser (torch/distributed/run.py).
//
// Recognised launches:
//   vLLM    `vllm serve`, `python -m vllm.entrypoints.openai.api_server`
//           (or vllm.entrypoints.api_server), NVIDIA Dynamo's
//           `python -m dynamo.vllm` (vLLM's engine arguments), or image
//           vllm/vllm-openai with no command (its entrypoint is the server);
//   SGLang  `python -m sglang.launch_server` / `sglang_router.launch_server`,
//           Dynamo's `python -m dynamo.sglang`;
//   TGI     `text-generation-launcher`, or an image named
//           *text-generation-inference* with no command;
//   torchrun `torchrun`, `python -m torch.distributed.run` or the older
//           `python -m torch.distributed.launch`: its options end at the
//           training script, whose own arguments follow.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/k8s/field_path.h"
#include "rules/pod_specs.h"

namespace gpuguard {

enum class ServingEngine { Vllm, SGLang, Tgi, Torchrun };
std::string_view engineName(ServingEngine e);  // "vLLM", "SGLang", "TGI", "torchrun"

struct ParallelFlag {
  bool present = false;
  std::optional<long long> value;  // a literal positive integer; nullopt when absent or not one ($(TP), "auto")
  std::string text;                // as written: "--tensor-parallel-size=4", "--tp 2"; an env var's value
  std::string name;                // the flag ("--tensor-parallel-size") or env var ("NUM_SHARD")
  FieldPath path;                  // the command/args element holding it
};

struct ServingLaunch {
  ServingEngine engine = ServingEngine::Vllm;
  ParallelFlag tensor;    // vLLM --tensor-parallel-size/-tp; SGLang --tp-size/--tensor-parallel-size/--tp
  ParallelFlag pipeline;  // --pipeline-parallel-size/-pp; SGLang --pp-size
  ParallelFlag data;      // --data-parallel-size/-dp; SGLang --dp-size/--dp
  ParallelFlag dataLocal; // vLLM --data-parallel-size-local/-dpl
  ParallelFlag prefillContext;  // vLLM --prefill-context-parallel-size/-pcp: multiplies the world size
  ParallelFlag nnodes;    // --nnodes (vLLM also -n)
  ParallelFlag numShard;  // TGI --num-shard (or NUM_SHARD env)
  ParallelFlag sharded;   // TGI --sharded (or SHARDED env)
  // torchrun --nproc-per-node/--nproc_per_node (or PET_NPROC_PER_NODE env):
  // local processes, one per GPU; its value is torchrunProcesses' reading
  // (nullopt for auto, gpu, cpu, xpu or an expansion).
  ParallelFlag nprocPerNode;
  std::optional<bool> shardedOn;  // its value: false runs one shard, true every visible GPU (at least 2)
  bool nnodesIsGroupSize = false;  // --nnodes $(LWS_GROUP_SIZE)
  bool dpAttention = false;        // SGLang --enable-dp-attention: data parallelism inside the TP group
  bool opaqueArgs = false;         // arguments we cannot see: "$@", $EXTRA_ARGS, --config FILE
  bool multiNode = false;          // one replica spread over several pods (Ray, --dist-init-addr, --node-rank...)
  bool externalDataParallel = false;  // vLLM data-parallel ranks placed by someone else
  // vLLM --distributed-executor-backend ray: workers are placed by Ray, on
  // other pods only when a Ray cluster spans them (KubeRay, `ray start`,
  // RAY_ADDRESS); otherwise vLLM starts a local Ray with this pod's GPUs.
  bool rayExecutor = false;
  bool joinsRayCluster = false;  // `ray start` in the script or RAY_ADDRESS in the env
  // The GPUs the launch sees when CUDA_VISIBLE_DEVICES narrows them: an
  // inline prefix (CUDA_VISIBLE_DEVICES=0,1 vllm serve ...), an earlier
  // `export` in the script, else the container's env (a literal value);
  // visibleFrom is set whenever something narrows them ("CUDA_VISIBLE_DEVICES=0,1");
  // visibleGpus is nullopt when nothing does or the value is not literal.
  std::optional<long long> visibleGpus;
  std::string visibleFrom;

  // The flag that states the parallelism, for reporting: num-shard (else
  // sharded) for TGI; nproc-per-node for torchrun; else TP, PP, DP, local
  // DP, the first one given.
  const ParallelFlag& primary() const;
};

// The first inference-server launch in a container, if any.
std::optional<ServingLaunch> findServingLaunch(const ContainerRef& container);

// The processes torchrun starts for a --nproc-per-node value, which it
// reads with Python's int(): a positive decimal (an optional +, underscores
// between digits, spaces around), saturating at the largest long long;
// nullopt for auto, gpu, cpu, xpu (counted on the node), zero, negative or
// anything else.
std::optional<long long> torchrunProcesses(std::string_view value);

// Every inference-server launch in a container, in script order: a script
// may start several servers (`vllm serve a &` then `vllm serve b &`), each
// on its own CUDA_VISIBLE_DEVICES share.
std::vector<ServingLaunch> findServingLaunches(const ContainerRef& container);

}  // namespace gpuguard
