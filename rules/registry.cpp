#include "rules/registry.h"

#include <memory>

#include "rules/checks/checks.h"

namespace gpuguard {
namespace {

std::vector<std::unique_ptr<Rule>> makeAll() {
  std::vector<std::unique_ptr<Rule>> rules;
  // Quantities and requests/limits: what the API server enforces for Pods
  // and workload templates, and nobody enforces inside custom resources.
  rules.push_back(checks::makeGpuInvalidQuantity());
  rules.push_back(checks::makeGpuFractional());
  rules.push_back(checks::makeGpuRequestsLimitsMismatch());
  rules.push_back(checks::makeGpuRequestsWithoutLimits());
  // Scheduling onto GPU nodes.
  rules.push_back(checks::makeGpuMissingToleration());
  rules.push_back(checks::makeGpuMissingDriverPin());
  rules.push_back(checks::makeLabelValueNotString());
  // Resource names, MIG, DRA, the device plugin and GPU node pools.
  rules.push_back(checks::makeGpuResourceName());
  rules.push_back(checks::makeMigResourceName());
  rules.push_back(checks::makeGpuInPodLevelResources());
  rules.push_back(checks::makeGpuCountExceedsNode());
  rules.push_back(checks::makeDraWithDevicePlugin());
  rules.push_back(checks::makeDevicePluginConfig());
  rules.push_back(checks::makeGpuNodepoolTaint());
  // CUDA compatibility, node affinity traps, GPU squatting and tensor parallelism.
  rules.push_back(checks::makeCudaDriverTooOld());
  rules.push_back(checks::makeNodeAffinityGtLt());
  rules.push_back(checks::makeGpuLabelValue());
  rules.push_back(checks::makeGpuTolerationWithoutRequest());
  rules.push_back(checks::makeTensorParallelGpuCount());
  rules.push_back(checks::makeTensorParallelWithoutNvlink());
  return rules;
}

}  // namespace

const std::vector<const Rule*>& allRules() {
  static const auto owned = makeAll();
  static const auto view = [] {
    std::vector<const Rule*> v;
    for (const auto& r : owned) v.push_back(r.get());
    return v;
  }();
  return view;
}

const Rule* findRule(std::string_view id) {
  for (const Rule* r : allRules()) {
    if (r->id() == id) return r;
  }
  return nullptr;
}

}  // namespace gpuguard
