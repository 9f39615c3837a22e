// Factories of the checks, one per file in this directory, declared from the
// one line each rule has in registered.inc. The registry (rules/registry.cpp)
// is the only caller.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace gpuguard::checks {

#define GPUGUARD_RULE(name, judges) std::unique_ptr<Rule> make##name();
#include "rules/checks/registered.inc"
#undef GPUGUARD_RULE

}  // namespace gpuguard::checks
