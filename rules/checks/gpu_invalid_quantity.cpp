// gpu-invalid-quantity: an extended-resource quantity that does not parse as
// a resource.Quantity, or is negative.
#include <array>

#include "rules/checks/checks.h"
#include "rules/resources.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/quantity.h"

namespace gpuguard::checks {
namespace {

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 1> kPolicyKeys{"gpuResources"};

constexpr RuleDoc kDoc{
    .id = "gpu-invalid-quantity",
    .defaultSeverity = Severity::Error,
    .summary = "A GPU (extended resource) quantity that is not a valid Kubernetes quantity, or is negative.",
    .description =
        "The API server decodes every resource value with resource.ParseQuantity. Text such as \"1 GPU\", "
        "\"1K\" or \"1,000\" fails to decode, and a negative count fails validation. Inside a custom resource "
        "(RayCluster, PyTorchJob, JobSet...) nobody checks: the operator's pod creation fails later, far from "
        "the author. A string is read as the API server reads kubectl's JSON: Quantity.UnmarshalJSON trims spaces "
        "from the raw token but does not decode escapes, so \"1\\n\", \"\\t1\" or \"1\\u2028\" (a line break, "
        "tab or U+2028 in the YAML string) fail to decode, while \" 1\" and \"1\\u00a0\" are trimmed and valid.",
    .remediation = "Write the count as a plain whole number, e.g. nvidia.com/gpu: 1.",
    .wrongExample = "resources:\n  limits:\n    nvidia.com/gpu: \"1 GPU\"\n",
    .rightExample = "resources:\n  limits:\n    nvidia.com/gpu: 1\n",
    .policyKeys = kPolicyKeys,
};

constexpr std::string_view kEscapedNote =
    "the value holds a character kubectl sends JSON-escaped (a line break, tab, quote, backslash, U+2028...), and "
    "Quantity.UnmarshalJSON parses the escape as written instead of decoding it (the API server answers HTTP 400); ";

class GpuInvalidQuantity final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    forEachContainerResources(ctx.sites, [&](const ContainerResources& r) {
      forEachResourceEntry(r, [&](const ResourceEntry& e) { checkEntry(ctx, e, out); });
    });
  }

 private:
  static void checkEntry(const CheckContext& ctx, const ResourceEntry& e, Reporter& out) {
    if (!isJudgedResource(e.name, ctx.policy)) return;
    const QuantityValue q = decodeQuantity(*e.value);
    if (q.quantity && !q.quantity->isNegative()) return;  // valid: nothing to render
    // Quantities print as strings in API errors, whatever JSON type they had.
    const std::string shown = renderValue(nlohmann::json(q.text));
    if (!q.quantity) {
      out.report(e.path,
                 FieldError::invalid(shown,
                                     std::string(quantityErrorMessage(q.error)) + "; " +
                                         (q.jsonEscaped ? std::string(kEscapedNote) : std::string()) +
                                         "write a whole number of " + e.name + ", e.g. 1"),
                 shown);
    } else if (q.quantity->isNegative()) {
      out.report(e.path,
                 FieldError::invalid(shown,
                                     "must be greater than or equal to 0; write a whole number of " + e.name +
                                         ", e.g. 1"),
                 shown);
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuInvalidQuantity() { return std::make_unique<GpuInvalidQuantity>(); }

}  // namespace gpuguard::checks
