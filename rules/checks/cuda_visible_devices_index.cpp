// cuda-visible-devices-index: a CUDA_VISIBLE_DEVICES index beyond the GPUs
// the container has. Indices count the devices visible to the process - in a
// pod, its own GPUs from 0 - and an invalid one hides itself and every later
// entry (kubernetes-gpu-semantics.md §15.7, §15.8).
#include <array>
#include <optional>
#include <string>

#include "rules/checks/checks.h"
#include "rules/support/container_gpus.h"
#include "rules/k8s/go_strconv.h"
#include "rules/resources.h"
#include "rules/k8s/field_error.h"

namespace gpuguard::checks {
namespace {

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 2> kPolicyKeys{"gpuResources", "draExtendedResources"};

constexpr RuleDoc kDoc{
    .id = "cuda-visible-devices-index",
    .defaultSeverity = Severity::Error,
    .summary = "A CUDA_VISIBLE_DEVICES index at or beyond the number of GPUs the container gets.",
    .description =
        "CUDA_VISIBLE_DEVICES indices count the devices visible to the process, and inside a pod those are the "
        "container's own GPUs, numbered from 0 whatever their index on the node: a container given 2 GPUs sees "
        "devices 0 and 1. An index CUDA cannot find hides itself and every later entry (CUDA C++ Programming "
        "Guide, \"CUDA Environment Variables\"), so CUDA_VISIBLE_DEVICES=2,3 on a 2-GPU container leaves no device "
        "(\"no CUDA-capable device is detected\") and 0,2 leaves one. A CUDA process sees a single MIG device however "
        "many the container holds (MIG User Guide, \"CUDA Device Enumeration\"), so with MIG only index 0 exists. "
        "The container's GPUs are its GPU resources (nvidia.com/gpu, MIG and shared resources, GPU DeviceClass "
        "resources) and the GPU claims it lists whose templates the input holds (with request: <name>, that "
        "request's devices only); when the container sets "
        "NVIDIA_VISIBLE_DEVICES to a list, that list is what it sees. UUIDs (GPU-..., MIG-...), negative "
        "indices (which hide every device on purpose), $(VAR) and valueFrom are not judged, nor is a container "
        "whose GPU count the input does not tell (a claim whose template is not in view, or with a request of "
        "allocationMode All, which gets every matching device of the node).",
    .remediation =
        "Number the container's GPUs from 0 (CUDA_VISIBLE_DEVICES=0,1 for two GPUs), ask for as many GPUs as "
        "the indices need, or drop CUDA_VISIBLE_DEVICES: every GPU of the container is visible by default.",
    .wrongExample =
        "spec:\n  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    env:\n"
        "    - name: CUDA_VISIBLE_DEVICES\n      value: \"2,3\"\n    resources:\n      limits:\n"
        "        nvidia.com/gpu: 2\n",
    .rightExample =
        "spec:\n  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    env:\n"
        "    - name: CUDA_VISIBLE_DEVICES\n      value: \"0,1\"\n    resources:\n      limits:\n"
        "        nvidia.com/gpu: 2\n",
    .policyKeys = kPolicyKeys,
};

// The devices a CUDA process of the container enumerates, when the input tells.
std::optional<long long> visibleDevices(const CheckContext& ctx, const PodSite& site, const ContainerRef& c) {
  if (const std::optional<LiteralEnv> nvd = literalEnv(c, "NVIDIA_VISIBLE_DEVICES")) {
    // A list of its own decides what the runtime exposes; "all" and the rest: unknown.
    long long listed = 0;
    std::string_view rest = nvd->value;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string_view token = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (token.empty() || token.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
      ++listed;
    }
    return listed > 0 ? std::optional<long long>(listed) : std::nullopt;
  }
  const ContainerGpus gpus = containerGpus(site, c, ctx.gpu());
  if (!gpus.asksGpu || !gpus.devices || *gpus.devices <= 0) return std::nullopt;
  if (gpus.mig) return 1;
  return gpus.devices;
}

class CudaVisibleDevicesIndex final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      for (const ContainerRef& c : site.containers) checkContainer(ctx, site, c, out);
    }
  }

 private:
  static void checkContainer(const CheckContext& ctx, const PodSite& site, const ContainerRef& c, Reporter& out) {
    const std::optional<LiteralEnv> env = literalEnv(c, "CUDA_VISIBLE_DEVICES");
    if (!env || env->value.find("$(") != std::string::npos) return;
    const std::optional<long long> visible = visibleDevices(ctx, site, c);
    if (!visible) return;
    std::string_view rest = env->value;
    long long position = 0;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      std::string_view token = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
      while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
      const std::optional<long long> index = parseGoInt(std::string(token));
      if (!index) return;  // a UUID or anything else: CUDA matches it otherwise
      if (*index < 0) return;  // hides the rest on purpose
      if (*index >= *visible) {
        report(c, *env, *index, position, *visible, out);
        return;
      }
      ++position;
    }
  }

  static void report(const ContainerRef& c, const LiteralEnv& env, long long index, long long position,
                     long long visible, Reporter& out) {
    const std::string effect =
        position == 0 ? "so CUDA sees no device at all (\"no CUDA-capable device is detected\")"
                      : "so CUDA sees only the " + std::to_string(position) + " device(s) listed before it";
    out.report(env.path,
               FieldError::invalid(quotedValue(abbreviated(env.value)),
                                   "index " + std::to_string(index) + " is beyond the " + std::to_string(visible) +
                                       " device(s) container " + std::string(c.name()) +
                                       " sees (numbered from 0 inside the container, whatever their node index); "
                                       "an invalid index hides itself and every later entry, " + effect +
                                       "; number the container's GPUs from 0, or ask for more GPUs"),
               abbreviated(env.value));
  }
};

}  // namespace

std::unique_ptr<Rule> makeCudaVisibleDevicesIndex() { return std::make_unique<CudaVisibleDevicesIndex>(); }

}  // namespace gpuguard::checks
