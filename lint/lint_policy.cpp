#include "lint/lint_policy.h"

namespace gpuguard::lint {

LintPolicy LintPolicy::from(yaml::PolicyDocument doc) {
  LintPolicy p;
  p.engine = std::move(doc.engine);
  p.exemptions = std::move(doc.exemptions);
  p.allowSuppressions = doc.allowSuppressions.value_or(p.allowSuppressions);
  p.include = std::move(doc.include);
  p.exclude = std::move(doc.exclude);
  return p;
}

}  // namespace gpuguard::lint
