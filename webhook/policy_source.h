// The active policy, and hot reload of the --policy file.
//
// A reload swaps the policy only for a complete, valid document that differs
// from the active one; until then every request is judged by the old policy
// (an atomic shared_ptr: a request in flight keeps the policy it started with).
// Issue 23: a file rewritten in place was caught half-written and an empty
// file meant "the defaults", so a reload could briefly judge by the wrong
// policy. Now:
//   - The file is read through one descriptor and re-checked (size, times)
//     after the read; a file that changed while being read is read again later.
//   - An empty file (no YAML document, or a null one) is an error, as are
//     unparseable YAML and an invalid policy: the old policy stays. Write {}
//     for the built-in defaults.
//   - Content that hashes (SHA-256) like the active policy's changes nothing:
//     rewriting the same policy is no reload at all.
//   - Writes are settled, not timed. With inotify (watchesEvents()), the
//     directory of the file (and of the file a symlink leads to) is watched:
//     a reload starts on IN_CLOSE_WRITE, IN_MOVED_TO (a ConfigMap's ..data
//     symlink swap, an editor's rename) or a symlink created there, never
//     while a write to the file is open (IN_MODIFY without its
//     IN_CLOSE_WRITE), and what was read is dropped when the file was written
//     again meanwhile. A stat check every interval backs the events up (a
//     missed event, a queue overflow). Without inotify, the stat check
//     alone reloads, and only content read the same on two checks in a row.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "webhook/admission_policy.h"
#include "webhook/log.h"

namespace gpuguard::webhook {

// A policy document that loaded: the policy and the SHA-256 of its bytes.
struct LoadedPolicy {
  std::shared_ptr<const AdmissionPolicy> policy;
  std::string digest;
};

// Parses the complete text of a policy file. Throws PolicyError, naming
// `source`, for an empty document (no document, or a null one), YAML that
// does not parse, and a policy that does not validate.
LoadedPolicy parsePolicyText(const std::string& text, const std::string& source);

// Reads the policy file at `path` whole and parses it: what the webhook
// loads at start and what --check-policy checks. Throws PolicyError.
LoadedPolicy loadPolicy(const std::string& path);

class PolicySource {
 public:
  // Loads the policy at `path` (the built-in defaults when nullopt). Throws
  // PolicyError when it does not load (an empty file included).
  PolicySource(std::optional<std::string> path, const Logger& logger);
  ~PolicySource();
  PolicySource(const PolicySource&) = delete;
  PolicySource& operator=(const PolicySource&) = delete;

  std::shared_ptr<const AdmissionPolicy> current() const { return policy_.load(std::memory_order_acquire); }

  // Checks the file once (stat) and reloads it if it changed. True when a
  // new policy became active. The watcher thread calls this; so may tests.
  bool poll();

  // Watches the file on a background thread until stop() (or the
  // destructor): inotify events, and a stat check every `interval`. Does
  // nothing without a path.
  void start(std::chrono::milliseconds interval);
  void stop();
  bool watchesEvents() const { return inotify_ >= 0; }

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
  // The file's bytes; nullopt when it cannot be read (a failure, recorded)
  // or changed while being read (left for the next check).
  std::optional<std::string> readFile(const Identity& now);
  // Activates `bytes` read at `now` when they are a new, valid policy.
  // `requireRepeat`: only content read the same twice in a row is loaded.
  bool apply(const Identity& now, const std::string& bytes, bool requireRepeat);
  void recordFailure(const std::string& error);

  // inotify (policy_source_watch.cpp).
  void openWatch();
  void rewatch();
  // Reads every queued event; true when one says the file may have changed
  // (lostEvents_: the queue overflowed, so that is a guess).
  bool drainEvents();
  void watchLoop(std::chrono::milliseconds interval);

  std::optional<std::string> path_;
  const Logger& logger_;
  std::atomic<std::shared_ptr<const AdmissionPolicy>> policy_;
  std::string activeDigest_;     // SHA-256 of the active policy's bytes; poller thread only
  std::string candidateDigest_;  // without inotify: the content read on the last check
  Identity seen_;                // the last identity acted on (loaded or rejected); poller thread only
  std::atomic<std::uint64_t> successes_{0};
  std::atomic<std::uint64_t> failures_{0};

  int inotify_ = -1;
  int wakePipe_[2] = {-1, -1};  // stop() writes a byte to wake the watcher
  struct WatchedDirectory {
    std::string path;
    std::set<std::string> names;  // the entries in it whose events matter
  };
  std::map<int, WatchedDirectory> watched_;  // by inotify watch descriptor
  bool lostEvents_ = false;
  std::set<std::string> writing_;  // watched names with an IN_MODIFY and no IN_CLOSE_WRITE yet
  std::mutex mutex_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpuguard::webhook
