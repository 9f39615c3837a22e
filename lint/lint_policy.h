// The linter's policy: what the rules read, the exemptions, and the
// linter's own keys (include/exclude globs, whether annotations count).
#pragma once

#include <string>
#include <vector>

#include "rules/exemptions.h"
#include "rules/policy.h"
#include "yaml/policy_file.h"

namespace gpuguard::lint {

struct LintPolicy {
  Policy engine = {};
  Exemptions exemptions = {};
  // The linter honours ignore.gpuguard.io/<rule> annotations unless the policy
  // says allowSuppressions: false: in a repository they are reviewed like any
  // other line, and --show-suppressed lists them.
  bool allowSuppressions = true;
  std::vector<std::string> include = {}, exclude = {};

  static LintPolicy from(yaml::PolicyDocument doc);
};

}  // namespace gpuguard::lint
