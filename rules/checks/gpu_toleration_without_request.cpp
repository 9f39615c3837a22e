// gpu-toleration-without-request: a workload that tolerates the GPU node
// taint but asks for no GPU.
#include <array>
#include <algorithm>
#include <set>
#include <string>
#include <string_view>

#include "rules/checks/checks.h"
#include "rules/resources.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/quantity.h"
#include "rules/k8s/taints.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 3> kPolicyKeys{"gpuResources", "draExtendedResources", "gpuTaints"};

constexpr RuleDoc kDoc{
    .id = "gpu-toleration-without-request",
    .defaultSeverity = Severity::Warning,
    .summary = "A pod that tolerates the GPU nodes' taint but asks for no GPU.",
    .description =
        "GPU nodes are tainted (policy gpuTaints, by default nvidia.com/gpu:NoSchedule) so that only GPU pods "
        "land there. A pod that tolerates the taint without asking for a GPU can be scheduled onto a GPU node "
        "and hold its CPU and memory: GPU pods then stay Pending on a node whose GPUs are free, and the "
        "autoscaler keeps expensive nodes up for CPU work. A toleration counts when it names the taint's key "
        "and tolerates it as Kubernetes' ToleratesTaint does. A toleration with an empty key and operator "
        "Exists tolerates every taint; it is not counted, because it is written to run anywhere (node agents, "
        "cluster-critical controllers), not to reach GPU nodes in particular. A pod asks for a GPU when a "
        "container requests more than zero of any device, i.e. of a resource other than cpu, memory, "
        "ephemeral-storage and hugepages (a GPU under a name the policy does not list: HAMi's nvidia.com/gpumem, "
        "amd.com/gpu, a name filled in by a template), when it has DRA resourceClaims, when a container sets "
        "NVIDIA_VISIBLE_DEVICES itself (the NVIDIA runtime then hands it GPUs directly, as the GPU Operator's "
        "validators do), when its template asks for devices through CDI annotations (cdi.k8s.io/*, "
        "nvidia.cdi.k8s.io/*), or when it carries KAI Scheduler's gpu-fraction / gpu-memory annotation. "
        "DaemonSets (and Pods owned by one) are exempt: the device plugin, DCGM exporter and node agents must "
        "run on GPU nodes.",
    .remediation =
        "Remove the GPU toleration from pods that do not use a GPU, or request the GPU the pod is meant to use "
        "(resources.limits nvidia.com/gpu).",
    .wrongExample =
        "spec:\n  tolerations:\n  - key: nvidia.com/gpu\n    operator: Exists\n    effect: NoSchedule\n"
        "  containers:\n  - name: web\n    image: nginx:1.27\n",
    .rightExample = "spec:\n  containers:\n  - name: web\n    image: nginx:1.27\n",
    .policyKeys = kPolicyKeys,
};

// cpu, memory, storage and hugepages: what every pod asks for. Anything else
// is a device, possibly a GPU under a name the policy does not know.
bool isComputeResource(std::string_view name) {
  return name == "cpu" || name == "memory" || name == "ephemeral-storage" || name == "storage" ||
         name.starts_with("hugepages-") || name.starts_with("requests.") || name.starts_with("limits.");
}

// NVIDIA_VISIBLE_DEVICES set by the pod: the NVIDIA container runtime hands
// the container those GPUs without the device plugin.
bool setsVisibleDevices(const ContainerRef& c) {
  auto env = c.container->find("env");
  if (env == c.container->end() || !env->is_array()) return false;
  return std::any_of(env->begin(), env->end(), [](const json& e) {
    if (!e.is_object() || !e.contains("name") || e["name"] != "NVIDIA_VISIBLE_DEVICES") return false;
    auto v = e.find("value");
    if (v == e.end() || !v->is_string()) return true;  // valueFrom: some GPUs
    const std::string& s = v->get_ref<const std::string&>();
    return !(s.empty() || s == "void" || s == "none");
  });
}

// GPUs by any source gpu_use knows, or any container asking for more than
// zero of a device (a GPU under a name the policy does not list), or for
// GPUs directly.
bool asksForGpuResource(const PodSite& site, const GpuFacts& gpu) {
  if (usesGpus(site, gpu)) return true;
  for (const ContainerRef& c : site.containers) {
    if (c.kind == ContainerKind::Ephemeral) continue;
    if (setsVisibleDevices(c)) return true;
    const ContainerResources& r = resourcesOf(c, false);
    for (const auto* list : {&r.limits, &r.requests}) {
      for (const ResourceEntry& e : *list) {
        if (isComputeResource(e.name)) continue;
        const QuantityValue q = decodeQuantity(*e.value);
        if (!q.quantity || q.quantity->isZero() || q.quantity->isNegative()) continue;
        return true;
      }
    }
    // DRA: container resources.claims.
    if (auto res = c.container->find("resources"); res != c.container->end() && res->is_object()) {
      if (auto claims = res->find("claims"); claims != res->end() && claims->is_array() && !claims->empty()) return true;
    }
  }
  if (site.operatorClaim) return true;  // KServe's Managed DRA adds a claim
  return site.resourceClaims.value && site.resourceClaims.value->is_array() && !site.resourceClaims.value->empty();
}

// The object holding the pod spec (a Pod, a pod template): the node one
// step above it, walked along the spec path's segments.
const json* holderOf(const json& object, const PodSite& site) {
  const std::vector<FieldPath::Step> steps = site.specPath.segments();
  if (steps.empty()) return nullptr;
  const json* node = &object;
  for (std::size_t i = 0; node && i + 1 < steps.size(); ++i) node = stepInto(*node, steps[i]);
  return node && node->is_object() ? node : nullptr;
}

// GPUs asked through annotations of the pod (template): KAI Scheduler's GPU
// sharing, CDI device injection.
bool sharesGpuByAnnotation(const json& object, const PodSite& site) {
  const json* holder = holderOf(object, site);
  if (!holder) return false;
  auto md = holder->find("metadata");
  if (md == holder->end() || !md->is_object()) return false;
  auto ann = md->find("annotations");
  if (ann == md->end() || !ann->is_object()) return false;
  if (ann->contains("gpu-fraction") || ann->contains("gpu-memory")) return true;
  // CDI device injection: <prefix>/<name>: "nvidia.com/gpu=all".
  for (const auto& [key, value] : ann->items()) {
    if (key.starts_with("cdi.k8s.io/") || key.starts_with("nvidia.cdi.k8s.io/")) return true;
  }
  return false;
}

bool ownedByDaemonSet(const json& object, const PodSite& site) {
  if (site.ownerKind == "DaemonSet") return true;
  // A Pod read back from a cluster: metadata.ownerReferences.
  auto md = object.find("metadata");
  if (site.ownerKind != "Pod" || md == object.end() || !md->is_object()) return false;
  auto refs = md->find("ownerReferences");
  if (refs == md->end() || !refs->is_array()) return false;
  return std::any_of(refs->begin(), refs->end(), [](const json& r) {
    return r.is_object() && r.contains("kind") && r["kind"] == "DaemonSet";
  });
}

class GpuTolerationWithoutRequest final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    if (ctx.policy.gpuTaints.empty()) return;
    // Lone containers share the tolerations of their enclosing object: judge
    // each tolerations list once, against every site that uses it. A list is
    // known by its node (one node, one path), which costs no path string.
    std::set<const json*> gpuUsers, seen;
    for (const PodSite& site : ctx.sites) {
      if (site.tolerations.value && asksForGpu(ctx, site)) gpuUsers.insert(site.tolerations.value);
    }
    for (const PodSite& site : ctx.sites) {
      if (!site.tolerations.value || !site.tolerations.value->is_array()) continue;
      const json* where = site.tolerations.value;
      if (gpuUsers.count(where) || !seen.insert(where).second) continue;
      if (ownedByDaemonSet(ctx.object, site)) continue;
      const json& list = *site.tolerations.value;
      for (std::size_t i = 0; i < list.size(); ++i) {
        const Taint* taint = gpuTaintTolerated(list[i], ctx.policy);
        if (!taint) continue;
        const std::string shown = renderValue(list[i]);
        out.report(site.tolerations.path.index(i),
                   FieldError::invalid(shown,
                                       "tolerates the GPU node taint " + describeTaint(*taint) +
                                           ", but no container asks for a GPU (no " + gpuNames(ctx.policy) +
                                           " request, no DRA resourceClaims), so the pod can be scheduled onto a "
                                           "GPU node and hold "
                                           "its CPU and memory while the GPUs sit idle; remove the toleration, or "
                                           "request the GPU the pod is meant to use"),
                   shown);
        break;  // one finding per pod
      }
    }
  }

 private:
  static bool asksForGpu(const CheckContext& ctx, const PodSite& site) {
    return asksForGpuResource(site, ctx.gpu()) || sharesGpuByAnnotation(ctx.object, site);
  }

  // The GPU taint a toleration names and tolerates; wildcard tolerations
  // (empty key) do not count.
  static const Taint* gpuTaintTolerated(const json& t, const Policy& policy) {
    if (!t.is_object()) return nullptr;
    auto key = t.find("key");
    if (key == t.end() || !key->is_string() || key->get_ref<const std::string&>().empty()) return nullptr;
    for (const Taint& taint : policy.gpuTaints) {
      if (toleratesTaint(t, taint)) return &taint;
    }
    return nullptr;
  }

  static std::string gpuNames(const Policy& policy) {
    std::string names;
    for (const std::string& n : policy.gpuResources) names += (names.empty() ? "" : ", ") + n;
    return names.empty() ? "GPU" : names;
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuTolerationWithoutRequest() { return std::make_unique<GpuTolerationWithoutRequest>(); }

}  // namespace gpuguard::checks
