#include "webhook/audit_judge.h"

#include <string>

#include "audit/facts_sensitive.h"
#include "rules/engine.h"

namespace gpuguard::webhook {

audit::Judgement judgeForAudit(const nlohmann::json& object, const AdmissionPolicy& policy, const ClusterFacts* facts) {
  audit::Judgement out;
  const nlohmann::json meta = object.is_object() ? object.value("metadata", nlohmann::json::object()) : nlohmann::json();
  const std::string ns = meta.is_object() && meta.value("namespace", nlohmann::json()).is_string()
                             ? meta["namespace"].get<std::string>()
                             : "";
  const bool deleting = meta.is_object() && meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  if ((!ns.empty() && policy.namespaceExempt(ns)) || deleting) {
    out.exempt = true;
    return out;
  }
  JudgeOptions options;
  options.cluster = facts;
  options.exemptions = &policy.exemptions;
  options.namespaceName = ns;
  out.findings = judge(object, policy.engine, options);
  if (!policy.allowSuppressions) forgetSuppressions(out.findings);
  out.factsSensitive = audit::factsSensitive(object, policy.engine, facts);
  return out;
}

audit::JudgeFn auditJudge(const PolicySource& source) {
  return [&source](const nlohmann::json& object, const ClusterFacts* facts) {
    const std::shared_ptr<const AdmissionPolicy> policy = source.current();
    return judgeForAudit(object, *policy, facts);
  };
}

}  // namespace gpuguard::webhook
