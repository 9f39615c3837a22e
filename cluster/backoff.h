// Jittered exponential backoff between reconnects (client-go's reflector
// waits 800 ms doubling to 30 s; ours: initial, x2, at most `max`, each wait
// stretched by a random 0..jitter fraction so that replicas restarted together
// do not reconnect together).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace gpuguard::cluster {

class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial = std::chrono::milliseconds(500),
          std::chrono::milliseconds max = std::chrono::seconds(30), double jitter = 0.5,
          std::uint64_t seed = std::random_device{}())
      : initial_(initial), max_(max), jitter_(jitter), current_(initial), random_(seed) {}

  // The next wait; each call doubles the base up to `max`.
  std::chrono::milliseconds next() {
    const std::chrono::milliseconds base = current_;
    current_ = std::min(max_, current_ * 2);
    std::uniform_real_distribution<double> spread(0.0, jitter_);
    return base + std::chrono::milliseconds(static_cast<long long>(static_cast<double>(base.count()) * spread(random_)));
  }
  // After a success: the next failure waits `initial` again.
  void reset() { current_ = initial_; }

 private:
  std::chrono::milliseconds initial_, max_;
  double jitter_;
  std::chrono::milliseconds current_;
  std::mt19937_64 random_;
};

}  // namespace gpuguard::cluster
