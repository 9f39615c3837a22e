#include "audit/work_queue.h"

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

std::size_t approximateBytes(const nlohmann::json& value) {
  constexpr std::size_t kNode = 16;  // a json node's own size, roughly
  std::size_t total = 0;
  std::vector<const nlohmann::json*> pending{&value};
  while (!pending.empty()) {
    const nlohmann::json* v = pending.back();
    pending.pop_back();
    total += kNode;
    if (v->is_string()) {
      total += v->get_ref<const std::string&>().size();
    } else if (v->is_object()) {
      for (auto it = v->begin(); it != v->end(); ++it) {
        total += it.key().size() + kNode;
        pending.push_back(&it.value());
      }
    } else if (v->is_array()) {
      for (const nlohmann::json& item : *v) pending.push_back(&item);
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
