// The webhook's policy: what the rules read, the exemptions, and the
// webhook's own keys (exemptNamespaces, whether annotations count, what
// /mutate fixes).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rules/exemptions.h"
#include "rules/policy.h"
#include "yaml/policy_file.h"

namespace gpuguard::webhook {

struct AdmissionPolicy {
  Policy engine = {};
  Exemptions exemptions = {};
  // Namespaces admitted without being judged; an entry ending in '*' is a prefix.
  std::vector<std::string> exemptNamespaces = {};
  // The webhook ignores ignore.gpuguard.io/<rule> annotations unless the
  // policy says allowSuppressions: true: anyone who can create a pod can
  // write an annotation.
  bool allowSuppressions = false;
  // A child a built-in controller creates from its owner's template (a
  // Deployment's ReplicaSet, a Job's Pod) is judged at its owner: its errors
  // warn (webhook/admission_owner.h). False when the webhook does not see the
  // owners' kinds (a configuration for pods alone).
  bool judgeChildrenAtOwner = true;
  // The rules whose fixes POST /mutate applies (as a JSONPatch).
  std::vector<std::string> mutate = {"gpu-missing-toleration", "gpu-requests-without-limits"};

  static AdmissionPolicy from(yaml::PolicyDocument doc);

  bool namespaceExempt(std::string_view namespaceName) const;
};

}  // namespace gpuguard::webhook
