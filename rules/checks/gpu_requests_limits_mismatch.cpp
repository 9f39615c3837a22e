// gpu-requests-limits-mismatch: requests and limits both set and not equal.
#include <array>

#include "rules/checks/checks.h"
#include "rules/gpu_use.h"
#include "rules/resources.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/quantity.h"

namespace gpuguard::checks {
namespace {

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 1> kPolicyKeys{"gpuResources"};

constexpr RuleDoc kDoc{
    .id = "gpu-requests-limits-mismatch",
    .defaultSeverity = Severity::Error,
    .summary = "GPU (extended resource) requests and limits that are both set and differ.",
    .description =
        "Extended resources cannot be overcommitted, so the API server requires requests to equal limits "
        "(\"must be equal to nvidia.com/gpu limit of 1\"). Quantities are compared by value after defaulting rounds "
        "them up to milli precision: 1 equals 1000m and 0.9999. "
        "Custom resources that embed pod templates are not checked by the API server; their pods fail later. "
        "DRA's implicit deviceclass.resource.kubernetes.io/<class> names are native resource names, which may be "
        "overcommitted: requests below limits are accepted, but requests above limits are still refused (\"must be "
        "less than or equal to deviceclass.resource.kubernetes.io/gpu.nvidia.com limit of 1\").",
    .remediation = "Set requests equal to limits, or drop requests: they default to limits.",
    .wrongExample = "resources:\n  requests:\n    nvidia.com/gpu: 2\n  limits:\n    nvidia.com/gpu: 1\n",
    .rightExample = "resources:\n  limits:\n    nvidia.com/gpu: 1\n",
    .policyKeys = kPolicyKeys,
};

class GpuRequestsLimitsMismatch final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    forEachContainerResources(ctx.sites, [&](const ContainerResources& r) {
      for (const ResourceEntry& request : r.requests) checkEntry(ctx, r, request, out);
    });
  }

 private:
  static void checkEntry(const CheckContext& ctx, const ContainerResources& r, const ResourceEntry& request,
                         Reporter& out) {
    const bool deviceClass = request.name.starts_with(kDeviceClassResourcePrefix);
    if (!deviceClass && !isJudgedResource(request.name, ctx.policy)) return;
    const ResourceEntry* limit = r.limit(request.name);
    if (!limit) return;
    const QuantityValue req = decodeQuantity(*request.value);
    const QuantityValue lim = decodeQuantity(*limit->value);
    if (!req.quantity || !lim.quantity) return;
    // Defaulting rounds both up to milli precision before validation compares
    // them (SetDefaults_ResourceList), so 0.9999 equals 1, as gpu-fractional
    // also says; 1.0001 (1001m) does not.
    if (req.quantity->defaulted() == lim.quantity->defaulted()) return;
    if (deviceClass) {
      // A native name (*.kubernetes.io): overcommit is allowed, so only
      // requests above limits are refused (validateResourceRequirements;
      // reference §15.2).
      if (req.quantity->defaulted() < lim.quantity->defaulted()) return;
      out.report(r.path.field("requests"),
                 FieldError::invalid(quotedValue(req.text),
                                     "must be less than or equal to " + request.name + " limit of " + lim.text +
                                         "; lower requests to the limit, or drop requests (they default to limits)"),
                 renderValue(*request.value));
      return;
    }
    // Like the API server: the path is ...resources.requests, without the key.
    out.reportFixable(r.path.field("requests"),
               FieldError::invalid(quotedValue(req.text),
                                   "must be equal to " + request.name + " limit of " + lim.text +
                                       "; extended resources cannot be overcommitted: set requests equal to limits, "
                                       "or drop requests (they default to limits)"),
               renderValue(*request.value),
               Fix{"requests and limits differ and which count was meant is a guess; set requests equal to limits, "
                   "or drop requests (they default to limits)",
                   {}});
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuRequestsLimitsMismatch() { return std::make_unique<GpuRequestsLimitsMismatch>(); }

}  // namespace gpuguard::checks
