// PolicySource's watcher thread: inotify events settle writes, a stat check
// every interval backs them up (webhook/policy_source.h).
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>

#include "webhook/policy_source.h"

namespace gpuguard::webhook {
namespace {

namespace fs = std::filesystem;

constexpr std::uint32_t kEvents =
    IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB;

// The directory entries whose events matter: the path's own name, the first
// step of a relative symlink (a ConfigMap's policy.yaml -> ..data/policy.yaml:
// kubelet swaps ..data), and the file the path finally leads to.
std::map<std::string, std::set<std::string>> entriesToWatch(const std::string& path) {
  std::map<std::string, std::set<std::string>> out;
  const fs::path p = fs::absolute(path);
  out[p.parent_path().string()].insert(p.filename().string());
  std::error_code ec;
  if (fs::is_symlink(p, ec)) {
    const fs::path target = fs::read_symlink(p, ec);
    if (!ec && target.is_relative() && !target.empty()) out[p.parent_path().string()].insert(target.begin()->string());
  }
  const fs::path resolved = fs::canonical(p, ec);
  if (!ec) out[resolved.parent_path().string()].insert(resolved.filename().string());
  return out;
}

}  // namespace

void PolicySource::openWatch() {
  inotify_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_ < 0) {
    logger_.warn("inotify unavailable; the policy file is checked every interval instead")
        .str("error", std::strerror(errno));
    return;
  }
  rewatch();
}

// (Re)adds the watches when what the path leads to moved (a ConfigMap's new
// timestamped directory); unchanged watches stay, so no event falls between
// a removal and an addition.
void PolicySource::rewatch() {
  if (inotify_ < 0) return;
  const std::map<std::string, std::set<std::string>> wanted = entriesToWatch(*path_);
  std::map<std::string, std::set<std::string>> have;
  for (const auto& [wd, w] : watched_) have[w.path] = w.names;
  if (have == wanted) return;
  for (const auto& [wd, unused] : watched_) ::inotify_rm_watch(inotify_, wd);
  watched_.clear();
  writing_.clear();  // a close between the removal and the addition would be lost
  for (const auto& [dir, names] : wanted) {
    const int wd = ::inotify_add_watch(inotify_, dir.c_str(), kEvents);
    if (wd < 0) continue;
    WatchedDirectory& w = watched_[wd];
    w.path = dir;
    w.names.insert(names.begin(), names.end());
  }
}

bool PolicySource::drainEvents() {
  bool changed = false;
  lostEvents_ = false;
  alignas(inotify_event) char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(inotify_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return changed;  // EAGAIN: the queue is empty
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      if (e->mask & IN_Q_OVERFLOW) {  // events were lost: look at what is there, read twice
        writing_.clear();
        lostEvents_ = changed = true;
        continue;
      }
      const auto dir = watched_.find(e->wd);
      if (dir == watched_.end() || e->len == 0 || !dir->second.names.count(e->name)) continue;
      const std::string name = e->name;
      candidateDigest_.clear();  // written since the last read: what that read found proves nothing
      if (e->mask & IN_MODIFY) {
        writing_.insert(name);  // a write is under way: wait for its close
      } else if (e->mask & IN_CREATE) {
        // A regular file is empty when created; its IN_CLOSE_WRITE follows.
        // A symlink is complete at once (ln -s, a ConfigMap's ..data_tmp).
        std::error_code ec;
        if (fs::is_symlink(fs::path(dir->second.path) / name, ec)) changed = true;
      } else {
        if (e->mask & (IN_CLOSE_WRITE | IN_MOVED_FROM | IN_DELETE)) writing_.erase(name);
        changed = true;
      }
    }
  }
}

void PolicySource::watchLoop(std::chrono::milliseconds interval) {
  // A change is settled when a writer's close or a rename told us so. A
  // change found otherwise (the first look after start, the stat backstop, a
  // queue overflow) may be a write begun before the watch or whose events
  // were lost: its content is loaded only once read the same twice in a row.
  bool pending = true;      // the file may differ from the active policy
  bool byEvent = false;     // ...and a close or rename says the writer is done
  bool retryLater = false;  // the last read was not settled: wait for an event or the interval
  const int timeoutMs = static_cast<int>(std::min<std::int64_t>(interval.count(), INT_MAX));
  for (;;) {
    pollfd fds[2] = {{wakePipe_[0], POLLIN, 0}, {inotify_, POLLIN, 0}};
    // A reload that is due and not held back by a write goes ahead at once.
    const bool due = inotify_ >= 0 && pending && writing_.empty() && !retryLater;
    const int ready = ::poll(fds, inotify_ >= 0 ? 2 : 1, due ? 0 : timeoutMs);
    retryLater = false;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    if (inotify_ < 0) {  // no events: the stat check alone, with content read twice
      poll();
      continue;
    }
    if (drainEvents()) pending = byEvent = !lostEvents_;
    if (ready == 0 && !due && !(identify() == seen_)) pending = true;  // the backstop: an event missed
    if (!pending || !writing_.empty()) continue;                       // nothing new, or a write not yet closed
    const Identity now = identify();
    if (!now.exists) {
      poll();  // records the failure once
      pending = byEvent = false;
      continue;
    }
    const std::optional<std::string> bytes = readFile(now);
    // Look again after the read: an event queued meanwhile means a writer
    // came back while the file was read, and the bytes may be half of it.
    if (drainEvents()) {
      byEvent = !lostEvents_;
      continue;
    }
    if (!writing_.empty()) continue;
    if (!bytes) {  // unreadable (recorded once) or changing (read again)
      pending = retryLater = !(seen_ == now);
      continue;
    }
    apply(now, *bytes, !byEvent);
    pending = retryLater = !candidateDigest_.empty();  // read once, unsettled: read again later
    byEvent = false;
    rewatch();
  }
}

void PolicySource::start(std::chrono::milliseconds interval) {
  if (!path_ || thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = false;
  }
  if (::pipe2(wakePipe_, O_CLOEXEC | O_NONBLOCK) != 0) wakePipe_[0] = wakePipe_[1] = -1;
  openWatch();
  thread_ = std::thread([this, interval] { watchLoop(interval); });
}

void PolicySource::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  if (wakePipe_[1] >= 0) (void)!::write(wakePipe_[1], "x", 1);
  if (thread_.joinable()) thread_.join();
  for (int& fd : {std::ref(inotify_), std::ref(wakePipe_[0]), std::ref(wakePipe_[1])}) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  watched_.clear();
  writing_.clear();
}

}  // namespace gpuguard::webhook
