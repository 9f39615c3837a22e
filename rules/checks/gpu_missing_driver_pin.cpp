// gpu-missing-driver-pin: a GPU pod that does not select nodes by CUDA driver.
#include <algorithm>

#include "rules/checks/checks.h"
#include "rules/semantics.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

constexpr RuleDoc kDoc{
    .id = "gpu-missing-driver-pin",
    .defaultSeverity = Severity::Error,
    .summary = "A GPU pod that does not pin the node's CUDA driver version through GPU Feature Discovery labels.",
    .description =
        "A CUDA container needs a driver at least as new as its CUDA runtime (12.x needs >= 525, 13.x >= 580). "
        "Mixed node pools run mixed drivers; a pod that lands on an old one crashes with \"CUDA driver version is "
        "insufficient for CUDA runtime version\". GPU Feature Discovery labels every GPU node with "
        "nvidia.com/cuda.driver-version.major (and .full); select on it with nodeSelector, or with a required "
        "node affinity that constrains a driver label (In, Gt or Lt) in every nodeSelectorTerm (terms are "
        "ORed). Preferred affinity is not a pin. The label keys come from the policy (driverPinLabels).",
    .remediation =
        "Add nodeSelector nvidia.com/cuda.driver-version.major: \"550\", or a required node affinity "
        "{key: nvidia.com/cuda.driver-version.major, operator: Gt, values: [\"534\"]} (Gt 534 means >= 535).",
    .wrongExample =
        "spec:\n  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
    .rightExample =
        "spec:\n  nodeSelector:\n    nvidia.com/cuda.driver-version.major: \"550\"\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
};

bool selectorPins(const PodField& nodeSelector, const Policy& policy) {
  if (!nodeSelector.value || !nodeSelector.value->is_object()) return false;
  for (const auto& [key, value] : nodeSelector.value->items()) {
    if (policy.isDriverPinLabel(key)) return true;
  }
  return false;
}

bool termPins(const json& term, const Policy& policy) {
  auto exprs = term.find("matchExpressions");
  if (exprs == term.end() || !exprs->is_array()) return false;
  return std::any_of(exprs->begin(), exprs->end(), [&](const json& e) {
    if (!e.is_object()) return false;
    auto key = e.find("key");
    auto op = e.find("operator");
    if (key == e.end() || !key->is_string() || op == e.end() || !op->is_string()) return false;
    const std::string& o = op->get_ref<const std::string&>();
    return policy.isDriverPinLabel(key->get_ref<const std::string&>()) && (o == "In" || o == "Gt" || o == "Lt");
  });
}

// requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms, ORed:
// every term must pin, or some node escapes the pin.
bool affinityPins(const PodField& affinity, const Policy& policy) {
  if (!affinity.value || !affinity.value->is_object()) return false;
  const json* terms = nullptr;
  if (auto na = affinity.value->find("nodeAffinity"); na != affinity.value->end() && na->is_object()) {
    if (auto req = na->find("requiredDuringSchedulingIgnoredDuringExecution"); req != na->end() && req->is_object()) {
      if (auto t = req->find("nodeSelectorTerms"); t != req->end() && t->is_array()) terms = &*t;
    }
  }
  if (!terms || terms->empty()) return false;
  return std::all_of(terms->begin(), terms->end(), [&](const json& t) { return t.is_object() && termPins(t, policy); });
}

class GpuMissingDriverPin final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    if (ctx.policy.driverPinLabels.empty()) return;
    for (const PodSite& site : ctx.sites) {
      if (!requestsGpu(site, ctx.policy)) continue;
      if (selectorPins(site.nodeSelector, ctx.policy) || affinityPins(site.affinity, ctx.policy)) continue;
      const std::string& label = ctx.policy.driverPinLabels.front();
      out.report(site.nodeSelector.path, "",
                 "Required value: no nodeSelector or required node affinity on a CUDA driver label (" + label +
                     "), so the pod may land on a node whose driver is older than its CUDA runtime and fail with "
                     "\"CUDA driver version is insufficient\"; add nodeSelector " + label +
                     ": \"<major>\" or a required node affinity with operator Gt" +
                     misplacedNote(site.misplaced.nodeSelector, site.nodeSelector) +
                     misplacedNote(site.misplaced.affinity, site.affinity) + std::string(site.placementHint));
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuMissingDriverPin() { return std::make_unique<GpuMissingDriverPin>(); }

}  // namespace gpuguard::checks
