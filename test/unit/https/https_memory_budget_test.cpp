// The connection and handshake caps derived from the memory limit (issue 23:
// 8,000 partial handshakes took the webhook past its 256 MiB limit), and where
// the limit is read: --memory-limit, else the cgroup, else none.
#include "https/memory_budget.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "test/unit/tls_test_support.h"

namespace gpuguard::webhook {
namespace {

constexpr std::uint64_t kMi = 1024 * 1024;
constexpr ConnectionLimits kDefaults{10000, 10000};

TEST(ConnectionLimits, WithoutAMemoryLimitTheDefaultsStay) {
  const ConnectionLimits limits = connectionLimitsFor(std::nullopt, kDefaults);
  EXPECT_EQ(limits.maxConnections, 10000u);
  EXPECT_EQ(limits.maxHandshakes, 10000u);
}

TEST(ConnectionLimits, TheChartsLimitOf256MiBHoldsWhatFits) {
  const ConnectionLimits limits = connectionLimitsFor(256 * kMi, kDefaults);
  // 160 MiB beyond the reserve: half for connections, a quarter for handshakes.
  EXPECT_EQ(limits.maxConnections, 160 * kMi / 2 / kConnectionCostBytes);
  EXPECT_EQ(limits.maxHandshakes, 160 * kMi / 4 / kHandshakeCostBytes);
  // What they may cost stays under the limit with the reserve.
  EXPECT_LE(limits.maxConnections * kConnectionCostBytes + limits.maxHandshakes * kHandshakeCostBytes +
                kReservedBytes,
            256 * kMi);
}

TEST(ConnectionLimits, ASmallPodKeepsAUsableFloor) {
  const ConnectionLimits limits = connectionLimitsFor(16 * kMi, kDefaults);
  EXPECT_EQ(limits.maxConnections, 64u);
  EXPECT_EQ(limits.maxHandshakes, 16u);
}

TEST(ConnectionLimits, ALargeLimitNeverRaisesTheDefaults) {
  const ConnectionLimits limits = connectionLimitsFor(64 * 1024 * kMi, {2000, 500});
  EXPECT_EQ(limits.maxConnections, 2000u);
  EXPECT_EQ(limits.maxHandshakes, 500u);
}

TEST(ConnectionLimits, HandshakesNeverOutnumberConnections) {
  const ConnectionLimits limits = connectionLimitsFor(1024 * kMi, {100, 10000});
  EXPECT_EQ(limits.maxConnections, 100u);
  EXPECT_EQ(limits.maxHandshakes, 100u);
}

// The largest review the API server sends: an UPDATE of two objects of
// etcd's 1.5 MiB, every byte a string byte Go's encoder writes as \u0026.
constexpr std::uint64_t kLargestReview = 2 * 6 * 3 * kMi / 2;

TEST(BodyBudget, WithoutAMemoryLimitThereIsNone) { EXPECT_EQ(bodyBudgetFor(std::nullopt), SIZE_MAX); }

TEST(BodyBudget, TheChartsLimitOf256MiBTakesTheLargestReviewTheApiServerSends) {
  const std::size_t bodies = bodyBudgetFor(256 * kMi);
  EXPECT_GE(bodies, kLargestReview);
  // Connections, handshakes, the program and the bodies at what they cost
  // all fit in the limit.
  const ConnectionLimits caps = connectionLimitsFor(256 * kMi, kDefaults);
  EXPECT_LE(caps.maxConnections * kConnectionCostBytes + caps.maxHandshakes * kHandshakeCostBytes +
                (kReservedBytes - kJudgingReserveBytes) + bodies * kBodyCostFactor,
            256 * kMi);
}

TEST(BodyBudget, GrowsWithTheLimitAndNeverTakesMoreThanHalfOfIt) {
  std::size_t last = 0;
  for (std::uint64_t limit : {16 * kMi, 64 * kMi, 128 * kMi, 256 * kMi, 1024 * kMi, 64 * 1024 * kMi}) {
    const std::size_t bodies = bodyBudgetFor(limit);
    EXPECT_GT(bodies, last) << limit;
    EXPECT_LE(bodies * kBodyCostFactor, limit / 2) << limit;
    last = bodies;
  }
}

TEST(CgroupMemoryLimit, ReadsTheFileFormats) {
  EXPECT_EQ(parseCgroupMemoryLimit("268435456\n"), 268435456u);
  EXPECT_EQ(parseCgroupMemoryLimit("max\n"), std::nullopt);                  // v2: no limit
  EXPECT_EQ(parseCgroupMemoryLimit("9223372036854771712\n"), std::nullopt);  // v1: no limit
  EXPECT_EQ(parseCgroupMemoryLimit(""), std::nullopt);
  EXPECT_EQ(parseCgroupMemoryLimit("256Mi"), std::nullopt);
}

class FakeCgroupRoot : public ::testing::Test {
 protected:
  void put(const std::string& relative, const std::string& content) {
    const std::filesystem::path path = dir.path() / relative;
    std::filesystem::create_directories(path.parent_path());
    dir.write(relative, content);
  }
  std::string root() const { return dir.path().string(); }
  gpuguard::testing::tls::TempDir dir;
};

TEST_F(FakeCgroupRoot, V2ReadsTheProcesssOwnCgroup) {
  put("kubepods/pod1/webhook/memory.max", "268435456\n");
  put("memory.max", "max\n");
  EXPECT_EQ(cgroupMemoryLimit("0::/kubepods/pod1/webhook\n", root()), 256 * kMi);
}

TEST_F(FakeCgroupRoot, V2InsideACgroupNamespaceReadsTheRoot) {
  put("memory.max", "134217728\n");
  EXPECT_EQ(cgroupMemoryLimit("0::/\n", root()), 128 * kMi);
}

TEST_F(FakeCgroupRoot, V1ReadsTheMemoryHierarchy) {
  put("memory/kubepods/pod1/memory.limit_in_bytes", "268435456\n");
  EXPECT_EQ(cgroupMemoryLimit("12:pids:/kubepods/pod1\n4:memory:/kubepods/pod1\n0::/\n", root()), 256 * kMi);
  EXPECT_EQ(cgroupMemoryLimit("4:cpu,memory:/kubepods/pod1\n", root()), 256 * kMi);
}

TEST_F(FakeCgroupRoot, NoLimitAnywhereIsNone) {
  put("memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(cgroupMemoryLimit("4:memory:/\n", root()), std::nullopt);
  EXPECT_EQ(cgroupMemoryLimit("", root() + "/nowhere"), std::nullopt);
}

}  // namespace
}  // namespace gpuguard::webhook
