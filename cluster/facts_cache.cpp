#include "cluster/facts_cache.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace gpuguard::cluster {

namespace {

using Clock = std::chrono::steady_clock;

// List items come without apiVersion and kind; the reducers pick the kind from them.
void stampKind(nlohmann::json& object, const Resource& resource, const std::string& version) {
  if (!object.is_object()) return;
  object["apiVersion"] = resource.group.empty() ? version : resource.group + "/" + version;
  object["kind"] = resource.kind;
}

std::optional<FactKind> kindOf(const Resource& resource) {
  for (FactKind kind : kAllFactKinds) {
    if (factKindName(kind) == resource.plural) return kind;
  }
  return std::nullopt;
}

bool withdraws(ResourceState s) {
  return s == ResourceState::Starting || s == ResourceState::Refused || s == ResourceState::Unreachable;
}

}  // namespace

struct FactsCache::Reflector {
  Resource resource;
  FactKind kind;
  ResourceStatus status;
  std::string version;          // the API version that answered the list
  std::string resourceVersion;  // where the watch resumes
  Backoff backoff;
  Clock::time_point lastHeard{};  // the list's end, the watch's answer, its last event or bookmark
};

FactsCache::FactsCache(ClientConfig config, CacheOptions options)
    : api_(std::move(config)), options_(std::move(options)) {
  builder_.setSource("cluster " + api_.config().server);
  api_.setCancelCheck(options_.cancelCheck);
  api_.setWatchIdleTimeout(options_.watchIdleTimeout);
  missing_.store(std::make_shared<const std::string>("not synced yet"));
  for (const Resource& resource : options_.resources) {
    const std::optional<FactKind> kind = kindOf(resource);
    if (!kind) continue;
    auto r = std::make_unique<Reflector>(Reflector{resource, *kind, {}, "", "", Backoff(options_.backoffInitial, options_.backoffMax)});
    r->status.resource = resource.name();
    reflectors_.push_back(std::move(r));
  }
}

FactsCache::~FactsCache() { stop(); }

void FactsCache::start() {
  if (!threads_.empty()) return;
  for (auto& r : reflectors_) threads_.emplace_back([this, &r] { run(*r); });
  threads_.emplace_back([this] { publishLoop(); });
}

void FactsCache::stop() {
  stopping_.store(true);
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

bool FactsCache::sleepFor(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, wait, [this] { return stopping_.load(); });
  return !stopping_.load();
}

void FactsCache::setState(Reflector& r, ResourceState state, const std::string& error) {
  std::lock_guard lock(mutex_);
  const ResourceState before = r.status.state;
  r.status.state = state;
  if (!error.empty()) r.status.lastError = error;
  if (before == state) return;
  dirty_ = true;
  wake_.notify_all();
  if (!options_.log) return;
  const bool bad = state == ResourceState::Refused || state == ResourceState::Unreachable;
  std::string line = "cluster facts: " + r.status.resource + " " + std::string(resourceStateName(state));
  if (state == ResourceState::NotServed) line += " (the API server does not serve it; judged as absent)";
  if (bad) line += " (judging without cluster facts): " + error;
  options_.log(bad, line);
}

void FactsCache::run(Reflector& r) {
  while (!stopping_.load()) {
    if (!listOnce(r)) {
      const bool notServed = r.status.state == ResourceState::NotServed;
      if (!sleepFor(notServed ? options_.notServedRetry : r.backoff.next())) return;
      continue;
    }
    r.backoff.reset();
    watchLoop(r);
  }
}

bool FactsCache::listOnce(Reflector& r) {
  {
    std::lock_guard lock(mutex_);
    builder_.clear(r.kind);
  }
  std::string version;
  const ListResult result = api_.list(
      r.resource,
      [&](nlohmann::json&& item) {
        stampKind(item, r.resource, r.resource.versions.front());
        std::lock_guard lock(mutex_);
        builder_.add(item);
      },
      options_.pageSize, &stopping_);
  if (stopping_.load()) return false;
  if (!result.error.empty()) {
    std::lock_guard lock(mutex_);
    builder_.clear(r.kind);
  }
  if (result.status == 404) {
    setState(r, ResourceState::NotServed, "");
    return false;
  }
  if (result.status == 401 || result.status == 403) {
    setState(r, ResourceState::Refused, "list " + r.status.resource + ": " + result.error);
    return false;
  }
  if (!result.error.empty()) {
    setState(r, ResourceState::Unreachable, "list " + r.status.resource + ": " + result.error);
    return false;
  }
  r.version = result.version;
  r.resourceVersion = result.resourceVersion;
#ifdef __GLIBC__
  // The list's pages (500 whole objects each) are freed; give their memory back, or the
  // process keeps the peak of the largest page set for good.
  if (result.items > options_.pageSize) malloc_trim(0);
#endif
  {
    std::lock_guard lock(mutex_);
    builder_.markListed(r.kind);
    r.status.objects = builder_.size(r.kind);
    r.lastHeard = options_.now();
  }
  setState(r, ResourceState::Synced, "");
  std::lock_guard lock(mutex_);
  dirty_ = true;
  wake_.notify_all();
  return true;
}

void FactsCache::heard(Reflector& r) {
  std::lock_guard lock(mutex_);
  r.lastHeard = options_.now();
}

// A watch that delivered nothing for the idle timeout: the connection died
// without a word, and the facts are as old as the last thing it delivered.
void FactsCache::silent(Reflector& r, const std::string& error) {
  {
    std::lock_guard lock(mutex_);
    currentUntil_ = std::min(currentUntil_, r.lastHeard);
  }
  setState(r, ResourceState::Unreachable, "watch " + r.status.resource + ": " + error);
}

void FactsCache::apply(Reflector& r, WatchEvent&& event) {
  std::lock_guard lock(mutex_);
  r.lastHeard = options_.now();
  if (event.type == WatchEvent::Type::Bookmark) return;
  if (event.type == WatchEvent::Type::Deleted) {
    const nlohmann::json& meta = event.object.value("metadata", nlohmann::json::object());
    builder_.remove(r.kind, meta.value("namespace", ""), meta.value("name", ""));
  } else {
    stampKind(event.object, r.resource, r.version);
    builder_.add(event.object);
  }
  dirty_ = true;
  wake_.notify_all();
}

void FactsCache::watchLoop(Reflector& r) {
  while (!stopping_.load()) {
    const WatchResult w = api_.watch(
        r.resource, r.version, r.resourceVersion,
        [&](WatchEvent&& e) {
          apply(r, std::move(e));
          return true;
        },
        options_.watchTimeoutSeconds, &stopping_,
        [&](int status) {
          if (status != 200) return;
          heard(r);
          setState(r, ResourceState::Synced, "");
        });
    if (stopping_.load()) return;
    r.resourceVersion = w.resourceVersion;
    {
      std::lock_guard lock(mutex_);
      r.status.objects = builder_.size(r.kind);
    }
    if (w.status == 410 || w.errorEventCode == 410) {
      std::lock_guard lock(mutex_);
      ++r.status.relists;
      r.status.state = ResourceState::Relisting;  // the last snapshot stays while listing again
      if (options_.log) options_.log(false, "cluster facts: " + r.status.resource + " relisting (410 Gone: " + w.error + ")");
      return;
    }
    {
      std::lock_guard lock(mutex_);
      ++r.status.watchRestarts;
    }
    if (w.status == 200 && w.error.empty()) {  // the server ended the watch at timeoutSeconds: re-open it
      r.backoff.reset();
      continue;
    }
    if (w.silent) {
      const long long ms = idleTimeout().count();
      silent(r, "nothing received (no event, no bookmark, no end) for " +
                    (ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms") +
                    ": the connection is dead");
    } else if (w.status == 401 || w.status == 403) {
      setState(r, ResourceState::Refused, "watch " + r.status.resource + ": " + w.error);
    } else if (w.status != 200) {
      setState(r, ResourceState::Unreachable, "watch " + r.status.resource + ": " + w.error);
    } else if (options_.log) {
      options_.log(true, "cluster facts: the watch of " + r.status.resource + " dropped (" + w.error + "); resuming");
    }
    if (!sleepFor(r.backoff.next())) return;
  }
}

void FactsCache::publish() {
  std::unique_lock lock(mutex_);
  bool usable = true, withdraw = false;
  for (const auto& r : reflectors_) {
    usable = usable && (r->status.state == ResourceState::Synced || r->status.state == ResourceState::NotServed);
    withdraw = withdraw || withdraws(r->status.state);
  }
  if (usable) {
    currentUntil_ = options_.now();
    everCurrent_ = true;
  }
  if (withdraw) {
    dirty_ = false;
    auto why = std::make_shared<const std::string>(whyMissing());
    lock.unlock();
    missing_.store(std::move(why), std::memory_order_release);
    snapshot_.store(nullptr, std::memory_order_release);
    return;
  }
  if (!usable || (!dirty_ && snapshot_.load() != nullptr)) return;  // relisting: keep the last snapshot
  dirty_ = false;
  ++rebuilds_;
  for (auto& r : reflectors_) r->status.objects = builder_.size(r->kind);
  std::shared_ptr<const ClusterFacts> facts = builder_.build();
  lock.unlock();
  snapshot_.store(std::move(facts), std::memory_order_release);
}

void FactsCache::publishLoop() {
  while (!stopping_.load()) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_.load() || dirty_; });
    }
    if (stopping_.load()) return;
    publish();
    // At most one rebuild per interval, however many events arrive.
    if (!sleepFor(options_.publishInterval)) return;
  }
}

std::string FactsCache::whyMissing() const {
  for (const auto& r : reflectors_) {
    const ResourceState state = r->status.state;
    if (state == ResourceState::Refused || state == ResourceState::Unreachable) {
      return r->status.resource + " " + std::string(resourceStateName(state));
    }
  }
  for (const auto& r : reflectors_) {
    if (r->status.state == ResourceState::Starting) return r->status.resource + " not listed yet";
  }
  return "not synced yet";
}

std::chrono::milliseconds FactsCache::idleTimeout() const {
  if (options_.watchIdleTimeout.count() > 0) return options_.watchIdleTimeout;
  return std::chrono::seconds(options_.watchTimeoutSeconds) + ApiClient::kWatchEndMargin;
}

FactsStatus FactsCache::status() const {
  FactsStatus out;
  std::lock_guard lock(mutex_);
  bool usable = true;
  for (const auto& r : reflectors_) {
    out.resources.push_back(r->status);
    usable = usable && (r->status.state == ResourceState::Synced || r->status.state == ResourceState::NotServed);
  }
  out.synced = snapshot_.load() != nullptr;
  out.rebuilds = rebuilds_;
  if (!everCurrent_) {
    out.ageSeconds = -1;
  } else if (!usable) {
    out.ageSeconds = std::chrono::duration<double>(options_.now() - currentUntil_).count();
  }
  return out;
}

}  // namespace gpuguard::cluster
