// What an UPDATE introduced, and what it may change: the rules POST /validate
// and POST /mutate share so that an UPDATE is judged on its own doing, never
// on the history of the object (issue 23).
//
//   - A finding's identity across an UPDATE is its rule and its path, with
//     each list index replaced by the element's name and its ordinal among the
//     elements of that name (containers[name=a#0]; KubeRay's worker groups by
//     groupName, workerGroupSpecs[groupName=gpu#0]), and by the index where the
//     element has no name. Names are what the API server and the controllers
//     merge on, so an element inserted in front leaves the findings behind it
//     pre-existing (red-team F15); the ordinal keeps two elements of one name
//     apart, so a duplicate cannot pass a new finding off as an old one.
//   - A finding whose identity the old object also had is pre-existing:
//     /validate reports it as a warning, /mutate leaves it unfixed (a label on
//     a Deployment must not rewrite, and so roll, its pod template).
//   - /mutate on UPDATE never patches a field the API server makes immutable
//     for the kind: the patched object would be refused ("field is immutable").
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/finding.h"
#include "rules/fix.h"

namespace gpuguard::webhook {

// Identities of the findings of one object. Linear in the object: each list
// a finding passes through is numbered once, however many findings it holds.
class FindingIdentities {
 public:
  explicit FindingIdentities(const nlohmann::json& object) : object_(object) {}
  std::string of(const Finding& f);

 private:
  // Ordinal of each element among the earlier elements of the same name.
  const std::vector<std::size_t>& ordinals(const nlohmann::json& list);

  const nlohmann::json& object_;
  std::unordered_map<const nlohmann::json*, std::vector<std::size_t>> ordinals_;
};

// The identities of the unsuppressed findings of the old object.
std::unordered_set<std::string> preexistingIdentities(const std::vector<Finding>& oldFindings,
                                                      const nlohmann::json& oldObject);

// Whether the API server refuses `edit` in an UPDATE of an object of this
// group and kind (request.kind). From kubernetes pkg/apis/core/validation
// (ValidatePodUpdate) and pkg/apis/batch/validation (validatePodTemplateUpdate):
//   - Pod: spec is immutable but for additions to spec.tolerations (and
//     fields no fix touches: images, activeDeadlineSeconds, ...); resources
//     change only through the resize subresource.
//   - batch Job: spec.template is immutable. A suspended Job that never
//     started may change its template's nodeSelector, tolerations, affinity,
//     schedulingGates, labels and annotations, but "never started" is
//     status.startTime, which the webhook does not read (status is pruned
//     while parsing), so the whole template is treated as immutable.
//   - CronJob's jobTemplate, Deployment, StatefulSet, DaemonSet and ReplicaSet
//     templates and custom resources are mutable.
bool immutableOnUpdate(std::string_view group, std::string_view kind, const JsonEdit& edit);

}  // namespace gpuguard::webhook
