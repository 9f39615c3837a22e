// The admission decision as a pure function: the bytes of an AdmissionReview
// (admission.k8s.io/v1 or v1beta1) and a policy in, the bytes and HTTP status
// of the reply out. No sockets, no clocks, no globals: the HTTP layer, metrics
// and logs live elsewhere (webhook/app.h).
//
// A chain over a typed request (model: Kyverno's pkg/webhooks/handlers):
//   parse once      webhook/admission_request.h   the review into an AdmissionRequest (or a 400)
//   filters         webhook/admission_filters.h   operation, subresource, namespace, being deleted
//   decide          webhook/admission_decision.h  /validate: denials, warnings, UPDATE's pre-existing set
//   mutate          webhook/admission_mutation.h  /mutate: the JSONPatch of the fixes
//   reply           webhook/admission_response.h, webhook/admission_messages.h
//
// What is judged:
//   - CREATE and UPDATE of any kind (Pods, workload controllers, custom
//     resources with pod templates); dryRun requests are judged the same.
//   - Not judged, always allowed: DELETE, CONNECT, any request on a
//     subresource (status, scale, binding, ephemeralcontainers...), an UPDATE
//     of an object that is being deleted (metadata.deletionTimestamp set:
//     finalizer removal must never be blocked), and requests in a namespace the
//     policy exempts.
//   - On UPDATE only what the update introduces is denied: an error finding
//     whose rule and field path the old object already had becomes a warning.
//   - Exemptions (rules/exemptions.h) match the request's namespace.
//   - Suppression annotations (ignore.gpuguard.io/<rule>) count only when the
//     policy sets allowSuppressions: true.
//
// review() (POST /validate) never carries patch or patchType. Error
// findings deny with status 403 Forbidden and one message in the API server's
// aggregate style; warning findings become response.warnings, made safe for
// the API server's warning recorder (valid UTF-8, no control characters,
// <= 256 runes each, <= 4096 runes in total).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "rules/cluster_facts.h"
#include "webhook/admission_decision.h"
#include "webhook/admission_limits.h"
#include "webhook/admission_messages.h"
#include "webhook/admission_policy.h"
#include "webhook/admission_request.h"

namespace gpuguard::webhook {

enum class Decision { Allowed, Denied, Invalid };
std::string_view decisionName(Decision d);  // "allowed", "denied", "invalid"

// The reply, and what the request was about (ReviewAttributes) for logs and
// metrics.
struct AdmissionResult : ReviewAttributes {
  int httpStatus = 200;
  std::string body;  // application/json
  Decision decision = Decision::Invalid;
  std::string error;    // Invalid: what is wrong with the request
  std::string skipped;  // allowed without judging: why ("DELETE", "subresource status", ...)

  std::vector<RuleHit> hits;  // in engine order: denials and warnings
  std::size_t warnings = 0;   // entries in response.warnings
  std::size_t patchOperations = 0;  // mutate(): JSONPatch operations in the reply
};

// What a thread keeps from one review for the next (the parsed tree, the
// pods' reach) comes from bodies below this size only.
inline constexpr std::size_t kKeptBetweenReviewsBelowBytes = 64 * 1024;

// Reviews one AdmissionReview request body. Never throws for any input:
// malformed JSON, a review without `request`, fields of the wrong type, an
// unknown apiVersion or nesting deeper than the limit give HTTP 400 with a
// metav1.Status-shaped JSON body naming the problem.
// `cluster`: the cluster's facts to judge with (rules/cluster_facts.h); null:
// judged without them.
AdmissionResult review(std::string_view body, const AdmissionPolicy& policy, const AdmissionLimits& limits = {},
                       const ClusterFacts* cluster = nullptr);
// The same with the facts' state: while they are configured but missing
// (facts.missing), the errors they could overturn are warnings (fail open).
AdmissionResult review(std::string_view body, const AdmissionPolicy& policy, const AdmissionLimits& limits,
                       const FactsInUse& facts);

// Answers one AdmissionReview for POST /mutate: the same request checks and
// skips as review(), then always allowed, with a JSONPatch (patchType
// JSONPatch, base64 in response.patch) made of the fixes (rules/fix.h) of the
// rules the policy lists under `mutate:`; no patch when nothing needs fixing.
// Exemptions and suppression annotations count as in review().
AdmissionResult mutate(std::string_view body, const AdmissionPolicy& policy, const AdmissionLimits& limits = {},
                       const ClusterFacts* cluster = nullptr);

}  // namespace gpuguard::webhook
