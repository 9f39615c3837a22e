// kube-scheduler's own word on a Pending pod, beside the replay's: the Pod's
// PodScheduled condition (status False, reason Unschedulable, the message of
// the scheduler's FitError: "0/3 nodes are available: 1 node(s) had
// untolerated taint(s), 2 Insufficient nvidia.com/gpu. preemption: ..."), and
// whether the replay (schedule/diagnose.h) says the same.
//
// Pure: the Pod's JSON in, structs out (gpuguard-lint --cluster --pending
// reads the pods; test/e2e/sched_oracle.py compares the same way).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "schedule/diagnose.h"

namespace gpuguard::schedule {

// status.conditions[type=PodScheduled] of a Pod.
struct SchedulerCondition {
  std::string status;              // "False", "True", "Unknown"
  std::string reason;              // "Unschedulable", "SchedulingGated", ...
  std::string message;             // the scheduler's FitError, as written
  std::string lastTransitionTime;  // RFC 3339, as written
};

// The condition, or nullopt when the pod has none yet (the scheduler has not
// tried it). Never throws: a malformed status reads as no condition.
std::optional<SchedulerCondition> podScheduledCondition(const nlohmann::json& pod);

// The part of the scheduler's message the replay reproduces: before the
// PostFilter summary (" preemption: ..."), without the final period.
// "0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 ..."
//   -> "0/1 nodes are available: 1 node(s) had untolerated taint(s)"
std::string comparablePart(std::string_view message);

// How the replay and kube-scheduler compare for one pod.
enum class Agreement {
  Agrees,      // both Pending, the same message up to " preemption:"
  Differs,     // both Pending, other words (the cluster changed since the scheduler's try, or gpuguard is wrong)
  ReplayFits,  // the replay fits it on a node the scheduler refused (freed since its last try?)
  NotTried,    // no PodScheduled=False condition: not tried yet, gated, or another scheduler
};

struct SchedulerComparison {
  Agreement agreement = Agreement::NotTried;
  std::string text;  // "agrees with kube-scheduler", "kube-scheduler says otherwise: ...", ...
  std::optional<bool> agrees() const;  // nullopt when there is nothing to compare
};

// `schedulerName`: the pod's spec.schedulerName ("" = default-scheduler).
SchedulerComparison compareWithScheduler(const PodDiagnosis& replay, const std::optional<SchedulerCondition>& condition,
                                         std::string_view schedulerName);

}  // namespace gpuguard::schedule
