// A policy file (.gpuguard.yaml, the webhook's --policy), read once with one
// schema (docs/policy.schema.json) for both front ends, and split among its
// readers: what the rules read (Policy), the exemptions both front ends
// honour, and the keys only one front end reads. Each front end builds its
// own policy from it (lint/lint_policy.h, webhook/admission_policy.h) and
// decides there what an unset allowSuppressions means.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/exemptions.h"
#include "rules/policy.h"

namespace gpuguard::yaml {

struct PolicyDocument {
  Policy engine;
  Exemptions exemptions;
  std::optional<bool> allowSuppressions;       // ignore.gpuguard.io/<rule> annotations; unset: the front end's default
  std::vector<std::string> exemptNamespaces;   // webhook: namespaces admitted unjudged ("team-*": a prefix)
  std::optional<bool> judgeChildrenAtOwner;    // webhook: a controller's child warns, its owner decides; unset: true
  std::optional<std::vector<std::string>> mutate;  // webhook: rules whose fixes POST /mutate applies; unset: its default
  std::vector<std::string> include, exclude;   // linter: path globs

  // Reads a decoded document; throws PolicyError naming `source` and the key.
  static PolicyDocument fromJson(const nlohmann::json& doc, std::string_view source, std::string_view platform = {});
};

// Reads and validates a policy file. Throws PolicyError with the file name,
// and the line and column for YAML syntax errors. A non-empty `platform`
// replaces the file's platform key (Policy::fromJson).
PolicyDocument loadPolicyFile(const std::string& path, std::string_view platform = {});

// The same, from text already in memory (`source` names it in errors).
PolicyDocument parsePolicy(std::string_view text, const std::string& source, std::string_view platform = {});

}  // namespace gpuguard::yaml
