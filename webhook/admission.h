// The admission decision as a pure function: the bytes of an AdmissionReview
// (admission.k8s.io/v1 or v1beta1) and a policy in, the bytes and HTTP status
// of the reply out. No sockets, no clocks, no globals: the HTTP layer, metrics
// and logs live elsewhere (webhook/app.h).
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
#include "rules/finding.h"
#include "webhook/admission_policy.h"

namespace gpuguard::webhook {

struct AdmissionLimits {
  std::size_t maxNestingDepth = 200;        // deeper JSON is a 400, never a deep stack
  std::size_t maxDenialErrors = 20;         // errors listed in a denial before "and N more"
  std::size_t maxDenialMessageRunes = 4000; // the message stays readable in kubectl
  std::size_t maxWarningRunes = 256;        // the API server truncates beyond this
  std::size_t preferredWarningRunes = 120;  // the API docs' advice
  std::size_t maxWarningTotalRunes = 4096;  // the API server's budget for one request
};

enum class Decision { Allowed, Denied, Invalid };
std::string_view decisionName(Decision d);  // "allowed", "denied", "invalid"

// One finding that counted: it denied the request or became a warning.
struct RuleHit {
  std::string rule;
  bool denied = false;  // false: reported as a warning
};

struct AdmissionResult {
  int httpStatus = 200;
  std::string body;  // application/json
  Decision decision = Decision::Invalid;
  std::string error;    // Invalid: what is wrong with the request
  std::string skipped;  // allowed without judging: why ("DELETE", "subresource status", ...)

  // What the request was about, for logs and metrics ("" when unknown).
  std::string apiVersion;  // admission.k8s.io/v1 or v1beta1
  std::string uid;
  std::string operation;
  std::string group;
  std::string kind;
  std::string namespaceName;
  std::string name;
  std::string subResource;
  bool dryRun = false;

  std::vector<RuleHit> hits;  // in engine order: denials and warnings
  std::size_t warnings = 0;   // entries in response.warnings
  std::size_t patchOperations = 0;  // mutate(): JSONPatch operations in the reply
};

// Reviews one AdmissionReview request body. Never throws for any input:
// malformed JSON, a review without `request`, fields of the wrong type, an
// unknown apiVersion or nesting deeper than the limit give HTTP 400 with a
// metav1.Status-shaped JSON body naming the problem.
// `cluster`: the cluster's facts to judge with (rules/cluster_facts.h); null:
// judged without them.
AdmissionResult review(std::string_view body, const AdmissionPolicy& policy, const AdmissionLimits& limits = {},
                       const ClusterFacts* cluster = nullptr);

// Answers one AdmissionReview for POST /mutate: the same request checks and
// skips as review(), then always allowed, with a JSONPatch (patchType
// JSONPatch, base64 in response.patch) made of the fixes (rules/fix.h) of the
// rules the policy lists under `mutate:`; no patch when nothing needs fixing.
// Exemptions and suppression annotations count as in review().
AdmissionResult mutate(std::string_view body, const AdmissionPolicy& policy, const AdmissionLimits& limits = {},
                       const ClusterFacts* cluster = nullptr);

// ---- building blocks, exposed for tests ----

// Makes `text` acceptable to the API server's warning recorder: invalid UTF-8
// becomes U+FFFD, control characters (C0, DEL, C1) become spaces, runs of
// spaces collapse, and the result is cut to `maxRunes` runes (ending in "...").
std::string sanitizeWarning(std::string_view text, std::size_t maxRunes);

// "<rule>: <field>: <what is wrong>", without the remedy when that keeps it
// within the preferred length. `suffix`, if any, follows after a space and
// survives any cut.
std::string warningText(const Finding& f, std::string_view suffix, const AdmissionLimits& limits);

// "<field>: <message> [<rule>]", as one entry of a denial message.
std::string denialEntry(const Finding& f);

// Joins entries like the API server's aggregate error: one entry alone,
// several as "[e1, e2]"; de-duplicated; capped with "and N more".
std::string denialMessage(const std::vector<std::string>& entries, const AdmissionLimits& limits);

}  // namespace gpuguard::webhook
