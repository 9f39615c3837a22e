// Structured logs: one JSON object per line on stderr, e.g.
//   {"time":"2026-11-29T10:02:03.123Z","level":"info","msg":"admission","uid":"...",...}
// Lines are written with a single write(2) each, so concurrent workers never
// interleave. Writing to stderr happens on a thread of its own, behind a
// bounded queue: a log reader that stalls (a full pipe to the container
// runtime) must not stall the event loops that log, and so admission. When
// the queue is full, lines are dropped, counted, and the count is logged. Admission lines carry what the request was about and what was
// decided, never the object itself.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuguard::webhook {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3 };

std::optional<LogLevel> parseLogLevel(std::string_view name);  // debug, info, warn(ing), error
std::string_view logLevelName(LogLevel level);

class Logger;

// One log line under construction; written when it goes out of scope.
class LogLine {
 public:
  LogLine(LogLine&& other) noexcept;
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;
  LogLine& operator=(LogLine&&) = delete;
  ~LogLine();

  LogLine& str(std::string_view key, std::string_view value);
  LogLine& num(std::string_view key, double value);
  LogLine& num(std::string_view key, long long value);
  LogLine& flag(std::string_view key, bool value);
  LogLine& strings(std::string_view key, const std::vector<std::string>& values);

 private:
  friend class Logger;
  LogLine(const Logger* logger, LogLevel level, std::string_view msg);
  void key(std::string_view k);
  const Logger* logger_;  // null: disabled, every call is a no-op
  std::string text_;
};

class Logger {
 public:
  using Sink = std::function<void(std::string_view line)>;  // gets "{...}\n"

  static constexpr std::size_t kMaxQueuedBytes = 4 << 20;

  explicit Logger(LogLevel minimum = LogLevel::Info);  // writes to stderr (asynchronously)
  // Writes to `fd` (not owned) asynchronously, queueing at most
  // `maxQueuedBytes` of lines not written yet.
  Logger(LogLevel minimum, int fd, std::size_t maxQueuedBytes);
  Logger(LogLevel minimum, Sink sink);  // calls `sink` synchronously
  ~Logger();  // writes what is queued
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  bool enabled(LogLevel level) const { return level >= minimum_.load(std::memory_order_relaxed); }
  void setMinimum(LogLevel level) { minimum_.store(level, std::memory_order_relaxed); }

  LogLine log(LogLevel level, std::string_view msg) const;
  LogLine debug(std::string_view msg) const { return log(LogLevel::Debug, msg); }
  LogLine info(std::string_view msg) const { return log(LogLevel::Info, msg); }
  LogLine warn(std::string_view msg) const { return log(LogLevel::Warn, msg); }
  LogLine error(std::string_view msg) const { return log(LogLevel::Error, msg); }

  // Lines dropped because the queue to the file descriptor was full.
  std::uint64_t dropped() const;
  // Returns once every line logged so far is written (before a quick exit).
  void flush() const;

 private:
  friend class LogLine;
  class AsyncWriter;
  void write(std::string_view line) const;
  std::atomic<LogLevel> minimum_;
  Sink sink_;
  mutable std::mutex mutex_;
  std::unique_ptr<AsyncWriter> writer_;  // without a sink
};

}  // namespace gpuguard::webhook
