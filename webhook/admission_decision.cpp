#include "webhook/admission_decision.h"

#include <unordered_set>
#include <utility>

#include "rules/engine.h"
#include "rules/registry.h"
#include "webhook/admission_messages.h"
#include "webhook/admission_owner.h"
#include "webhook/admission_update.h"

namespace gpuguard::webhook {
namespace {

constexpr std::string_view kPreexisting = "(already present before this update)";

// What an error of a controller's child says instead of denying.
std::string judgedAtOwnerNote(const std::string& owner) {
  return "(created by its controller from " + owner + ", which was judged when it was written)";
}

// What a finding that failed open says first: why the facts are missing and
// what it was judged against instead.
std::string withoutFactsNote(std::string_view missing, std::string_view basis) {
  return "cluster facts unavailable (" + std::string(missing) + "): judged against " + std::string(basis) +
         ", so a warning, not a denial; ";
}

// On UPDATE, the identities of the errors the old object already had: not
// the update's doing. Empty otherwise, or when nothing would deny anyway.
std::unordered_set<std::string> preexistingErrors(const std::vector<Finding>& findings, const AdmissionRequest& request,
                                                  const AdmissionPolicy& policy, const FactsInUse& facts) {
  if (!request.isUpdate() || !request.oldObject || !hasErrors(findings)) return {};
  return preexistingIdentities(judgeRequestObject(*request.oldObject, request, policy, facts.cluster, facts.reachCache),
                               *request.oldObject);
}

}  // namespace

std::vector<Finding> judgeRequestObject(const nlohmann::json& object, const AdmissionRequest& request,
                                        const AdmissionPolicy& policy, const ClusterFacts* cluster,
                                        ReachCache* reachCache) {
  JudgeOptions options;
  options.cluster = cluster;
  options.reachCache = reachCache;
  options.exemptions = &policy.exemptions;
  options.namespaceName = request.namespaceName;
  std::vector<Finding> findings = judge(object, policy.engine, options);
  if (!policy.allowSuppressions) forgetSuppressions(findings);
  return findings;
}

Verdict decide(const AdmissionRequest& request, const AdmissionPolicy& policy, const AdmissionLimits& limits,
               const FactsInUse& facts) {
  const std::vector<Finding> findings =
      judgeRequestObject(*request.object, request, policy, facts.cluster, facts.reachCache);
  const std::unordered_set<std::string> preexisting = preexistingErrors(findings, request, policy, facts);
  const bool factsMissing = facts.cluster == nullptr && !facts.missing.empty();
  const std::string owner = policy.judgeChildrenAtOwner ? ownerOfControllerChild(request) : std::string();
  FindingIdentities identities(*request.object);
  Verdict verdict;
  WarningList warnings(limits);
  for (const Finding& f : findings) {
    if (f.suppressed) continue;
    const bool error = f.severity == Severity::Error;
    // Judged by what the missing facts would have replaced: a guess, so it warns.
    const std::string_view blindBasis = error && factsMissing ? judgedWithoutFactsAgainst(f.rule) : "";
    if (!blindBasis.empty()) {
      warnings.add(warningText(f, {}, limits, withoutFactsNote(facts.missing, blindBasis)));
      verdict.hits.push_back({f.rule, false, true});
    } else if (error && !owner.empty()) {
      warnings.add(warningText(f, judgedAtOwnerNote(owner), limits));
      verdict.hits.push_back({f.rule, false});
    } else if (error && (preexisting.empty() || !preexisting.count(identities.of(f)))) {
      verdict.denials.push_back(denialEntry(f));
      verdict.hits.push_back({f.rule, true});
    } else {
      warnings.add(warningText(f, error ? kPreexisting : std::string_view(), limits));
      verdict.hits.push_back({f.rule, false});
    }
  }
  verdict.warnings = std::move(warnings).finish();
  return verdict;
}

}  // namespace gpuguard::webhook
