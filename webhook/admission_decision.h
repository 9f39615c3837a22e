// The one decision step of POST /validate, on a request the filters let
// through: the rules judge the object (with the policy's exemptions matched
// against the request's namespace, suppression annotations counting only when
// the policy allows them); each unsuppressed error finding denies and each
// warning warns. On UPDATE only what the update introduces denies: an error
// whose identity the old object already had (webhook/admission_update.h) is a
// warning marked "(already present before this update)". While the cluster
// facts are configured but missing, an error the facts could overturn
// (RuleDoc::withoutFacts: gpu-missing-toleration judged against the policy's
// gpuTaints) is a warning that says so: losing the facts fails open.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/cluster_facts.h"
#include "rules/finding.h"
#include "rules/reach_cache.h"
#include "webhook/admission_limits.h"
#include "webhook/admission_policy.h"
#include "webhook/admission_request.h"

namespace gpuguard::webhook {

// One finding that counted: it denied the request or became a warning.
struct RuleHit {
  std::string rule;
  bool denied = false;      // false: reported as a warning
  bool failedOpen = false;  // an error reported as a warning: the facts that could overturn it were missing
};

// The cluster facts a request is judged with.
struct FactsInUse {
  const ClusterFacts* cluster = nullptr;  // null: judged without them
  // Facts configured (--cluster-facts=on, or auto with a configuration) but
  // not usable now, and why ("nodes unreachable", "not synced yet"): the
  // errors they could overturn fail open. Empty with a null `cluster`: off
  // by configuration, judged as always.
  std::string missing;
  // Where pods of one workload can go, kept from earlier reviews with the
  // same `cluster` and policy (rules/reach_cache.h); null: not kept.
  ReachCache* reachCache = nullptr;
};

struct Verdict {
  std::vector<std::string> denials;   // denial entries (denialEntry()), in engine order
  std::vector<std::string> warnings;  // response.warnings, within the API server's budget
  std::vector<RuleHit> hits;          // in engine order: denials and warnings
};

// The engine on one object of the request (its object or its oldObject).
// `cluster`: the cluster's facts to judge with; null: judged without them.
// `reachCache`: FactsInUse::reachCache.
std::vector<Finding> judgeRequestObject(const nlohmann::json& object, const AdmissionRequest& request,
                                        const AdmissionPolicy& policy, const ClusterFacts* cluster,
                                        ReachCache* reachCache = nullptr);

// The verdict on request.object (CREATE or UPDATE).
Verdict decide(const AdmissionRequest& request, const AdmissionPolicy& policy, const AdmissionLimits& limits,
               const FactsInUse& facts);

}  // namespace gpuguard::webhook
