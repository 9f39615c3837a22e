// nvidia-visible-devices-env: a container that sets NVIDIA_VISIBLE_DEVICES
// itself reaches GPUs the scheduler never gave it (kubernetes-gpu-semantics.md
// §9.3, §15.3).
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "rules/checks/checks.h"
#include "rules/support/container_gpus.h"
#include "rules/k8s/json_access.h"
#include "rules/resources.h"
#include "rules/k8s/field_error.h"
#include "text/ascii.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 2> kPolicyKeys{"gpuResources", "draExtendedResources"};

constexpr RuleDoc kDoc{
    .id = "nvidia-visible-devices-env",
    .defaultSeverity = Severity::Error,
    .summary = "A container that sets NVIDIA_VISIBLE_DEVICES itself (all, indices or UUIDs) and so reaches GPUs "
               "the scheduler did not give it.",
    .description =
        "NVIDIA_VISIBLE_DEVICES tells the NVIDIA container runtime which GPUs to put in a container. The device "
        "plugin sets it to the GPUs it allocated, but the kubelet appends the container's own env after the "
        "plugin's, so the container's value wins, and nvidia-container-toolkit honours it unless "
        "accept-nvidia-visible-devices-envvar-when-unprivileged = false (default true). A pod run by the nvidia "
        "runtime (runtimeClassName: nvidia, or a node where nvidia is the default runtime, as on GPU Operator "
        "releases before v25.10 and many GPU node images) with NVIDIA_VISIBLE_DEVICES=all gets every GPU of the "
        "node, with or without a GPU request: it reads other tenants' GPUs, and the GPUs the scheduler counts as "
        "free are in use. The env is never a GPU request. Reported as an error when the container asks for no "
        "GPU (nvidia.com/gpu, a GPU DeviceClass resource or a GPU claim it lists) or names more GPUs than it asks "
        "for; as a warning when it asks for GPUs and names all of the node's (harmless only when it takes every "
        "GPU of the node) or as many node indices or UUIDs as it asks for (they name the node's GPUs, not the ones "
        "allocated to it, which may be another pod's). void, none and an empty value give no GPU and are not "
        "reported; neither is a path (the device plugin's volume-mounts strategy), a $(VAR) reference or "
        "valueFrom. NVIDIA's own node agents (images k8s-device-plugin, gpu-feature-discovery, dcgm-exporter, "
        "k8s-mig-manager, k8s-dra-driver-gpu, the GPU Operator's driver, toolkit and validator) read every GPU by "
        "design and are not judged, nor are privileged containers, which reach every device of the node "
        "anyway; other DaemonSets get a warning, since a node agent may need every GPU. The "
        "cluster closes the hole for unprivileged containers with the device plugin's deviceListStrategy "
        "volume-mounts (or cdi-annotations / cdi-cri) together with the toolkit's "
        "accept-nvidia-visible-devices-envvar-when-unprivileged = false; where it does, turn the rule off in "
        "the policy (rules: {nvidia-visible-devices-env: off}).",
    .remediation =
        "Remove NVIDIA_VISIBLE_DEVICES and ask for the GPUs the container needs (resources.limits nvidia.com/gpu, "
        "or a DRA claim): the device plugin or DRA driver then exposes exactly those. To choose among them inside "
        "the container, use CUDA_VISIBLE_DEVICES with indices counted from 0.",
    .wrongExample =
        "spec:\n  runtimeClassName: nvidia\n  containers:\n  - name: cuda\n"
        "    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    env:\n    - name: NVIDIA_VISIBLE_DEVICES\n"
        "      value: all\n",
    .rightExample =
        "spec:\n  runtimeClassName: nvidia\n  containers:\n  - name: cuda\n"
        "    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
    .policyKeys = kPolicyKeys,
};

// What an NVIDIA_VISIBLE_DEVICES value names.
struct Named {
  bool all = false;
  long long count = 0;  // GPUs listed (indices, UUIDs, CDI names), when not all
};

// nullopt: no GPU access (void, none, empty), the volume-mounts path, or a
// value only the kubelet knows ($(VAR)).
std::optional<Named> namedGpus(std::string_view value) {
  const std::string v = text::asciiLowercase(value);
  const auto trimmed = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  const std::string_view whole = trimmed(v);
  if (whole.empty() || whole == "void" || whole == "none" || whole.front() == '/' ||
      whole.find("$(") != std::string_view::npos) {
    return std::nullopt;
  }
  Named out;
  std::string_view rest = whole;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view token = trimmed(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (token.empty()) continue;
    // "all", or the CDI name "nvidia.com/gpu=all" (CDI mode, §15.3).
    if (token == "all" || token.ends_with("=all")) out.all = true;
    ++out.count;
  }
  if (!out.all && out.count == 0) return std::nullopt;
  return out;
}

// A privileged container reaches every device of the node anyway; the env
// widens nothing, and the toolkit honours it for privileged containers
// whatever its settings.
bool isPrivileged(const ContainerRef& c) {
  const json* sc = c.container && c.container->is_object() ? objectAt(*c.container, "securityContext") : nullptr;
  const json* privileged = sc ? member(*sc, "privileged") : nullptr;
  return privileged && privileged->is_boolean() && privileged->get<bool>();
}

bool isDaemonSet(const PodSite& site) { return site.ownerKind == "DaemonSet"; }

std::string runtimeNote(const PodSite& site) {
  const std::string* rc = site.spec && site.spec->is_object() ? stringAt(*site.spec, "runtimeClassName") : nullptr;
  if (rc && text::asciiLowercase(*rc).find("nvidia") != std::string::npos) {
    return "with runtimeClassName " + *rc + " the NVIDIA runtime honours it";
  }
  return "wherever the NVIDIA runtime runs the container (runtimeClassName: nvidia, or a node whose default "
         "runtime is nvidia) it is honoured";
}

class NvidiaVisibleDevicesEnv final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      for (const ContainerRef& c : site.containers) checkContainer(ctx, site, c, out);
    }
  }

 private:
  static void checkContainer(const CheckContext& ctx, const PodSite& site, const ContainerRef& c, Reporter& out) {
    const std::optional<LiteralEnv> env = literalEnv(c, "NVIDIA_VISIBLE_DEVICES");
    if (!env) return;
    const std::optional<Named> named = namedGpus(env->value);
    if (!named || isNvidiaNodeAgentImage(c.image()) || isPrivileged(c)) return;
    const ContainerGpus gpus = containerGpus(site, c, ctx.gpu());
    const std::string shown = quotedValue(abbreviated(env->value));
    const std::string reach = named->all ? "every GPU of the node" : std::to_string(named->count) + " GPU(s)";
    const std::string fix = "; remove it and ask for the GPUs with resources.limits nvidia.com/gpu (or a DRA "
                            "claim): the device plugin then sets NVIDIA_VISIBLE_DEVICES to the container's own";
    if (!gpus.asksGpu) {
      const std::string detail = "container " + std::string(c.name()) + " asks for no GPU, yet " + runtimeNote(site) +
                                 " and gives it " + reach +
                                 " - GPUs the scheduler counts as free, other tenants' included; the env is not a "
                                 "GPU request" + fix;
      if (isDaemonSet(site)) {
        out.reportWithDefault(env->path,
                              FieldError::invalid(shown, detail + " (a node agent that must read every GPU: "
                                                                  "suppress the finding for it)"),
                              abbreviated(env->value), Severity::Warning);
      } else {
        out.report(env->path, FieldError::invalid(shown, detail), abbreviated(env->value));
      }
      return;
    }
    if (!gpus.devices) {
      if (named->all) reportAllWithGpus(c, env->path, shown, abbreviated(env->value), "", out);
      return;
    }
    const std::string asks = std::to_string(*gpus.devices) + " GPU(s)";
    if (named->all) {
      reportAllWithGpus(c, env->path, shown, abbreviated(env->value), asks, out);
    } else if (named->count > *gpus.devices) {
      out.report(env->path,
                 FieldError::invalid(shown, "container " + std::string(c.name()) + " asks for " + asks +
                                                " but names " + std::to_string(named->count) + " of the node's; " +
                                                runtimeNote(site) + ", so it reaches GPUs the scheduler gave "
                                                "other pods or counts as free" + fix),
                 abbreviated(env->value));
    } else {
      out.reportWithDefault(
          env->path,
          FieldError::invalid(shown, "container " + std::string(c.name()) +
                                         " names node GPUs by index or UUID in place of the " + asks +
                                         " the device plugin allocated, which may be others (another pod's); " +
                                         runtimeNote(site) + fix),
          abbreviated(env->value), Severity::Warning);
    }
  }

  static void reportAllWithGpus(const ContainerRef& c, const FieldPath& path, const std::string& shown,
                                const std::string& value, const std::string& asks, Reporter& out) {
    out.reportWithDefault(path,
                          FieldError::invalid(shown, "container " + std::string(c.name()) + " asks for " +
                                                         (asks.empty() ? std::string("GPUs") : asks) +
                                                         " but names every GPU of the node, so unless it takes "
                                                         "them all it reaches GPUs the scheduler gave other pods; "
                                                         "remove it: the device plugin sets NVIDIA_VISIBLE_DEVICES "
                                                         "to the container's own GPUs"),
                          value, Severity::Warning);
  }
};

}  // namespace

std::unique_ptr<Rule> makeNvidiaVisibleDevicesEnv() { return std::make_unique<NvidiaVisibleDevicesEnv>(); }

}  // namespace gpuguard::checks
