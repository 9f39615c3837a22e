#include "webhook/admission.h"

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "webhook/admission_filters.h"
#include "webhook/admission_mutation.h"
#include "webhook/admission_response.h"
#include "webhook/json_reader.h"

namespace gpuguard::webhook {
namespace {

enum class Mode { Validate, Mutate };

void fail(AdmissionResult& r, std::string message, int code = 400) {
  r.httpStatus = code;
  r.decision = Decision::Invalid;
  r.body = code == 400 ? statusBody(code, "BadRequest", "invalid AdmissionReview: " + message)
                       : statusBody(code, "InternalError", message);
  r.error = std::move(message);
}

// POST /validate's handler: the decision, as the reply.
void validateHandler(const AdmissionRequest& request, const AdmissionPolicy& policy, const AdmissionLimits& limits,
                     const FactsInUse& facts, AdmissionResult& r) {
  Verdict verdict = decide(request, policy, limits, facts);
  r.hits = std::move(verdict.hits);
  r.warnings = verdict.warnings.size();
  if (verdict.denials.empty()) {
    r.body = responseBody(r, verdict.warnings, nullptr);
  } else {
    r.decision = Decision::Denied;
    const std::string message = denialMessage(verdict.denials, limits);
    r.body = responseBody(r, verdict.warnings, &message);
  }
}

// POST /mutate's handler: always allowed (the validating webhook decides;
// this one only fixes), with the patch.
void mutateHandler(const AdmissionRequest& request, const AdmissionPolicy& policy, const ClusterFacts* cluster,
                   AdmissionResult& r) {
  const nlohmann::json patch = mutationPatch(request, policy, cluster);
  r.patchOperations = patch.size();
  r.body = responseBody(r, {}, nullptr, &patch);
}

// Each thread reads every review into the tree of its previous one (see
// ParsedReview): reviews of one shape, as a workload's pods are, then cost
// no allocation per member and no freeing of the whole tree, which were
// two fifths of a review's instructions (docs/performance.md). A thread
// keeps the tree of a review of at most kKeptBetweenReviewsBelowBytes only,
// so what it holds between reviews stays small.
thread_local nlohmann::json keptTree;

// Frees the kept tree on leaving when its review was large.
struct KeptTreeLimit {
  std::size_t bodyBytes;
  ~KeptTreeLimit() {
    if (bodyBytes >= kKeptBetweenReviewsBelowBytes) releaseJson(keptTree);
  }
};

// The chain: parse once, the filters, then the mode's handler.
void admitParsed(std::string_view body, const AdmissionPolicy& policy, const AdmissionLimits& limits, Mode mode,
                 const FactsInUse& facts, AdmissionResult& r) {
  const KeptTreeLimit limit{body.size()};
  ParsedReview parsed(keptTree);
  const std::optional<std::string> invalid =
      parseAdmissionReview(body, limits.maxNestingDepth, parsed, limits.maxJsonValues);
  static_cast<ReviewAttributes&>(r) = parsed.request;  // what was read, for the logs even when invalid
  if (invalid) return fail(r, *invalid);
  const AdmissionRequest& request = parsed.request;
  r.decision = Decision::Allowed;
  r.skipped = skipReason(request, policy);
  if (!r.skipped.empty()) {
    r.body = responseBody(r, {}, nullptr);
  } else if (mode == Mode::Mutate) {
    mutateHandler(request, policy, facts.cluster, r);
  } else {
    validateHandler(request, policy, limits, facts, r);
  }
}

AdmissionResult admit(std::string_view body, const AdmissionPolicy& policy, const AdmissionLimits& limits, Mode mode,
                      const FactsInUse& facts) {
  AdmissionResult r;
  try {
    admitParsed(body, policy, limits, mode, facts, r);
  } catch (const std::exception& e) {
    // The engine and the parser are written not to throw on any input; if
    // one does (or memory runs out), the request is still answered.
    fail(r, std::string("internal error reviewing the request: ") + e.what(), 500);
  }
  return r;
}

}  // namespace

std::string_view decisionName(Decision d) {
  switch (d) {
    case Decision::Allowed: return "allowed";
    case Decision::Denied: return "denied";
    case Decision::Invalid: return "invalid";
  }
  return "invalid";
}

AdmissionResult review(std::string_view body, const AdmissionPolicy& policy, const AdmissionLimits& limits,
                       const ClusterFacts* cluster) {
  return admit(body, policy, limits, Mode::Validate, FactsInUse{cluster, {}});
}

AdmissionResult review(std::string_view body, const AdmissionPolicy& policy, const AdmissionLimits& limits,
                       const FactsInUse& facts) {
  return admit(body, policy, limits, Mode::Validate, facts);
}

AdmissionResult mutate(std::string_view body, const AdmissionPolicy& policy, const AdmissionLimits& limits,
                       const ClusterFacts* cluster) {
  return admit(body, policy, limits, Mode::Mutate, FactsInUse{cluster, {}});
}

}  // namespace gpuguard::webhook
