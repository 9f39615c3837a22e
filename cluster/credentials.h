// The credential each API request carries: a bearer token (written in the
// kubeconfig, read from a token file on every request so that a rotated
// service-account token is picked up, or printed by an exec plugin and cached
// until its expirationTimestamp), or a client certificate (from the
// kubeconfig or from the plugin).
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "cluster/client_config.h"

namespace gpuguard::cluster {

struct Credential {
  std::string token;
  std::string clientCertPem, clientKeyPem;
  std::optional<std::chrono::system_clock::time_point> expires;
};

// Reads a plugin's stdout as client-go does: an ExecCredential of the
// configured apiVersion with a token or a client certificate and key. "" in
// `error` on success.
std::optional<Credential> parseExecCredential(std::string_view output, const std::string& apiVersion, std::string& error);

// RFC 3339 ("2026-12-04T05:00:00Z", "...+02:00", fractions); nullopt when malformed.
std::optional<std::chrono::system_clock::time_point> parseRfc3339(std::string_view text);

// Runs the plugin (stdin /dev/null, KUBERNETES_EXEC_INFO set, every signal
// unblocked, in a process group of its own) and parses what it prints. Its
// group is killed when it has not answered within `timeout` or when `cancel`
// turns true (looked at every 100 ms): a plugin that hangs, as `aws eks
// get-token` does when its SSO endpoint does not answer, never holds up a
// shutdown. Not run at all when `cancel` is already true.
std::optional<Credential> runExecPlugin(const ExecConfig& exec, const ClientConfig& cluster,
                                        std::chrono::milliseconds timeout, std::string& error,
                                        const std::atomic<bool>* cancel = nullptr);

class Authenticator {
 public:
  explicit Authenticator(ClientConfig config, std::chrono::milliseconds execTimeout = std::chrono::seconds(60));

  struct Current {
    std::string authorization;              // "Bearer ...", or "" for none
    std::string clientCertPem, clientKeyPem; // the plugin's, else the kubeconfig's
    std::string error;                       // the plugin or token file failed
  };
  // Thread-safe. Runs the plugin when there is no cached credential or it has
  // expired; `cancel` (the request's) stops a run or keeps one from starting.
  Current current(const std::atomic<bool>* cancel = nullptr);
  // The API server answered 401: the cached plugin credential is dropped, so
  // the next current() runs the plugin again (client-go's behaviour).
  void unauthorized();
  // How many times the plugin ran (for tests and logs).
  int execRuns() const;

 private:
  ClientConfig config_;
  std::chrono::milliseconds execTimeout_;
  mutable std::mutex mutex_;
  std::optional<Credential> cached_;
  int execRuns_ = 0;
};

}  // namespace gpuguard::cluster
