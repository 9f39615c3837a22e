#include "rules/serving/launch.h"
#include "rules/serving/launch_env.h"
#include "rules/serving/shell_words.h"
#include "rules/k8s/go_strconv.h"

#include <algorithm>
#include <array>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>


namespace gpuguard {
namespace {

using nlohmann::json;

using Token = ShellWord;
using Command = ShellCommand;

bool isDynamic(std::string_view s) { return isDynamicWord(s); }
std::string_view basename(std::string_view s) { return commandBaseName(s); }

// Where an engine starts inside a command: the index of the first argument
// after the launcher words, or nullopt.
std::optional<std::size_t> engineStart(const Command& cmd, ServingEngine& engine) {
  for (std::size_t i = 0; i < cmd.size(); ++i) {
    const std::string& t = cmd[i].text;
    const std::string_view b = basename(t);
    if (b == "vllm" && i + 1 < cmd.size() && cmd[i + 1].text == "serve") {
      engine = ServingEngine::Vllm;
      return i + 2;
    }
    if (t == "vllm.entrypoints.openai.api_server" || t == "vllm.entrypoints.api_server") {
      engine = ServingEngine::Vllm;
      return i + 1;
    }
    if (t == "dynamo.vllm") {
      engine = ServingEngine::Vllm;
      return i + 1;
    }
    if (t == "sglang.launch_server" || t == "sglang_router.launch_server" || t == "dynamo.sglang") {
      engine = ServingEngine::SGLang;
      return i + 1;
    }
    if (b == "text-generation-launcher") {
      engine = ServingEngine::Tgi;
      return i + 1;
    }
    if (b == "torchrun" || t == "torch.distributed.run" || t == "torch.distributed.launch") {
      engine = ServingEngine::Torchrun;
      return i + 1;
    }
  }
  return std::nullopt;
}

// The engine an image runs when the pod does not override its entrypoint.
std::optional<ServingEngine> imageEngine(std::string_view image) {
  if (auto at = image.find('@'); at != std::string_view::npos) image = image.substr(0, at);
  const auto slash = image.rfind('/');
  if (auto colon = image.rfind(':'); colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    image = image.substr(0, colon);
  }
  const std::string_view name = basename(image);
  if (name == "vllm-openai") return ServingEngine::Vllm;
  if (name.find("text-generation-inference") != std::string_view::npos) return ServingEngine::Tgi;
  return std::nullopt;
}

enum class Slot {
  None, Tensor, Pipeline, Data, DataLocal, PrefillContext, Nnodes, NumShard, Sharded, NprocPerNode, Ambiguous
};

struct FlagSpec {
  std::string_view name;
  Slot slot;
  bool takesValue;
  bool multiNode;      // spreads a replica over pods
  bool externalDp;     // vLLM data-parallel ranks across pods
  bool opaque;         // reads arguments from somewhere we cannot see
};

// vLLM's EngineArgs.add_cli_args (vllm/engine/arg_utils.py, 2026).
constexpr std::array<FlagSpec, 36> kVllmFlags{{
    {"--tensor-parallel-size", Slot::Tensor, true, false, false, false},
    {"-tp", Slot::Tensor, true, false, false, false},
    {"--pipeline-parallel-size", Slot::Pipeline, true, false, false, false},
    {"-pp", Slot::Pipeline, true, false, false, false},
    {"--prefill-context-parallel-size", Slot::PrefillContext, true, false, false, false},
    {"-pcp", Slot::PrefillContext, true, false, false, false},
    {"--decode-context-parallel-size", Slot::None, true, false, false, false},  // reuses the TP ranks
    {"-dcp", Slot::None, true, false, false, false},
    {"--data-parallel-size", Slot::Data, true, false, false, false},
    {"-dp", Slot::Data, true, false, false, false},
    {"--data-parallel-size-local", Slot::DataLocal, true, false, false, false},
    {"-dpl", Slot::DataLocal, true, false, false, false},
    {"--nnodes", Slot::Nnodes, true, true, false, false},
    {"-n", Slot::Nnodes, true, true, false, false},
    {"--node-rank", Slot::None, true, true, false, false},
    {"-r", Slot::None, true, true, false, false},
    {"--master-addr", Slot::None, true, true, false, false},
    {"--master-port", Slot::None, true, false, false, false},
    {"--headless", Slot::None, false, true, true, false},
    {"--data-parallel-rank", Slot::None, true, true, true, false},
    {"-dpn", Slot::None, true, true, true, false},
    {"--data-parallel-start-rank", Slot::None, true, true, true, false},
    {"-dpr", Slot::None, true, true, true, false},
    {"--data-parallel-address", Slot::None, true, true, true, false},
    {"-dpa", Slot::None, true, true, true, false},
    {"--data-parallel-rpc-port", Slot::None, true, false, false, false},
    {"-dpp", Slot::None, true, false, false, false},
    {"--data-parallel-backend", Slot::None, true, false, false, false},  // ray: see readFlags
    {"-dpb", Slot::None, true, false, false, false},
    {"--data-parallel-hybrid-lb", Slot::None, false, true, true, false},
    {"-dph", Slot::None, false, true, true, false},
    {"--data-parallel-external-lb", Slot::None, false, true, true, false},
    {"-dpe", Slot::None, false, true, true, false},
    {"--enable-expert-parallel", Slot::None, false, false, false, false},  // reuses the TP x DP ranks
    {"--config", Slot::None, true, false, false, true},
    {"--distributed-executor-backend", Slot::None, true, false, false, false},  // ray: see readFlags
}};

// SGLang's ServerArgs (python/sglang/srt/server_args.py, 2026). Expert and
// attention-context parallelism run inside the tensor-parallel group.
constexpr std::array<FlagSpec, 20> kSglangFlags{{
    {"--tp-size", Slot::Tensor, true, false, false, false},
    {"--tensor-parallel-size", Slot::Tensor, true, false, false, false},
    {"--tp", Slot::Tensor, true, false, false, false},  // argparse abbreviation, used in SGLang's docs
    {"--pp-size", Slot::Pipeline, true, false, false, false},
    {"--pipeline-parallel-size", Slot::Pipeline, true, false, false, false},
    {"--pp", Slot::Ambiguous, true, false, false, false},  // ambiguous abbreviation: argparse rejects it
    {"--dp-size", Slot::Data, true, false, false, false},
    {"--data-parallel-size", Slot::Data, true, false, false, false},
    {"--dp", Slot::Data, true, false, false, false},
    {"--expert-parallel-size", Slot::None, true, false, false, false},
    {"--ep-size", Slot::None, true, false, false, false},
    {"--ep", Slot::None, true, false, false, false},
    {"--attention-context-parallel-size", Slot::None, true, false, false, false},
    {"--attn-cp-size", Slot::None, true, false, false, false},
    {"--moe-dp-size", Slot::None, true, false, false, false},
    {"--nnodes", Slot::Nnodes, true, true, false, false},
    {"--node-rank", Slot::None, true, true, false, false},
    {"--dist-init-addr", Slot::None, true, true, false, false},
    {"--enable-dp-attention", Slot::None, false, false, false, false},
    {"--config", Slot::None, true, false, false, true},
}};

// TGI's launcher (launcher/src/main.rs, Args and find_num_shards).
constexpr std::array<FlagSpec, 2> kTgiFlags{{{"--num-shard", Slot::NumShard, true, false, false, false},
                                             {"--sharded", Slot::Sharded, true, false, false, false}}};

// torchrun's get_args_parser (torch/distributed/run.py, 2026), each flag in
// its dashed spelling (the underscored one is its alias); --use-env is
// torch.distributed.launch's. Every other word starting with - is refused.
constexpr std::array<FlagSpec, 31> kTorchrunFlags{{
    {"--nproc-per-node", Slot::NprocPerNode, true, false, false, false},
    {"--nnodes", Slot::None, true, false, false, false},  // pods; --nproc-per-node counts per pod
    {"--rdzv-backend", Slot::None, true, false, false, false},
    {"--rdzv-endpoint", Slot::None, true, false, false, false},
    {"--rdzv-id", Slot::None, true, false, false, false},
    {"--rdzv-conf", Slot::None, true, false, false, false},
    {"--standalone", Slot::None, false, false, false, false},
    {"--max-restarts", Slot::None, true, false, false, false},
    {"--monitor-interval", Slot::None, true, false, false, false},
    {"--start-method", Slot::None, true, false, false, false},
    {"--event-log-handler", Slot::None, true, false, false, false},
    {"--role", Slot::None, true, false, false, false},
    {"-m", Slot::None, false, false, false, false},
    {"--module", Slot::None, false, false, false, false},
    {"--no-python", Slot::None, false, false, false, false},
    {"--run-path", Slot::None, false, false, false, false},
    {"--log-dir", Slot::None, true, false, false, false},
    {"-r", Slot::None, true, false, false, false},
    {"--redirects", Slot::None, true, false, false, false},
    {"-t", Slot::None, true, false, false, false},
    {"--tee", Slot::None, true, false, false, false},
    {"--local-ranks-filter", Slot::None, true, false, false, false},
    {"--node-rank", Slot::None, true, false, false, false},
    {"--master-addr", Slot::None, true, false, false, false},
    {"--master-port", Slot::None, true, false, false, false},
    {"--local-addr", Slot::None, true, false, false, false},
    {"--logs-specs", Slot::None, true, false, false, false},
    {"--numa-binding", Slot::None, true, false, false, false},
    {"--signals-to-handle", Slot::None, true, false, false, false},
    {"--use-env", Slot::None, false, false, false, false},
    {"-h", Slot::None, false, false, false, false},
}};

const FlagSpec* findFlag(ServingEngine engine, std::string_view name) {
  auto search = [&](const auto& table) -> const FlagSpec* {
    for (const FlagSpec& f : table) {
      if (f.name == name) return &f;
    }
    return nullptr;
  };
  switch (engine) {
    case ServingEngine::Vllm: return search(kVllmFlags);
    case ServingEngine::SGLang: return search(kSglangFlags);
    case ServingEngine::Tgi: return search(kTgiFlags);
    case ServingEngine::Torchrun: return search(kTorchrunFlags);
  }
  return nullptr;
}

ParallelFlag* slotOf(ServingLaunch& l, Slot s) {
  switch (s) {
    case Slot::Tensor: return &l.tensor;
    case Slot::Pipeline: return &l.pipeline;
    case Slot::Data: return &l.data;
    case Slot::DataLocal: return &l.dataLocal;
    case Slot::PrefillContext: return &l.prefillContext;
    case Slot::Nnodes: return &l.nnodes;
    case Slot::NumShard: return &l.numShard;
    case Slot::Sharded: return &l.sharded;
    case Slot::NprocPerNode: return &l.nprocPerNode;
    case Slot::Ambiguous: return &l.pipeline;
    case Slot::None: return nullptr;
  }
  return nullptr;
}

// clap's bool value parser: "true" or "false", nothing else.
std::optional<bool> clapBool(std::string_view s) {
  if (s == "true") return true;
  if (s == "false") return false;
  return std::nullopt;
}

std::optional<long long> positiveLiteral(const Token& t) {
  if (t.dynamic || !isCanonicalUnsigned(t.text)) return std::nullopt;
  const long long v = std::stoll(t.text);
  return v > 0 ? std::optional<long long>(v) : std::nullopt;
}

// Reads the engine's flags from cmd[start..]. argparse keeps the last value of
// a repeated flag.
void readFlags(const Command& cmd, std::size_t start, ServingLaunch& launch) {
  bool modelPositionalSeen = false;
  for (std::size_t i = start; i < cmd.size(); ++i) {
    const Token& t = cmd[i];
    if (t.text.size() < 2 || t.text[0] != '-' || (t.text[1] >= '0' && t.text[1] <= '9')) {
      // A positional word. torchrun's first is the training script: the
      // words after it are the script's. vLLM's `serve` takes the model
      // first; anything else dynamic may expand into flags we cannot see.
      if (launch.engine == ServingEngine::Torchrun) {
        launch.opaqueArgs |= t.dynamic;  // "$@", $ARGS: may hold more of torchrun's own flags
        break;
      }
      if (t.dynamic && (t.text.find("$@") != std::string::npos || modelPositionalSeen ||
                        launch.engine != ServingEngine::Vllm)) {
        launch.opaqueArgs = true;
      }
      modelPositionalSeen = true;
      continue;
    }
    std::string name = t.text;
    std::optional<Token> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      Token v = t;
      v.text = name.substr(eq + 1);
      v.dynamic = isDynamic(v.text);
      value = v;
      name.resize(eq);
    }
    // vLLM's FlexibleArgumentParser reads --pipeline_parallel_size as --pipeline-parallel-size.
    // So does torchrun, which registers both spellings of each flag.
    if ((launch.engine == ServingEngine::Vllm || launch.engine == ServingEngine::Torchrun) && name.starts_with("--")) {
      std::replace(name.begin(), name.end(), '_', '-');
    }
    if (t.dynamic && !value) {
      launch.opaqueArgs = true;  // "--$(FLAG)"
      continue;
    }

    const FlagSpec* spec = findFlag(launch.engine, name);
    const bool takesValue = spec ? spec->takesValue : true;
    std::string written = t.text;
    FieldPath where = t.path;
    if (!value && takesValue && i + 1 < cmd.size() &&
        (spec || cmd[i + 1].text.empty() || cmd[i + 1].text[0] != '-')) {
      value = cmd[++i];
      written += " " + value->text;
    }
    if (!spec) continue;  // some other flag, with its value consumed
    if (spec->multiNode) launch.multiNode = true;
    if (spec->externalDp) launch.externalDataParallel = true;
    if (spec->opaque) launch.opaqueArgs = true;
    if (name == "--enable-dp-attention") launch.dpAttention = true;
    if (name == "--distributed-executor-backend" && value) {
      launch.rayExecutor = value->text == "ray";
      // external_launcher (torchrun), or a value we cannot read: workers may live in other pods
      if (value->text != "mp" && value->text != "uni" && value->text != "ray") launch.multiNode = true;
    }
    if ((name == "--data-parallel-backend" || name == "-dpb") && value && value->text == "ray") {
      launch.multiNode = true;  // data-parallel ranks placed on a Ray cluster
    }
    if (ParallelFlag* slot = slotOf(launch, spec->slot)) {
      slot->present = true;
      slot->text = written;
      slot->name = name;
      slot->path = where;
      slot->value = spec->slot == Slot::Ambiguous || !value ? std::nullopt : positiveLiteral(*value);
      if (spec->slot == Slot::NprocPerNode) {
        slot->value = value && !value->dynamic ? torchrunProcesses(value->text) : std::nullopt;
      }
      if (spec->slot == Slot::Sharded) launch.shardedOn = value && !value->dynamic ? clapBool(value->text) : std::nullopt;
      if (spec->slot == Slot::Nnodes) {
        launch.nnodesIsGroupSize = value && value->dynamic && value->text.find("LWS_GROUP_SIZE") != std::string::npos;
      }
    }
  }
}

// Script lines that build a Ray cluster across pods.
bool scriptSpreadsOverPods(std::span<const Command> commands) {
  for (const Command& cmd : commands) {
    for (std::size_t i = 0; i < cmd.size(); ++i) {
      const std::string& t = cmd[i].text;
      if ((basename(t) == "ray" && i + 1 < cmd.size() && cmd[i + 1].text == "start") ||
          t.find("multi-node-serving") != std::string::npos || t.find("ray_address") != std::string::npos ||
          t.find("ray_cluster_size") != std::string::npos) {
        return true;
      }
    }
  }
  return false;
}

// TGI's launcher reads each of its flags from an env var of the same name
// (clap `env`), torchrun from PET_<FLAG> (its argparse `env` action); a flag
// on the command line wins.
void readFlagEnv(const ContainerRef& c, std::size_t i, const json& e, const std::string& name, ServingLaunch& launch) {
  ParallelFlag& flag = name == "NUM_SHARD" ? launch.numShard
                       : name == "SHARDED" ? launch.sharded
                                           : launch.nprocPerNode;
  auto value = e.find("value");
  Token t;
  t.text = value != e.end() && value->is_string() ? value->get<std::string>() : "";
  t.dynamic = value == e.end() || !value->is_string() || isDynamic(t.text);
  flag.present = true;
  flag.text = t.text;
  flag.name = name;
  flag.path = c.path.field("env").index(i).field("value");
  flag.value = positiveLiteral(t);
  if (name == "SHARDED") launch.shardedOn = t.dynamic ? std::nullopt : clapBool(t.text);
  if (name == "PET_NPROC_PER_NODE") flag.value = t.dynamic ? std::nullopt : torchrunProcesses(t.text);
}

void readEnv(const ContainerRef& c, ServingLaunch& launch) {
  auto env = c.container->find("env");
  if (env == c.container->end() || !env->is_array()) return;
  const bool shardsFromFlags = launch.numShard.present, shardedFromFlags = launch.sharded.present;
  const bool nprocFromFlags = launch.nprocPerNode.present;
  for (std::size_t i = 0; i < env->size(); ++i) {
    const json& e = (*env)[i];
    if (!e.is_object()) continue;
    auto name = e.find("name");
    if (name == e.end() || !name->is_string()) continue;
    if (*name == "RAY_ADDRESS") launch.joinsRayCluster = true;  // ray.init() connects there
    if (launch.engine == ServingEngine::Torchrun && *name == "PET_NPROC_PER_NODE" && !nprocFromFlags) {
      readFlagEnv(c, i, e, name->get<std::string>(), launch);
    }
    if (launch.engine != ServingEngine::Tgi) continue;
    if ((*name == "NUM_SHARD" && !shardsFromFlags) || (*name == "SHARDED" && !shardedFromFlags)) {
      readFlagEnv(c, i, e, name->get<std::string>(), launch);
    }
  }
}

}  // namespace

std::string_view engineName(ServingEngine e) {
  switch (e) {
    case ServingEngine::Vllm: return "vLLM";
    case ServingEngine::SGLang: return "SGLang";
    case ServingEngine::Tgi: return "TGI";
    case ServingEngine::Torchrun: return "torchrun";
  }
  return "";
}

std::optional<long long> torchrunProcesses(std::string_view value) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const auto first = value.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return std::nullopt;
  value = value.substr(first, value.find_last_not_of(kSpace) - first + 1);
  if (value.starts_with('+')) value.remove_prefix(1);
  if (value.empty() || value.front() == '_' || value.back() == '_') return std::nullopt;
  long long n = 0;
  bool saturated = false;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char ch = value[i];
    if (ch == '_' && value[i - 1] != '_') continue;  // int("1_0") is 10; "1__0" is refused
    if (ch < '0' || ch > '9') return std::nullopt;
    saturated = saturated || __builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, ch - '0', &n);
  }
  if (saturated) return std::numeric_limits<long long>::max();
  return n > 0 ? std::optional<long long>(n) : std::nullopt;
}

const ParallelFlag& ServingLaunch::primary() const {
  if (engine == ServingEngine::Tgi) return numShard.present || !sharded.present ? numShard : sharded;
  if (engine == ServingEngine::Torchrun) return nprocPerNode;
  if (tensor.present) return tensor;
  if (pipeline.present) return pipeline;
  if (data.present) return data;
  return dataLocal;
}

namespace {

constexpr std::string_view kCudaVisible = "CUDA_VISIBLE_DEVICES";

// A shell word CUDA_VISIBLE_DEVICES=... : its device count and text.
bool readVisibleAssignment(const Token& t, std::optional<long long>& count, std::string& from) {
  if (!t.text.starts_with(kCudaVisible) || t.text.size() <= kCudaVisible.size() || t.text[kCudaVisible.size()] != '=') {
    return false;
  }
  count = visibleCount(t.text.substr(kCudaVisible.size() + 1), t.dynamic);
  from = t.text;
  return true;
}

// The container's own CUDA_VISIBLE_DEVICES env, when its value is literal.
void readVisibleEnv(const ContainerRef& c, ServingLaunch& launch) {
  auto env = c.container->find("env");
  if (env == c.container->end() || !env->is_array()) return;
  for (const json& e : *env) {
    if (!e.is_object() || e.value("name", json()) != json(kCudaVisible)) continue;
    auto value = e.find("value");
    if (value == e.end() || !value->is_string()) {
      launch.visibleGpus.reset();
      launch.visibleFrom = std::string(kCudaVisible) + " (env, not a literal value)";
      continue;
    }
    const std::string text = value->get<std::string>();
    launch.visibleGpus = visibleCount(text, isDynamic(text));
    launch.visibleFrom = std::string(kCudaVisible) + "=" + text + " (env)";
  }
}

}  // namespace

std::optional<ServingLaunch> findServingLaunch(const ContainerRef& container) {
  std::vector<ServingLaunch> all = findServingLaunches(container);
  if (all.empty()) return std::nullopt;
  return std::move(all.front());
}

std::vector<ServingLaunch> findServingLaunches(const ContainerRef& container) {
  const ContainerCommands words = containerCommands(container);
  const std::span<const Command> commands = words.commands();
  const Command& argv = words.argv;
  const bool hasCommand = words.hasCommand;

  std::vector<ServingLaunch> launches;
  // `export CUDA_VISIBLE_DEVICES=...` holds for the commands after it.
  std::optional<long long> exported;
  std::string exportedFrom;
  bool anyExport = false;
  const bool spreads = scriptSpreadsOverPods(commands);
  std::vector<std::size_t> launchCommands;
  for (std::size_t index = 0; index < commands.size(); ++index) {
    const Command& cmd = commands[index];
    if (cmd.size() >= 2 && cmd[0].text == "export") {
      for (std::size_t i = 1; i < cmd.size(); ++i) anyExport |= readVisibleAssignment(cmd[i], exported, exportedFrom);
      continue;
    }
    ServingEngine engine{};
    const auto start = engineStart(cmd, engine);
    if (!start) continue;
    ServingLaunch launch;
    launch.engine = engine;
    readFlags(cmd, *start, launch);
    if (spreads) {
      launch.multiNode = true;
      launch.joinsRayCluster = true;
    }
    readEnv(container, launch);
    readVisibleEnv(container, launch);
    if (anyExport) {
      launch.visibleGpus = exported;
      launch.visibleFrom = exportedFrom;
    }
    // The words before the launcher: an inline CUDA_VISIBLE_DEVICES=... prefix.
    for (std::size_t i = 0; i < *start; ++i) readVisibleAssignment(cmd[i], launch.visibleGpus, launch.visibleFrom);
    launches.push_back(std::move(launch));
    launchCommands.push_back(index);
  }
  // Launches in different branches of an if, case or `||` (TP 8 when the
  // node shows 8 GPUs, else TP 2): which one runs is decided at run time,
  // so none is judged, rather than one that may never run.
  if (words.runsShell && anyTwoInAlternativeBranches(words, launchCommands)) return {};
  if (!launches.empty()) return launches;
  // No launcher in the command: the image's own entrypoint, when not overridden.
  if (!hasCommand) {
    if (auto engine = imageEngine(container.image())) {
      ServingLaunch launch;
      launch.engine = *engine;
      readFlags(argv, 0, launch);
      readEnv(container, launch);
      readVisibleEnv(container, launch);
      launches.push_back(std::move(launch));
    }
  }
  return launches;
}

}  // namespace gpuguard
