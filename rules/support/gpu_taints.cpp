#include "rules/support/gpu_taints.h"

#include <algorithm>
#include <vector>

namespace gpuguard::checks {
namespace {

bool inList(const Taint& taint, const std::vector<Taint>& gpuTaints) {
  return std::any_of(gpuTaints.begin(), gpuTaints.end(), [&](const Taint& g) {
    return g.key == taint.key && (!g.value || (taint.value && *g.value == *taint.value));
  });
}

// Every preset's gpuTaints, once: the platform a cluster runs may not be the policy's.
const std::vector<std::vector<Taint>>& presetGpuTaints() {
  static const std::vector<std::vector<Taint>> all = [] {
    std::vector<std::vector<Taint>> out;
    for (const PlatformPreset& preset : platformPresets()) {
      Policy p;
      preset.apply(p);
      out.push_back(p.gpuTaints);
    }
    return out;
  }();
  return all;
}

}  // namespace

bool isGpuTaint(const Taint& taint, const Policy& policy) {
  if (inList(taint, policy.gpuTaints)) return true;
  const auto& presets = presetGpuTaints();
  return std::any_of(presets.begin(), presets.end(), [&](const auto& list) { return inList(taint, list); });
}

std::string otherTaintOfGpuNodes(const Taint& taint, const std::string& where) {
  return "the GPU nodes this pod would land on (" + where + ") also carry the taint " + describeTaint(taint) +
         ", which is no GPU taint (the policy's gpuTaints or a platform's), so kube-scheduler leaves the pod Pending "
         "there; such a taint keeps nodes for some pods (a team, a health check, the control plane): tolerate it "
         "only if this pod is meant for them";
}

}  // namespace gpuguard::checks
