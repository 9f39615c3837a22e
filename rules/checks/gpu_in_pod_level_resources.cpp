// gpu-in-pod-level-resources: GPUs (or DRA claims) in pod-level spec.resources,
// and GPUs on ephemeral containers: places of a pod spec that cannot hold them.
#include <array>
#include <string>
#include <vector>

#include "rules/checks/checks.h"
#include "rules/support/k8s_objects.h"
#include "rules/resources.h"
#include "rules/k8s/field_error.h"

namespace gpuguard::checks {
namespace {

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 1> kPolicyKeys{"gpuResources"};

constexpr RuleDoc kDoc{
    .id = "gpu-in-pod-level-resources",
    .defaultSeverity = Severity::Error,
    .summary = "A GPU (or any extended resource, or a DRA claim) in the pod-level spec.resources, or a GPU on an "
               "ephemeral container.",
    .description =
        "Pod-level resources (spec.resources, feature gate PodLevelResources, on by default from Kubernetes "
        "1.34) accept only cpu, memory and hugepages-* (component-helpers IsSupportedPodLevelResource). The API "
        "server rejects nvidia.com/gpu there (spec.resources.limits[nvidia.com/gpu]: Unsupported value: "
        "\"nvidia.com/gpu\": supported values: \"cpu\", \"hugepages-\", \"memory\"; older releases "
        "list only cpu and memory), and DRA claims too (spec.resources.claims: Forbidden: claims may not be set "
        "for Resources at pod-level). Inside a custom resource (RayCluster, JobSet, LeaderWorkerSet...) nobody "
        "checks, and the mistake surfaces only when the operator creates the pods; on API servers without the "
        "feature the field is dropped and the GPU silently never requested. Every extended resource and every "
        "GPU resource of the policy is reported; other unsupported names are left to the API server. An "
        "ephemeral container (kubectl debug) gets no resources of its own: validateEphemeralContainers forbids "
        "the field (spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container), "
        "so one that asks for a GPU is reported at its resources.",
    .remediation =
        "Move the GPU to the resources.limits of the container that uses it (containers[].resources), and "
        "DRA claims to containers[].resources.claims. Drop resources from ephemeral containers; to debug with a "
        "GPU of its own, use a copy of the pod (kubectl debug --copy-to).",
    .wrongExample =
        "spec:\n  resources:\n    limits:\n      cpu: \"8\"\n      nvidia.com/gpu: 1\n  containers:\n"
        "  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n",
    .rightExample =
        "spec:\n  resources:\n    limits:\n      cpu: \"8\"\n  containers:\n  - name: cuda\n"
        "    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
    .policyKeys = kPolicyKeys,
};

// The container a GPU would move to, for the message: containers[0] when the
// pod has one app container, containers[i] otherwise.
std::string targetContainer(const PodSite& site) {
  int apps = 0;
  for (const ContainerRef& c : site.containers) apps += c.kind == ContainerKind::App ? 1 : 0;
  return apps == 1 ? "containers[0]" : "containers[i]";
}

// The GPU (extended) resources an ephemeral container names, in order: "" when none.
std::string judgedNames(const ContainerResources& r, const Policy& policy) {
  std::vector<std::string> names;
  forEachRequestedResource(r, [&](const ResourceEntry& e) {
    if (isJudgedResource(e.name, policy)) names.push_back(e.name);
  });
  return joined(names, ", ");
}

class GpuInPodLevelResources final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      checkPodLevel(site, ctx.policy, out);
      checkEphemeral(site, ctx.policy, out);
    }
  }

 private:
  // validateEphemeralContainers: Resources is not among the fields an
  // ephemeral container may set. Only GPUs are this rule's business.
  static void checkEphemeral(const PodSite& site, const Policy& policy, Reporter& out) {
    for (const ContainerRef& c : site.containers) {
      if (c.kind != ContainerKind::Ephemeral) continue;
      const ContainerResources& r = resourcesOf(c, false);
      const std::string names = judgedNames(r, policy);
      if (names.empty()) continue;
      out.report(r.path,
                 FieldError::forbidden("cannot be set for an Ephemeral Container; an ephemeral container gets no "
                                           "resources of its own, so it cannot be given " + names +
                                           ": remove resources (to debug with a GPU of its own, use a copy of the "
                                           "pod: kubectl debug --copy-to)"));
    }
  }

  static void checkPodLevel(const PodSite& site, const Policy& policy, Reporter& out) {
    const nlohmann::json* resources = site.podResources.value;
    if (!resources || !resources->is_object()) return;
    for (const char* list : {"limits", "requests"}) {
      const nlohmann::json* entries = objectAt(*resources, list);
      if (!entries) continue;
      for (const auto& [name, value] : entries->items()) {
        if (!isJudgedResource(name, policy)) continue;
        out.report(site.podResources.path.field(list).key(name),
                   FieldError::notSupported(quotedValue(name),
                                            "supported values: \"cpu\", \"hugepages-\", \"memory\"; pod-level "
                                                "resources cannot hold GPUs or other extended resources: move it to " +
                                                targetContainer(site) + ".resources." + list +
                                                ", the container that uses it"),
                   name);
      }
    }
    if (const nlohmann::json* claims = arrayAt(*resources, "claims"); claims && !claims->empty()) {
      out.report(site.podResources.path.field("claims"),
                 FieldError::forbidden("claims may not be set for Resources at pod-level; reference the DRA "
                                           "claim from the container that uses the device (" + targetContainer(site) +
                                           ".resources.claims)"));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuInPodLevelResources() { return std::make_unique<GpuInPodLevelResources>(); }

}  // namespace gpuguard::checks
