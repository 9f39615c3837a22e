// Helpers for the gpuguard-lint tests that run the built binary, as users,
// pre-commit and CI do: arguments, standard input, a working directory and a
// time limit in; exit status, stdout and stderr out.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gpuguard::lint_test {

inline std::string lintBinary() { return GPUGUARD_BINARY_DIR "/gpuguard-lint"; }
inline std::string sourceDir() { return GPUGUARD_SOURCE_DIR; }

struct RunResult {
  int exitCode = -1;  // -1: killed by a signal or timed out
  int signal = 0;
  bool timedOut = false;
  double seconds = 0;
  std::string out;
  std::string err;
};

// Runs argv[0] (a path) with the arguments, feeding `input` on stdin.
inline RunResult runCommand(const std::vector<std::string>& argv, const std::string& input = "",
                            const std::string& cwd = "", int timeoutSeconds = 120,
                            const std::vector<std::string>& env = {}) {
  RunResult r;
  // Everything the child needs is built before fork(): the tests' fake
  // servers run threads, and a child of a threaded process may only make
  // async-signal-safe calls (an allocator lock held by another thread at the
  // fork, ASan's included, would hang the child's first malloc forever).
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto overridden = [&env](std::string_view entry) {
    const std::string_view name = entry.substr(0, entry.find('=') + 1);
    for (const std::string& e : env) {
      if (e.starts_with(name)) return true;
    }
    return false;
  };
  std::vector<char*> environment;  // the test's environment, `env` set over it
  for (char** e = environ; *e != nullptr; ++e) {
    if (!overridden(*e)) environment.push_back(*e);
  }
  for (const std::string& e : env) environment.push_back(const_cast<char*>(e.c_str()));
  environment.push_back(nullptr);
  int inPipe[2], outPipe[2], errPipe[2];
  if (pipe(inPipe) || pipe(outPipe) || pipe(errPipe)) return r;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(inPipe[0], 0);
    dup2(outPipe[1], 1);
    dup2(errPipe[1], 2);
    for (int fd : {inPipe[0], inPipe[1], outPipe[0], outPipe[1], errPipe[0], errPipe[1]}) close(fd);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    execvpe(args[0], args.data(), environment.data());
    _exit(127);
  }
  close(inPipe[0]);
  close(outPipe[1]);
  close(errPipe[1]);
  signal(SIGPIPE, SIG_IGN);
  fcntl(inPipe[1], F_SETFL, O_NONBLOCK);
  std::size_t written = 0;
  int inFd = inPipe[1];
  if (input.empty()) {
    close(inFd);
    inFd = -1;
  }
  bool outOpen = true, errOpen = true;
  const auto deadline = start + std::chrono::seconds(timeoutSeconds);
  char buf[65536];
  while (outOpen || errOpen) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timedOut = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd fds[3] = {{outOpen ? outPipe[0] : -1, POLLIN, 0}, {errOpen ? errPipe[0] : -1, POLLIN, 0}, {inFd, POLLOUT, 0}};
    if (poll(fds, 3, static_cast<int>(std::min<long long>(left.count(), 1000))) < 0 && errno != EINTR) break;
    for (int k = 0; k < 2; ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[k].fd, buf, sizeof buf);
      if (n > 0) (k == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
      else (k == 0 ? outOpen : errOpen) = false;
    }
    if (inFd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = write(inFd, input.data() + written, std::min<std::size_t>(input.size() - written, 1 << 20));
      if (n > 0) written += static_cast<std::size_t>(n);
      if (n < 0 && errno != EAGAIN) written = input.size();
      if (written >= input.size()) {
        close(inFd);
        inFd = -1;
      }
    }
  }
  if (inFd >= 0) close(inFd);
  close(outPipe[0]);
  close(errPipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status) && !r.timedOut) r.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

inline RunResult runLint(std::vector<std::string> args, const std::string& input = "", const std::string& cwd = "",
                         int timeoutSeconds = 120) {
  args.insert(args.begin(), lintBinary());
  return runCommand(args, input, cwd, timeoutSeconds);
}

inline std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The linter's --format json report on stdout (a test failure when it is not JSON).
inline nlohmann::json parseJson(const RunResult& r) {
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "stdout is not JSON:\n" << r.out << "\nstderr:\n" << r.err;
  return j;
}

// The rule ids of a JSON report's findings, in report order.
inline std::vector<std::string> rulesOf(const nlohmann::json& report) {
  std::vector<std::string> out;
  for (const nlohmann::json& f : report["findings"]) out.push_back(f["rule"]);
  return out;
}

// A fresh directory under the system temp dir, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("gpuguard-lint-test-" + std::to_string(getpid()) + "-" +
                                                      std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::filesystem::path write(const std::string& relative, std::string_view content) const {
    const std::filesystem::path p = path_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

 private:
  std::filesystem::path path_;
};

// An executable shell script `name` in dir/bin: a fake helm, kustomize or kubectl.
inline void writeScript(const TempDir& dir, const std::string& name, const std::string& body) {
  const std::filesystem::path p = dir.write("bin/" + name, "#!/bin/sh\n" + body);
  std::filesystem::permissions(p, std::filesystem::perms::owner_all);
}

// gpuguard-lint in `dir` with dir/bin first on PATH.
inline RunResult runLintWithFakes(std::vector<std::string> args, const TempDir& dir) {
  args.insert(args.begin(), lintBinary());
  return runCommand(args, "", dir.str(), 120, {"PATH=" + dir.str() + "/bin:" + std::getenv("PATH")});
}

// Manifests the tests share.
inline constexpr const char* kGoodPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: good
spec:
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  nodeSelector:
    nvidia.com/cuda.driver-version.major: "550"
  containers:
  - name: cuda
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      limits:
        nvidia.com/gpu: 1
)";

// One error: gpu-fractional on line 17, column 25.
inline constexpr const char* kFractionalPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: fractional
spec:
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  nodeSelector:
    nvidia.com/cuda.driver-version.major: "550"
  containers:
  - name: cuda
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      limits:
        nvidia.com/gpu: "0.5"
)";

}  // namespace gpuguard::lint_test
