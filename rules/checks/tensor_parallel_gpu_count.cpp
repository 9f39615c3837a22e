// tensor-parallel-gpu-count: an inference server's tensor x pipeline
// parallelism does not match the GPUs its pod (or pod group) gets.
#include <algorithm>
#include <array>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "rules/checks/checks.h"
#include "rules/serving/launch.h"
#include "rules/support/container_gpus.h"
#include "rules/resources.h"
#include "rules/k8s/field_error.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 1> kPolicyKeys{"gpuResources"};

constexpr RuleDoc kDoc{
    .id = "tensor-parallel-gpu-count",
    .defaultSeverity = Severity::Error,
    .summary = "vLLM, SGLang or TGI started with a tensor x pipeline parallelism that does not match the GPUs the "
               "pod gets, or torchrun with more processes per pod than GPUs.",
    .description =
        "vLLM runs one worker per GPU: world size = --tensor-parallel-size (-tp) x --pipeline-parallel-size (-pp) "
        "x --prefill-context-parallel-size (-pcp) (x --data-parallel-size -dp, or --data-parallel-size-local "
        "-dpl, when the data-parallel ranks share the pod); decode context parallelism (-dcp) and expert "
        "parallelism (-ep) reuse those ranks. With "
        "more workers than GPUs it fails at startup (\"World size (4) is larger than the number of available "
        "GPUs (2)\") and the pod crash-loops; with fewer, the extra GPUs sit idle and nobody else can use them. "
        "SGLang counts the same way (--tp-size/--tp, --pp-size, --dp-size/--dp; with --enable-dp-attention the "
        "data-parallel ranks live inside the tensor-parallel group, as do --ep-size and --attn-cp-size), NVIDIA "
        "Dynamo's python -m dynamo.vllm / dynamo.sglang take the engine's flags, TGI runs --num-shard shards (or NUM_SHARD), one with --sharded false, and refuses --sharded true "
        "on one GPU or with --num-shard 1. "
        "Launches are recognised in command/args, inside `sh -c` scripts, and from the image's entrypoint "
        "(vllm/vllm-openai, *text-generation-inference*) when the pod sets only args. In a script, comments and "
        "here-document bodies (data written to a file, not run) hold no launch, and a container whose launches "
        "sit in different branches of an if/elif/else, a case or a `||` list (TP 8 when the node shows 8 GPUs, "
        "else TP 2) is not judged: which one runs is decided at run time. Both --flag N and "
        "--flag=N are read, the last occurrence wins. The GPUs are what the launching container gets: its GPU "
        "resources (policy gpuResources, deviceclass.resource.kubernetes.io names of GPU classes) and the GPU "
        "claims it lists whose templates the input holds (their counts; of a claim listed with request: <name>, "
        "that request's devices only; of a firstAvailable list, the fewest its alternatives give, and when only "
        "the fallback breaks the launch a warning: the scheduler allocates the first alternative whenever a node "
        "can give it; idle GPUs are judged on that first alternative, as for a plain request of its count: TP 4 "
        "on [8 GPUs, 4 GPUs] leaves 4 idle whenever a node gives 8); a container sees only its own devices, "
        "and a CUDA process sees one MIG device however many the container holds. One replica may span a group of pods: "
        "in a LeaderWorkerSet (spec.leaderWorkerTemplate.size pods per group), a DynamoGraphDeployment service "
        "with multinode.nodeCount N, or with --nnodes N, the world "
        "size must equal the GPUs of the whole group (leader + (size - 1) x worker). No finding when a value is "
        "not a literal integer ($(TP), templates), when arguments are hidden (\"$@\", $EXTRA_ARGS, --config), "
        "when no parallelism flag is given (TGI then uses every visible GPU), when the container asks for no "
        "GPU (another accelerator, or a DRA claim whose template is not in the input), when a claim it lists "
        "has a request of allocationMode All (every matching device of the node: no manifest tells the count), "
        "or when a replica spreads over pods whose number is unknown (Ray "
        "clusters, --dist-init-addr without a known group size, vLLM data-parallel ranks across pods, -dpb "
        "ray, external_launcher). vLLM --nnodes/-n N (with --node-rank/-r) spreads one replica over N pods. "
        "--distributed-executor-backend ray spreads it only over a Ray cluster: in a KubeRay RayCluster, "
        "RayService or RayJob, or in a container that runs `ray start` or sets RAY_ADDRESS; elsewhere vLLM "
        "starts a local Ray instance with the pod's own GPUs, so the pod still needs the whole world size "
        "(vLLM waits 1800 s for the placement group, then fails). Too few GPUs is a crash (an error); too many "
        "leaves GPUs idle, which costs money but breaks nothing (a warning). A script that starts several servers "
        "(`vllm serve a &` then `vllm serve b &`) is judged as a whole: each launch sees the GPUs its "
        "CUDA_VISIBLE_DEVICES names (an inline CUDA_VISIBLE_DEVICES=0,1 prefix, an earlier export, else the "
        "container's env; a value that is not literal leaves the container unjudged), one that needs more crashes, "
        "and the GPUs left after adding up the launches' world sizes are idle. Parallelism values beyond any "
        "pod's GPUs (TP 5000) are reported, the product saturating instead of overflowing. "
        "torchrun (also python -m torch.distributed.run or torch.distributed.launch) starts --nproc-per-node "
        "(--nproc_per_node) processes per pod, each on the GPU of its local rank: with more processes than the GPUs "
        "it sees, two ranks share a GPU and NCCL aborts (\"Duplicate GPU detected\"), an error. The count is the "
        "flag (torchrun's own options end at the training script), else PET_NPROC_PER_NODE, which a Kubeflow "
        "PyTorchJob's spec.nprocPerNode (or the older spec.elasticPolicy.nProcPerNode) and a Kubeflow Trainer "
        "TrainJob's spec.trainer.numProcPerNode set for torchrun, replacing the container's own; auto and gpu "
        "start one process per GPU. Fewer processes than GPUs is not judged: one process may drive several.",
    .remediation =
        "Make the GPU request equal tensor x pipeline (x data) parallelism: request 4 GPUs for "
        "--tensor-parallel-size 4, or lower the parallelism to the GPUs you have. Give torchrun at most one "
        "process per GPU (--nproc-per-node 4 on 4 GPUs, or gpu).",
    .wrongExample =
        "apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\n"
        "spec:\n  containers:\n  - name: vllm\n    image: vllm/vllm-openai:v0.8.5\n"
        "    args: [\"--model=meta-llama/Llama-3.1-70B-Instruct\", \"--tensor-parallel-size=4\"]\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 2\n"
        "---\napiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: train}\nspec:\n"
        "  nprocPerNode: \"8\"\n  pytorchReplicaSpecs:\n    Worker:\n      replicas: 2\n      template:\n"
        "        spec:\n          containers:\n          - name: pytorch\n"
        "            image: nvcr.io/nvidia/pytorch:25.01-py3\n            command: [torchrun, train.py]\n"
        "            resources:\n              limits:\n                nvidia.com/gpu: 4\n",
    .rightExample =
        "apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\n"
        "spec:\n  containers:\n  - name: vllm\n    image: vllm/vllm-openai:v0.8.5\n"
        "    args: [\"--model=meta-llama/Llama-3.1-70B-Instruct\", \"--tensor-parallel-size=4\"]\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 4\n"
        "---\napiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: train}\nspec:\n"
        "  nprocPerNode: \"4\"\n  pytorchReplicaSpecs:\n    Worker:\n      replicas: 2\n      template:\n"
        "        spec:\n          containers:\n          - name: pytorch\n"
        "            image: nvcr.io/nvidia/pytorch:25.01-py3\n            command: [torchrun, train.py]\n"
        "            resources:\n              limits:\n                nvidia.com/gpu: 4\n",
    .policyKeys = kPolicyKeys,
};

// Bounds that keep the arithmetic exact; no real deployment comes near them.
constexpr long long kMaxPods = 100'000;
constexpr long long kMaxGpusPerPod = 1'000'000;

struct World {
  long long size = 1;
  std::string formula;  // "tensor-parallel 4 x pipeline-parallel 2"
};

// What a container gets: `fewest` GPUs in any allocation, `preferred` when
// its claims' firstAvailable lists get their first alternatives.
struct Gpus {
  long long fewest = 0;
  long long preferred = 0;
  std::string text;  // "the container gets 4 GPUs"
};

// A launch that `needs` GPUs works with the preferred alternatives but not
// with a fallback: a warning, since the scheduler takes the first alternative
// whenever a node can give it (KEP-4816).
std::optional<std::string> fallbackOnly(const Gpus& gpus, long long needs, std::string_view engine) {
  if (needs <= gpus.fewest || needs > gpus.preferred) return std::nullopt;
  const std::string fewest = std::to_string(gpus.fewest);
  return "the container gets " + std::to_string(gpus.preferred) + " GPUs from the first firstAvailable "
         "alternatives of its claims, which the scheduler allocates whenever a node can give them, but " + fewest +
         " if it falls back to a later one; then " + std::string(engine) + " fails at startup and the pod "
         "crash-loops; to never fall back, drop the alternatives of fewer than " + std::to_string(needs) + " GPUs";
}

// The product of positive factors, at most the largest long long.
long long saturatingProduct(std::initializer_list<long long> factors) {
  long long product = 1;
  for (long long f : factors) {
    if (__builtin_mul_overflow(product, f, &product)) return std::numeric_limits<long long>::max();
  }
  return product;
}

// The GPUs one replica of the server needs, or nullopt when unknown.
std::optional<World> worldOf(const ServingLaunch& l) {
  World w;
  if (l.engine == ServingEngine::Tgi) {
    // find_num_shards: --num-shard N runs N shards, --sharded false alone one.
    if (l.numShard.value) {
      w.size = *l.numShard.value;
      w.formula = l.numShard.name + (l.numShard.name.starts_with("-") ? " " : "=") + std::to_string(w.size) + " shards";
      return w;
    }
    if (l.numShard.present || l.shardedOn != false) return std::nullopt;  // unknown, or every visible GPU
    w.formula = "1 shard (" + l.sharded.name + (l.sharded.name.starts_with("-") ? " " : "=") + "false)";
    return w;
  }
  const std::array<const ParallelFlag*, 5> flags{&l.tensor, &l.pipeline, &l.prefillContext, &l.data, &l.dataLocal};
  if (std::none_of(flags.begin(), flags.end(), [](const ParallelFlag* f) { return f->present; })) {
    return std::nullopt;  // no explicit parallelism
  }
  for (const ParallelFlag* f : flags) {
    if (f->present && !f->value) return std::nullopt;
  }
  if (l.opaqueArgs) return std::nullopt;
  if (l.engine == ServingEngine::Vllm && l.externalDataParallel) return std::nullopt;
  const long long tp = l.tensor.value.value_or(1), pp = l.pipeline.value.value_or(1);
  const long long pcp = l.prefillContext.value.value_or(1);  // vLLM only: "PCP expands the process world size"
  long long dp = 1;
  if (l.engine == ServingEngine::Vllm) dp = l.dataLocal.value ? *l.dataLocal.value : l.data.value.value_or(1);
  if (l.engine == ServingEngine::SGLang && !l.dpAttention) dp = l.data.value.value_or(1);
  // Saturating: a product beyond int64 is more GPUs than any pod has, and
  // still reported (TP 5000 on 2 GPUs crashes like TP 8 does).
  w.size = saturatingProduct({tp, pp, pcp, dp});
  w.formula = "tensor-parallel " + std::to_string(tp);
  if (pp != 1 || l.pipeline.present) w.formula += " x pipeline-parallel " + std::to_string(pp);
  if (pcp != 1 || l.prefillContext.present) w.formula += " x prefill-context-parallel " + std::to_string(pcp);
  if (dp != 1) w.formula += " x data-parallel " + std::to_string(dp);
  return w;
}

// LeaderWorkerSet templates: .../leaderWorkerTemplate.leaderTemplate.spec and .workerTemplate.spec.
constexpr std::string_view kLeaderSuffix = "leaderWorkerTemplate.leaderTemplate.spec";
constexpr std::string_view kWorkerSuffix = "leaderWorkerTemplate.workerTemplate.spec";

const PodSite* siteAt(const std::vector<PodSite>& sites, const std::string& apiPath) {
  for (const PodSite& s : sites) {
    if (s.specPath.apiPath() == apiPath) return &s;
  }
  return nullptr;
}

struct GroupGpus {
  long long gpus = 0;
  std::string how;  // "the LeaderWorkerSet group of 2 pods gets 16 GPUs (8 + 1 x 8)"
};

GroupGpus groupGpus(const CheckContext& ctx, const PodSite& site, long long pods) {
  const std::string path = site.specPath.apiPath();
  std::string prefix;
  if (path.ends_with(kLeaderSuffix)) prefix = path.substr(0, path.size() - kLeaderSuffix.size());
  else if (path.ends_with(kWorkerSuffix)) prefix = path.substr(0, path.size() - kWorkerSuffix.size());
  const PodSite* leader = site.podsInGroup ? siteAt(ctx.sites, prefix + std::string(kLeaderSuffix)) : nullptr;
  const PodSite* worker = site.podsInGroup ? siteAt(ctx.sites, prefix + std::string(kWorkerSuffix)) : nullptr;
  GroupGpus g;
  const std::string group = site.ownerKind == "LeaderWorkerSet" ? "the LeaderWorkerSet group of " : "the group of ";
  if (leader && worker) {
    const long long l = std::min(podGpus(*leader, ctx.policy), kMaxGpusPerPod);
    const long long w = std::min(podGpus(*worker, ctx.policy), kMaxGpusPerPod);
    g.gpus = l + (pods - 1) * w;
    g.how = group + std::to_string(pods) + " pods gets " + std::to_string(g.gpus) + " GPUs (leader " +
            std::to_string(l) + " + " + std::to_string(pods - 1) + " x worker " + std::to_string(w) + ")";
  } else {
    const long long each = std::min(podGpus(site, ctx.policy), kMaxGpusPerPod);
    g.gpus = pods * each;
    g.how = group + std::to_string(pods) + " pods gets " + std::to_string(g.gpus) + " GPUs (" +
            std::to_string(pods) + " x " + std::to_string(each) + ")";
  }
  return g;
}

// Whether Ray may place a replica's workers on other pods: a KubeRay object's
// pods form a Ray cluster (a RayJob's submitter pod runs on one), so do the
// head and worker groups of a RayClusterSpec any other object embeds (AIBrix's
// RayClusterFleet), and a container that runs `ray start` or names
// RAY_ADDRESS joins one (reference §14.11).
bool inRayCluster(const PodSite& site, const ServingLaunch& launch) {
  const bool kubeRay = site.ownerApiVersion.starts_with("ray.io/") &&
                       (site.ownerKind == "RayCluster" || site.ownerKind == "RayService" || site.ownerKind == "RayJob");
  return kubeRay || site.inRayClusterSpec || launch.joinsRayCluster;
}

// TGI with --sharded true refuses to start on one GPU (find_num_shards).
std::optional<std::string> shardedOnOneGpu(const ServingLaunch& l, long long gpus) {
  if (l.engine != ServingEngine::Tgi || l.shardedOn != true) return std::nullopt;
  if (l.numShard.value && *l.numShard.value <= 1) return std::string("`sharded` is true but `num_shard` <= 1");
  if (!l.numShard.present && gpus == 1) return std::string("`sharded` is true but only found 1 CUDA devices");
  return std::nullopt;
}

// --- torchrun (reference §15.8) ---------------------------------------------

// A --nproc-per-node value from a JSON field: a string as torchrun reads it,
// an integer as written (a Kubeflow Trainer field is an int32).
ParallelFlag nprocField(const json& value, const FieldPath& path, std::string name) {
  ParallelFlag f;
  f.present = true;
  f.name = std::move(name);
  f.path = path;
  if (value.is_string()) {
    f.text = value.get<std::string>();
    f.value = torchrunProcesses(f.text);
  } else if (value.is_number_unsigned()) {
    f.text = value.dump();
    const auto n = value.get<unsigned long long>();
    f.value = n == 0 ? std::nullopt
                     : std::optional<long long>(std::min<unsigned long long>(n, std::numeric_limits<long long>::max()));
  } else if (value.is_number_integer()) {
    f.text = value.dump();
    const long long n = value.get<long long>();
    if (n > 0) f.value = n;  // zero or negative: no processes to count
  } else {
    f.text = value.dump();
  }
  return f;
}

// What an operator hands torchrun as PET_NPROC_PER_NODE, which replaces the
// container's own value: a Kubeflow PyTorchJob appends spec.nprocPerNode (and
// after it the older spec.elasticPolicy.nProcPerNode) to the env of every
// container of its replicas (training-operator pytorch/envvar.go, elastic.go);
// Kubeflow Trainer's torch plugin sets it on the TrainJob's trainer from
// spec.trainer.numProcPerNode, else to "auto" (plugins/torch/torch.go).
std::optional<ParallelFlag> operatorNproc(const CheckContext& ctx, const PodSite& site, const ContainerRef& c) {
  if (site.ownerKind == "PyTorchJob" && site.ownerApiVersion.starts_with("kubeflow.org/") &&
      c.kind == ContainerKind::App) {
    auto spec = ctx.object.find("spec");
    if (spec == ctx.object.end() || !spec->is_object()) return std::nullopt;
    const FieldPath specPath = FieldPath{}.field("spec");
    auto elastic = spec->find("elasticPolicy");
    if (elastic != spec->end() && elastic->is_object()) {
      if (auto n = elastic->find("nProcPerNode"); n != elastic->end()) {
        return nprocField(*n, specPath.field("elasticPolicy").field("nProcPerNode"), "spec.elasticPolicy.nProcPerNode");
      }
    }
    if (auto n = spec->find("nprocPerNode"); n != spec->end()) {
      return nprocField(*n, specPath.field("nprocPerNode"), "spec.nprocPerNode");
    }
    return std::nullopt;
  }
  if (site.ownerKind == "TrainJob" && site.ownerApiVersion.starts_with("trainer.kubeflow.org/") &&
      c.kind == ContainerKind::Lone) {
    const FieldPath path = c.path.field("numProcPerNode");
    auto n = c.container->find("numProcPerNode");
    if (n != c.container->end()) return nprocField(*n, path, "spec.trainer.numProcPerNode");
    return nprocField(json("auto"), path, "spec.trainer.numProcPerNode");  // one process per GPU
  }
  return std::nullopt;
}

// What to change, by where the value comes from.
std::string nprocAdvice(const ParallelFlag& nproc, long long sees) {
  const std::string n = std::to_string(sees);
  if (nproc.name.starts_with("-")) return "set " + nproc.name + " to " + n + " (or gpu, one process per visible GPU)";
  if (nproc.name == "spec.trainer.numProcPerNode") {
    return "set numProcPerNode to " + n + ", or leave it out (the torch runtime then starts one process per GPU)";
  }
  if (nproc.name.starts_with("spec.")) return "set " + nproc.name + " to " + n + " (or \"gpu\")";
  return "set " + nproc.name + " to " + n + " (or gpu)";
}

// Where the value comes from, when it is not torchrun's own flag.
std::string nprocSource(const ParallelFlag& nproc) {
  if (nproc.name.starts_with("-")) return "";
  if (nproc.name == "PET_NPROC_PER_NODE") return ", which reads PET_NPROC_PER_NODE as --nproc-per-node,";
  if (nproc.name == "spec.trainer.numProcPerNode") {
    return ", given --nproc-per-node by Kubeflow Trainer (PET_NPROC_PER_NODE),";
  }
  return ", given --nproc-per-node by the training operator (PET_NPROC_PER_NODE),";
}

class TensorParallelGpuCount final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    std::set<std::string> reported;  // an operator's field, judged once though every replica reads it
    for (const PodSite& site : ctx.sites) {
      for (const ContainerRef& c : site.containers) {
        if (c.kind == ContainerKind::Ephemeral || c.kind == ContainerKind::Init) continue;
        // No GPU request: another accelerator, DRA, or all GPUs of the node.
        // Asked first: it is cheaper than reading the command line.
        // What one process sees: the GPU resources and the GPU claims the
        // container lists (DRA, implicit deviceclass names), and of MIG
        // devices only one (reference §15.7).
        const ContainerGpus gpus = containerGpus(site, c, ctx.gpu());
        if (!gpus.asksGpu || !gpus.devices || *gpus.devices <= 0) continue;
        const long long own = gpus.mig ? 1 : *gpus.devices;
        // What the first firstAvailable alternatives give: the scheduler's choice whenever a node has them.
        const long long preferred = gpus.mig ? own : std::max(own, gpus.preferredDevices.value_or(own));
        const std::string ownText =
            gpus.mig ? "the container gets " + std::to_string(*gpus.devices) + " MIG device" +
                           (*gpus.devices == 1 ? "" : "s") + ", of which a CUDA process sees one"
                     : "the container gets " + std::to_string(own) + " GPU" + (own == 1 ? "" : "s");
        std::vector<ServingLaunch> launches = findServingLaunches(c);
        for (const ServingLaunch& l : launches) {
          if (l.engine != ServingEngine::Torchrun) continue;
          judgeTorchrun(l, operatorNproc(ctx, site, c), Gpus{own, preferred, ownText}, reported, out);
        }
        std::erase_if(launches, [](const ServingLaunch& l) { return l.engine == ServingEngine::Torchrun; });
        if (launches.empty()) continue;
        const ServingLaunch* launch = &launches.front();
        if (const auto refusal = shardedOnOneGpu(*launch, own)) {
          const std::string shown = renderValue(json(launch->sharded.text));
          out.report(launch->sharded.path,
                     FieldError::invalid(shown,
                                         "TGI's launcher refuses to start (\"" + *refusal +
                                             "\") and the pod crash-loops; sharding needs at least 2 GPUs: request "
                                             "them (and --num-shard " "2 or more), or drop --sharded true"),
                     shown);
          continue;
        }
        const auto world = worldOf(*launch);
        if (!world) continue;

        // Pods one replica spans.
        long long pods = 1;
        if (launch->nnodes.present) {
          if (launch->nnodes.value) pods = *launch->nnodes.value;
          else if (launch->nnodesIsGroupSize && site.podsInGroup) pods = *site.podsInGroup;
          else continue;
        } else if (site.podsInGroup && *site.podsInGroup > 1) {
          pods = *site.podsInGroup;
        } else if (launch->multiNode || (launch->rayExecutor && inRayCluster(site, *launch))) {
          continue;
        }
        if (pods > kMaxPods) continue;
        if (pods > 1 && launch->engine == ServingEngine::Vllm && (launch->data.present || launch->dataLocal.present)) {
          continue;  // data-parallel ranks across pods: who runs where is not in the manifest
        }
        if (pods == 1) {
          judgeLaunchesInOnePod(launches, Gpus{own, preferred, ownText}, out);
          continue;
        }
        const GroupGpus g = groupGpus(ctx, site, pods);
        if (g.gpus != world->size) reportMismatch(*launch, *world, g.gpus, g.how, false, out);
      }
    }
  }

 private:
  // torchrun starts --nproc-per-node processes, each on the GPU of its local
  // rank: more than the GPUs it sees puts two ranks on one GPU, and NCCL
  // aborts. Fewer is not judged: one process may drive several GPUs.
  static void judgeTorchrun(const ServingLaunch& l, std::optional<ParallelFlag> fromOperator, const Gpus& gpus,
                            std::set<std::string>& reported, Reporter& out) {
    const long long own = gpus.fewest;
    const std::string& ownText = gpus.text;
    const bool ownFlag = l.nprocPerNode.present && l.nprocPerNode.name.starts_with("-");
    const ParallelFlag& nproc = !ownFlag && fromOperator ? *fromOperator : l.nprocPerNode;
    if (!nproc.value || l.opaqueArgs) return;  // auto, gpu, an expansion, or flags we cannot see
    if (!l.visibleFrom.empty() && !l.visibleGpus) return;
    const long long sees = l.visibleGpus ? std::min(*l.visibleGpus, own) : own;
    if (*nproc.value <= sees) return;
    if (!reported.insert(nproc.path.apiPath()).second) return;
    const std::string how = l.visibleGpus ? l.visibleFrom + " shows it " + std::to_string(sees) + " of the "
                                                "container's " + std::to_string(own) + " GPUs"
                                          : ownText;
    const std::string shown = renderValue(json(nproc.text));
    const std::string envNote = nproc.name == "PET_NPROC_PER_NODE" ? " (PET_NPROC_PER_NODE)" : "";
    const std::string count = std::to_string(*nproc.value);
    if (const auto fallback = l.visibleGpus ? std::nullopt : fallbackOnly(gpus, *nproc.value, "torchrun")) {
      out.reportWithDefault(nproc.path,
                            FieldError::invalid(shown + envNote, "torchrun" + nprocSource(nproc) + " starts " + count +
                                                                     " processes per pod, one per GPU: " + *fallback),
                            shown, Severity::Warning);
      return;
    }
    out.report(nproc.path,
               FieldError::invalid(shown + envNote,
                                   "torchrun" + nprocSource(nproc) + " starts " + count +
                                       " processes per pod, one per GPU, but " + how +
                                       "; two ranks on one GPU make NCCL abort (\"Duplicate GPU detected\") and the "
                                       "pod crash-loops; " + nprocAdvice(nproc, sees) + ", or request " + count +
                                       " GPUs"),
               shown);
  }

  // The launches of one container, each on the GPUs it sees (its
  // CUDA_VISIBLE_DEVICES share, else all the container's): too few for one is
  // a crash; GPUs no launch uses are idle, which costs money but breaks
  // nothing (a warning).
  static void judgeLaunchesInOnePod(const std::vector<ServingLaunch>& launches, const Gpus& gpus, Reporter& out) {
    const long long own = gpus.fewest;
    const std::string& ownText = gpus.text;
    std::vector<World> worlds;
    for (const ServingLaunch& l : launches) {
      const auto w = worldOf(l);
      // A launch whose size or share is unknown: what the others leave idle is unknown too.
      if (!w || (!l.visibleFrom.empty() && !l.visibleGpus) || l.multiNode) return;
      worlds.push_back(*w);
    }
    bool crashes = false;
    long long used = 0;
    for (std::size_t i = 0; i < launches.size(); ++i) {
      const ServingLaunch& l = launches[i];
      const long long sees = l.visibleGpus ? std::min(*l.visibleGpus, own) : own;
      const auto fallback = l.visibleGpus ? std::nullopt : fallbackOnly(gpus, worlds[i].size, engineName(l.engine));
      if (fallback) {
        reportFallback(l, worlds[i], *fallback, out);
        crashes = true;  // in the fallback; the idle GPUs are judged on the fewest
      } else if (worlds[i].size > sees) {
        const std::string how = l.visibleGpus ? l.visibleFrom + " shows it " + std::to_string(sees) + " of the "
                                                    "container's " + std::to_string(own) + " GPUs"
                                              : ownText;
        reportMismatch(l, worlds[i], sees, how, l.rayExecutor, out);
        crashes = true;
      }
      used = addUnits(used, worlds[i].size);
    }
    // Idle GPUs are judged on what the scheduler gives whenever a node can:
    // the first firstAvailable alternatives, as for the same count written
    // as a plain request.
    const long long have = gpus.preferred;
    if (crashes || used >= have) return;
    const std::string how =
        have > own ? "the container gets " + std::to_string(have) + " GPUs from the first firstAvailable alternatives "
                     "of its claims, which the scheduler allocates whenever a node can give them (" +
                     std::to_string(own) + " only if it falls back to a later one)"
                   : ownText;
    World total = worlds.front();
    if (launches.size() > 1) {
      total.size = used;
      total.formula = std::to_string(launches.size()) + " launches of";
      for (std::size_t i = 0; i < worlds.size(); ++i) {
        total.formula += (i == 0 ? " " : " + ") + std::to_string(worlds[i].size);
      }
    }
    reportMismatch(launches.front(), total, have, how, false, out);
  }

  static void reportFallback(const ServingLaunch& launch, const World& world, const std::string& fallback,
                             Reporter& out) {
    const ParallelFlag& flag = launch.primary();
    const std::string shown = renderValue(json(flag.text));
    const std::string envNote = flag.name.starts_with("-") ? "" : " (" + flag.name + ")";
    const std::string detail = std::string(engineName(launch.engine)) + " runs " + world.formula + " = " +
                               std::to_string(world.size) + " GPU workers per replica: " + fallback;
    out.reportWithDefault(flag.path, FieldError::invalid(shown + envNote, detail), shown, Severity::Warning);
  }

  // One finding on the launch's parallelism flag: a crash (too few GPUs, an
  // error) or idle GPUs (a warning).
  static void reportMismatch(const ServingLaunch& launch, const World& world, long long have, const std::string& how,
                             bool localRay, Reporter& out) {
    const ParallelFlag& flag = launch.primary();
    const std::string shown = renderValue(json(flag.text));
    const std::string engine(engineName(launch.engine));
    const std::string envNote = flag.name.starts_with("-") ? "" : " (" + flag.name + ")";
    const std::string size = std::to_string(world.size), gpus = std::to_string(have);
    // The value, then where it came from when it is an environment variable.
    std::string detail = engine + " runs " + world.formula + " = " + size + " GPU workers per replica, but " + how + "; ";
    if (have < world.size && localRay) {
      detail += "with --distributed-executor-backend ray and no Ray cluster around the pod, vLLM starts a local Ray "
                "instance that holds only this pod's GPUs, waits for a placement group of " + size +
                " GPUs and fails after 1800 s (\"Cannot provide a placement group requiring " + size +
                " GPUs\"); request " + size + " GPUs, lower the parallelism to " + gpus +
                ", or run the replica on a Ray cluster (KubeRay RayCluster or RayService)";
    } else if (have < world.size) {
      detail += engine + " fails at startup (\"World size (" + size + ") is larger than the number of available GPUs (" +
                gpus + ")\") and the pod crash-loops; request " + size + " GPUs or lower the parallelism to " + gpus;
      if (!launch.visibleFrom.empty()) detail += ", or widen " + launch.visibleFrom;
    } else {
      const long long idle = have - world.size;
      detail += std::to_string(idle) + " GPU" + (idle == 1 ? "" : "s") +
                " would sit idle, allocated to this pod and unusable by others; request " + size + " GPUs";
      detail += launch.visibleFrom.empty() && world.formula.find("launches") == std::string::npos
                    ? " or raise the parallelism to " + gpus
                    : " or give the idle GPUs a launch of their own";
      out.reportWithDefault(flag.path, FieldError::invalid(shown + envNote, detail), shown, Severity::Warning);
      return;
    }
    out.report(flag.path, FieldError::invalid(shown + envNote, detail), shown);
  }
};

}  // namespace

std::unique_ptr<Rule> makeTensorParallelGpuCount() { return std::make_unique<TensorParallelGpuCount>(); }

}  // namespace gpuguard::checks
