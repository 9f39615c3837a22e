// Reading a policy file (.gpuguard.yaml, the webhook's --policy) from disk.
#pragma once

#include <string>

#include "rules/policy.h"

namespace gpuguard::yaml {

// Reads and validates a policy file. Throws PolicyError with the file name,
// and the line and column for YAML syntax errors. A non-empty `platform`
// replaces the file's platform key (Policy::fromJson).
Policy loadPolicyFile(const std::string& path, std::string_view platform = {});

// The same, from text already in memory (`source` names it in errors).
Policy parsePolicy(std::string_view text, const std::string& source, std::string_view platform = {});

}  // namespace gpuguard::yaml
