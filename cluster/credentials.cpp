#include "cluster/credentials.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <fstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace gpuguard::cluster {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxPluginOutput = 1u << 20;

std::string encodeBase64(std::string_view data) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned value = 0;
  int bits = 0;
  for (unsigned char c : data) {
    value = (value << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kDigits[(value >> bits) & 63]);
    }
  }
  if (bits > 0) out.push_back(kDigits[(value << (6 - bits)) & 63]);
  while (out.size() % 4 != 0) out.push_back('=');
  return out;
}

std::string execInfo(const ExecConfig& exec, const ClientConfig& cluster) {
  json info = {{"kind", "ExecCredential"}, {"apiVersion", exec.apiVersion}, {"spec", {{"interactive", false}}}};
  if (exec.provideClusterInfo) {
    json c = {{"server", cluster.server}};
    if (!cluster.tls.caPem.empty()) c["certificate-authority-data"] = encodeBase64(cluster.tls.caPem);
    if (cluster.tls.insecureSkipVerify) c["insecure-skip-tls-verify"] = true;
    if (!cluster.tls.serverName.empty()) c["tls-server-name"] = cluster.tls.serverName;
    info["spec"]["cluster"] = std::move(c);
  }
  return info.dump();
}

// The environment of the plugin: ours, then the kubeconfig's env entries, then KUBERNETES_EXEC_INFO.
std::vector<std::string> pluginEnvironment(const ExecConfig& exec, const ClientConfig& cluster) {
  std::vector<std::pair<std::string, std::string>> added = exec.env;
  added.emplace_back("KUBERNETES_EXEC_INFO", execInfo(exec, cluster));
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [n, v] : added) replaced = replaced || n == name;
    if (!replaced) out.emplace_back(entry);
  }
  for (const auto& [n, v] : added) out.push_back(n + "=" + v);
  return out;
}

// How a plugin's run ended.
enum class Ended { Finished, TimedOut, Cancelled };

// How often a plugin's run looks at its cancel flag.
constexpr std::chrono::milliseconds kCancelCheck(100);

bool cancelled(const std::atomic<bool>* cancel) { return cancel != nullptr && cancel->load(); }

// Reads stdout and stderr until both close (the caps kept), the deadline or a cancel.
Ended drain(int outFd, int errFd, std::string& out, std::string& err, Clock::time_point deadline,
            const std::atomic<bool>* cancel) {
  pollfd fds[2] = {{outFd, POLLIN, 0}, {errFd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open = 2;
  while (open > 0) {
    if (cancelled(cancel)) return Ended::Cancelled;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Ended::TimedOut;
    if (cancel != nullptr) left = std::min<long>(left, kCancelCheck.count());
    if (poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR) return Ended::TimedOut;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[8192];
      const long n = read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        fds[i].fd = -1;
        --open;
      } else if (sinks[i]->size() < kMaxPluginOutput) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      }
    }
  }
  return Ended::Finished;
}

// Starts the plugin in a process group of its own, so that a kill reaches
// whatever it started too, with no signal blocked and SIGTERM, SIGINT, SIGHUP
// and SIGPIPE at their defaults: a child inherits both the signal mask and
// ignored signals, and the webhook blocks the first three in its threads to
// wait for them (a plugin that inherited that mask outlived the webhook).
int spawnPlugin(pid_t& pid, const std::string& command, char* const argv[], char* const envp[], int outFd, int errFd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, outFd, 1);
  posix_spawn_file_actions_adddup2(&actions, errFd, 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (const int signal : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) sigaddset(&defaults, signal);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  const int spawned = posix_spawnp(&pid, command.c_str(), &actions, &attributes, argv, envp);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  return spawned;
}

// The plugin's wait status. Its process group is killed first when `kill`,
// and when it has not exited by the deadline or a cancel (a plugin may close
// its output and go on running).
int waitChild(pid_t pid, bool kill, Clock::time_point deadline, const std::atomic<bool>* cancel) {
  if (kill) ::kill(-pid, SIGKILL);
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    int status = 0;
    const pid_t reaped = waitpid(pid, &status, kill ? 0 : WNOHANG);
    if (reaped == pid) return status;
    if (reaped < 0 && errno != EINTR) return -1;  // not our child any more: reported as killed
    if (reaped == 0 && (Clock::now() >= deadline || cancelled(cancel))) {
      ::kill(-pid, SIGKILL);
      kill = true;
    } else if (reaped == 0) {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
  }
}

std::string firstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> parseRfc3339(std::string_view text) {
  int y, mo, d, h, mi, s;
  if (text.size() < 20 || std::sscanf(std::string(text.substr(0, 19)).c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h,
                                      &mi, &s) != 6 ||
      text[4] != '-' || text[7] != '-' || (text[10] != 'T' && text[10] != 't')) {
    return std::nullopt;
  }
  std::string_view rest = text.substr(19);
  if (!rest.empty() && rest.front() == '.') {
    rest.remove_prefix(1);
    while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') rest.remove_prefix(1);
  }
  long offset = 0;
  if (rest == "Z" || rest == "z") {
  } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
    int oh = 0, om = 0;
    std::from_chars(rest.data() + 1, rest.data() + 3, oh);
    std::from_chars(rest.data() + 4, rest.data() + 6, om);
    offset = (rest[0] == '+' ? 1 : -1) * (oh * 3600L + om * 60L);
  } else {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  // system_clock counts nanoseconds in 64 bits: it ends in 2262. Later is "never".
  if (y >= 2262) return std::chrono::system_clock::time_point::max();
  return std::chrono::system_clock::from_time_t(timegm(&tm) - offset);
}

std::optional<Credential> parseExecCredential(std::string_view output, const std::string& apiVersion, std::string& error) {
  const json doc = json::parse(output, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    error = "the plugin did not print a JSON ExecCredential";
    return std::nullopt;
  }
  if (doc.value("kind", "") != "ExecCredential") {
    error = "the plugin printed kind \"" + doc.value("kind", "") + "\", want ExecCredential";
    return std::nullopt;
  }
  if (doc.value("apiVersion", "") != apiVersion) {
    error = "the plugin printed apiVersion \"" + doc.value("apiVersion", "") + "\", the kubeconfig asks for " + apiVersion;
    return std::nullopt;
  }
  const auto status = doc.find("status");
  if (status == doc.end() || !status->is_object()) {
    error = "the plugin's ExecCredential has no status";
    return std::nullopt;
  }
  Credential c;
  auto text = [&](const char* key) {
    auto it = status->find(key);
    return it != status->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  c.token = text("token");
  c.clientCertPem = text("clientCertificateData");
  c.clientKeyPem = text("clientKeyData");
  if (c.clientCertPem.empty() != c.clientKeyPem.empty()) {
    error = "the plugin's ExecCredential has only one of status.clientCertificateData and status.clientKeyData";
    return std::nullopt;
  }
  if (c.token.empty() && c.clientCertPem.empty()) {
    error = "the plugin's ExecCredential has neither status.token nor status.clientCertificateData";
    return std::nullopt;
  }
  if (const std::string expiry = text("expirationTimestamp"); !expiry.empty()) {
    c.expires = parseRfc3339(expiry);
    if (!c.expires) {
      error = "status.expirationTimestamp: Invalid value: \"" + expiry + "\": want RFC 3339";
      return std::nullopt;
    }
  }
  return c;
}

namespace {

std::string durationText(std::chrono::milliseconds timeout) {
  return timeout.count() % 1000 == 0 ? std::to_string(timeout.count() / 1000) + " s"
                                     : std::to_string(timeout.count()) + " ms";
}

// The credential a finished run printed, or what went wrong in `error`.
std::optional<Credential> credentialOf(const ExecConfig& exec, Ended ended, int status,
                                       std::chrono::milliseconds timeout, const std::string& stdoutText,
                                       const std::string& stderrText, std::string& error) {
  if (ended == Ended::Cancelled) {
    error = "exec plugin " + exec.command + ": stopped, the request was cancelled (killed)";
    return std::nullopt;
  }
  if (ended == Ended::TimedOut) {
    error = "exec plugin " + exec.command + ": no answer within " + durationText(timeout) + " (killed)";
    return std::nullopt;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = "exec plugin " + exec.command + " failed (" +
            (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status)) : std::string("killed by a signal")) +
            ")" + (stderrText.empty() ? "" : ": " + firstLine(stderrText));
    return std::nullopt;
  }
  std::optional<Credential> credential = parseExecCredential(stdoutText, exec.apiVersion, error);
  if (!credential) error = "exec plugin " + exec.command + ": " + error;
  return credential;
}

}  // namespace

std::optional<Credential> runExecPlugin(const ExecConfig& exec, const ClientConfig& cluster,
                                        std::chrono::milliseconds timeout, std::string& error,
                                        const std::atomic<bool>* cancel) {
  if (exec.interactiveMode == "Always") {
    error = "exec plugin " + exec.command + ": interactiveMode Always needs a terminal, which gpuguard never has";
    return std::nullopt;
  }
  if (cancelled(cancel)) {
    error = "exec plugin " + exec.command + ": not run, the request was cancelled";
    return std::nullopt;
  }
  std::vector<std::string> env = pluginEnvironment(exec, cluster);
  std::vector<char*> envp, argv;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string command = exec.command;
  std::vector<std::string> args = exec.args;
  argv.push_back(command.data());
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    error = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  pid_t pid = 0;
  const int spawned = spawnPlugin(pid, command, argv.data(), envp.data(), out[1], err[1]);
  close(out[1]);
  close(err[1]);
  std::string stdoutText, stderrText;
  const Clock::time_point deadline = Clock::now() + timeout;
  const Ended ended = spawned == 0 ? drain(out[0], err[0], stdoutText, stderrText, deadline, cancel) : Ended::Finished;
  close(out[0]);
  close(err[0]);
  if (spawned != 0) {
    error = "exec plugin " + exec.command + ": " + std::strerror(spawned) +
            (exec.installHint.empty() ? "" : " (" + exec.installHint + ")");
    return std::nullopt;
  }
  const int status = waitChild(pid, ended != Ended::Finished, deadline, cancel);
  return credentialOf(exec, ended, status, timeout, stdoutText, stderrText, error);
}

Authenticator::Authenticator(ClientConfig config, std::chrono::milliseconds execTimeout)
    : config_(std::move(config)), execTimeout_(execTimeout) {}

Authenticator::Current Authenticator::current(const std::atomic<bool>* cancel) {
  Current out;
  out.clientCertPem = config_.tls.clientCertPem;
  out.clientKeyPem = config_.tls.clientKeyPem;
  std::string token = config_.credentials.token;
  if (token.empty() && !config_.credentials.tokenFile.empty()) {
    std::ifstream in(config_.credentials.tokenFile);
    std::getline(in, token, '\0');
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
    if (token.empty()) out.error = "cannot read the token file " + config_.credentials.tokenFile;
  }
  if (config_.credentials.exec && token.empty()) {
    std::lock_guard lock(mutex_);
    const bool expired = cached_ && cached_->expires && *cached_->expires <= std::chrono::system_clock::now();
    if (!cached_ || expired) {
      cached_.reset();
      if (!cancelled(cancel)) ++execRuns_;
      std::string error;
      cached_ = runExecPlugin(*config_.credentials.exec, config_, execTimeout_, error, cancel);
      if (!cached_) out.error = error;
    }
    if (cached_) {
      token = cached_->token;
      if (!cached_->clientCertPem.empty()) {
        out.clientCertPem = cached_->clientCertPem;
        out.clientKeyPem = cached_->clientKeyPem;
      }
    }
  }
  if (!token.empty()) out.authorization = "Bearer " + token;
  return out;
}

void Authenticator::unauthorized() {
  std::lock_guard lock(mutex_);
  cached_.reset();
}

int Authenticator::execRuns() const {
  std::lock_guard lock(mutex_);
  return execRuns_;
}

}  // namespace gpuguard::cluster
