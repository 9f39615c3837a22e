// The filters in front of the decision (model: Kyverno's
// pkg/webhooks/handlers WithOperationFilter, WithSubResourceFilter,
// WithFilter): each looks at the typed request and either lets it through to
// the rules or says why it is allowed unjudged. The first that stops a request
// gives its reason, which the logs show as `skipped`.
//
//   operation      only CREATE and UPDATE are judged: "DELETE", "CONNECT"
//   subresource    status, scale, binding, ephemeralcontainers...: "subresource status"
//   namespace      the policy's exemptNamespaces: "namespace exempt"
//   being deleted  an UPDATE of an object whose metadata.deletionTimestamp is
//                  set (finalizer removal must never be blocked): "being deleted"
#pragma once

#include <optional>
#include <span>
#include <string>

#include "webhook/admission_policy.h"
#include "webhook/admission_request.h"

namespace gpuguard::webhook {

// Why the request is allowed without judging, or nullopt to pass it on.
using AdmissionFilter = std::optional<std::string> (*)(const AdmissionRequest&, const AdmissionPolicy&);

std::optional<std::string> operationFilter(const AdmissionRequest& request, const AdmissionPolicy& policy);
std::optional<std::string> subresourceFilter(const AdmissionRequest& request, const AdmissionPolicy& policy);
std::optional<std::string> namespaceFilter(const AdmissionRequest& request, const AdmissionPolicy& policy);
std::optional<std::string> beingDeletedFilter(const AdmissionRequest& request, const AdmissionPolicy& policy);

// The filters of both /validate and /mutate, in the order they run.
std::span<const AdmissionFilter> admissionFilters();

// The reason of the first filter that stops the request, or "" when every
// filter passes it on to the rules.
std::string skipReason(const AdmissionRequest& request, const AdmissionPolicy& policy);

}  // namespace gpuguard::webhook
