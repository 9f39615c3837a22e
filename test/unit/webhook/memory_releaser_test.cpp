// webhook/malloc_tuning.h's MemoryReleaser: a large request's memory is given
// back on a thread of its own (malloc_trim may wait for an audit thread that
// holds its arena), so request() returns at once and releases coalesce.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "webhook/malloc_tuning.h"

namespace gpuguard::webhook {
namespace {

template <typename Predicate>
bool eventually(Predicate&& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(MemoryReleaserTest, NothingIsReleasedUntilAsked) {
  MemoryReleaser releaser;
  EXPECT_EQ(releaser.releases(), 0u);
}

TEST(MemoryReleaserTest, ARequestIsServedOnTheReleasersThread) {
  MemoryReleaser releaser;
  releaser.request();
  EXPECT_TRUE(eventually([&] { return releaser.releases() == 1; }));
}

TEST(MemoryReleaserTest, ManyRequestsCoalesceAndALaterOneIsNeverLost) {
  MemoryReleaser releaser;
  for (int i = 0; i < 1000; ++i) releaser.request();
  ASSERT_TRUE(eventually([&] { return releaser.releases() >= 1; }));
  const std::uint64_t settled = releaser.releases();
  EXPECT_LE(settled, 1000u);
  releaser.request();
  EXPECT_TRUE(eventually([&] { return releaser.releases() > settled; })) << "a later request is never lost";
}

}  // namespace
}  // namespace gpuguard::webhook
