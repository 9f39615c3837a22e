// The linter's policy: what the rules read, the exemptions, and the
// linter's own keys (include/exclude globs, whether annotations count).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "rules/cluster_facts.h"
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
  // The cluster's facts the rules judge against (--facts FILE), or null:
  // judged without them. Not part of the policy file; the run sets it.
  std::shared_ptr<const ClusterFacts> cluster = {};

  static LintPolicy from(yaml::PolicyDocument doc);
};

}  // namespace gpuguard::lint
