// Reading a policy file (.gpuguard.yaml, the webhook's --policy) from disk.
#pragma once

#include <string>

#include "rules/policy.h"

namespace gpuguard::yaml {

// Reads and validates a policy file. Throws PolicyError with the file name,
// and the line and column for YAML syntax errors.
Policy loadPolicyFile(const std::string& path);

// The same, from text already in memory (`source` names it in errors).
Policy parsePolicy(std::string_view text, const std::string& source);

}  // namespace gpuguard::yaml
