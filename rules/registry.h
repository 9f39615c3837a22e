// Every rule gpuguard knows, in one place (like clang-tidy's module lists).
#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.h"

namespace gpuguard {

// All rules, in documentation order.
const std::vector<const Rule*>& allRules();
const Rule* findRule(std::string_view id);

}  // namespace gpuguard
