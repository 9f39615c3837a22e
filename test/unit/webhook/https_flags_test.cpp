// The flags that size the HTTPS server (issue 23): --memory-limit wins over the
// cgroup's limit, which wins over the defaults; --handshake-timeout.
#include <gtest/gtest.h>

#include "webhook/flags.h"
#include "https/memory_budget.h"

namespace gpuguard::webhook {
namespace {

constexpr std::uint64_t kMi = 1024 * 1024;

Flags parsed(std::vector<std::string> extra) {
  std::vector<std::string> args{"--tls-cert-file=c", "--tls-private-key-file=k"};
  args.insert(args.end(), extra.begin(), extra.end());
  const FlagsResult r = parseFlags(args);
  EXPECT_EQ(r.error, "");
  return r.flags;
}

TEST(MemoryLimitFlag, WinsOverTheCgroup) {
  const Flags flags = parsed({"--memory-limit=256Mi"});
  const MemoryLimit limit = memoryLimit(flags, 1024 * kMi);
  EXPECT_EQ(limit.bytes, 256 * kMi);
  EXPECT_EQ(limit.source, "--memory-limit");
}

TEST(MemoryLimitFlag, WithoutItTheCgroupsLimitCountsThenNone) {
  const Flags flags = parsed({});
  EXPECT_EQ(memoryLimit(flags, 512 * kMi).bytes, 512 * kMi);
  EXPECT_EQ(memoryLimit(flags, 512 * kMi).source, "cgroup");
  EXPECT_EQ(memoryLimit(flags, std::nullopt).bytes, std::nullopt);
  EXPECT_EQ(memoryLimit(flags, std::nullopt).source, "none");
}

TEST(MemoryLimitFlag, SizesTheServersCaps) {
  const Flags flags = parsed({"--memory-limit=268435456"});  // bytes, as the Downward API writes limits.memory
  const ServerConfig sized = serverConfig(flags, flags.memoryLimit);
  const ConnectionLimits expected = connectionLimitsFor(256 * kMi, {10000, 10000});
  EXPECT_EQ(sized.maxConnections, expected.maxConnections);
  EXPECT_EQ(sized.maxHandshakes, expected.maxHandshakes);
  EXPECT_LT(sized.maxConnections, 10000u);

  EXPECT_EQ(sized.bodyBudgetBytes, bodyBudgetFor(256 * kMi));

  const ServerConfig unsized = serverConfig(parsed({}), std::nullopt);
  EXPECT_EQ(unsized.maxConnections, 10000u);
  EXPECT_EQ(unsized.bodyBudgetBytes, SIZE_MAX);
}

TEST(MaxRequestBytesFlag, TakesTheLargestReviewTheApiServerSendsByDefault) {
  // Two objects of etcd's 1.5 MiB, escaped up to six times (docs/webhook.md).
  EXPECT_GE(serverConfig(parsed({})).maxBodyBytes, 2 * 6 * 3 * kMi / 2);
  EXPECT_EQ(serverConfig(parsed({"--max-request-bytes=3Mi"})).maxBodyBytes, 3 * kMi);
}

TEST(MemoryLimitFlag, RefusesWhatIsNoUsableLimit) {
  for (const char* bad : {"--memory-limit=1Mi", "--memory-limit=lots", "--memory-limit="}) {
    EXPECT_NE(parseFlags({"--tls-cert-file=c", "--tls-private-key-file=k", bad}).error, "") << bad;
  }
}

TEST(HandshakeTimeoutFlag, SetsTheServersHandshakeTimeout) {
  EXPECT_EQ(serverConfig(parsed({"--handshake-timeout=2s"})).handshakeTimeout, std::chrono::seconds(2));
  EXPECT_EQ(serverConfig(parsed({})).handshakeTimeout, std::chrono::seconds(5));
}

TEST(JudgeQueueLengthFlag, SetsTheServersQueue) {
  EXPECT_EQ(serverConfig(parsed({"--judge-queue-length=3"})).maxQueuedJudgements, 3u);
  EXPECT_EQ(serverConfig(parsed({})).maxQueuedJudgements, 0u);
}

}  // namespace
}  // namespace gpuguard::webhook

namespace gpuguard::webhook {
namespace {

TEST(Usage, DocumentsTheFlagsThatSizeTheServer) {
  const std::string usage = kUsage;
  for (const char* flag : {"--memory-limit=SIZE", "--handshake-timeout=DUR", "--judge-queue-length=N"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace gpuguard::webhook
