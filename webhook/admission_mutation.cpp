#include "webhook/admission_mutation.h"

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "rules/fix.h"
#include "webhook/admission_decision.h"
#include "webhook/admission_owner.h"
#include "webhook/admission_update.h"

namespace gpuguard::webhook {
namespace {

// The findings whose rule is listed under `mutate:` and that carry edits.
std::vector<const Finding*> fixableFindings(const std::vector<Finding>& findings, const AdmissionPolicy& policy) {
  const std::unordered_set<std::string_view> fixable(policy.mutate.begin(), policy.mutate.end());
  std::vector<const Finding*> toFix;
  for (const Finding& f : findings) {
    if (!f.suppressed && f.fix && !f.fix->edits.empty() && fixable.count(f.rule)) toFix.push_back(&f);
  }
  return toFix;
}

}  // namespace

nlohmann::json mutationPatch(const AdmissionRequest& request, const AdmissionPolicy& policy,
                             const ClusterFacts* cluster) {
  if (ownerComparesTemplate(request)) return nlohmann::json::array();
  const nlohmann::json& object = *request.object;
  const bool update = request.isUpdate();
  const std::vector<Finding> findings = judgeRequestObject(object, request, policy, cluster);
  const std::vector<const Finding*> toFix = fixableFindings(findings, policy);
  std::unordered_set<std::string> preexisting;
  if (update && request.oldObject && !toFix.empty()) {
    preexisting = preexistingIdentities(judgeRequestObject(*request.oldObject, request, policy, cluster),
                                        *request.oldObject);
  }
  FindingIdentities identities(object);
  std::vector<JsonEdit> edits;
  for (const Finding* f : toFix) {
    if (update && preexisting.count(identities.of(*f))) continue;
    for (const JsonEdit& e : f->fix->edits) {
      if (!update || !immutableOnUpdate(request.group, request.kind, e)) edits.push_back(e);
    }
  }
  return toJsonPatch(edits, object);
}

}  // namespace gpuguard::webhook
