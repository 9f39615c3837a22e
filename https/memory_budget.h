// How many connections and TLS handshakes fit in the webhook's memory limit.
//
// The chart limits the container to 256 MiB; the server's defaults (10,000
// connections) were made for a machine, not a container: 8,000 clients that
// each sent 40 bytes of a ClientHello took the red team's webhook to 397 MB and
// an OOM kill. The limit comes from --memory-limit (the chart and kustomize
// pass the container's limits.memory through the Downward API), else from the
// cgroup (v2 memory.max, v1 memory.limit_in_bytes), else there is none and the
// defaults stay.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuguard::webhook {

struct ConnectionLimits {
  std::size_t maxConnections = 0;  // open connections; the oldest handshake is closed for a new one beyond
  std::size_t maxHandshakes = 0;   // TLS handshakes in progress (OpenSSL state allocated)
};

// What one connection costs, measured on Debian 12's OpenSSL 3.0 (see
// docs/reliability.md, "Issue 23"): the server's own Connection, OpenSSL's
// SSL object and the kernel's socket (charged to the cgroup too), with room for
// a request head and OpenSSL's read buffer while a request is received.
inline constexpr std::size_t kConnectionCostBytes = 48 * 1024;
// A handshake in progress adds OpenSSL's handshake buffer (16 KiB), its read
// and write buffers and the key exchange.
inline constexpr std::size_t kHandshakeCostBytes = 64 * 1024;
// Kept out of the connections' share: the program, the policy, the judging of
// large objects, the allocator's slack.
inline constexpr std::size_t kReservedBytes = 96 * 1024 * 1024;
// Of kReservedBytes, what the judging of large requests may use (the rest is
// the program, the policy, the cluster facts and the allocator's slack).
inline constexpr std::size_t kJudgingReserveBytes = 64 * 1024 * 1024;
// What a request body costs while held, per byte of it: its buffer, the copy
// the handler gets and the JSON tree the review builds. Measured with
// gpuguard-webhook's peak RSS around one review (docs/webhook.md, "Request
// size"): 4.5 for Deployment UPDATEs of 14,000 and 30,000 env vars (3.3 and
// 7.1 MB), 2.0 for an 18 MB one whose strings are escaped (\u0026).
inline constexpr std::size_t kBodyCostFactor = 5;

// The caps for `memoryLimit` bytes: half of what the reserve leaves (at least
// a quarter of the limit) for connections, a quarter for handshakes, never
// above `defaults` nor below a floor that keeps a small pod usable (64
// connections, 16 handshakes). Without a limit: `defaults`.
ConnectionLimits connectionLimitsFor(std::optional<std::uint64_t> memoryLimit, ConnectionLimits defaults);

// The bytes of large request bodies that may be held at once
// (ServerConfig::bodyBudgetBytes) for `memoryLimit` bytes: the quarter of
// what the reserve leaves that connections and handshakes do not take, plus
// kJudgingReserveBytes, at most half the limit, each body counted
// kBodyCostFactor times. 256 MiB: 20.8 MiB of bodies, so that one review of
// the largest size the API server sends (18 MiB) fits. Without a limit:
// SIZE_MAX (no budget).
std::size_t bodyBudgetFor(std::optional<std::uint64_t> memoryLimit);

// The memory limit of the cgroup this process is in, or nullopt when there is
// none ("max", or v1's "no limit" near 2^63) or it cannot be read.
// `procSelfCgroup` is the text of /proc/self/cgroup; `cgroupRoot` where the
// hierarchies are mounted (/sys/fs/cgroup). Looks in the process's own cgroup
// first, then at the root of the mount (inside a container with a cgroup
// namespace the root is the container's cgroup).
std::optional<std::uint64_t> cgroupMemoryLimit(std::string_view procSelfCgroup, const std::string& cgroupRoot);
std::optional<std::uint64_t> cgroupMemoryLimit();  // this process, /sys/fs/cgroup

// One memory.max or memory.limit_in_bytes file's content: a byte count, or
// nullopt for "max" and values that mean no limit.
std::optional<std::uint64_t> parseCgroupMemoryLimit(std::string_view content);

}  // namespace gpuguard::webhook
