// The background audit's judge: an object of the cluster judged exactly as
// admission judges its CREATE (webhook/admission_decision.h
// judgeRequestObject): the same engine, the policy's exemptions and exempt
// namespaces, suppression annotations only with allowSuppressions: true, the
// cluster facts of the moment. audit/ knows no webhook type; it gets this as
// an audit::JudgeFn.
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "audit/auditor.h"
#include "webhook/admission_policy.h"
#include "webhook/policy_source.h"

namespace gpuguard::webhook {

// One object under `policy`; an object in an exempt namespace, or being
// deleted (metadata.deletionTimestamp), is exempt.
audit::Judgement judgeForAudit(const nlohmann::json& object, const AdmissionPolicy& policy, const ClusterFacts* facts);

// The judge over the policy `source` holds at each call (its atomic snapshot:
// no lock shared with admission).
audit::JudgeFn auditJudge(const PolicySource& source);

}  // namespace gpuguard::webhook
