#include "lint/fix/write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <optional>

namespace gpuguard::lint {
namespace {

namespace fs = std::filesystem;
using Status = WriteBackResult::Status;

WriteBackResult failed(std::string why) { return {Status::Failed, std::move(why)}; }
WriteBackResult refused(std::string why) { return {Status::Refused, std::move(why)}; }

std::string errnoText() { return std::strerror(errno); }

bool inside(const fs::path& path, const fs::path& dir) {
  const auto [end, at] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return end == dir.end();
}

// The whole file, or nullopt when it cannot be read.
std::optional<std::string> contentsOf(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return n == 0 ? std::optional(text) : std::nullopt;
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

bool writeAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// A temporary file beside `real` holding `text`, flushed to disk, with the
// mode and owner of `original`. Returns its path, or "" with `why` set.
std::string writeTemporary(const fs::path& real, const struct stat& original, std::string_view text, std::string& why) {
  std::string name = (real.parent_path() / ("." + real.filename().string() + ".gpuguard-XXXXXX")).string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    why = "cannot create a temporary file beside it: " + errnoText();
    return "";
  }
  bool ok = ::fchmod(fd, original.st_mode & 07777) == 0;
  if (!ok) why = "cannot give the new file the mode of the old one: " + errnoText();
  if (ok && (original.st_uid != ::geteuid() || original.st_gid != ::getegid())) {
    ok = ::fchown(fd, original.st_uid, original.st_gid) == 0;
    if (!ok) why = "cannot give the new file the owner of the old one: " + errnoText();
  }
  if (ok && !(ok = writeAll(fd, text))) why = "cannot write the fixed text: " + errnoText();
  if (ok && !(ok = ::fsync(fd) == 0)) why = "cannot flush the fixed text to disk: " + errnoText();
  if (::close(fd) != 0 && ok) {
    ok = false;
    why = "cannot write the fixed text: " + errnoText();
  }
  if (!ok) {
    ::unlink(name.c_str());
    return "";
  }
  return name;
}

void syncDirectory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);  // the rename survives a crash; nothing to undo if this fails
  ::close(fd);
}

}  // namespace

std::string lintedTreeOf(const std::string& file, const std::vector<std::string>& commandLinePaths) {
  const fs::path normal = fs::path(file).lexically_normal();
  std::string best;
  for (const std::string& arg : commandLinePaths) {
    std::error_code ec;
    if (arg == "-" || !fs::is_directory(arg, ec)) continue;
    const fs::path dir = fs::path(arg).lexically_normal();
    if ((dir == "." || inside(normal, dir)) && arg.size() >= best.size()) best = arg;
  }
  if (!best.empty()) return best;
  const fs::path parent = normal.parent_path();
  return parent.empty() ? "." : parent.string();
}

WriteBackResult writeBack(const std::string& path, std::string_view original, std::string_view fixed,
                          const WriteBackOptions& options) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  if (ec) return failed("cannot resolve " + path + ": " + ec.message());
  const fs::path tree = fs::weakly_canonical(options.tree.empty() ? "." : options.tree, ec);
  if (!options.followSymlinks && (ec || !inside(real, tree))) {
    return refused("its real path " + real.string() + " is outside the linted tree " +
                   (options.tree.empty() ? "." : options.tree) +
                   " (a symbolic link); not written, --fix-follow-symlinks writes it");
  }
  struct stat before {};
  if (::stat(real.c_str(), &before) != 0) return failed("cannot stat the file: " + errnoText());
  if (!S_ISREG(before.st_mode)) return refused("not a regular file");
  std::string why;
  const std::string temporary = writeTemporary(real, before, fixed, why);
  if (temporary.empty()) return failed(why + "; the file was left as it was");
  if (options.beforeReplace) options.beforeReplace();
  // Changed since it was read? Its inode and its bytes must be the ones fixed.
  struct stat now {};
  const std::optional<std::string> current = contentsOf(real.string());
  if (::stat(real.c_str(), &now) != 0 || now.st_ino != before.st_ino || now.st_dev != before.st_dev || !current ||
      *current != original) {
    ::unlink(temporary.c_str());
    return refused("the file changed since it was read; left as it is now (run --fix again)");
  }
  if (::rename(temporary.c_str(), real.c_str()) != 0) {
    const std::string reason = errnoText();
    ::unlink(temporary.c_str());
    return failed("cannot replace the file: " + reason + "; the file was left as it was");
  }
  syncDirectory(real.parent_path());
  return {Status::Written, ""};
}

}  // namespace gpuguard::lint
