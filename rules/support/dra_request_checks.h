// Fields of one DRA device request (exactly: or a firstAvailable
// alternative) that the API server refuses or that no device can match, for
// dra-with-device-plugin: device tolerations (validateDeviceToleration),
// productName compared with GPU Feature Discovery's dashed form, and
// adminAccess, which needs a namespace label. Facts: kubernetes-gpu-semantics.md §15.2.
#pragma once

#include <nlohmann/json.hpp>

#include "rules/k8s/field_path.h"
#include "rules/rule.h"

namespace gpuguard::checks {

// Reports what is wrong with the request at `path` (its exactly: object, or
// a firstAvailable sub-request when `subRequest`).
void checkRequestDetails(const nlohmann::json& request, const FieldPath& path, bool subRequest, Reporter& out);

}  // namespace gpuguard::checks
