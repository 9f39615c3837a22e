// A token bucket for the audit's own pace (judgements per second, API calls
// per second with a burst), so a scan of the whole cluster never competes
// with admission for the CPU or with controllers for the API server.
// The clock is a parameter: tests step it instead of sleeping.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>

namespace gpuguard::audit {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;

  // `perSecond` <= 0: unlimited.
  TokenBucket(double perSecond, double burst, std::function<Clock::time_point()> now = Clock::now)
      : rate_(perSecond), burst_(std::max(1.0, burst)), tokens_(std::max(1.0, burst)), now_(std::move(now)),
        last_(now_()) {}

  // Takes a token now if one is there; else how long until one is.
  std::chrono::nanoseconds tryTake() {
    if (rate_ <= 0) return std::chrono::nanoseconds(0);
    std::lock_guard lock(mutex_);
    const Clock::time_point now = now_();
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * rate_);
    last_ = now;
    if (tokens_ >= 1.0) {
      tokens_ -= 1.0;
      return std::chrono::nanoseconds(0);
    }
    return std::chrono::nanoseconds(static_cast<long long>((1.0 - tokens_) / rate_ * 1e9) + 1);
  }

  // Waits for a token, looking at `cancel` at least every 100 ms; false when cancelled.
  bool take(const std::atomic<bool>& cancel) {
    for (;;) {
      if (cancel.load()) return false;
      const std::chrono::nanoseconds wait = tryTake();
      if (wait.count() == 0) return true;
      std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(wait, std::chrono::milliseconds(100)));
    }
  }

 private:
  const double rate_;
  const double burst_;
  std::mutex mutex_;
  double tokens_;
  std::function<Clock::time_point()> now_;
  Clock::time_point last_;
};

}  // namespace gpuguard::audit
