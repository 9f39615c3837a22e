// Leader election through a coordination.k8s.io/v1 Lease: client-go's
// tools/leaderelection algorithm with its LeaseLock (v0.36), so gpuguard
// replicas and Kubernetes controllers read the same Lease the same way.
//
//  - A candidate tries at once, then every retryPeriod x (1 + rand x 1.2)
//    (client-go's JitterFactor): GET; 404 -> POST; a holder whose record has
//    not changed for its leaseDurationSeconds, measured on OUR steady clock
//    from when we first saw that record (observedTime; renewTime is never
//    compared across machines), or an empty holder -> PUT ourselves with the
//    GET's resourceVersion (409: someone else won this round).
//  - The leader renews every retryPeriod: first optimistically (PUT with the
//    last resourceVersion, no GET), on failure the candidate's slow path. No
//    successful renew for renewDeadline -> it stops leading, and becomes a
//    candidate again (the webhook keeps serving admission meanwhile).
//  - On stop, a leader releases: holderIdentity "", leaseDurationSeconds 1,
//    so a standby takes over at its next try instead of after the lease.
//  - Beyond client-go, a write fence: mayWrite() is true only while the last
//    successful renew is younger than renewDeadline. The leaseDuration -
//    renewDeadline margin (5 s by default) covers a write already in flight
//    when the fence closes, before another replica can hold the Lease.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "cluster/api_client.h"

namespace gpuguard::cluster {

struct LeaderElectionConfig {
  std::string namespaceName;               // the Lease's namespace (the release's)
  std::string name = "gpuguard-audit";     // the Lease's name
  std::string identity;                    // unique per replica: "<pod name>_<8 random hex>"
  std::chrono::milliseconds leaseDuration{std::chrono::seconds(15)};
  std::chrono::milliseconds renewDeadline{std::chrono::seconds(10)};
  std::chrono::milliseconds retryPeriod{std::chrono::seconds(2)};
  std::map<std::string, std::string> labels;  // on a Lease this replica creates
};

// "" when the configuration is usable, else why not (client-go's
// NewLeaderElector checks: lease > renew deadline > 1.2 x retry period, each
// at least 1 s, an identity, a namespace and a name).
std::string validate(const LeaderElectionConfig& config);

// Time as the elector sees it; tests step a fake one.
struct ElectionClock {
  std::function<std::chrono::steady_clock::time_point()> steadyNow;   // expiry, the fence
  std::function<std::chrono::system_clock::time_point()> wallNow;     // the Lease's acquireTime/renewTime
  // Sleeps `d` unless `stop` is set first; false when stopped.
  std::function<bool(std::chrono::milliseconds d, const std::atomic<bool>& stop)> sleep;
  std::function<double()> random;                                     // uniform in [0, 1): the jitter

  static ElectionClock system();
};

struct LeaderCallbacks {
  // Both run on the elector's thread. onStartedLeading starts the work and
  // returns; onStoppedLeading stops it and returns only when no write of it
  // can start any more (the Lease is released after it).
  std::function<void()> onStartedLeading;
  std::function<void()> onStoppedLeading;
  std::function<void(const std::string& holder)> onNewLeader;  // the observed holder changed ("" = none)
  std::function<void(bool warning, const std::string& message)> log;
};

// "2026-12-04T11:02:07.123456Z": metav1.MicroTime's RFC3339Micro, in UTC.
std::string microTime(std::chrono::system_clock::time_point t);

class LeaderElector {
 public:
  // `api` must outlive the elector; its requests should time out well within
  // renewDeadline (ApiClient::setObjectTimeout).
  LeaderElector(ApiClient& api, LeaderElectionConfig config, LeaderCallbacks callbacks,
                ElectionClock clock = ElectionClock::system());

  // Candidate, leader, candidate again... until `stop`; a leader then stops
  // its work and releases the Lease. Call from one thread.
  void run(const std::atomic<bool>& stop);

  // One round of client-go's tryAcquireOrRenew; true: this replica holds the Lease.
  bool tryAcquireOrRenew();
  // Gives the Lease up if this replica holds it (client-go's release).
  bool release();

  // The write fence; any thread.
  bool mayWrite() const;
  bool isLeader() const;
  std::string observedHolder() const;
  std::uint64_t timesLeading() const { return timesLeading_.load(); }
  const LeaderElectionConfig& config() const { return config_; }

 private:
  struct Record {
    std::string holderIdentity;
    long long leaseDurationSeconds = 0;
    std::string acquireTime, renewTime;  // MicroTime text, carried over as read
    long long leaseTransitions = 0;
    bool operator==(const Record&) const = default;
  };
  static std::string parseRecord(const nlohmann::json& lease, Record& out);
  nlohmann::json leaseWith(const Record& record) const;
  bool update(const Record& record);
  bool tryAcquireOrRenewOnce();
  void observe(const Record& record);
  void reportTransition();
  bool leaseValid(std::chrono::steady_clock::time_point now) const;
  bool acquire(const std::atomic<bool>& stop);
  void renewWhileLeading(const std::atomic<bool>& stop);
  void log(bool warning, const std::string& message) const;

  ApiClient& api_;
  const LeaderElectionConfig config_;
  const LeaderCallbacks callbacks_;
  const ElectionClock clock_;
  const Resource leases_{"coordination.k8s.io", {"v1"}, "leases", "Lease", true};

  mutable std::mutex mutex_;
  nlohmann::json lease_;                               // the Lease last read or written (its resourceVersion)
  Record observed_;
  std::chrono::steady_clock::time_point observedTime_{};
  std::chrono::steady_clock::time_point lastRenew_{};  // the fence's start
  std::atomic<bool> leading_{false};
  std::atomic<std::uint64_t> timesLeading_{0};
  std::string reportedHolder_;
  bool reported_ = false;
};

}  // namespace gpuguard::cluster
