// An API server for the auditor's tests, in the process (audit/audit_api.h):
// objects by resource, lists as the API server answers them (items without
// apiVersion and kind), watches that stream every change after the list,
// server-side apply and DELETE of reports, label-selected lists, resources
// answered 404 (not served) or 403 (refused), and a log of every write.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "audit/audit_api.h"

namespace gpuguard::audit::testing {

class FakeAuditApi final : public AuditApi {
 public:
  struct Event {
    std::uint64_t revision;
    cluster::WatchEvent::Type type;
    nlohmann::json object;
  };

  // Creates or replaces an object of `resource` (kubectl's name: "deployments.apps");
  // a missing uid is made up, the resourceVersion is the new revision.
  void put(const std::string& resource, nlohmann::json object) {
    std::lock_guard lock(mutex_);
    nlohmann::json& meta = object["metadata"];
    if (!meta.contains("uid")) meta["uid"] = "uid-" + meta.value("name", std::string("x")) + "-" + std::to_string(++uids_);
    meta["resourceVersion"] = std::to_string(++revision_);
    const bool existed = stores_[resource].count(keyOf(object)) > 0;
    stores_[resource][keyOf(object)] = object;
    events_[resource].push_back({revision_, existed ? cluster::WatchEvent::Type::Modified : cluster::WatchEvent::Type::Added, object});
    changed_.notify_all();
  }
  void erase(const std::string& resource, const std::string& ns, const std::string& name) {
    std::lock_guard lock(mutex_);
    auto& store = stores_[resource];
    const auto it = store.find(ns + "/" + name);
    if (it == store.end()) return;
    ++revision_;
    events_[resource].push_back({revision_, cluster::WatchEvent::Type::Deleted, it->second});
    store.erase(it);
    changed_.notify_all();
  }
  // A resource answered with this HTTP status (404: not served, 403: refused); 0: served again.
  void answer(const std::string& resource, int status) {
    std::lock_guard lock(mutex_);
    if (status == 0) failing_.erase(resource);
    else failing_[resource] = status;
  }

  std::map<std::string, nlohmann::json> objects(const std::string& resource) const {
    std::lock_guard lock(mutex_);
    const auto it = stores_.find(resource);
    return it == stores_.end() ? std::map<std::string, nlohmann::json>{} : it->second;
  }
  // "apply reports.openreports.io ml/gpuguard", "delete ...", in order.
  std::vector<std::string> writes() const {
    std::lock_guard lock(mutex_);
    return writes_;
  }
  std::size_t lists(const std::string& resource) const {
    std::lock_guard lock(mutex_);
    const auto it = lists_.find(resource);
    return it == lists_.end() ? 0 : it->second;
  }

  cluster::ListResult list(const AuditedResource& resource, const std::string& labelSelector,
                           const std::function<void(nlohmann::json&&)>& onItem, const std::atomic<bool>*) override {
    std::vector<nlohmann::json> items;
    cluster::ListResult result;
    {
      std::lock_guard lock(mutex_);
      ++lists_[resource.name()];
      if (const auto f = failing_.find(resource.name()); f != failing_.end()) {
        result.status = f->second;
        result.error = "the server answered " + std::to_string(f->second);
        return result;
      }
      for (const auto& [key, object] : stores_[resource.name()]) {
        if (selects(labelSelector, object)) items.push_back(object);
      }
      result.status = 200;
      result.resourceVersion = std::to_string(revision_);
      result.version = resource.versions.empty() ? "v1" : resource.versions.front();
    }
    for (nlohmann::json& item : items) {
      item.erase("apiVersion");  // list items come without them
      item.erase("kind");
      onItem(std::move(item));
      ++result.items;
    }
    return result;
  }

  cluster::WatchResult watch(const AuditedResource& resource, const std::string&, const std::string& resourceVersion,
                             const std::function<bool(cluster::WatchEvent&&)>& onEvent,
                             const std::atomic<bool>* cancel) override {
    cluster::WatchResult result;
    std::uint64_t from = resourceVersion.empty() ? 0 : std::stoull(resourceVersion);
    std::unique_lock lock(mutex_);
    if (const auto f = failing_.find(resource.name()); f != failing_.end()) {
      result.status = f->second;
      result.error = "the server answered " + std::to_string(f->second);
      return result;
    }
    result.status = 200;
    while (!(cancel && cancel->load())) {
      std::vector<Event> fresh;
      for (const Event& e : events_[resource.name()]) {
        if (e.revision > from) fresh.push_back(e);
      }
      for (Event& e : fresh) {
        from = e.revision;
        lock.unlock();
        onEvent(cluster::WatchEvent{e.type, std::move(e.object)});
        lock.lock();
      }
      changed_.wait_for(lock, std::chrono::milliseconds(5));
    }
    result.resourceVersion = std::to_string(from);
    return result;
  }

  ApiAnswer get(const AuditedResource& resource, const std::string&, const std::string& ns,
                const std::string& name) override {
    std::lock_guard lock(mutex_);
    const auto& store = stores_[resource.name()];
    const auto it = store.find(ns + "/" + name);
    if (it == store.end()) return ApiAnswer{404, nullptr, "not found"};
    return ApiAnswer{200, it->second, ""};
  }

  ApiAnswer apply(const AuditedResource& resource, const nlohmann::json& report) override {
    std::lock_guard lock(mutex_);
    const std::string key = keyOf(report);
    writes_.push_back("apply " + resource.name() + " " + key);
    if (const auto f = failing_.find(resource.name()); f != failing_.end()) return ApiAnswer{f->second, nullptr, "refused"};
    nlohmann::json stored = report;
    stored["metadata"]["resourceVersion"] = std::to_string(++revision_);
    stores_[resource.name()][key] = stored;
    return ApiAnswer{200, stored, ""};
  }

  ApiAnswer remove(const AuditedResource& resource, const std::string& ns, const std::string& name) override {
    std::lock_guard lock(mutex_);
    writes_.push_back("delete " + resource.name() + " " + ns + "/" + name);
    auto& store = stores_[resource.name()];
    if (store.erase(ns + "/" + name) == 0) return ApiAnswer{404, nullptr, "not found"};
    return ApiAnswer{200, nullptr, ""};
  }

 private:
  static std::string keyOf(const nlohmann::json& object) {
    const nlohmann::json& meta = object.at("metadata");
    return meta.value("namespace", std::string()) + "/" + meta.value("name", std::string());
  }
  // "key=value" or nothing.
  static bool selects(const std::string& selector, const nlohmann::json& object) {
    if (selector.empty()) return true;
    const std::size_t eq = selector.find('=');
    const nlohmann::json labels = object["metadata"].value("labels", nlohmann::json::object());
    return labels.value(selector.substr(0, eq), std::string()) == selector.substr(eq + 1);
  }

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t revision_ = 100;
  std::uint64_t uids_ = 0;
  std::map<std::string, std::map<std::string, nlohmann::json>> stores_;  // resource -> "ns/name" -> object
  std::map<std::string, std::vector<Event>> events_;
  std::map<std::string, int> failing_;
  std::map<std::string, std::size_t> lists_;
  std::vector<std::string> writes_;
};

// Waits (at most 10 s) until `done` holds; true when it did.
template <typename Predicate>
bool eventually(Predicate&& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace gpuguard::audit::testing
