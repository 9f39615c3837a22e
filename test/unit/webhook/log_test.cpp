// The webhook's JSON-lines logger writing to a file descriptor: lines arrive
// whole and in order, and a reader that stops reading never blocks the code
// that logs (an event loop): lines are dropped, counted and reported instead.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "webhook/log.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;

struct Pipe {
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) == 0) {
      readFd = fds[0];
      writeFd = fds[1];
    }
  }
  ~Pipe() {
    closeWrite();
    if (readFd >= 0) ::close(readFd);
  }
  void closeWrite() {
    if (writeFd >= 0) ::close(writeFd);
    writeFd = -1;
  }
  std::string readAll() const {
    std::string out;
    char buf[65536];
    for (ssize_t n; (n = ::read(readFd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    return out;
  }
  int readFd = -1;
  int writeFd = -1;
};

std::vector<json> parseLines(const std::string& text) {
  std::vector<json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

TEST(Logger, WritesEveryLineWholeAndInOrderToItsFileDescriptor) {
  Pipe pipe;
  ASSERT_GE(pipe.readFd, 0);
  std::string text;
  std::thread reader([&] { text = pipe.readAll(); });
  {
    Logger logger(LogLevel::Info, pipe.writeFd, Logger::kMaxQueuedBytes);
    for (int i = 0; i < 1000; ++i) logger.info("admission").num("seq", static_cast<long long>(i));
    logger.debug("below the level");
    EXPECT_EQ(logger.dropped(), 0u);
  }  // the destructor writes what is queued
  pipe.closeWrite();
  reader.join();
  const std::vector<json> lines = parseLines(text);
  ASSERT_EQ(lines.size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(lines[static_cast<std::size_t>(i)]["seq"], i);
    EXPECT_EQ(lines[static_cast<std::size_t>(i)]["level"], "info");
    EXPECT_EQ(lines[static_cast<std::size_t>(i)]["msg"], "admission");
  }
}

TEST(Logger, AReaderThatStopsReadingNeverBlocksTheCallerAndDroppedLinesAreReported) {
  Pipe pipe;
  ASSERT_GE(pipe.readFd, 0);
  auto logger = std::make_unique<Logger>(LogLevel::Info, pipe.writeFd, 64 * 1024);
  // Nobody reads: the pipe (64 KiB) and the queue (64 KiB) fill up, and the
  // rest of these ~6 MB is dropped. Returning at all is the point.
  const std::string padding(200, 'x');
  constexpr int kLines = 20000;
  for (int i = 0; i < kLines; ++i) logger->info("admission").num("seq", static_cast<long long>(i)).str("pad", padding);
  const std::uint64_t dropped = logger->dropped();
  EXPECT_GT(dropped, 0u);
  EXPECT_LT(dropped, static_cast<std::uint64_t>(kLines));

  std::string text;
  std::thread reader([&] { text = pipe.readAll(); });
  logger.reset();
  pipe.closeWrite();
  reader.join();
  const std::vector<json> lines = parseLines(text);
  std::uint64_t written = 0, reportedDropped = 0;
  long long lastSeq = -1;
  for (const json& line : lines) {
    if (line["msg"] == "admission") {
      ++written;
      EXPECT_GT(line["seq"].get<long long>(), lastSeq) << "in order";
      lastSeq = line["seq"].get<long long>();
    } else {
      EXPECT_EQ(line["msg"], "log lines dropped: the log output is not read fast enough");
      EXPECT_EQ(line["level"], "warn");
      reportedDropped += line["dropped"].get<std::uint64_t>();
    }
  }
  EXPECT_EQ(reportedDropped, dropped);
  EXPECT_EQ(written + dropped, static_cast<std::uint64_t>(kLines));
}

}  // namespace
}  // namespace gpuguard::webhook
