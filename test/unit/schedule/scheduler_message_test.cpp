// kube-scheduler's own word on a Pending pod (schedule/scheduler_message.h):
// the PodScheduled condition read from the Pod, the part of the FitError the
// replay reproduces, and how the replay's verdict and the scheduler's
// message compare - as test/e2e/sched_oracle.py compares them.
#include <gtest/gtest.h>

#include "schedule/scheduler_message.h"

namespace gpuguard::schedule {
namespace {

using nlohmann::json;

json podWithConditions(json conditions) { return {{"kind", "Pod"}, {"status", {{"conditions", std::move(conditions)}}}}; }

PodDiagnosis pendingReplay(std::string verdict) {
  PodDiagnosis d;
  d.verdict = std::move(verdict);
  return d;
}

TEST(PodScheduledConditionTest, IsReadFromTheConditionsWhateverTheirOrder) {
  const json pod = podWithConditions({{{"type", "Ready"}, {"status", "False"}},
                                      {{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"},
                                       {"message", "0/1 nodes are available: 1 node(s) had untolerated taint(s)."},
                                       {"lastTransitionTime", "2026-12-04T10:00:00Z"}}});
  const auto c = podScheduledCondition(pod);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "Unschedulable");
  EXPECT_EQ(c->message, "0/1 nodes are available: 1 node(s) had untolerated taint(s).");
  EXPECT_EQ(c->lastTransitionTime, "2026-12-04T10:00:00Z");
}

TEST(PodScheduledConditionTest, NoConditionOrAMalformedStatusIsNone) {
  EXPECT_FALSE(podScheduledCondition(json{{"kind", "Pod"}}));
  EXPECT_FALSE(podScheduledCondition(json::array()));
  EXPECT_FALSE(podScheduledCondition(json{{"status", "Pending"}}));
  EXPECT_FALSE(podScheduledCondition(json{{"status", {{"conditions", {{"type", "PodScheduled"}}}}}}));  // not a list of maps
  EXPECT_FALSE(podScheduledCondition(podWithConditions({1, "x", nullptr})));
  const auto numbers = podScheduledCondition(podWithConditions({{{"type", "PodScheduled"}, {"status", 7}}}));
  ASSERT_TRUE(numbers);
  EXPECT_EQ(numbers->status, "");  // a wrong type reads as empty, never a throw
}

TEST(ComparablePartTest, IsTheMessageBeforeThePreemptionSummaryWithoutTheFinalPeriod) {
  EXPECT_EQ(comparablePart("0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 nodes are "
                           "available: 1 Preemption is not helpful for scheduling."),
            "0/1 nodes are available: 1 node(s) had untolerated taint(s)");
  EXPECT_EQ(comparablePart("0/3 nodes are available: 3 Insufficient nvidia.com/gpu."),
            "0/3 nodes are available: 3 Insufficient nvidia.com/gpu");
  EXPECT_EQ(comparablePart(""), "");
  EXPECT_EQ(comparablePart(" preemption: x"), "");
}

TEST(CompareWithSchedulerTest, TheSameMessageUpToPreemptionAgrees) {
  const SchedulerCondition c{"False", "Unschedulable",
                             "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: "
                             "2 No preemption victims found for incoming pod.",
                             ""};
  const SchedulerComparison r = compareWithScheduler(pendingReplay("0/2 nodes are available: 2 Insufficient nvidia.com/gpu."), c, "");
  EXPECT_EQ(r.agreement, Agreement::Agrees);
  EXPECT_EQ(r.agrees(), true);
  EXPECT_EQ(r.text, "agrees with kube-scheduler");
}

TEST(CompareWithSchedulerTest, OtherWordsDisagreeAndQuoteTheScheduler) {
  const SchedulerCondition c{"False", "Unschedulable", "0/2 nodes are available: 2 node(s) were unschedulable.", ""};
  const SchedulerComparison r = compareWithScheduler(pendingReplay("0/2 nodes are available: 2 Insufficient nvidia.com/gpu."), c, "");
  EXPECT_EQ(r.agreement, Agreement::Differs);
  EXPECT_EQ(r.agrees(), false);
  EXPECT_EQ(r.text, "kube-scheduler says otherwise: \"0/2 nodes are available: 2 node(s) were unschedulable\"");
}

TEST(CompareWithSchedulerTest, AReplayThatFitsAPodTheSchedulerRefusedNamesTheNodesAndTheSchedulersTime) {
  PodDiagnosis fits;
  fits.schedulableNodes = {"gpu-b"};
  const SchedulerCondition c{"False", "Unschedulable", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
                             "2026-12-04T10:00:00Z"};
  const SchedulerComparison r = compareWithScheduler(fits, c, "");
  EXPECT_EQ(r.agreement, Agreement::ReplayFits);
  EXPECT_EQ(r.agrees(), false);
  EXPECT_EQ(r.text, "kube-scheduler says otherwise: the replay fits it on gpu-b (freed since the scheduler's last try at "
                    "2026-12-04T10:00:00Z? it retries when the cluster changes)");
}

TEST(CompareWithSchedulerTest, NothingToCompareSaysWhy) {
  const PodDiagnosis replay = pendingReplay("0/2 nodes are available: 2 Insufficient nvidia.com/gpu.");
  const auto untried = compareWithScheduler(replay, std::nullopt, "");
  EXPECT_EQ(untried.agrees(), std::nullopt);
  EXPECT_EQ(untried.text, "not yet tried by the scheduler (no PodScheduled condition)");
  const SchedulerCondition gated{"False", "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates", ""};
  EXPECT_EQ(compareWithScheduler(replay, gated, "").agrees(), std::nullopt);  // the API server's words, not a FitError
  EXPECT_EQ(compareWithScheduler(replay, gated, "").text,
            "held by scheduling gates (spec.schedulingGates): the scheduler has not tried it");
  EXPECT_EQ(compareWithScheduler(replay, std::nullopt, "volcano").text,
            "the pod asks for scheduler \"volcano\", which has not said why it waits");
  EXPECT_EQ(compareWithScheduler(replay, SchedulerCondition{"Unknown", "", "", ""}, "").text,
            "the scheduler's condition is PodScheduled=Unknown, not a refusal to compare with");
}

}  // namespace
}  // namespace gpuguard::schedule
