// The judging pool under pressure (issue 23): its queue is bounded (503 with
// Retry-After beyond), work nobody waits for any more is not done (the client
// left, the API server's ?timeout= passed) or its answer is discarded, a
// client leaving while its request is judged does not make the loop spin, and
// the shutdown timeout holds with a request still being judged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/https/https_server_test_support.h"

namespace gpuguard::webhook {
namespace {

using namespace https_test;

// One loop and one judging thread; every request judged off the loop.
void oneJudge(TestServer&, ServerConfig& cfg) {
  cfg.workerThreads = 1;
  cfg.judgeThreads = 1;
  cfg.judgeOffLoopBytes = 0;
}

constexpr int kClientGone = 0, kDeadline = 1;  // indices of ServerStats::judgingDropped and judgingDiscarded

// Connects and sends one request without waiting for the answer.
void send(tls::TlsClient& client, const TestServer& s, const std::string& target, const std::string& body) {
  std::string error;
  ASSERT_TRUE(client.connect(s.port(), s.client(), error)) << error;
  ASSERT_TRUE(client.write(tls::buildRequest("POST", target, body)));
}

TEST(HttpsServerJudging, AFullQueueIsAnswered503WithRetryAfterAtOnce) {
  Gate gate;
  TestServer s(
      [](TestServer& t, ServerConfig& cfg) {
        oneJudge(t, cfg);
        cfg.maxQueuedJudgements = 1;
      },
      gate.handler());
  OpenAtEnd opener{gate};
  tls::TlsClient judged, queued, refused;
  send(judged, s, "/hold", "judged");
  ASSERT_TRUE(gate.waitSeen(1));
  send(queued, s, "/validate", "queued");
  ASSERT_TRUE(eventually([&] { return s.stats().judgingQueued == 1; }));

  send(refused, s, "/validate", "refused");
  auto busy = refused.readResponse();
  ASSERT_TRUE(busy) << "answered while the queue is full, not queued behind it";
  EXPECT_EQ(busy->status, 503);
  ASSERT_NE(busy->header("retry-after"), nullptr);
  EXPECT_EQ(*busy->header("retry-after"), "1");
  EXPECT_THAT(busy->body, ::testing::HasSubstr("busy"));
  EXPECT_EQ(s.stats().judgingRejected, 1u);

  gate.open();
  auto first = judged.readResponse();
  auto second = queued.readResponse();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->body, "judged");
  EXPECT_EQ(second->body, "queued");
  // The refused client may try again on the same connection.
  auto retried = refused.request("POST", "/validate", "retried");
  ASSERT_TRUE(retried);
  EXPECT_EQ(retried->status, 200);
  EXPECT_THAT(gate.seen(), ::testing::ElementsAre("judged", "queued", "retried"));
}

TEST(HttpsServerJudging, ARequestWhoseTimeoutPassesInTheQueueIsNeverJudged) {
  Gate gate;
  TestServer s(oneJudge, gate.handler());
  OpenAtEnd opener{gate};
  tls::TlsClient judged, late;
  send(judged, s, "/hold", "judged");
  ASSERT_TRUE(gate.waitSeen(1));
  // The API server gives up after 200 ms: the webhook closes the connection
  // then, without an answer.
  send(late, s, "/validate?timeout=200ms", "late");
  EXPECT_TRUE(late.peerClosed());
  EXPECT_EQ(late.unread(), "");

  gate.open();
  ASSERT_TRUE(judged.readResponse());
  EXPECT_TRUE(eventually([&] { return s.stats().judgingDropped[kDeadline] == 1; }));
  EXPECT_THAT(gate.seen(), ::testing::ElementsAre("judged"));
  EXPECT_TRUE(s.healthy());
}

TEST(HttpsServerJudging, AnAnswerPastTheTimeoutIsDiscarded) {
  Gate gate;
  TestServer s(oneJudge, gate.handler());
  OpenAtEnd opener{gate};
  tls::TlsClient slow;
  send(slow, s, "/hold?timeout=200ms", "slow");
  ASSERT_TRUE(gate.waitSeen(1));
  EXPECT_TRUE(slow.peerClosed()) << "closed at the deadline, while still judged";
  gate.open();
  EXPECT_TRUE(eventually([&] { return s.stats().judgingDiscarded[kDeadline] == 1; }));
  EXPECT_EQ(slow.unread(), "");
  EXPECT_TRUE(eventually([&] { return s.stats().connectionsOpen == 0; }));
}

TEST(HttpsServerJudging, WithoutATimeoutParameterTheDefaultHolds) {
  Gate gate;
  TestServer s(
      [](TestServer& t, ServerConfig& cfg) {
        oneJudge(t, cfg);
        cfg.defaultAdmissionTimeout = 200ms;
      },
      gate.handler());
  OpenAtEnd opener{gate};
  tls::TlsClient slow;
  send(slow, s, "/hold", "slow");
  ASSERT_TRUE(gate.waitSeen(1));
  EXPECT_TRUE(slow.peerClosed());
  gate.open();
  EXPECT_TRUE(eventually([&] { return s.stats().judgingDiscarded[kDeadline] == 1; }));
}

TEST(HttpsServerJudging, ARequestWhoseClientLeftIsNeverJudged) {
  Gate gate;
  TestServer s(oneJudge, gate.handler());
  OpenAtEnd opener{gate};
  tls::TlsClient judged, gone;
  send(judged, s, "/hold", "judged");
  ASSERT_TRUE(gate.waitSeen(1));
  send(gone, s, "/validate", "gone");
  ASSERT_TRUE(eventually([&] { return s.stats().judgingQueued == 1; }));
  // The client sends its FIN (kube-apiserver closes the connection when its
  // timeout passes); the webhook closes its side in return.
  ::shutdown(gone.fd(), SHUT_WR);
  EXPECT_TRUE(gone.peerClosed());

  gate.open();
  ASSERT_TRUE(judged.readResponse());
  EXPECT_TRUE(eventually([&] { return s.stats().judgingDropped[kClientGone] == 1; }));
  EXPECT_THAT(gate.seen(), ::testing::ElementsAre("judged"));
}

// The red team's CPU spin: 319,501 epoll_wait returns in 5 s while a
// disconnected client's request was judged. The loop now watches a judged
// connection only for its client leaving, and closes it when it does.
TEST(HttpsServerJudging, AClientLeavingWhileJudgedIsNoticedWithoutSpinning) {
  Gate gate;
  TestServer s(oneJudge, gate.handler());
  OpenAtEnd opener{gate};
  tls::TlsClient gone;
  send(gone, s, "/hold", "gone");
  ASSERT_TRUE(gate.waitSeen(1));
  ::shutdown(gone.fd(), SHUT_WR);
  ASSERT_TRUE(gone.peerClosed()) << "the webhook noticed the client leaving";

  const std::uint64_t before = s.stats().eventLoopWakeups;
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(500ms);  // a window for a spinning loop to show, not a timing assertion
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  const std::uint64_t wakeups = s.stats().eventLoopWakeups - before;
  // An idle loop wakes up for its 100 ms tick; a spinning one tens of
  // thousands of times in this window, however loaded the machine.
  EXPECT_LE(wakeups, 10u + static_cast<std::uint64_t>(elapsed.count()) / 50) << "over " << elapsed.count() << " ms";

  gate.open();
  EXPECT_TRUE(eventually([&] { return s.stats().judgingDiscarded[kClientGone] == 1; }));
  EXPECT_TRUE(eventually([&] { return s.stats().connectionsOpen == 0; }));
}

// The red team's shutdown: 13 s with --shutdown-timeout=5s while jobs were
// judged, logging a line every 100 ms.
TEST(HttpsServerJudging, ShutdownTimeoutHoldsWhileARequestIsJudgedAndIsLoggedOnce) {
  Gate gate;
  std::mutex logMutex;
  std::vector<std::string> logged;
  TestServer s(
      [&](TestServer& t, ServerConfig& cfg) {
        oneJudge(t, cfg);
        cfg.shutdownTimeout = 300ms;
        cfg.log = [&](const std::string& line) {
          std::lock_guard lock(logMutex);
          logged.push_back(line);
        };
      },
      gate.handler());
  OpenAtEnd opener{gate};
  tls::TlsClient held;
  send(held, s, "/hold", "held");
  ASSERT_TRUE(gate.waitSeen(1));

  s.server->stop();
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    s.thread.join();
    returned = true;
  });
  EXPECT_TRUE(eventually([&] { return returned.load(); })) << "run() returns at the shutdown timeout";
  EXPECT_TRUE(held.peerClosed());
  gate.open();
  waiter.join();
  EXPECT_EQ(s.stats().shutdownClosedConnections, 1u);
  std::lock_guard lock(logMutex);
  EXPECT_EQ(std::count_if(logged.begin(), logged.end(),
                          [](const std::string& l) { return l.find("shutdown timeout") != std::string::npos; }),
            1);
}

}  // namespace
}  // namespace gpuguard::webhook
