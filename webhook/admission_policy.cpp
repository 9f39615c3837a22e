#include "webhook/admission_policy.h"

#include <algorithm>

namespace gpuguard::webhook {

AdmissionPolicy AdmissionPolicy::from(yaml::PolicyDocument doc) {
  AdmissionPolicy p;
  p.engine = std::move(doc.engine);
  p.exemptions = std::move(doc.exemptions);
  p.exemptNamespaces = std::move(doc.exemptNamespaces);
  p.allowSuppressions = doc.allowSuppressions.value_or(p.allowSuppressions);
  p.judgeChildrenAtOwner = doc.judgeChildrenAtOwner.value_or(p.judgeChildrenAtOwner);
  if (doc.mutate) p.mutate = std::move(*doc.mutate);
  return p;
}

bool AdmissionPolicy::namespaceExempt(std::string_view ns) const {
  if (ns.empty()) return false;
  return std::any_of(exemptNamespaces.begin(), exemptNamespaces.end(), [&](const std::string& e) {
    if (!e.empty() && e.back() == '*') return ns.substr(0, e.size() - 1) == std::string_view(e).substr(0, e.size() - 1);
    return e == ns;
  });
}

}  // namespace gpuguard::webhook
