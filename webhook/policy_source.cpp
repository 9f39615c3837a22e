#include "webhook/policy_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "audit/sha256.h"
#include "yaml/policy_file.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::webhook {
namespace {

bool sameTimes(const struct stat& a, const struct stat& b) {
  return a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

enum class ReadOutcome { Complete, Changing, Unreadable };

// The whole file through one descriptor. Changing: its size or times moved
// while it was read (a writer is at work), so the bytes may be half of it.
ReadOutcome readWhole(const std::string& path, std::string& bytes, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot open: " + std::string(std::strerror(errno));
    return ReadOutcome::Unreadable;
  }
  struct stat before {}, after {};
  bytes.clear();
  bool ok = ::fstat(fd, &before) == 0;
  char buffer[16384];
  for (ssize_t n = 0; ok && (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    else bytes.append(buffer, static_cast<std::size_t>(n));
  }
  if (!ok) error = "cannot read: " + std::string(std::strerror(errno));
  ok = ok && ::fstat(fd, &after) == 0;
  ::close(fd);
  if (!ok) return ReadOutcome::Unreadable;
  const bool settled = sameTimes(before, after) && static_cast<std::size_t>(after.st_size) == bytes.size();
  return settled ? ReadOutcome::Complete : ReadOutcome::Changing;
}

}  // namespace

LoadedPolicy parsePolicyText(const std::string& text, const std::string& source) {
  // A file caught between truncation and write is empty; before issue 23 it
  // loaded as "the defaults". A policy file must say what it wants ({} is
  // the defaults).
  const yaml::ParseResult parsed = yaml::parseStream(text);
  if (!parsed.error && (parsed.documents.empty() || parsed.documents.front().value.is_null())) {
    throw PolicyError(source + ": holds no policy document (empty or truncated; write {} for the built-in defaults)");
  }
  return {std::make_shared<const AdmissionPolicy>(AdmissionPolicy::from(yaml::parsePolicy(text, source))), audit::sha256Hex(text)};
}

LoadedPolicy loadPolicy(const std::string& path) {
  std::string bytes, error;
  if (readWhole(path, bytes, error) == ReadOutcome::Unreadable) throw PolicyError(path + ": " + error);
  return parsePolicyText(bytes, path);
}

PolicySource::PolicySource(std::optional<std::string> path, const Logger& logger)
    : path_(std::move(path)), logger_(logger) {
  if (path_) {
    seen_ = identify();
    LoadedPolicy loaded = loadPolicy(*path_);
    policy_.store(std::move(loaded.policy), std::memory_order_release);
    activeDigest_ = std::move(loaded.digest);
  } else {
    policy_.store(std::make_shared<const AdmissionPolicy>(), std::memory_order_release);
  }
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

void PolicySource::recordFailure(const std::string& error) {
  failures_.fetch_add(1, std::memory_order_relaxed);
  logger_.error("policy reload failed; keeping the active policy").str("path", *path_).str("error", error);
}

bool PolicySource::poll() {
  if (!path_) return false;
  const Identity now = identify();
  if (now == seen_) return false;
  if (!now.exists) {
    // A ConfigMap update briefly has no file; a deleted one keeps the policy.
    seen_ = now;
    recordFailure(std::string("cannot stat: ") + std::strerror(now.error));
    return false;
  }
  const std::optional<std::string> bytes = readFile(now);
  return bytes && apply(now, *bytes, !watchesEvents());
}

std::optional<std::string> PolicySource::readFile(const Identity& now) {
  std::string bytes, error;
  switch (readWhole(*path_, bytes, error)) {
    case ReadOutcome::Unreadable:
      seen_ = now;
      recordFailure(error);
      return std::nullopt;
    case ReadOutcome::Changing: return std::nullopt;  // seen_ kept: the next check reads it again
    case ReadOutcome::Complete: break;
  }
  return bytes;
}

bool PolicySource::apply(const Identity& now, const std::string& bytes, bool requireRepeat) {
  const std::string digest = audit::sha256Hex(bytes);
  if (digest == activeDigest_) {  // the same policy written again: nothing to do
    seen_ = now;
    candidateDigest_.clear();
    return false;
  }
  std::optional<LoadedPolicy> loaded;
  std::string error;
  try {
    loaded = parsePolicyText(bytes, *path_);
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Read once, content is settled only when write events said so. Content
  // that does not load is held back too: a file truncated for a rewrite is
  // empty for an instant before the kernel queues the event that says so. It
  // counts as a failure when read the same again.
  if ((requireRepeat || !loaded) && digest != candidateDigest_) {
    candidateDigest_ = digest;
    return false;
  }
  candidateDigest_.clear();
  seen_ = now;
  if (!loaded) {
    recordFailure(error);
    return false;
  }
  policy_.store(std::move(loaded->policy), std::memory_order_release);
  activeDigest_ = digest;
  successes_.fetch_add(1, std::memory_order_relaxed);
  logger_.info("policy reloaded").str("path", *path_);
  return true;
}

}  // namespace gpuguard::webhook
