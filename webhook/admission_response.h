// The bytes of the reply: an AdmissionReview response echoing the request's
// apiVersion and uid, or a metav1.Status for a request that is not one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "webhook/admission_request.h"

namespace gpuguard::webhook {

// A metav1.Status, the shape the API server itself uses for errors.
std::string statusBody(int code, std::string_view reason, std::string_view message);

// The AdmissionReview reply: allowed unless `denial` is given (then a 403
// Forbidden status with that message), the JSONPatch when `patch` holds
// operations (base64, patchType JSONPatch), and the warnings.
std::string responseBody(const ReviewAttributes& review, const std::vector<std::string>& warnings,
                         const std::string* denial, const nlohmann::json* patch = nullptr);

// RFC 4648 base64, as AdmissionResponse.patch carries the JSONPatch.
std::string base64(std::string_view bytes);

}  // namespace gpuguard::webhook
