#include "cluster/leader_election.h"

#include <cstdio>
#include <ctime>
#include <random>
#include <thread>

namespace gpuguard::cluster {

using nlohmann::json;
using std::chrono::milliseconds;
using SteadyTime = std::chrono::steady_clock::time_point;

namespace {

constexpr double kJitterFactor = 1.2;  // client-go's JitterFactor

// A Lease spec field that Go would decode into an integer; false on another type.
bool readInteger(const json& spec, const char* key, long long& out) {
  if (!spec.contains(key) || spec[key].is_null()) return true;
  if (!spec[key].is_number_integer()) return false;
  out = spec[key].get<long long>();
  return true;
}

bool readText(const json& spec, const char* key, std::string& out) {
  if (!spec.contains(key) || spec[key].is_null()) return true;
  if (!spec[key].is_string()) return false;
  out = spec[key].get<std::string>();
  return true;
}

}  // namespace

std::string validate(const LeaderElectionConfig& c) {
  if (c.identity.empty()) return "leader election: the identity is empty";
  if (c.namespaceName.empty() || c.name.empty()) return "leader election: the Lease needs a namespace and a name";
  if (c.leaseDuration < std::chrono::seconds(1) || c.renewDeadline < std::chrono::seconds(1) ||
      c.retryPeriod < std::chrono::seconds(1)) {
    return "leader election: lease duration, renew deadline and retry period must each be at least 1s";
  }
  if (c.leaseDuration <= c.renewDeadline) return "leader election: the lease duration must be longer than the renew deadline";
  if (static_cast<double>(c.renewDeadline.count()) <= kJitterFactor * static_cast<double>(c.retryPeriod.count())) {
    return "leader election: the renew deadline must be longer than 1.2 x the retry period";
  }
  return "";
}

ElectionClock ElectionClock::system() {
  ElectionClock clock;
  clock.steadyNow = [] { return std::chrono::steady_clock::now(); };
  clock.wallNow = [] { return std::chrono::system_clock::now(); };
  clock.sleep = [](milliseconds d, const std::atomic<bool>& stop) {
    const SteadyTime end = std::chrono::steady_clock::now() + d;
    while (!stop.load()) {
      const auto left = end - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) return true;
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(left, milliseconds(50)));
    }
    return false;
  };
  clock.random = [] {
    thread_local std::mt19937_64 engine{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
  };
  return clock;
}

std::string microTime(std::chrono::system_clock::time_point t) {
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<long long>(micros % 1000000));
  return text;
}

LeaderElector::LeaderElector(ApiClient& api, LeaderElectionConfig config, LeaderCallbacks callbacks,
                             ElectionClock clock)
    : api_(api), config_(std::move(config)), callbacks_(std::move(callbacks)), clock_(std::move(clock)) {}

void LeaderElector::log(bool warning, const std::string& message) const {
  if (callbacks_.log) {
    callbacks_.log(warning, "leader election: lease " + config_.namespaceName + "/" + config_.name + ": " + message);
  }
}

std::string LeaderElector::parseRecord(const json& lease, Record& out) {
  out = Record{};
  if (!lease.is_object()) return "the Lease is not a JSON object";
  if (!lease.contains("spec") || lease["spec"].is_null()) return "";  // an empty spec: no holder
  const json& spec = lease["spec"];
  if (!spec.is_object()) return "the Lease's spec is not an object";
  if (!readText(spec, "holderIdentity", out.holderIdentity) || !readText(spec, "acquireTime", out.acquireTime) ||
      !readText(spec, "renewTime", out.renewTime)) {
    return "the Lease's spec has a holderIdentity, acquireTime or renewTime that is not a string";
  }
  if (!readInteger(spec, "leaseDurationSeconds", out.leaseDurationSeconds) ||
      !readInteger(spec, "leaseTransitions", out.leaseTransitions)) {
    return "the Lease's spec has a leaseDurationSeconds or leaseTransitions that is not an integer";
  }
  return "";
}

json LeaderElector::leaseWith(const Record& record) const {
  json lease;
  {
    std::lock_guard lock(mutex_);
    lease = lease_;
  }
  if (!lease.is_object()) {
    lease = {{"apiVersion", "coordination.k8s.io/v1"}, {"kind", "Lease"},
             {"metadata", {{"name", config_.name}, {"namespace", config_.namespaceName}}}};
    if (!config_.labels.empty()) lease["metadata"]["labels"] = config_.labels;
  }
  lease["spec"] = {{"holderIdentity", record.holderIdentity},
                   {"leaseDurationSeconds", record.leaseDurationSeconds},
                   {"acquireTime", record.acquireTime},
                   {"renewTime", record.renewTime},
                   {"leaseTransitions", record.leaseTransitions}};
  return lease;
}

bool LeaderElector::update(const Record& record) {
  const ApiResult answer = api_.replace(leases_, "v1", config_.namespaceName, config_.name, leaseWith(record));
  if (!answer.ok()) {
    log(!answer.conflict(), "update failed (" + std::to_string(answer.status) + "): " + answer.error);
    return false;
  }
  std::lock_guard lock(mutex_);
  lease_ = answer.body;
  return true;
}

void LeaderElector::observe(const Record& record) {
  std::lock_guard lock(mutex_);
  observed_ = record;
  observedTime_ = clock_.steadyNow();
  if (record.holderIdentity == config_.identity) lastRenew_ = observedTime_;
}

void LeaderElector::reportTransition() {
  std::string holder;
  {
    std::lock_guard lock(mutex_);
    if (reported_ && reportedHolder_ == observed_.holderIdentity) return;
    reported_ = true;
    reportedHolder_ = holder = observed_.holderIdentity;
  }
  if (callbacks_.onNewLeader) callbacks_.onNewLeader(holder);
}

bool LeaderElector::leaseValid(SteadyTime now) const {
  std::lock_guard lock(mutex_);
  return observedTime_ + std::chrono::seconds(observed_.leaseDurationSeconds) > now;
}

bool LeaderElector::isLeader() const {
  std::lock_guard lock(mutex_);
  return observed_.holderIdentity == config_.identity;
}

std::string LeaderElector::observedHolder() const {
  std::lock_guard lock(mutex_);
  return observed_.holderIdentity;
}

bool LeaderElector::mayWrite() const {
  if (!leading_.load()) return false;
  const SteadyTime now = clock_.steadyNow();
  std::lock_guard lock(mutex_);
  return observed_.holderIdentity == config_.identity && now < lastRenew_ + config_.renewDeadline;
}

bool LeaderElector::tryAcquireOrRenew() {
  const bool holding = tryAcquireOrRenewOnce();
  reportTransition();  // client-go's maybeReportTransition
  return holding;
}

bool LeaderElector::tryAcquireOrRenewOnce() {
  const std::string now = microTime(clock_.wallNow());
  Record desired{config_.identity, std::chrono::duration_cast<std::chrono::seconds>(config_.leaseDuration).count(),
                 now, now, 0};
  if (isLeader() && leaseValid(clock_.steadyNow())) {  // 1. the leader's fast path: no GET
    {
      std::lock_guard lock(mutex_);
      desired.acquireTime = observed_.acquireTime;
      desired.leaseTransitions = observed_.leaseTransitions;
    }
    if (update(desired)) {
      observe(desired);
      return true;
    }
    log(false, "renewing with the last resourceVersion failed, reading the Lease again");
  }
  const ApiResult got = api_.getObject(leases_, "v1", config_.namespaceName, config_.name);  // 2. read or create
  if (got.notFound()) {
    const ApiResult created = api_.create(leases_, "v1", config_.namespaceName, leaseWith(desired));
    if (!created.ok()) {
      log(!created.conflict(), "create failed (" + std::to_string(created.status) + "): " + created.error);
      return false;
    }
    std::lock_guard lock(mutex_);
    lease_ = created.body;
  } else {
    Record old;
    std::string error = got.ok() ? parseRecord(got.body, old) : "read failed (" + std::to_string(got.status) + "): " + got.error;
    if (!error.empty()) {
      log(true, error);
      return false;
    }
    {
      std::lock_guard lock(mutex_);
      lease_ = got.body;
    }
    if (std::lock_guard lock(mutex_); !(old == observed_)) {  // 3. a new record: its lease runs from now, on our clock
      observed_ = old;
      observedTime_ = clock_.steadyNow();
    }
    if (!old.holderIdentity.empty() && leaseValid(clock_.steadyNow()) && !isLeader()) return false;
    if (isLeader()) {  // 4. ours: keep when and how often it changed hands; else one more transition
      desired.acquireTime = old.acquireTime;
      desired.leaseTransitions = old.leaseTransitions;
    } else {
      desired.leaseTransitions = old.leaseTransitions + 1;
    }
    if (!update(desired)) return false;
  }
  observe(desired);
  return true;
}

bool LeaderElector::release() {
  if (!isLeader()) return true;
  const std::string now = microTime(clock_.wallNow());
  Record released{"", 1, now, now, 0};
  {
    std::lock_guard lock(mutex_);
    released.leaseTransitions = observed_.leaseTransitions;
  }
  if (!update(released)) {
    log(true, "release failed: a standby takes over when the lease expires");
    return false;
  }
  observe(released);
  reportTransition();
  log(false, "released");
  return true;
}

bool LeaderElector::acquire(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    if (tryAcquireOrRenew()) return true;
    const auto wait = milliseconds(static_cast<long long>(
        static_cast<double>(config_.retryPeriod.count()) * (1.0 + clock_.random() * kJitterFactor)));
    if (!clock_.sleep(wait, stop)) return false;
  }
  return false;
}

void LeaderElector::renewWhileLeading(const std::atomic<bool>& stop) {
  while (clock_.sleep(config_.retryPeriod, stop)) {
    const SteadyTime roundStart = clock_.steadyNow();
    while (!tryAcquireOrRenew()) {
      if (clock_.steadyNow() - roundStart >= config_.renewDeadline) {
        log(true, "no renew succeeded for " + std::to_string(config_.renewDeadline.count()) + "ms: stopped leading");
        return;
      }
      if (!clock_.sleep(config_.retryPeriod, stop)) return;
    }
  }
}

void LeaderElector::run(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    if (!acquire(stop)) break;
    leading_.store(true);
    ++timesLeading_;
    log(false, config_.identity + " leads");
    if (callbacks_.onStartedLeading) callbacks_.onStartedLeading();
    renewWhileLeading(stop);
    leading_.store(false);  // the fence closes before the work stops
    if (callbacks_.onStoppedLeading) callbacks_.onStoppedLeading();
  }
  release();
}

}  // namespace gpuguard::cluster
