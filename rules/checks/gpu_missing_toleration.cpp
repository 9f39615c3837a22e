// gpu-missing-toleration: a GPU pod that does not tolerate the GPU node taint.
#include "rules/checks/checks.h"
#include "rules/semantics.h"

namespace gpuguard::checks {
namespace {

constexpr RuleDoc kDoc{
    .id = "gpu-missing-toleration",
    .defaultSeverity = Severity::Error,
    .summary = "A pod that asks for a GPU but does not tolerate the GPU nodes' taint.",
    .description =
        "GPU node pools are tainted (by convention nvidia.com/gpu:NoSchedule; GKE, AKS and the GPU Operator "
        "docs use it) so that ordinary pods stay off expensive nodes. A GPU pod without a matching toleration "
        "stays Pending with \"node(s) had untolerated taint\". Matching follows Kubernetes' ToleratesTaint: an "
        "empty effect matches every effect, an empty key with Exists matches every taint, and Equal compares "
        "values, so it only tolerates a taint whose value the policy names. The taints come from the policy "
        "(gpuTaints); clusters running the ExtendedResourceToleration admission plugin can set "
        "assumeExtendedResourceToleration.",
    .remediation = "Add a toleration with operator Exists for the GPU taint key and effect.",
    .wrongExample =
        "spec:\n  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
    .rightExample =
        "spec:\n  tolerations:\n  - key: nvidia.com/gpu\n    operator: Exists\n    effect: NoSchedule\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
};

class GpuMissingToleration final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      if (!requestsGpu(site, ctx.policy)) continue;
      for (const Taint& taint : untoleratedGpuTaints(site, ctx.policy)) {
        out.report(site.tolerations.path, "",
                   "Required value: no toleration for the GPU node taint " + describeTaint(taint) +
                       ", so the pod cannot schedule on a GPU node; add {key: " + taint.key +
                       ", operator: Exists, effect: " + taint.effect + "} to tolerations" +
                       misplacedNote(site.misplaced.tolerations, site.tolerations) +
                       std::string(site.placementHint));
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuMissingToleration() { return std::make_unique<GpuMissingToleration>(); }

}  // namespace gpuguard::checks
