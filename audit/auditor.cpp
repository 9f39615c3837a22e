// The auditor's lifecycle, reflectors and control loop (the worker is in
// auditor_worker.cpp).
#include "audit/auditor.h"

#include <pthread.h>
#include <sched.h>

#include "cluster/backoff.h"

namespace gpuguard::audit {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// The audit yields the CPU to everything else, admission first.
void runIdle(bool idle) {
#ifdef SCHED_IDLE
  if (!idle) return;
  sched_param param{};
  param.sched_priority = 0;
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
#else
  (void)idle;
#endif
}

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

struct Auditor::Reflector {
  std::size_t index = 0;
  AuditedResource resource;
  std::string version;          // the API version that answered the list
  std::string resourceVersion;  // where the watch resumes
  std::atomic<bool> interrupt{false};             // ends the watch: relist (or stop)
  std::atomic<int> relistTrigger{-1};             // the Trigger of the next list; -1: resync
  cluster::Backoff backoff;
  // Under Auditor::mutex_:
  AuditResourceStatus status;
  std::uint64_t listedScan = 0;  // the last scan this resource counts for
  std::string answered;          // the version of the last list (the worker's GET speaks it)
  bool notServed = false;
};

Auditor::Auditor(AuditApi& api, JudgeFn judge, AuditorOptions options)
    : api_(api),
      judge_(std::move(judge)),
      options_(std::move(options)),
      judgeBucket_(options_.judgeQps, 1),
      apiBucket_(options_.apiQps, options_.apiBurst),
      queue_(options_.pendingBytes),
      writer_(api_, apiBucket_, stopping_, WriterOptions{options_.format, options_.bounds, options_.mayWrite, options_.log}),
      inventoryBackoff_(options_.backoffInitial, options_.backoffMax) {
  for (std::size_t i = 0; i < options_.resources.size(); ++i) {
    auto r = std::make_unique<Reflector>();
    r->index = i;
    r->resource = options_.resources[i];
    r->backoff = cluster::Backoff(options_.backoffInitial, options_.backoffMax);
    r->status.resource = r->resource.name();
    r->status.state = "starting";
    reflectors_.push_back(std::move(r));
  }
  facts_.store(std::make_shared<const FactsState>());
}

Auditor::~Auditor() { stop(); }

void Auditor::start() {
  if (!threads_.empty()) return;
  scanStart_ = Clock::now();
  for (auto& r : reflectors_) {
    threads_.emplace_back([this, &r] {
      runIdle(options_.idleScheduling);
      runReflector(*r);
    });
  }
  threads_.emplace_back([this] {
    runIdle(options_.idleScheduling);
    workerLoop();
  });
  threads_.emplace_back([this] {
    runIdle(options_.idleScheduling);
    controlLoop();
  });
}

void Auditor::stop() {
  stopping_.store(true);
  queue_.shutDown();
  for (auto& r : reflectors_) r->interrupt.store(true);
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

bool Auditor::sleepFor(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, wait, [this] { return stopping_.load(); });
  return !stopping_.load();
}

void Auditor::setState(Reflector& r, std::string_view state, bool synced, const std::string& error) {
  std::lock_guard lock(mutex_);
  const bool changed = r.status.state != state;
  r.status.state = std::string(state);
  r.status.synced = synced;
  if (!changed || !options_.log) return;
  const bool bad = state == "refused" || state == "unreachable";
  std::string line = "audit: " + r.status.resource + " " + std::string(state);
  if (state == "not served") line += " (the API server does not serve it; looked for again later)";
  if (bad) line += ": " + error;
  options_.log(bad, line);
}

Generations Auditor::generationsNow() const { return Generations{policyGeneration(), facts_.load()->generation}; }

void Auditor::runReflector(Reflector& r) {
  while (!released_.load()) {
    if (!sleepFor(std::min(options_.tick, std::chrono::milliseconds(50)))) return;
  }
  if (r.resource.versions.empty() || r.resource.kind.empty()) {
    setState(r, "not served", false, "");  // an extra resource: discovery names its version and kind
    std::lock_guard lock(mutex_);
    r.notServed = true;
    r.listedScan = ~std::uint64_t{0};
    return;
  }
  while (!stopping_.load()) {
    if (!listOnce(r)) {
      bool notServed;
      {
        std::lock_guard lock(mutex_);
        notServed = r.notServed;
      }
      if (!sleepFor(notServed ? options_.notServedRetry : r.backoff.next())) return;
      continue;
    }
    r.backoff.reset();
    watchLoop(r);
  }
}

bool Auditor::listOnce(Reflector& r) {
  const int asked = r.relistTrigger.exchange(-1);
  const Trigger trigger = asked < 0 ? Trigger::Resync : static_cast<Trigger>(asked);
  r.interrupt.store(false);
  std::uint64_t scan;
  {
    std::lock_guard lock(mutex_);
    scan = scan_;
  }
  std::set<std::string> seen;
  const cluster::ListResult result = api_.list(
      r.resource, "",
      [&](json&& item) {
        if (!item.is_object()) return;
        const std::string& version = r.version.empty() ? r.resource.versions.front() : r.version;
        item["apiVersion"] = r.resource.group.empty() ? version : r.resource.group + "/" + version;
        item["kind"] = r.resource.kind;
        const json* uid = item.contains("metadata") && item["metadata"].is_object() ? &item["metadata"]["uid"] : nullptr;
        if (uid && uid->is_string()) seen.insert(uid->get<std::string>());
        offer(r, std::move(item), trigger, true);
      },
      &stopping_);
  if (stopping_.load()) return false;
  const bool notServed = result.status == 404;
  const bool refused = result.status == 401 || result.status == 403;
  if (!result.error.empty()) {
    setState(r, notServed ? "not served" : refused ? "refused" : "unreachable", false, "list: " + result.error);
    std::lock_guard lock(mutex_);
    r.notServed = notServed;
    if (notServed || refused) r.listedScan = scan;  // counts for the scan; a refused list deletes nothing
    return false;
  }
  r.version = result.version.empty() ? r.resource.versions.front() : result.version;
  r.resourceVersion = result.resourceVersion;
  // No malloc_trim here: it locks every arena in turn, admission's too, and
  // madvises its free pages while holding the lock, from a SCHED_IDLE thread
  // (a request would wait for it). The pages' memory stays in this thread's
  // own arena (webhook/malloc_tuning.h) for the next list.
  index_.forgetUnseen(r.index, seen);
  setState(r, "synced", true, "");
  std::lock_guard lock(mutex_);
  r.notServed = false;
  r.listedScan = scan;
  r.answered = r.version;
  r.status.objects = seen.size();
  return true;
}

void Auditor::offer(Reflector& r, json&& object, Trigger trigger, bool waiting) {
  const AuditedObject ref = auditedObject(object);
  if (ref.uid.empty()) return;
  if (controlledByAuditedOwner(object, options_.resources) || options_.excludeNamespaces.count(ref.ns) > 0) {
    index_.forget(ref.uid);  // judged through its owner, or not at all
    return;
  }
  const std::string rv = cluster::resourceVersionOf(object);
  std::string key;
  switch (index_.freshness(ref.uid, rv, generationsNow())) {
    case ObjectIndex::Freshness::Current:
      return;
    case ObjectIndex::Freshness::CheckKey:
      key = judgeKeyOf(object);
      if (index_.keyUnchanged(ref.uid, key, rv)) return;
      break;
    case ObjectIndex::Freshness::Stale:
      key = judgeKeyOf(object);
      break;
  }
  const std::size_t bytes = approximateBytes(object);
  WorkItem item{trigger, r.index, std::move(object), bytes, ref.ns, ref.name, std::move(key)};
  if (waiting) {
    queue_.addWaiting(ref.uid, std::move(item), &stopping_);
  } else {
    queue_.add(ref.uid, std::move(item));
  }
}

void Auditor::watchLoop(Reflector& r) {
  while (!stopping_.load() && !r.interrupt.load()) {
    const cluster::WatchResult w = api_.watch(
        r.resource, r.version, r.resourceVersion,
        [&](cluster::WatchEvent&& e) {
          if (e.type == cluster::WatchEvent::Type::Deleted) {
            const AuditedObject ref = auditedObject(e.object);
            if (!ref.uid.empty()) queue_.add(ref.uid, WorkItem{Trigger::Delete, r.index, std::nullopt, 0, ref.ns, ref.name, ""});
          } else if (e.type == cluster::WatchEvent::Type::Added || e.type == cluster::WatchEvent::Type::Modified) {
            if (e.object.is_object() && !e.object.contains("kind")) e.object["kind"] = r.resource.kind;
            offer(r, std::move(e.object), Trigger::Watch, false);
          }
          return true;
        },
        &r.interrupt);
    if (stopping_.load() || r.interrupt.load()) return;
    if (!w.resourceVersion.empty()) r.resourceVersion = w.resourceVersion;
    if (w.status == 410 || w.errorEventCode == 410) return;  // too old: relist
    if (w.status == 200 && w.error.empty()) {
      r.backoff.reset();
      continue;  // the server ended the watch: re-open it
    }
    if (w.status == 401 || w.status == 403) setState(r, "refused", false, "watch: " + w.error);
    else if (w.status != 200) setState(r, "unreachable", false, "watch: " + w.error);
    if (!sleepFor(r.backoff.next())) return;
  }
}

void Auditor::relistAll(Trigger why) {
  {
    std::lock_guard lock(mutex_);
    if (completedScan_ == scan_) scanStart_ = Clock::now();  // a scan in progress keeps its start
    ++scan_;
  }
  for (auto& r : reflectors_) {
    r->relistTrigger.store(static_cast<int>(why));
    r->interrupt.store(true);
  }
  wake_.notify_all();
}

void Auditor::checkScanComplete() {
  std::lock_guard lock(mutex_);
  if (completedScan_ == scan_) return;
  for (const auto& r : reflectors_) {
    if (r->listedScan < scan_) return;
  }
  completedScan_ = scan_;
  lastScanEnd_ = unixNow();
  lastScanDuration_ = std::chrono::duration<double>(Clock::now() - scanStart_).count();
  completedScans_.fetch_add(1);
  if (options_.log) options_.log(false, "audit: full scan complete in " + std::to_string(lastScanDuration_) + " s");
}

void Auditor::takeInventory() {
  ReportWriter::Inventory inventory = writer_.inventory();
  if (!inventory.failed) inventoryBackoff_.reset();
  const std::chrono::milliseconds retry = inventory.failed ? inventoryBackoff_.next() : options_.notServedRetry;
  std::lock_guard lock(mutex_);
  lastInventoryTry_ = Clock::now();
  inventoryRetry_ = retry;
  inventoryTaken_ = true;
  if (inventory.served && !reportsServed_ && options_.log) {
    options_.log(false, "audit: " + std::string(reportFormatName(options_.format)) + " reports served; " +
                            std::to_string(inventory.results.size()) + " results found in our reports");
  }
  // A failed or refused list was logged by the writer, and is no reason to tell anyone to install CRDs.
  const bool missing = !inventory.served && !inventory.failed && !inventory.refused;
  if (missing && options_.log && (reportsServed_ || lastScanEnd_ == 0)) {
    options_.log(true, "audit: the " + writer_.reportResource(false).name() +
                           " API is not served (install its CRDs); judging without writing reports");
  }
  reportsServed_ = inventory.served;
  std::set<std::string> namespaces;
  for (const AuditResult& r : inventory.results) namespaces.insert(r.object.ns);
  index_.inherit(inventory.results, [this](const AuditedObject& o) { return resourceOfObject(o); });
  for (const std::string& ns : namespaces) index_.markDirty(ns);
}

void Auditor::resolveResources() {
  if (!options_.resolveResources) return;
  std::vector<AuditedResource> resolved = options_.resolveResources(options_.resources, stopping_);
  if (resolved.size() != options_.resources.size()) return;
  // Before the reflectors are released (released_ orders these writes before their reads).
  for (std::size_t i = 0; i < resolved.size(); ++i) reflectors_[i]->resource = resolved[i];
  options_.resources = std::move(resolved);
}

void Auditor::watchFacts(std::shared_ptr<const ClusterFacts>& seen, Clock::time_point& seenAt,
                         Clock::time_point& lastRejudge) {
  if (!options_.facts) return;
  std::shared_ptr<const ClusterFacts> now = options_.facts();
  const auto t = Clock::now();
  if (now != seen) {
    seen = now;
    seenAt = t;
  }
  const std::shared_ptr<const FactsState> current = facts_.load();
  if (seen == current->facts || t - seenAt < options_.factsSettle || t - lastRejudge < options_.factsMinInterval) return;
  facts_.store(std::make_shared<const FactsState>(FactsState{seen, current->generation + 1}));
  lastRejudge = t;
  relistAll(Trigger::Facts);
}

void Auditor::controlLoop() {
  const auto started = Clock::now();
  std::uint64_t policy = policyGeneration();
  std::shared_ptr<const ClusterFacts> seen = options_.facts ? options_.facts() : nullptr;
  auto seenAt = started, lastRejudge = started, lastResync = started;
  facts_.store(std::make_shared<const FactsState>(FactsState{seen, 0}));
  resolveResources();
  takeInventory();
  while (!stopping_.load()) {
    const auto now = Clock::now();
    if (!released_.load()) {
      seen = options_.facts ? options_.facts() : nullptr;
      // Without a facts source (--cluster-facts=off) there is nothing to wait for.
      if (!options_.facts || seen || now - started >= options_.factsGrace) {
        facts_.store(std::make_shared<const FactsState>(FactsState{seen, 0}));
        released_.store(true);
        lastResync = now;
        std::lock_guard lock(mutex_);
        scanStart_ = now;
      }
    } else {
      if (const std::uint64_t p = policyGeneration(); p != policy) {
        policy = p;
        relistAll(Trigger::Policy);
      }
      watchFacts(seen, seenAt, lastRejudge);
      if (now - lastResync >= options_.resyncInterval) {
        lastResync = now;
        relistAll(Trigger::Resync);
      }
      checkScanComplete();
    }
    bool retryInventory;
    {
      std::lock_guard lock(mutex_);
      retryInventory = !reportsServed_ && now - lastInventoryTry_ >= inventoryRetry_;
    }
    if (retryInventory) takeInventory();
    if (!sleepFor(options_.tick)) return;
  }
}

std::optional<std::size_t> Auditor::resourceOfObject(const AuditedObject& object) const {
  const std::size_t slash = object.apiVersion.find('/');
  const std::string group = slash == std::string::npos ? "" : object.apiVersion.substr(0, slash);
  for (std::size_t i = 0; i < options_.resources.size(); ++i) {
    if (options_.resources[i].group == group && options_.resources[i].kind == object.kind) return i;
  }
  return std::nullopt;
}

std::string Auditor::answeredVersion(std::size_t resource) const {
  std::lock_guard lock(mutex_);
  const Reflector& r = *reflectors_.at(resource);
  return r.answered.empty() ? r.resource.versions.front() : r.answered;
}

AuditStatus Auditor::status() const {
  AuditStatus out;
  out.running = !threads_.empty() && !stopping_.load();
  out.findings = index_.findingCounts();
  out.queueLength = queue_.length();
  out.refetches = queue_.droppedBodies();
  out.judgeSeconds = static_cast<double>(judgeNanos_.load()) / 1e9;
  out.reports = writer_.reportsHeld();
  out.writes = writer_.writes();
  const std::map<std::size_t, std::size_t> objects = index_.objectsPerResource();
  std::lock_guard lock(mutex_);
  out.reportsApiServed = reportsServed_;
  out.judged = judged_;
  out.lastFullScanTimestamp = lastScanEnd_;
  out.lastFullScanDuration = lastScanDuration_;
  for (const auto& r : reflectors_) {
    AuditResourceStatus s = r->status;
    const auto it = objects.find(r->index);
    s.objects = it == objects.end() ? 0 : it->second;
    out.resources.push_back(std::move(s));
  }
  return out;
}

bool Auditor::idle() const {
  // In this order: an item is recorded (dirty) before done(); a flush is
  // marked working before it takes the dirty set.
  if (completedScans_.load() == 0 || queue_.busy()) return false;
  if (index_.hasDirty()) return false;
  return !working_.load();
}

}  // namespace gpuguard::audit
