// What the HTTPS server says about the limits of its environment (issue 23):
// a serving certificate that has expired or is about to, and running out of
// file descriptors, each logged (once) and counted, and neither makes it spin.
#include <fcntl.h>
#include <sys/resource.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/https/https_server_test_support.h"
#include "webhook/metrics.h"

namespace gpuguard::webhook {
namespace {

using namespace https_test;
using ::testing::HasSubstr;

// Collects what the server logs.
class LogLines {
 public:
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(mutex_);
      lines_.push_back(line);
    };
  }
  std::size_t count(const std::string& fragment) {
    std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(std::count_if(lines_.begin(), lines_.end(), [&](const std::string& l) {
      return l.find(fragment) != std::string::npos;
    }));
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

// --- The serving certificate --------------------------------------------------------

TEST(HttpsServerCertificate, AnExpiredCertificateIsLoggedAtLoad) {
  LogLines log;
  TestServer s([&](TestServer& t, ServerConfig& cfg) {
    t.pair = t.ca.issueServerExpiringIn(-3600);
    cfg.certFile = t.dir.write("tls.crt", t.pair.certPem);
    cfg.keyFile = t.dir.write("tls.key", t.pair.keyPem);
    cfg.log = log.sink();
  });
  EXPECT_EQ(log.count("serving certificate has expired"), 1u);
  EXPECT_LT(*s.server->certificateNotAfter(), static_cast<std::int64_t>(std::time(nullptr)));
}

TEST(HttpsServerCertificate, ACertificateExpiringWithinAWeekIsLoggedOnceAndARenewedOneIsNot) {
  LogLines log;
  TestServer s([&](TestServer& t, ServerConfig& cfg) {
    t.pair = t.ca.issueServerExpiringIn(3 * 24 * 3600);
    cfg.certFile = t.dir.write("tls.crt", t.pair.certPem);
    cfg.keyFile = t.dir.write("tls.key", t.pair.keyPem);
    cfg.log = log.sink();
  });
  EXPECT_EQ(log.count("serving certificate expires in"), 1u);
  const std::uint64_t reloads = s.stats().certificateReloads;
  // Polls go on (every 50 ms here) without saying it again.
  const tls::KeyPair renewed = s.ca.issueServer();
  s.dir.write("tls.key", renewed.keyPem);
  s.dir.write("tls.crt", renewed.certPem);
  ASSERT_TRUE(eventually([&] { return s.server->certificateFingerprint() == renewed.leafFingerprint; }));
  EXPECT_GT(s.stats().certificateReloads, reloads);
  EXPECT_EQ(log.count("serving certificate expires"), 1u);
  EXPECT_EQ(log.count("serving certificate has expired"), 0u);
}

TEST(HttpsServerCertificate, AValidCertificateIsNotLogged) {
  LogLines log;
  TestServer s([&](TestServer&, ServerConfig& cfg) { cfg.log = log.sink(); });
  EXPECT_TRUE(s.healthy());
  EXPECT_EQ(log.count("serving certificate"), 0u);
}

TEST(Metrics, TheTimeLeftOnTheServingCertificateIsAGauge) {
  Metrics metrics("test");
  ExternalCounters expired;
  expired.certificateNotAfter = static_cast<std::int64_t>(std::time(nullptr)) - 3600;
  const std::string text = metrics.render(expired);
  const std::size_t at = text.find("\ngpuguard_serving_certificate_expiry_seconds ");
  ASSERT_NE(at, std::string::npos) << text;
  const long long left = std::stoll(text.substr(text.find(' ', at + 1) + 1));
  EXPECT_LE(left, -3600);
  EXPECT_GT(left, -3700);
}

// --- File descriptors ---------------------------------------------------------------

// Takes every file descriptor this process may still open (its soft limit
// lowered to 1,024 first, so that this stays cheap), and gives them back.
class DescriptorsExhausted {
 public:
  DescriptorsExhausted() {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit lower = saved_;
    lower.rlim_cur = std::min<rlim_t>(saved_.rlim_cur, 1024);
    ::setrlimit(RLIMIT_NOFILE, &lower);
    for (;;) {
      const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0) break;
      held_.push_back(fd);
    }
  }
  ~DescriptorsExhausted() { release(); }
  void release() {
    for (int fd : held_) ::close(fd);
    held_.clear();
    ::setrlimit(RLIMIT_NOFILE, &saved_);
  }

 private:
  rlimit saved_{};
  std::vector<int> held_;
};

// The red team's EMFILE: accept() failing for want of descriptors was not
// logged. Now: one line per burst, a counter, no spinning on the listener
// that stays readable, and the waiting clients are served once descriptors
// are free again.
TEST(HttpsServerDescriptors, RunningOutIsLoggedOnceCountedAndDoesNotSpin) {
  LogLines log;
  TestServer s([&](TestServer&, ServerConfig& cfg) {
    cfg.workerThreads = 1;
    cfg.maxConnections = 64;  // start() raises the descriptor limit to 64 + 256 at most
    cfg.log = log.sink();
  });
  std::vector<int> clients;  // made before the descriptors run out; connected after
  for (int i = 0; i < 3; ++i) clients.push_back(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  {
    DescriptorsExhausted exhausted;
    for (int fd : clients) {
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(s.port());
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);  // the backlog takes it
    }
    ASSERT_TRUE(eventually([&] { return s.stats().acceptDescriptorExhaustion >= 1; }));
    const std::uint64_t before = s.stats().eventLoopWakeups;
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(500ms);  // a window for a spinning loop to show, not a timing assertion
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    // The listener is retried on the 100 ms tick: about 2 wake-ups per tick.
    EXPECT_LE(s.stats().eventLoopWakeups - before, 10u + static_cast<std::uint64_t>(elapsed.count()) / 25);
    EXPECT_TRUE(eventually([&] { return s.stats().acceptDescriptorExhaustion >= 2; })) << "retried on the tick";
  }
  EXPECT_EQ(log.count("cannot accept connections: Too many open files (EMFILE)"), 1u) << "once per burst";
  for (int fd : clients) {
    tls::TlsClient c;
    std::string error;
    ASSERT_TRUE(c.connectOver(fd, s.client(), error)) << error;
    auto r = c.request("POST", "/validate", "{}");
    ASSERT_TRUE(r) << "served once descriptors are free";
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_EQ(log.count("accepting connections again"), 1u);
  EXPECT_TRUE(s.healthy());
}

}  // namespace
}  // namespace gpuguard::webhook
