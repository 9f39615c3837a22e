#include "rules/registry.h"

#include <memory>

#include "rules/checks/checks.h"

namespace gpuguard {
namespace {

struct Registered {
  std::unique_ptr<Rule> rule;
  Judges judges;
};

// Each rule says what it needs to judge an object: WhatIsWritten rules
// judge the values present (a quantity, a resource name), so they may judge
// a fragment such as a kustomize patch; WholeObject rules also judge what
// is missing or add up the whole pod (tolerations, driver pins, counts
// against nodes), which only the complete object can tell.
void add(std::vector<Registered>& rules, std::unique_ptr<Rule> rule, Judges judges) {
  rules.push_back({std::move(rule), judges});
}

std::vector<Registered> makeAll() {
  std::vector<Registered> rules;
  // Quantities and requests/limits: what the API server enforces for Pods
  // and workload templates, and nobody enforces inside custom resources.
  add(rules, checks::makeGpuInvalidQuantity(), Judges::WhatIsWritten);
  add(rules, checks::makeGpuFractional(), Judges::WhatIsWritten);
  add(rules, checks::makeGpuRequestsLimitsMismatch(), Judges::WhatIsWritten);
  add(rules, checks::makeGpuRequestsWithoutLimits(), Judges::WholeObject);
  // Scheduling onto GPU nodes.
  add(rules, checks::makeGpuMissingToleration(), Judges::WholeObject);
  add(rules, checks::makeGpuMissingDriverPin(), Judges::WholeObject);
  add(rules, checks::makeLabelValueNotString(), Judges::WhatIsWritten);
  // Resource names, MIG, DRA, the device plugin and GPU node pools.
  add(rules, checks::makeGpuResourceName(), Judges::WhatIsWritten);
  add(rules, checks::makeMigResourceName(), Judges::WhatIsWritten);
  add(rules, checks::makeGpuInPodLevelResources(), Judges::WhatIsWritten);
  add(rules, checks::makeGpuCountExceedsNode(), Judges::WholeObject);
  add(rules, checks::makeDraWithDevicePlugin(), Judges::WholeObject);
  add(rules, checks::makeDraClaimWithNodeName(), Judges::WholeObject);
  add(rules, checks::makeDraSharedClaimReplicated(), Judges::WholeObject);
  add(rules, checks::makeDevicePluginConfig(), Judges::WholeObject);
  add(rules, checks::makeLimitRangeGpuDefault(), Judges::WhatIsWritten);
  add(rules, checks::makeGpuResizePolicy(), Judges::WhatIsWritten);
  add(rules, checks::makeSharedGpuRequestGtOne(), Judges::WholeObject);
  add(rules, checks::makeGpuNodepoolTaint(), Judges::WholeObject);
  // CUDA compatibility, node affinity traps, GPU squatting and tensor parallelism.
  add(rules, checks::makeCudaDriverTooOld(), Judges::WholeObject);
  add(rules, checks::makeNodeAffinityGtLt(), Judges::WhatIsWritten);
  add(rules, checks::makeGpuLabelValue(), Judges::WhatIsWritten);
  add(rules, checks::makeGpuTolerationWithoutRequest(), Judges::WholeObject);
  add(rules, checks::makeTensorParallelGpuCount(), Judges::WholeObject);
  add(rules, checks::makeTensorParallelWithoutNvlink(), Judges::WholeObject);
  add(rules, checks::makeGpuUnschedulable(), Judges::WholeObject);
  // GPU isolation: what the NVIDIA runtime and CUDA are told through the environment.
  add(rules, checks::makeNvidiaVisibleDevicesEnv(), Judges::WholeObject);
  add(rules, checks::makeCudaVisibleDevicesIndex(), Judges::WholeObject);
  return rules;
}

const std::vector<Registered>& registered() {
  static const auto owned = makeAll();
  return owned;
}

}  // namespace

const std::vector<const Rule*>& allRules() {
  static const std::vector<Registered>& owned = registered();
  static const auto view = [] {
    std::vector<const Rule*> v;
    for (const auto& r : owned) v.push_back(r.rule.get());
    return v;
  }();
  return view;
}

Judges judgesOf(const Rule& rule) {
  static const std::vector<Registered>& owned = registered();
  for (const Registered& r : owned) {
    if (r.rule.get() == &rule) return r.judges;
  }
  return Judges::WholeObject;  // not registered: assume the most it could need
}

const Rule* findRule(std::string_view id) {
  for (const Rule* r : allRules()) {
    if (r->id() == id) return r;
  }
  return nullptr;
}

}  // namespace gpuguard
