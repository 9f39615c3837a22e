#include "webhook/admission_filters.h"

#include <array>

namespace gpuguard::webhook {
namespace {

constexpr std::array<AdmissionFilter, 4> kFilters{operationFilter, subresourceFilter, namespaceFilter,
                                                  beingDeletedFilter};

}  // namespace

std::optional<std::string> operationFilter(const AdmissionRequest& request, const AdmissionPolicy&) {
  if (request.operation == "CREATE" || request.operation == "UPDATE") return std::nullopt;
  return request.operation;
}

std::optional<std::string> subresourceFilter(const AdmissionRequest& request, const AdmissionPolicy&) {
  if (request.subResource.empty()) return std::nullopt;
  return "subresource " + request.subResource;
}

std::optional<std::string> namespaceFilter(const AdmissionRequest& request, const AdmissionPolicy& policy) {
  if (!policy.namespaceExempt(request.namespaceName)) return std::nullopt;
  return "namespace exempt";
}

std::optional<std::string> beingDeletedFilter(const AdmissionRequest& request, const AdmissionPolicy&) {
  if (!request.isUpdate() || !request.object) return std::nullopt;
  auto metadata = request.object->find("metadata");
  if (metadata == request.object->end() || !metadata->is_object()) return std::nullopt;
  auto deletion = metadata->find("deletionTimestamp");
  if (deletion == metadata->end() || deletion->is_null()) return std::nullopt;
  return "being deleted";
}

std::span<const AdmissionFilter> admissionFilters() { return kFilters; }

std::string skipReason(const AdmissionRequest& request, const AdmissionPolicy& policy) {
  for (const AdmissionFilter filter : kFilters) {
    if (std::optional<std::string> reason = filter(request, policy)) return std::move(*reason);
  }
  return {};
}

}  // namespace gpuguard::webhook
