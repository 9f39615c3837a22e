// Fields of one DRA device request (exactly: or a firstAvailable
// alternative) that the API server refuses or that no device can match, for
// dra-with-device-plugin: device tolerations (validateDeviceToleration),
// productName compared with GPU Feature Discovery's dashed form, and
// adminAccess, which needs a namespace label. Facts: kubernetes-gpu-semantics.md §15.2.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "rules/cluster_facts.h"
#include "rules/k8s/field_path.h"
#include "rules/rule.h"

namespace gpuguard::checks {

// The namespace a claim (or the claims of a template) is created in, as far
// as the input or the cluster facts know it (GpuFacts::namespaceFacts).
struct ClaimNamespace {
  std::string_view name;
  const NamespaceFacts* facts = nullptr;  // null: neither holds it
  bool fromInput = false;                 // the input's Namespace (else the cluster's)
};

// Reports what is wrong with the request at `path` (its exactly: object, or
// a firstAvailable sub-request when `subRequest`) of a claim in `ns`.
void checkRequestDetails(const nlohmann::json& request, const FieldPath& path, bool subRequest,
                         const ClaimNamespace& ns, Reporter& out);

}  // namespace gpuguard::checks
