#include "rules/support/dra_request_checks.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "rules/k8s/field_error.h"
#include "rules/k8s/json_access.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// validateDeviceToleration: operators Equal and Exists (v1.37.2 refuses Gt,
// docs/e2e-oracle.md), effects None, NoSchedule and NoExecute; a device
// toleration has no PreferNoSchedule (reference §15.2).
void checkDeviceTolerations(const json& request, const FieldPath& path, Reporter& out) {
  const json* list = arrayAt(request, "tolerations");
  if (!list) return;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& t = (*list)[i];
    if (!t.is_object()) continue;
    const FieldPath at = path.field("tolerations").index(i);
    if (const std::string* op = stringAt(t, "operator"); op && !op->empty() && *op != "Equal" && *op != "Exists") {
      out.reportWithDefault(at.field("operator"),
                            FieldError::notSupported(quotedValue(*op), "supported values: \"Equal\", \"Exists\"; "
                                                                       "write Exists, or Equal with the taint's value"),
                            quotedValue(*op), Severity::Error);
    }
    const std::string* effect = stringAt(t, "effect");
    if (effect && !effect->empty() && *effect != "None" && *effect != "NoSchedule" && *effect != "NoExecute") {
      out.reportWithDefault(at.field("effect"),
                            FieldError::notSupported(quotedValue(*effect),
                                                     "supported values: \"NoExecute\", \"NoSchedule\", \"None\"; "
                                                     "a device taint has no PreferNoSchedule: write NoSchedule, or "
                                                     "leave effect out to tolerate every effect"),
                            quotedValue(*effect), Severity::Error);
    }
  }
}

// The first literal compared with productName by == that has a dash and no
// space, the shape of a GFD product label ('NVIDIA-H100-80GB-HBM3').
std::optional<std::string> gfdFormProductName(const std::string& cel) {
  constexpr std::string_view kAttribute = "productName";
  for (std::size_t at = cel.find(kAttribute); at != std::string::npos; at = cel.find(kAttribute, at + 1)) {
    std::size_t i = at + kAttribute.size();
    while (i < cel.size() && cel[i] == ' ') ++i;
    if (cel.compare(i, 2, "==") != 0) continue;
    i += 2;
    while (i < cel.size() && cel[i] == ' ') ++i;
    if (i >= cel.size() || (cel[i] != '\'' && cel[i] != '"')) continue;
    const std::size_t end = cel.find(cel[i], i + 1);
    if (end == std::string::npos) continue;
    const std::string literal = cel.substr(i + 1, end - i - 1);
    if (literal.find('-') != std::string::npos && literal.find(' ') == std::string::npos) return literal;
  }
  return std::nullopt;
}

// The NVIDIA DRA driver's productName is the NVML name, which has spaces
// ("NVIDIA H100 80GB HBM3"); GPU Feature Discovery's label form replaces
// them with dashes (reference §15.2). A literal without a space matches no
// device: the claim is never allocated.
void checkProductNames(const json& request, const FieldPath& path, Reporter& out) {
  const json* selectors = arrayAt(request, "selectors");
  for (std::size_t i = 0; selectors && i < selectors->size(); ++i) {
    const json* cel = objectAt((*selectors)[i], "cel");
    const std::string* expression = cel ? stringAt(*cel, "expression") : nullptr;
    if (!expression) continue;
    if (const auto literal = gfdFormProductName(*expression)) {
      out.reportWithDefault(path.field("selectors").index(i).field("cel").field("expression"),
                            FieldError::note("productName is compared with '" + *literal +
                                             "', GPU Feature Discovery's label form; the NVIDIA DRA driver's "
                                             "productName is the NVML name, with spaces (\"NVIDIA H100 80GB "
                                             "HBM3\"), so no device matches, the claim is never allocated and the "
                                             "pod stays Pending; write the name with spaces (kubectl get "
                                             "resourceslices -o yaml shows it)"),
                            abbreviated(*expression), Severity::Error);
    }
  }
}

constexpr std::string_view kAdminAccessLabel = "resource.kubernetes.io/admin-access";

// AuthorizedForAdmin (pkg/registry/resource/utils.go, v1.37.2; reference
// §15.2): adminAccess: true is refused unless the claim's namespace carries
// resource.kubernetes.io/admin-access: "true". An error when the input or the
// cluster holds the namespace; otherwise a reminder at the rule's severity.
void checkAdminAccess(const FieldPath& path, const ClaimNamespace& ns, Reporter& out) {
  const std::string nsName(ns.name);
  const std::string label = "kubectl label namespace " + nsName + " " + std::string(kAdminAccessLabel) + "=true";
  if (!ns.facts) {
    out.report(path,
               FieldError::note("adminAccess: true is refused by the API server unless the claim's namespace "
                                "carries the label resource.kubernetes.io/admin-access: \"true\"; label the "
                                "namespace (" + label + "), or drop adminAccess, which is for monitoring devices "
                                "other claims hold"),
               "true");
    return;
  }
  const auto it = ns.facts->labels.find(kAdminAccessLabel);
  if (it != ns.facts->labels.end() && it->second == "true") return;
  const std::string has = it == ns.facts->labels.end()
                              ? "has no such label"
                              : "has " + std::string(kAdminAccessLabel) + ": " + quotedValue(it->second) + ", not \"true\"";
  out.reportWithDefault(path,
                        FieldError::forbidden("admin access to devices requires the `" + std::string(kAdminAccessLabel) +
                                              ": true` label on the containing namespace; namespace " + nsName + " (" +
                                              (ns.fromInput ? "in the input" : "in the cluster") + ") " + has +
                                              ": label it (" + label + "), or drop adminAccess"),
                        "true", Severity::Error);
}

}  // namespace

void checkRequestDetails(const json& request, const FieldPath& path, bool subRequest, const ClaimNamespace& ns,
                         Reporter& out) {
  checkDeviceTolerations(request, path, out);
  checkProductNames(request, path, out);
  // A sub-request has no adminAccess at all (the unknown field is reported as such).
  if (const auto admin = request.find("adminAccess"); !subRequest && admin != request.end() && *admin == true) {
    checkAdminAccess(path.field("adminAccess"), ns, out);
  }
}

}  // namespace gpuguard::checks
