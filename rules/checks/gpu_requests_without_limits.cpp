// gpu-requests-without-limits: an extended resource requested with no limit.
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
    .id = "gpu-requests-without-limits",
    .defaultSeverity = Severity::Error,
    .summary = "A GPU (extended resource) in requests with no limit.",
    .description =
        "The API server requires a limit for every resource that cannot be overcommitted (\"Limit must be set "
        "for non overcommitable resources\"). The reverse is fine: limits alone are valid, because requests "
        "default to limits. Custom resources that embed pod templates are not checked by the API server.",
    .remediation = "Move the count from requests to limits (requests then default to it).",
    .wrongExample = "resources:\n  requests:\n    nvidia.com/gpu: 1\n",
    .rightExample = "resources:\n  limits:\n    nvidia.com/gpu: 1\n",
    .policyKeys = kPolicyKeys,
};

class GpuRequestsWithoutLimits final : public Rule {
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
    if (!isJudgedResource(request.name, ctx.policy)) return;
    if (r.limit(request.name)) return;
    const std::string shown = decodeQuantity(*request.value).text;
    // Like the API server: the path is ...resources.limits, without the key.
    out.reportFixable(r.path.field("limits"),
                      FieldError::required("Limit must be set for non overcommitable resources: " + request.name +
                                           " is requested (" + shown + ") without a limit; set limits." +
                                           request.name + ": " + shown + " (requests then default to it)"),
                      "", fixOf(ctx, r, request));
  }

  // With no limits at all and only resources that need one, requests become
  // limits (requests default to limits, so the pod asks for the same);
  // otherwise the limit is a copy of the request, as written.
  static Fix fixOf(const CheckContext& ctx, const ContainerResources& r, const ResourceEntry& request) {
    const bool onlyLimitless = std::all_of(r.requests.begin(), r.requests.begin() + static_cast<long>(r.writtenRequests),
                                           [&](const ResourceEntry& e) { return isJudgedResource(e.name, ctx.policy); });
    const nlohmann::json* resources = resourcesNode(ctx.object, r.path);
    if (resources && !resources->contains("limits") && onlyLimitless) {
      return {"renamed requests to limits (requests default to limits)",
              {JsonEdit::renameMember(r.path, "requests", "limits")}};
    }
    return {"added limits." + request.name + " equal to the request",
            {JsonEdit::copyMember(r.path.field("limits"), request.name, request.path,
                                  nlohmann::ordered_json(*request.value))}};
  }

  static const nlohmann::json* resourcesNode(const nlohmann::json& object, const FieldPath& path) {
    const nlohmann::json::json_pointer pointer(path.jsonPointer());
    return object.contains(pointer) ? &object.at(pointer) : nullptr;
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuRequestsWithoutLimits() { return std::make_unique<GpuRequestsWithoutLimits>(); }

}  // namespace gpuguard::checks
