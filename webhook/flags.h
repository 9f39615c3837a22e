// Command-line flags of gpuguard-webhook. Names follow kube-apiserver's
// (--tls-cert-file, --tls-private-key-file, --client-ca-file, --bind-address).
// Both --name=value and --name value are accepted.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "https/server.h"
#include "webhook/audit_flags.h"
#include "webhook/log.h"

namespace gpuguard::webhook {

struct Flags {
  std::string tlsCertFile;
  std::string tlsPrivateKeyFile;
  std::uint16_t port = 8443;
  std::string bindAddress = "0.0.0.0";
  std::optional<std::string> policy;
  std::optional<std::string> clientCaFile;
  // An UPDATE review reaches 18 MiB (two objects of up to etcd's 1.5 MiB,
  // escaped by Go's JSON encoder up to six times): docs/webhook.md.
  std::size_t maxRequestBytes = 20 * 1024 * 1024;
  LogLevel logLevel = LogLevel::Info;
  std::chrono::milliseconds policyPollInterval{2000};
  std::chrono::milliseconds certPollInterval{2000};
  std::chrono::milliseconds requestTimeout{10000};
  // Longer than the API server's own idle timeout (Go's 90 s), so that the
  // client closes idle connections: a request racing a server-side close fails.
  std::chrono::milliseconds idleTimeout{120000};
  std::chrono::milliseconds shutdownTimeout{20000};
  unsigned workerThreads = 0;
  unsigned judgeThreads = 0;
  std::size_t judgeOffLoopBytes = 64 * 1024;
  std::size_t judgeQueueLength = 0;  // 0: four per judging thread
  std::chrono::milliseconds handshakeTimeout{5000};
  // The container's memory limit (the chart passes limits.memory); without
  // it, the cgroup's. The connection and handshake caps are derived from it.
  std::optional<std::uint64_t> memoryLimit;
  // Cluster facts (docs/cluster-facts.md): --kubeconfig, --context, else the
  // pod's service account; --cluster-facts=off judges without them.
  std::optional<std::string> kubeconfig;
  std::optional<std::string> kubeContext;
  enum class ClusterFacts { Auto, On, Off } clusterFacts = ClusterFacts::Auto;
  // The background audit (docs/audit.md): off unless asked for.
  AuditFlags audit;
  bool help = false;
  bool version = false;
  bool checkPolicy = false;  // load --policy, report, exit
};

struct FlagsResult {
  Flags flags;
  std::string error;  // empty when the arguments are valid
};

// Parses argv[1..]. Unknown flags, missing values, bad numbers and a missing
// --tls-cert-file/--tls-private-key-file (unless --help, --version or
// --check-policy) are errors.
FlagsResult parseFlags(const std::vector<std::string>& args);

// The HTTPS server's configuration for these flags, with connection and
// handshake caps and a budget for large request bodies that fit
// `memoryLimit` bytes (none: the server's defaults, no body budget).
ServerConfig serverConfig(const Flags& flags, std::optional<std::uint64_t> memoryLimit = std::nullopt);

// The memory limit to size the server for, and where it came from:
// --memory-limit wins, else the cgroup's (`cgroupLimit`), else none.
struct MemoryLimit {
  std::optional<std::uint64_t> bytes;
  std::string source;  // "--memory-limit", "cgroup" or "none"
};
MemoryLimit memoryLimit(const Flags& flags, std::optional<std::uint64_t> cgroupLimit);

// Durations: "2s", "500ms", "1m", "1h"; a bare number is seconds.
std::optional<std::chrono::milliseconds> parseDuration(const std::string& text);
// Byte sizes: "3145728", "512Ki", "3Mi", "1Gi", "3M" (powers of 1000 without the i).
std::optional<std::size_t> parseByteSize(const std::string& text);

extern const char* const kUsage;

}  // namespace gpuguard::webhook
