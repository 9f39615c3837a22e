// limitrange-gpu-default: a LimitRange whose default or defaultRequest holds a
// GPU, which LimitRanger then gives every container of the namespace
// (kubernetes-gpu-semantics.md §15.4).
#include <array>
#include <string>

#include "rules/checks/checks.h"
#include "rules/support/k8s_objects.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/quantity.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 2> kPolicyKeys{"gpuResources", "draExtendedResources"};

constexpr RuleDoc kDoc{
    .id = "limitrange-gpu-default",
    .defaultSeverity = Severity::Error,
    .summary = "A LimitRange whose default or defaultRequest gives every container of the namespace a GPU.",
    .description =
        "The LimitRanger admission plugin fills the limits and requests of every container and init container "
        "of a new pod from the LimitRange of its namespace: spec.limits[] of type Container, default (limits) and "
        "defaultRequest (requests), extended resources included, and default is copied into a missing "
        "defaultRequest (plugin/pkg/admission/limitranger/admission.go; pkg/apis/core/v1/defaults.go). A "
        "LimitRange with default {nvidia.com/gpu: 1} therefore gives a GPU to every container that names none: "
        "sidecars (istio-proxy), init containers and CPU-only pods each take a GPU, stay Pending for want of "
        "one, or land on GPU nodes they have no business on. Checked on kube-apiserver v1.37.2. GPU resources "
        "are the policy's (gpuResources) and the implicit deviceclass.resource.kubernetes.io/<GPU class> names; "
        "a zero value adds no GPU and is not reported.",
    .remediation =
        "Remove the GPU from default and defaultRequest; ask for GPUs in the pods that need them. To cap a "
        "namespace's GPUs use a ResourceQuota (requests.nvidia.com/gpu), or max in the LimitRange.",
    .wrongExample =
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: gpu-defaults, namespace: ml}\nspec:\n  limits:\n"
        "  - type: Container\n    default:\n      cpu: \"1\"\n      nvidia.com/gpu: 1\n",
    .rightExample =
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: gpu-defaults, namespace: ml}\nspec:\n  limits:\n"
        "  - type: Container\n    default:\n      cpu: \"1\"\n    max:\n      nvidia.com/gpu: 8\n",
    .policyKeys = kPolicyKeys,
};

class LimitRangeGpuDefault final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    forEachObject(ctx.object, [&](const json& obj, const FieldPath& base) {
      if (stringOr(obj, "kind") != "LimitRange" || stringOr(obj, "apiVersion") != "v1") return;
      const json* spec = objectAt(obj, "spec");
      const json* limits = spec ? arrayAt(*spec, "limits") : nullptr;
      if (!limits) return;
      const FieldPath limitsPath = base.field("spec").field("limits");
      for (std::size_t i = 0; i < limits->size(); ++i) {
        const json& item = (*limits)[i];
        if (!item.is_object()) continue;
        for (const char* field : {"default", "defaultRequest"}) {
          checkDefaults(ctx, item, field, limitsPath.index(i).field(field), out);
        }
      }
    });
  }

 private:
  static void checkDefaults(const CheckContext& ctx, const json& item, const char* field, const FieldPath& path,
                            Reporter& out) {
    const json* values = objectAt(item, field);
    if (!values) return;
    const GpuFacts gpu = ctx.gpu();
    for (const auto& [name, value] : values->items()) {
      if (!gpu.isGpuResource(name)) continue;
      const QuantityValue q = decodeQuantity(value);
      if (q.quantity && (q.quantity->isZero() || q.quantity->isNegative())) continue;
      const std::string what = std::string(field) == "default" ? "limit (and, without a defaultRequest, request)"
                                                               : "request";
      out.report(path.key(name),
                 FieldError::invalid(renderValue(value),
                                     "LimitRanger gives every container and init container of the namespace that "
                                     "names no " + name + " this " + what +
                                     ": sidecars, init containers and CPU-only pods each take a GPU or stay "
                                     "Pending; remove " + name + " from " + field +
                                     " and ask for GPUs in the pods that need them (cap them with a ResourceQuota "
                                     "requests." + name + ")"),
                 q.text);
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeLimitRangeGpuDefault() { return std::make_unique<LimitRangeGpuDefault>(); }

}  // namespace gpuguard::checks
