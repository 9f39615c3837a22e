#include "audit/work_queue.h"

#include <bit>
#include <vector>

namespace gpuguard::audit {

std::string_view triggerName(Trigger trigger) {
  switch (trigger) {
    case Trigger::Watch: return "watch";
    case Trigger::Resync: return "resync";
    case Trigger::Policy: return "policy";
    case Trigger::Facts: return "facts";
    case Trigger::Delete: return "delete";
  }
  return "?";
}

namespace {

// What glibc's malloc takes for a request: 8 bytes of header, 16-byte steps, 32 at least.
constexpr std::size_t chunkOf(std::size_t request) {
  const std::size_t size = (request + 8 + 15) & ~std::size_t{15};
  return size < 32 ? 32 : size;
}
// A std::string keeps up to 15 characters inside itself; longer ones on the heap.
constexpr std::size_t stringHeap(std::size_t length) { return length > 15 ? chunkOf(length + 1) : 0; }
// A parsed array grew by doubling.
constexpr std::size_t arrayCapacity(std::size_t size) { return size == 0 ? 0 : std::bit_ceil(size); }

}  // namespace

// The heap a parsed nlohmann::json tree holds, node by node as libstdc++
// and glibc lay it out: a string or object or array value is a heap block
// of its own; each object member a red-black tree node (links, key, value);
// an array's items one block of 16-byte values. A parsed Kubernetes object
// holds about 7 times its JSON text (a 2.6 KB Pod: 18 KB); the budget is
// the memory the queue really holds, so it counts all of it.
std::size_t approximateBytes(const nlohmann::json& value) {
  using Json = nlohmann::json;
  constexpr std::size_t kTreeLinks = 32;  // an rb-tree node's colour and three pointers
  std::size_t total = sizeof(Json);
  std::vector<const Json*> pending{&value};
  while (!pending.empty()) {
    const Json* v = pending.back();
    pending.pop_back();
    if (v->is_string()) {
      total += chunkOf(sizeof(std::string)) + stringHeap(v->get_ref<const std::string&>().size());
    } else if (v->is_object()) {
      total += chunkOf(sizeof(Json::object_t));
      for (auto it = v->begin(); it != v->end(); ++it) {
        total += chunkOf(kTreeLinks + sizeof(Json::object_t::value_type)) + stringHeap(it.key().size());
        pending.push_back(&it.value());
      }
    } else if (v->is_array()) {
      total += chunkOf(sizeof(Json::array_t));
      if (!v->empty()) total += chunkOf(arrayCapacity(v->size()) * sizeof(Json));
      for (const Json& item : *v) pending.push_back(&item);
    }
  }
  return total;
}

void WorkQueue::dropBodyLocked(WorkItem& item) {
  if (!item.body) return;
  item.body.reset();
  item.bytes = 0;
  ++dropped_;
}

void WorkQueue::putLocked(const std::string& key, WorkItem item) {
  if (!item.body) item.bytes = 0;
  auto held = [this](std::map<std::string, WorkItem>& where, const std::string& k) {
    const auto it = where.find(k);
    if (it == where.end()) return false;
    bytes_ -= it->second.bytes;
    return true;
  };
  if (processing_.count(key) > 0) {
    held(heldBack_, key);
    bytes_ += item.bytes;
    heldBack_[key] = std::move(item);
    return;
  }
  if (!held(dirty_, key)) order_.push_back(key);
  bytes_ += item.bytes;
  dirty_[key] = std::move(item);
  ready_.notify_one();
}

void WorkQueue::add(const std::string& key, WorkItem item) {
  std::lock_guard lock(mutex_);
  if (shutDown_) return;
  if (item.body && bytes_ + item.bytes > budget_) dropBodyLocked(item);
  putLocked(key, std::move(item));
}

bool WorkQueue::addWaiting(const std::string& key, WorkItem item, const std::atomic<bool>* cancel) {
  std::unique_lock lock(mutex_);
  // An object larger than the whole budget waits only until nothing else is held.
  auto fits = [&] { return !item.body || bytes_ == 0 || bytes_ + item.bytes <= budget_; };
  while (!shutDown_ && !(cancel && cancel->load()) && !fits()) {
    room_.wait_for(lock, std::chrono::milliseconds(200));
  }
  if (shutDown_ || (cancel && cancel->load())) return false;
  putLocked(key, std::move(item));
  return true;
}

std::optional<std::pair<std::string, WorkItem>> WorkQueue::popLocked() {
  if (order_.empty()) return std::nullopt;
  std::string key = std::move(order_.front());
  order_.pop_front();
  auto node = dirty_.extract(key);
  bytes_ -= node.mapped().bytes;
  processing_.insert(key);
  room_.notify_all();
  return std::make_pair(std::move(key), std::move(node.mapped()));
}

std::optional<std::pair<std::string, WorkItem>> WorkQueue::get() {
  std::unique_lock lock(mutex_);
  ready_.wait(lock, [this] { return shutDown_ || !order_.empty(); });
  if (shutDown_) return std::nullopt;
  return popLocked();
}

std::optional<std::pair<std::string, WorkItem>> WorkQueue::get(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, wait, [this] { return shutDown_ || !order_.empty(); });
  if (shutDown_) return std::nullopt;
  return popLocked();
}

void WorkQueue::done(const std::string& key) {
  std::lock_guard lock(mutex_);
  processing_.erase(key);
  auto node = heldBack_.extract(key);
  if (node.empty()) return;
  bytes_ -= node.mapped().bytes;
  putLocked(key, std::move(node.mapped()));
}

void WorkQueue::shutDown() {
  std::lock_guard lock(mutex_);
  shutDown_ = true;
  ready_.notify_all();
  room_.notify_all();
}

void WorkQueue::clear() {
  std::lock_guard lock(mutex_);
  order_.clear();
  dirty_.clear();
  heldBack_.clear();
  processing_.clear();
  bytes_ = 0;
  room_.notify_all();
}

std::size_t WorkQueue::length() const {
  std::lock_guard lock(mutex_);
  return order_.size();
}

bool WorkQueue::busy() const {
  std::lock_guard lock(mutex_);
  return !order_.empty() || !processing_.empty() || !heldBack_.empty();
}

std::size_t WorkQueue::bytesHeld() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

std::uint64_t WorkQueue::droppedBodies() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

}  // namespace gpuguard::audit
