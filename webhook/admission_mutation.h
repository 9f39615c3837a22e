// POST /mutate's step, apart from the decision: the JSONPatch of the fixes
// (rules/fix.h) that the rules the policy lists under `mutate:` emit for the
// object's unsuppressed findings. On UPDATE only the findings the update
// introduced are fixed, and never in a field the API server makes immutable
// for the kind (webhook/admission_update.h).
#pragma once

#include <nlohmann/json.hpp>

#include "rules/cluster_facts.h"
#include "webhook/admission_policy.h"
#include "webhook/admission_request.h"

namespace gpuguard::webhook {

// The JSONPatch (an array of operations) for request.object; empty when
// nothing needs fixing.
nlohmann::json mutationPatch(const AdmissionRequest& request, const AdmissionPolicy& policy,
                             const ClusterFacts* cluster);

}  // namespace gpuguard::webhook
