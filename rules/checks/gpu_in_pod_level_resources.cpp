// gpu-in-pod-level-resources: GPUs (or DRA claims) in pod-level spec.resources.
#include "rules/checks/checks.h"
#include "rules/checks/k8s_objects.h"
#include "rules/semantics.h"

namespace gpuguard::checks {
namespace {

constexpr RuleDoc kDoc{
    .id = "gpu-in-pod-level-resources",
    .defaultSeverity = Severity::Error,
    .summary = "A GPU (or any extended resource, or a DRA claim) in the pod-level spec.resources.",
    .description =
        "Pod-level resources (spec.resources, feature gate PodLevelResources, on by default from Kubernetes "
        "1.34) accept only cpu, memory and hugepages-* (component-helpers IsSupportedPodLevelResource). The API "
        "server rejects nvidia.com/gpu there (spec.resources.limits[nvidia.com/gpu]: Unsupported value: "
        "\"nvidia.com/gpu\": supported values: \"cpu\", \"hugepages-\", \"memory\"; older releases "
        "list only cpu and memory), and DRA claims too (spec.resources.claims: Forbidden: claims cannot be set "
        "for Resources at pod-level). Inside a custom resource (RayCluster, JobSet, LeaderWorkerSet...) nobody "
        "checks, and the mistake surfaces only when the operator creates the pods; on API servers without the "
        "feature the field is dropped and the GPU silently never requested. Every extended resource and every "
        "GPU resource of the policy is reported; other unsupported names are left to the API server.",
    .remediation =
        "Move the GPU to the resources.limits of the container that uses it (containers[].resources), and "
        "DRA claims to containers[].resources.claims.",
    .wrongExample =
        "spec:\n  resources:\n    limits:\n      cpu: \"8\"\n      nvidia.com/gpu: 1\n  containers:\n"
        "  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n",
    .rightExample =
        "spec:\n  resources:\n    limits:\n      cpu: \"8\"\n  containers:\n  - name: cuda\n"
        "    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
};

// The container a GPU would move to, for the message: containers[0] when the
// pod has one app container, containers[i] otherwise.
std::string targetContainer(const PodSite& site) {
  int apps = 0;
  for (const ContainerRef& c : site.containers) apps += c.kind == ContainerKind::App ? 1 : 0;
  return apps == 1 ? "containers[0]" : "containers[i]";
}

class GpuInPodLevelResources final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      const nlohmann::json* resources = site.podResources.value;
      if (!resources || !resources->is_object()) continue;
      for (const char* list : {"limits", "requests"}) {
        const nlohmann::json* entries = objectAt(*resources, list);
        if (!entries) continue;
        for (const auto& [name, value] : entries->items()) {
          if (!isJudgedResource(name, ctx.policy)) continue;
          out.report(site.podResources.path.field(list).key(name), name,
                     "Unsupported value: \"" + name +
                         "\": supported values: \"cpu\", \"hugepages-\", \"memory\"; pod-level resources cannot hold "
                         "GPUs or other extended resources: move it to " + targetContainer(site) + ".resources." +
                         list + ", the container that uses it");
        }
      }
      if (const nlohmann::json* claims = arrayAt(*resources, "claims"); claims && !claims->empty()) {
        out.report(site.podResources.path.field("claims"), "",
                   "Forbidden: claims cannot be set for Resources at pod-level; reference the DRA claim from the "
                   "container that uses the device (" + targetContainer(site) + ".resources.claims)");
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuInPodLevelResources() { return std::make_unique<GpuInPodLevelResources>(); }

}  // namespace gpuguard::checks
