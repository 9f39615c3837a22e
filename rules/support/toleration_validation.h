// The API server's ValidateTolerations for the tolerations that bear on a GPU
// taint (gpu-missing-toleration): a toleration that would match is worthless
// when the API server rejects the pod for it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rules/pod_specs.h"
#include "rules/policy.h"
#include "rules/rule.h"

namespace gpuguard::checks {

// A string field of a toleration as the API server decodes it: absent and
// null are ""; nullopt for another type (a decode error).
std::optional<std::string> tolerationField(const nlohmann::json& toleration, std::string_view name);

// The operators and effects ValidateTolerations accepts.
bool supportedTolerationOperator(const std::string& op);
bool supportedTolerationEffect(const std::string& effect);

// Each toleration of the site whose key is a GPU taint's of the policy (or
// empty), checked as ValidateTolerations does, in its order; each finding
// with a fix of no edits (which edit was meant is a guess).
void checkGpuTolerations(const PodSite& site, const Policy& policy, Reporter& out);

}  // namespace gpuguard::checks
