// The active policy, and hot reload of the --policy file.
//
// A background thread polls the file every couple of seconds. It compares the
// identity of what the path points to now (device, inode, size, mtime,
// following symlinks: a ConfigMap volume swaps its ..data symlink, which gives
// the file a new inode) and reloads when it changed. A new policy that does not
// load is rejected and logged, and the old one stays active. Readers get the
// active policy as an atomic shared_ptr: a request in flight keeps the policy
// it started with.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "webhook/admission_policy.h"
#include "webhook/log.h"

namespace gpuguard::webhook {

class PolicySource {
 public:
  // Loads the policy at `path` (the built-in defaults when nullopt). Throws
  // PolicyError when it does not load.
  PolicySource(std::optional<std::string> path, const Logger& logger);
  ~PolicySource();
  PolicySource(const PolicySource&) = delete;
  PolicySource& operator=(const PolicySource&) = delete;

  std::shared_ptr<const AdmissionPolicy> current() const { return policy_.load(std::memory_order_acquire); }

  // Checks the file once; reloads if it changed. True when a new policy
  // became active.
  bool poll();

  // Polls every `interval` on a background thread until stop() (or the
  // destructor). Does nothing without a path.
  void start(std::chrono::milliseconds interval);
  void stop();

  std::uint64_t reloadSuccesses() const { return successes_.load(std::memory_order_relaxed); }
  std::uint64_t reloadFailures() const { return failures_.load(std::memory_order_relaxed); }
  const std::optional<std::string>& path() const { return path_; }

 private:
  struct Identity {
    bool exists = false;
    int error = 0;  // errno of stat when it does not exist
    std::uint64_t device = 0, inode = 0;
    std::int64_t size = 0, mtimeSec = 0, mtimeNsec = 0, ctimeSec = 0, ctimeNsec = 0;
    bool operator==(const Identity&) const = default;
  };
  Identity identify() const;

  std::optional<std::string> path_;
  const Logger& logger_;
  std::atomic<std::shared_ptr<const AdmissionPolicy>> policy_;
  Identity seen_;  // the last identity acted on (loaded or rejected); poller thread only
  std::atomic<std::uint64_t> successes_{0};
  std::atomic<std::uint64_t> failures_{0};

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpuguard::webhook
