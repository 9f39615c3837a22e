// The audit's work queue (audit/work_queue.h): client-go's workqueue
// semantics (a key queued once; re-added while processing, queued again
// after done) and a budget on the bodies it holds.
#include <gtest/gtest.h>

#include <thread>

#include "audit/work_queue.h"

namespace gpuguard::audit {
namespace {

using nlohmann::json;

WorkItem withBody(std::string name, Trigger trigger = Trigger::Watch) {
  json body = {{"metadata", {{"name", std::move(name)}}}};
  const std::size_t bytes = approximateBytes(body);
  return WorkItem{trigger, 0, std::move(body), bytes, "", "", ""};
}

std::string nameIn(const WorkItem& item) { return item.body ? (*item.body)["metadata"]["name"].get<std::string>() : ""; }

TEST(WorkQueueTest, HandsOutKeysInTheOrderTheyCame) {
  WorkQueue q;
  q.add("a", withBody("a"));
  q.add("b", withBody("b"));
  EXPECT_EQ(q.length(), 2u);
  EXPECT_EQ(q.get()->first, "a");
  EXPECT_EQ(q.get()->first, "b");
  EXPECT_FALSE(q.tryGet());
}

TEST(WorkQueueTest, AKeyAddedAgainWhileWaitingIsQueuedOnceWithTheNewestItem) {
  WorkQueue q;
  q.add("a", withBody("first", Trigger::Resync));
  q.add("b", withBody("b"));
  q.add("a", withBody("second", Trigger::Watch));
  EXPECT_EQ(q.length(), 2u);
  const auto first = q.get();
  EXPECT_EQ(first->first, "a") << "it keeps its place";
  EXPECT_EQ(nameIn(first->second), "second");
  EXPECT_EQ(first->second.trigger, Trigger::Watch);
}

TEST(WorkQueueTest, AKeyAddedWhileProcessingIsHeldUntilDone) {
  WorkQueue q;
  q.add("a", withBody("v1"));
  const auto processing = q.get();
  q.add("a", withBody("v2"));
  EXPECT_EQ(q.length(), 0u) << "never handed out twice at once";
  EXPECT_FALSE(q.tryGet());
  q.done("a");
  const auto again = q.get();
  ASSERT_TRUE(again);
  EXPECT_EQ(nameIn(again->second), "v2");
}

TEST(WorkQueueTest, DoneWithoutANewAddQueuesNothing) {
  WorkQueue q;
  q.add("a", withBody("a"));
  q.get();
  q.done("a");
  EXPECT_EQ(q.length(), 0u);
}

TEST(WorkQueueTest, OverTheBudgetABodyIsDroppedAndTheKeyStaysToBeFetched) {
  const WorkItem item = withBody("a");
  WorkQueue q(item.bytes + 1);  // room for one body
  q.add("a", withBody("a"));
  q.add("b", withBody("b"));
  EXPECT_EQ(q.droppedBodies(), 1u);
  EXPECT_EQ(q.bytesHeld(), item.bytes);
  q.get();
  const auto b = q.get();
  EXPECT_EQ(b->first, "b");
  EXPECT_FALSE(b->second.body.has_value());
}

TEST(WorkQueueTest, AWaitingAddBlocksUntilTheWorkerMakesRoom) {
  const WorkItem item = withBody("a");
  WorkQueue q(item.bytes + 1);
  q.add("a", withBody("a"));
  bool added = false;
  std::thread lister([&] { added = q.addWaiting("b", withBody("b")); });
  const auto a = q.get();  // frees a's bytes: b fits now
  lister.join();
  EXPECT_TRUE(added);
  EXPECT_EQ(q.droppedBodies(), 0u) << "back-pressure, never a drop";
  EXPECT_EQ(nameIn(q.get()->second), "b");
}

TEST(WorkQueueTest, AnObjectLargerThanTheBudgetStillGoesThroughAlone) {
  WorkQueue q(1);
  EXPECT_TRUE(q.addWaiting("huge", withBody(std::string(1000, 'x'))));
  EXPECT_TRUE(q.get()->second.body.has_value());
}

TEST(WorkQueueTest, AWaitingAddGivesUpWhenCancelled) {
  WorkQueue q(1);
  q.add("a", withBody("a"));
  std::atomic<bool> cancel{true};
  EXPECT_FALSE(q.addWaiting("b", withBody("b"), &cancel));
  EXPECT_EQ(q.length(), 1u);
}

TEST(WorkQueueTest, ShutDownWakesAWaitingWorker) {
  WorkQueue q;
  std::optional<std::pair<std::string, WorkItem>> got = std::make_pair("sentinel", WorkItem{});
  std::thread worker([&] { got = q.get(); });
  q.shutDown();
  worker.join();
  EXPECT_FALSE(got.has_value());
  EXPECT_FALSE(q.addWaiting("a", withBody("a")));
}

TEST(WorkQueueTest, ClearForgetsEverythingAndStaysUsable) {
  WorkQueue q;
  q.add("a", withBody("a"));
  q.add("b", withBody("b"));
  q.get();
  q.clear();
  EXPECT_EQ(q.length(), 0u);
  EXPECT_EQ(q.bytesHeld(), 0u);
  q.add("a", withBody("again"));
  EXPECT_EQ(nameIn(q.get()->second), "again");
}

TEST(ApproximateBytesTest, GrowsWithStringsKeysAndNodes) {
  EXPECT_GT(approximateBytes(json{{"k", std::string(1000, 'x')}}), 1000u);
  EXPECT_GT(approximateBytes(json::array({1, 2, 3, 4, 5})), approximateBytes(json::array({1})));
  EXPECT_GT(approximateBytes(json{{"a", 1}, {"b", 2}}), approximateBytes(json{{"a", 1}}));
}

// The budget is memory the queue really holds: each string, object and array
// is a heap block of its own and each object member a tree node, so a parsed
// object weighs several times its JSON text (a 2.6 KB Pod: ~18 KB).
TEST(ApproximateBytesTest, CountsTheTreeNotTheText) {
  const json pod = json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "train-0", "namespace": "ml", "uid": "6f1c2b1e-0d4e-4b8a-9a57-3c1d2e4f5a6b",
                 "labels": {"app": "train", "team": "research"}, "resourceVersion": "12345"},
    "spec": {"containers": [{"name": "train", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                             "resources": {"limits": {"nvidia.com/gpu": "1"}},
                             "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}],
             "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}})");
  const std::size_t text = pod.dump().size();
  EXPECT_GT(approximateBytes(pod), 4 * text);
  EXPECT_LT(approximateBytes(pod), 12 * text);
}

TEST(ApproximateBytesTest, ShortStringsLiveInsideTheirValueLongOnesOnTheHeap) {
  const std::size_t shortOne = approximateBytes(json(std::string(15, 'x')));
  EXPECT_EQ(approximateBytes(json(std::string(1, 'x'))), shortOne);
  EXPECT_GT(approximateBytes(json(std::string(16, 'x'))), shortOne);
}

TEST(ApproximateBytesTest, ScalarsHoldNoHeap) {
  EXPECT_EQ(approximateBytes(json(nullptr)), sizeof(json));
  EXPECT_EQ(approximateBytes(json(true)), sizeof(json));
  EXPECT_EQ(approximateBytes(json(9223372036854775807LL)), sizeof(json));
  EXPECT_EQ(approximateBytes(json(1e30)), sizeof(json));
}

TEST(TriggerNameTest, NamesEachTriggerAsTheMetricsLabelDoes) {
  EXPECT_EQ(triggerName(Trigger::Watch), "watch");
  EXPECT_EQ(triggerName(Trigger::Resync), "resync");
  EXPECT_EQ(triggerName(Trigger::Policy), "policy");
  EXPECT_EQ(triggerName(Trigger::Facts), "facts");
  EXPECT_EQ(triggerName(Trigger::Delete), "delete");
}

}  // namespace
}  // namespace gpuguard::audit
