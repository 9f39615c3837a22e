// Growth checked by ratio, never by absolute time: the CPU time of this thread
// for 8N against N, the least of a few runs each (noise only ever adds).
// Linear work gives a ratio near 8, quadratic work near 64; the bound
// (kSuperLinearRatio) leaves room for a loaded machine and for caches that the
// larger input outgrows.
#pragma once

#include <time.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>

namespace gpuguard::testing {

inline constexpr double kSuperLinearRatio = 24.0;

inline double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The least CPU time of `runs` calls of `work`.
inline double leastCpuSeconds(const std::function<void()>& work, int runs) {
  double least = std::numeric_limits<double>::infinity();
  for (int i = 0; i < runs; ++i) {
    const double start = threadCpuSeconds();
    work();
    least = std::min(least, threadCpuSeconds() - start);
  }
  return least;
}

// How much more `onEightN` costs than `onN`: the same work bound to an input
// eight times as large and to the input itself, each made before it is timed.
inline double growthOf(const std::function<void()>& onN, const std::function<void()>& onEightN) {
  const double small = leastCpuSeconds(onN, 5);
  return leastCpuSeconds(onEightN, 3) / std::max(small, 1e-6);
}

// How much more work(8n) costs than work(n), all of work timed.
inline double growth(std::size_t n, const std::function<void(std::size_t)>& work) {
  return growthOf([&] { work(n); }, [&] { work(8 * n); });
}

}  // namespace gpuguard::testing
