// The rule engine: one Kubernetes object (as JSON) and a policy in, findings
// out. Both front ends call only this: gpuguard-lint for each YAML document,
// gpuguard-webhook for each AdmissionReview object.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "rules/finding.h"
#include "rules/policy.h"
#include "rules/rule.h"

namespace gpuguard {

struct JudgeOptions {
  const SourceHints* hints = nullptr;  // how scalars were written, if known
};

// Runs every enabled rule on `object`. Findings come in rule order, then in
// document order within a rule. Suppressed findings are returned too (marked
// `suppressed`) when the policy allows suppressions (unset: allowed), so
// front ends can list and count them; otherwise annotations are ignored.
std::vector<Finding> judge(const nlohmann::json& object, const Policy& policy, const JudgeOptions& options = {});

// True when any unsuppressed finding is an error.
bool hasErrors(const std::vector<Finding>& findings);

// The annotation prefix that suppresses a rule on an object or pod template:
// ignore.gpuguard.io/<rule-id>: "<reason>".
inline constexpr const char* kSuppressionPrefix = "ignore.gpuguard.io/";

}  // namespace gpuguard
