// The audit's work queue, with client-go's workqueue semantics
// (util/workqueue/queue.go: a dirty set and a processing set):
//   - a key is queued at most once: adding it again while it waits replaces
//     its item (the newest body wins) and keeps its place;
//   - a key being processed is not handed out twice: added meanwhile, it is
//     held and queued again when done() says its processing ended;
//   - get() blocks until there is a key or the queue shuts down.
// Bodies held are bounded (`pendingBytes`): over the budget, add() drops the
// body (the worker then fetches the object, counted in refetches) and
// addWaiting() blocks until the worker makes room (a list's pages: back-
// pressure, never a drop).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace gpuguard::audit {

// Why an object is (re-)judged; the metrics' trigger label.
enum class Trigger { Watch, Resync, Policy, Facts, Delete };
std::string_view triggerName(Trigger trigger);  // "watch", "resync", "policy", "facts", "delete"

struct WorkItem {
  Trigger trigger = Trigger::Watch;
  std::size_t resource = 0;            // the index of its resource in the auditor's table
  std::optional<nlohmann::json> body;  // the object; none: deleted (Delete) or dropped over the budget
  std::size_t bytes = 0;               // what the body weighs against the budget (approximateBytes)
  std::string ns, name;                // where to fetch it when the body was dropped
  std::string judgeKey;                // judgeKeyOf(body), computed when it was queued
};

// The heap memory a parsed JSON value holds (its blocks as glibc allocates
// them: strings, keys, tree nodes), about 7 times its text for a Kubernetes
// object: linear in its size, no serialization.
std::size_t approximateBytes(const nlohmann::json& value);

class WorkQueue {
 public:
  explicit WorkQueue(std::size_t pendingBytes = 16u << 20) : budget_(pendingBytes) {}

  // Queues `key` (or replaces its waiting item). Over the budget the body is
  // dropped (the item stays, to be fetched).
  void add(const std::string& key, WorkItem item);
  // The same, but waits while the body does not fit (and any body is held);
  // false when the queue shut down or `cancel` was set first.
  bool addWaiting(const std::string& key, WorkItem item, const std::atomic<bool>* cancel = nullptr);

  // The next key and its item; nullopt once shut down. The key is processing
  // until done(key).
  std::optional<std::pair<std::string, WorkItem>> get();
  // As get(), but nullopt after `wait` when nothing came (or at once: 0).
  std::optional<std::pair<std::string, WorkItem>> get(std::chrono::milliseconds wait);
  std::optional<std::pair<std::string, WorkItem>> tryGet() { return get(std::chrono::milliseconds(0)); }
  void done(const std::string& key);

  // Wakes every waiter; get() returns nullopt from now on.
  void shutDown();
  // Forgets everything queued and held (a lost Lease); the queue stays usable.
  void clear();

  std::size_t length() const;          // keys waiting
  bool busy() const;                   // keys waiting or being processed
  std::size_t bytesHeld() const;       // bodies waiting, against the budget
  std::uint64_t droppedBodies() const; // bodies dropped over the budget (refetches)

 private:
  void putLocked(const std::string& key, WorkItem item);
  void dropBodyLocked(WorkItem& item);
  std::optional<std::pair<std::string, WorkItem>> popLocked();

  const std::size_t budget_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;  // a key was queued, or shut down
  std::condition_variable room_;   // bytes were released, or shut down
  std::deque<std::string> order_;
  std::map<std::string, WorkItem> dirty_;       // waiting, by key
  std::map<std::string, WorkItem> heldBack_;    // added while processing
  std::set<std::string> processing_;
  std::size_t bytes_ = 0;
  std::uint64_t dropped_ = 0;
  bool shutDown_ = false;
};

}  // namespace gpuguard::audit
