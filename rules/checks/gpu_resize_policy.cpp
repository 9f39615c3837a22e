// gpu-resize-policy: a container resizePolicy naming a GPU. In-place resize
// (KEP-1287) covers cpu and memory only; the API server refuses any other
// resource name in a pod's resizePolicy (kubernetes-gpu-semantics.md §14.4,
// §15.8; checked on kube-apiserver v1.37.2 in test/e2e/cases/oracle).
#include <array>
#include <string>

#include "rules/checks/checks.h"
#include "rules/k8s/json_access.h"
#include "rules/k8s/field_error.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 2> kPolicyKeys{"gpuResources", "draExtendedResources"};

constexpr RuleDoc kDoc{
    .id = "gpu-resize-policy",
    .defaultSeverity = Severity::Error,
    .summary = "A container resizePolicy that names a GPU (or any resource but cpu and memory).",
    .description =
        "In-place pod resize (KEP-1287) resizes cpu and memory only: GPUs are allocated once, by the device "
        "plugin or a DRA driver, when the container starts, and never change while it runs. The API server "
        "refuses a resizePolicy entry whose resourceName is anything else (validateResizePolicy: Unsupported "
        "value, supported values \"cpu\", \"memory\"), for Pods and workload templates alike; inside a custom "
        "resource (RayCluster, PyTorchJob, JobSet...) nobody checks it, and the pods its operator creates are "
        "refused later, far from the author. To change a container's GPUs, replace the pod.",
    .remediation = "Remove the resizePolicy entry that names the GPU; keep entries for cpu and memory only.",
    .wrongExample =
        "spec:\n  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resizePolicy:\n"
        "    - resourceName: cpu\n      restartPolicy: NotRequired\n    - resourceName: nvidia.com/gpu\n"
        "      restartPolicy: RestartContainer\n",
    .rightExample =
        "spec:\n  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resizePolicy:\n"
        "    - resourceName: cpu\n      restartPolicy: NotRequired\n",
    .policyKeys = kPolicyKeys,
};

class GpuResizePolicy final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    const GpuFacts gpu = ctx.gpu();
    for (const PodSite& site : ctx.sites) {
      for (const ContainerRef& c : site.containers) {
        if (!c.container || !c.container->is_object()) continue;
        const json* policies = arrayAt(*c.container, "resizePolicy");
        if (!policies) continue;
        for (std::size_t i = 0; i < policies->size(); ++i) {
          const std::string* name = stringAt((*policies)[i], "resourceName");
          if (!name || !gpu.isGpuResource(*name)) continue;
          // The API server names the list, not the entry (validateResizePolicy,
          // checked on v1.37.2).
          out.report(c.path.field("resizePolicy"),
                     FieldError::notSupported(quotedValue(*name),
                                              "supported values: \"cpu\", \"memory\"; GPUs are allocated when the "
                                              "container starts and never resized in place; remove this entry"),
                     *name);
        }
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuResizePolicy() { return std::make_unique<GpuResizePolicy>(); }

}  // namespace gpuguard::checks
