#include "lint/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace gpuguard::lint {
namespace {

constexpr std::size_t kStderrLimit = 64 * 1024;

struct Pipe {
  int read = -1, write = -1;
  bool open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    read = fds[0];
    write = fds[1];
    return true;
  }
  void closeRead() { if (read >= 0) ::close(read), read = -1; }
  void closeWrite() { if (write >= 0) ::close(write), write = -1; }
  ~Pipe() { closeRead(); closeWrite(); }
};

// Reads what is available on `fd` into `into` (up to `limit`, the rest is
// drained and dropped, `over` set); false at end of file.
bool drain(int fd, std::string& into, std::size_t limit, bool& over) {
  char buffer[64 * 1024];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  const std::size_t room = into.size() < limit ? limit - into.size() : 0;
  into.append(buffer, std::min(room, static_cast<std::size_t>(n)));
  if (static_cast<std::size_t>(n) > room) over = true;
  return true;
}

}  // namespace

std::optional<std::string> findOnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::string_view rest(path);
  while (true) {
    const std::size_t colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(colon + 1);
  }
}

std::string describeDuration(int ms) {
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
}

CommandResult runCommand(const std::vector<std::string>& argv, std::size_t outputLimit, int timeoutMs,
                         const std::string& directory) {
  CommandResult result;
  Pipe out, err;
  if (argv.empty() || !out.open() || !err.open()) {
    result.error = "cannot start a process: " + std::string(std::strerror(errno));
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO);
  if (!directory.empty()) posix_spawn_file_actions_addchdir_np(&actions, directory.c_str());
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // setpgid(0, 0) in the child: its own process group, killed as a whole.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0].c_str(), &actions, &attributes, args.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  out.closeWrite();
  err.closeWrite();
  if (spawned != 0) {
    result.error = "cannot run " + argv[0] + ": " + std::strerror(spawned);
    return result;
  }

  bool outOpen = true, errOpen = true, outOver = false, errOver = false, timedOut = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  while (outOpen || errOpen) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timedOut = true;
      break;
    }
    pollfd fds[2] = {{outOpen ? out.read : -1, POLLIN, 0}, {errOpen ? err.read : -1, POLLIN, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (outOpen && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) outOpen = drain(out.read, result.out, outputLimit, outOver);
    if (errOpen && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) errOpen = drain(err.read, result.err, kStderrLimit, errOver);
  }
  // The group, not only the child: grandchildren holding the output open
  // (or merely still running) go too. The child is not reaped yet, so the
  // group id cannot have been reused.
  if (timedOut) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOut) {
    result.error = argv[0] + " did not finish within " + describeDuration(timeoutMs) +
                   " (--render-timeout); it and every process it started were stopped";
  } else if (outOver) {
    result.error = argv[0] + " printed more than the input limit of " + std::to_string(outputLimit) + " bytes";
  } else if (WIFSIGNALED(status)) {
    result.error = argv[0] + " was killed by signal " + std::to_string(WTERMSIG(status));
  } else {
    result.ran = true;
    result.exitStatus = WEXITSTATUS(status);
  }
  return result;
}

}  // namespace gpuguard::lint
