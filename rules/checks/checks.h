// Factories of the checks, one per file in this directory. The registry
// (rules/registry.cpp) is the only caller.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace gpuguard::checks {

std::unique_ptr<Rule> makeGpuInvalidQuantity();
std::unique_ptr<Rule> makeGpuFractional();
std::unique_ptr<Rule> makeGpuRequestsLimitsMismatch();
std::unique_ptr<Rule> makeGpuRequestsWithoutLimits();
std::unique_ptr<Rule> makeGpuMissingToleration();
std::unique_ptr<Rule> makeGpuMissingDriverPin();
std::unique_ptr<Rule> makeLabelValueNotString();

}  // namespace gpuguard::checks
