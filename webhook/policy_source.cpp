#include "webhook/policy_source.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "yaml/policy_file.h"

namespace gpuguard::webhook {
namespace {

std::shared_ptr<const AdmissionPolicy> load(const std::optional<std::string>& path) {
  return std::make_shared<const AdmissionPolicy>(path ? AdmissionPolicy::from(yaml::loadPolicyFile(*path))
                                                      : AdmissionPolicy{});
}

}  // namespace

PolicySource::PolicySource(std::optional<std::string> path, const Logger& logger)
    : path_(std::move(path)), logger_(logger) {
  seen_ = identify();
  policy_.store(load(path_), std::memory_order_release);
  const AdmissionPolicy& p = *current();
  logger_.info("policy loaded")
      .str("path", path_.value_or("(built-in defaults)"))
      .flag("allowSuppressions", p.allowSuppressions)
      .strings("exemptNamespaces", p.exemptNamespaces);
}

PolicySource::~PolicySource() { stop(); }

PolicySource::Identity PolicySource::identify() const {
  Identity id;
  if (!path_) return id;
  struct stat st {};
  if (::stat(path_->c_str(), &st) != 0) {  // follows symlinks
    id.error = errno;
    return id;
  }
  id.exists = true;
  id.device = static_cast<std::uint64_t>(st.st_dev);
  id.inode = static_cast<std::uint64_t>(st.st_ino);
  id.size = static_cast<std::int64_t>(st.st_size);
  id.mtimeSec = static_cast<std::int64_t>(st.st_mtim.tv_sec);
  id.mtimeNsec = static_cast<std::int64_t>(st.st_mtim.tv_nsec);
  id.ctimeSec = static_cast<std::int64_t>(st.st_ctim.tv_sec);
  id.ctimeNsec = static_cast<std::int64_t>(st.st_ctim.tv_nsec);
  return id;
}

bool PolicySource::poll() {
  if (!path_) return false;
  const Identity now = identify();
  if (now == seen_) return false;
  seen_ = now;
  if (!now.exists) {
    // A ConfigMap update briefly has no file; a deleted one keeps the policy.
    failures_.fetch_add(1, std::memory_order_relaxed);
    logger_.error("policy reload failed; keeping the active policy")
        .str("path", *path_)
        .str("error", std::string("cannot stat: ") + std::strerror(now.error));
    return false;
  }
  try {
    std::shared_ptr<const AdmissionPolicy> fresh = load(path_);
    policy_.store(std::move(fresh), std::memory_order_release);
    successes_.fetch_add(1, std::memory_order_relaxed);
    logger_.info("policy reloaded").str("path", *path_);
    return true;
  } catch (const std::exception& e) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    logger_.error("policy reload failed; keeping the active policy").str("path", *path_).str("error", e.what());
    return false;
  }
}

void PolicySource::start(std::chrono::milliseconds interval) {
  if (!path_ || thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this, interval] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
      lock.unlock();
      poll();
      lock.lock();
    }
  });
}

void PolicySource::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace gpuguard::webhook
