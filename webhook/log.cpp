#include "webhook/log.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <deque>
#include <thread>

#include "webhook/json_text.h"

namespace gpuguard::webhook {
namespace {

// RFC 3339 in UTC with milliseconds: 2026-11-29T10:02:03.123Z
std::string timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(millis));
  return buf;
}

void writeAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // nowhere left to report it
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

std::optional<LogLevel> parseLogLevel(std::string_view name) {
  if (name == "debug") return LogLevel::Debug;
  if (name == "info") return LogLevel::Info;
  if (name == "warn" || name == "warning") return LogLevel::Warn;
  if (name == "error") return LogLevel::Error;
  return std::nullopt;
}

std::string_view logLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warn: return "warn";
    case LogLevel::Error: return "error";
  }
  return "info";
}

LogLine::LogLine(const Logger* logger, LogLevel level, std::string_view msg) : logger_(logger) {
  if (!logger_) return;
  text_.reserve(256);
  text_ += R"({"time":")";
  text_ += timestamp();
  text_ += R"(","level":")";
  text_ += logLevelName(level);
  text_ += R"(","msg":)";
  appendJsonString(text_, msg);
}

LogLine::LogLine(LogLine&& other) noexcept : logger_(other.logger_), text_(std::move(other.text_)) {
  other.logger_ = nullptr;
}

LogLine::~LogLine() {
  if (!logger_) return;
  text_ += "}\n";
  logger_->write(text_);
}

void LogLine::key(std::string_view k) {
  text_ += ',';
  appendJsonString(text_, k);
  text_ += ':';
}

LogLine& LogLine::str(std::string_view k, std::string_view value) {
  if (!logger_) return *this;
  key(k);
  appendJsonString(text_, value);
  return *this;
}

LogLine& LogLine::num(std::string_view k, double value) {
  if (!logger_) return *this;
  key(k);
  if (!std::isfinite(value)) {
    text_ += "null";
    return *this;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  text_ += buf;
  return *this;
}

LogLine& LogLine::num(std::string_view k, long long value) {
  if (!logger_) return *this;
  key(k);
  text_ += std::to_string(value);
  return *this;
}

LogLine& LogLine::flag(std::string_view k, bool value) {
  if (!logger_) return *this;
  key(k);
  text_ += value ? "true" : "false";
  return *this;
}

LogLine& LogLine::strings(std::string_view k, const std::vector<std::string>& values) {
  if (!logger_) return *this;
  key(k);
  text_ += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) text_ += ',';
    appendJsonString(text_, values[i]);
  }
  text_ += ']';
  return *this;
}

// Lines in a FIFO, written by one thread in order, each with one write(2).
class Logger::AsyncWriter {
 public:
  AsyncWriter(int fd, std::size_t maxQueuedBytes) : fd_(fd), maxQueuedBytes_(maxQueuedBytes) {
    thread_ = std::thread([this] { run(); });
  }
  ~AsyncWriter() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

  void push(std::string_view line) {
    {
      std::lock_guard lock(mutex_);
      if (queuedBytes_ + line.size() > maxQueuedBytes_) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      queue_.emplace_back(line);
      queuedBytes_ += line.size();
    }
    wake_.notify_one();
  }
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  void flush() {
    std::unique_lock lock(mutex_);
    written_.wait(lock, [this] { return queue_.empty() && !writing_; });
  }

 private:
  void run() {
    std::uint64_t reported = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything is written
      std::deque<std::string> batch;
      batch.swap(queue_);
      queuedBytes_ = 0;
      writing_ = true;
      lock.unlock();
      for (const std::string& line : batch) writeAll(fd_, line);
      const std::uint64_t dropped = dropped_.load(std::memory_order_relaxed);
      if (dropped > reported) {
        writeAll(fd_, droppedLine(dropped - reported));
        reported = dropped;
      }
      lock.lock();
      writing_ = false;
      written_.notify_all();
    }
  }

  static std::string droppedLine(std::uint64_t count) {
    return R"({"time":")" + timestamp() +
           R"(","level":"warn","msg":"log lines dropped: the log output is not read fast enough","dropped":)" +
           std::to_string(count) + "}\n";
  }

  const int fd_;
  const std::size_t maxQueuedBytes_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable written_;  // the queue was written out (flush)
  bool writing_ = false;
  std::deque<std::string> queue_;
  std::size_t queuedBytes_ = 0;
  bool stopping_ = false;
  std::atomic<std::uint64_t> dropped_{0};
  std::thread thread_;
};

Logger::Logger(LogLevel minimum) : Logger(minimum, STDERR_FILENO, kMaxQueuedBytes) {}

Logger::Logger(LogLevel minimum, int fd, std::size_t maxQueuedBytes)
    : minimum_(minimum), writer_(std::make_unique<AsyncWriter>(fd, maxQueuedBytes)) {}

Logger::Logger(LogLevel minimum, Sink sink) : minimum_(minimum), sink_(std::move(sink)) {}

Logger::~Logger() = default;

std::uint64_t Logger::dropped() const { return writer_ ? writer_->dropped() : 0; }

void Logger::flush() const {
  if (writer_) writer_->flush();
}

LogLine Logger::log(LogLevel level, std::string_view msg) const {
  return LogLine(enabled(level) ? this : nullptr, level, msg);
}

void Logger::write(std::string_view line) const {
  if (writer_) {
    writer_->push(line);
    return;
  }
  std::lock_guard lock(mutex_);
  if (sink_) sink_(line);
}

}  // namespace gpuguard::webhook
