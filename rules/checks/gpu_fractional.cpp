// gpu-fractional: an extended-resource quantity that is not a whole number.
#include <array>
#include <algorithm>

#include "rules/checks/checks.h"
#include "rules/resources.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/quantity.h"

namespace gpuguard::checks {
namespace {

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 1> kPolicyKeys{"gpuResources"};

constexpr RuleDoc kDoc{
    .id = "gpu-fractional",
    .defaultSeverity = Severity::Error,
    .summary = "A fractional GPU (or any extended resource) count such as 0.5 or 500m.",
    .description =
        "Extended resources are counted in whole units: a device plugin hands out devices, not shares. The API "
        "server rejects a Pod or workload template whose extended-resource quantity is not an integer "
        "(\"must be an integer\"), but not a custom resource that embeds one: RayCluster, PyTorchJob, JobSet and "
        "friends are accepted and fail when their operator creates the pods. Values within a thousandth below "
        "a whole number (0.9999) are rounded up and admitted by the API server; gpuguard still flags them, "
        "because nobody means 0.9999 GPUs. A DeviceClass's implicit extended resource "
        "(deviceclass.resource.kubernetes.io/<class>, KEP-5004) is native to core validation, so the API server "
        "accepts a fraction there; kube-scheduler takes the request as a device count and fails at PreBind on a "
        "non-integer one, forever (checked on v1.37.2), so it is reported too.",
    .remediation =
        "Ask for whole GPUs (1, 2, 1000m). To share a GPU, use a MIG profile (nvidia.com/mig-1g.10gb) or "
        "time-slicing/MPS (nvidia.com/gpu.shared), configured in the device plugin.",
    .wrongExample = "resources:\n  limits:\n    nvidia.com/gpu: 0.5\n",
    .rightExample = "resources:\n  limits:\n    nvidia.com/gpu: 1\n",
    .policyKeys = kPolicyKeys,
};

class GpuFractional final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    forEachContainerResources(ctx.sites, [&](const ContainerResources& r) {
      forEachResourceEntry(r, [&](const ResourceEntry& e) { checkEntry(ctx, e, out); });
    });
  }

 private:
  static void checkEntry(const CheckContext& ctx, const ResourceEntry& e, Reporter& out) {
    if (e.name.starts_with(kDeviceClassResourcePrefix)) {
      checkDeviceClassEntry(e, out);
      return;
    }
    if (!isJudgedResource(e.name, ctx.policy)) return;
    const QuantityValue q = decodeQuantity(*e.value);
    if (!q.quantity || q.quantity->isNegative() || q.quantity->isWholeNumber()) return;
    // Quantities print as strings in API errors, whatever JSON type they had.
    const std::string shown = renderValue(nlohmann::json(q.text));
    std::string detail = "must be an integer; " + e.name + " is counted in whole units: ask for " +
                         std::to_string(std::max<long long>(1, q.quantity->ceilToInt64()));
    if (ctx.policy.isGpuResource(e.name)) {
      detail += ", or share a GPU through MIG (nvidia.com/mig-1g.10gb) or time-slicing (nvidia.com/gpu.shared)";
    }
    if (q.quantity->isIntegerAfterDefaulting()) {
      detail += " (the API server rounds " + q.text + " up to " + std::to_string(q.quantity->ceilToInt64()) +
                 " and admits it)";
    }
    out.report(e.path, FieldError::invalid(shown, detail), shown);
  }

  // deviceclass.resource.kubernetes.io/<class> counts as a native resource
  // name: the API server accepts a fraction, but kube-scheduler takes the
  // request as a device count and fails at PreBind, forever (§15.2).
  static void checkDeviceClassEntry(const ResourceEntry& e, Reporter& out) {
    const QuantityValue q = decodeQuantity(*e.value);
    if (!q.quantity || q.quantity->isNegative() || q.quantity->isIntegerAfterDefaulting()) return;
    const std::string shown = renderValue(nlohmann::json(q.text));
    out.report(e.path,
               FieldError::invalid(shown, "a DeviceClass's implicit extended resource counts devices: the API server "
                                          "accepts " + q.text +
                                          " (the name is native to core validation), but kube-scheduler takes the "
                                          "request as a device count and fails at PreBind (\"DynamicResources\": "
                                          "nil or empty request mappings), so the pod never binds; ask for " +
                                          std::to_string(std::max<long long>(1, q.quantity->ceilToInt64())) +
                                          " whole device(s)"),
               shown);
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuFractional() { return std::make_unique<GpuFractional>(); }

}  // namespace gpuguard::checks
