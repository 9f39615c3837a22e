#include "schedule/scheduler_message.h"

#include "rules/k8s/field_error.h"
#include "rules/k8s/json_access.h"

namespace gpuguard::schedule {

using nlohmann::json;

std::optional<SchedulerCondition> podScheduledCondition(const json& pod) {
  const json* status = pod.is_object() ? member(pod, "status") : nullptr;
  const json* conditions = status ? member(*status, "conditions") : nullptr;
  if (!conditions || !conditions->is_array()) return std::nullopt;
  for (const json& c : *conditions) {
    if (!c.is_object() || stringOr(c, "type") != "PodScheduled") continue;
    return SchedulerCondition{stringOr(c, "status"), stringOr(c, "reason"), stringOr(c, "message"),
                              stringOr(c, "lastTransitionTime")};
  }
  return std::nullopt;
}

std::string comparablePart(std::string_view message) {
  // The FitError joins its parts with ". "; the PostFilter part starts "preemption: ".
  const std::size_t preemption = message.find(" preemption: ");
  std::string_view head = message.substr(0, preemption);
  while (!head.empty() && (head.back() == ' ' || head.back() == '.')) head.remove_suffix(1);
  while (!head.empty() && head.front() == ' ') head.remove_prefix(1);
  return std::string(head);
}

std::optional<bool> SchedulerComparison::agrees() const {
  if (agreement == Agreement::NotTried) return std::nullopt;
  return agreement == Agreement::Agrees;
}

namespace {

std::string notTried(const std::optional<SchedulerCondition>& c, std::string_view schedulerName) {
  const bool otherScheduler = !schedulerName.empty() && schedulerName != "default-scheduler";
  if (otherScheduler && (!c || c->status != "False")) {
    return "the pod asks for scheduler \"" + std::string(schedulerName) + "\", which has not said why it waits";
  }
  if (!c) return "not yet tried by the scheduler (no PodScheduled condition)";
  if (c->reason == "SchedulingGated") {
    return "held by scheduling gates (spec.schedulingGates): the scheduler has not tried it";
  }
  return "the scheduler's condition is PodScheduled=" + c->status + (c->reason.empty() ? "" : " (" + c->reason + ")") +
         ", not a refusal to compare with";
}

}  // namespace

SchedulerComparison compareWithScheduler(const PodDiagnosis& replay, const std::optional<SchedulerCondition>& condition,
                                         std::string_view schedulerName) {
  SchedulerComparison out;
  if (!condition || condition->status != "False" || condition->message.empty() ||
      condition->reason == "SchedulingGated") {
    out.text = notTried(condition, schedulerName);
    return out;
  }
  const std::string theirs = comparablePart(condition->message);
  if (replay.schedulable()) {
    out.agreement = Agreement::ReplayFits;
    out.text = "kube-scheduler says otherwise: the replay fits it on " + joined(replay.schedulableNodes) +
               " (freed since the scheduler's last try at " +
               (condition->lastTransitionTime.empty() ? std::string("an unknown time") : condition->lastTransitionTime) +
               "? it retries when the cluster changes)";
    return out;
  }
  if (comparablePart(replay.verdict) == theirs) {
    out.agreement = Agreement::Agrees;
    out.text = "agrees with kube-scheduler";
    return out;
  }
  out.agreement = Agreement::Differs;
  out.text = "kube-scheduler says otherwise: \"" + theirs + "\"";
  return out;
}

}  // namespace gpuguard::schedule
