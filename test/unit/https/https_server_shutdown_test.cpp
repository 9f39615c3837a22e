// The HTTPS server's shutdown (requests in flight finish, new connections
// are refused, the drain is bounded) and its judging pool (large requests
// judged off the event loop).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/https/https_server_test_support.h"

namespace gpuguard::webhook {
namespace {

using namespace https_test;

// --- Shutdown ------------------------------------------------------------------------

TEST(HttpsServer, StopLetsTheRequestInFlightFinish) {
  std::atomic<bool> entered{false};
  TestServer s({}, [&](const HttpRequest& r) {
    if (r.path == "/slow") {
      entered = true;
      std::this_thread::sleep_for(200ms);
    }
    return echo(r);
  });
  tls::TlsClient idle;
  std::string error;
  ASSERT_TRUE(idle.connect(s.port(), s.client(), error)) << error;
  ASSERT_TRUE(idle.request("POST", "/validate", "{}"));  // now an idle keep-alive connection

  std::optional<tls::Response> slowAnswer;
  std::thread client([&] { slowAnswer = tls::httpsRequest(s.port(), s.client(), "POST", "/slow", R"({"slow":1})"); });
  ASSERT_TRUE(eventually([&] { return entered.load(); }));
  s.server->stop();
  client.join();
  ASSERT_TRUE(slowAnswer);
  EXPECT_EQ(slowAnswer->status, 200);
  EXPECT_EQ(slowAnswer->body, R"({"slow":1})");
  s.thread.join();  // run() returned
  EXPECT_TRUE(idle.peerClosed());
  EXPECT_EQ(s.stats().connectionsOpen, 0u);
  // Not listening any more.
  tls::TcpSocket late(tls::tcpConnect(s.port()));
  EXPECT_FALSE(late.valid());
}

TEST(HttpsServer, StopRefusesNewConnectionsWhileAHandlerIsBusy) {
  std::mutex m;
  std::condition_variable cv;
  bool held = false, released = false;
  TestServer s({}, [&](const HttpRequest& r) {
    if (r.path == "/hold") {
      std::unique_lock lock(m);
      held = true;
      cv.notify_all();
      cv.wait(lock, [&] { return released; });
    }
    return echo(r);
  });
  std::optional<tls::Response> heldAnswer;
  std::thread client([&] { heldAnswer = tls::httpsRequest(s.port(), s.client(), "POST", "/hold", "{}"); });
  {
    std::unique_lock lock(m);
    ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return held; }));
  }
  s.server->stop();
  // The other loop sees the stop at once and shuts the listener, though the
  // loop holding the handler has not looked yet.
  EXPECT_TRUE(eventually([&] {
    tls::ClientOptions o = s.client();
    o.timeout = 500ms;
    tls::TlsClient c;
    std::string error;
    return !c.connect(s.port(), o, error);
  }));
  {
    std::lock_guard lock(m);
    released = true;
    cv.notify_all();
  }
  client.join();
  ASSERT_TRUE(heldAnswer);
  EXPECT_EQ(heldAnswer->status, 200);
  s.thread.join();
}

// One loop, blocked in a handler while stop() arrives: what waits in the
// kernel then (a queued connection, a request in a socket buffer) is exactly
// what a closing listener or socket would reset.
TEST(HttpsServer, StopAnswersEveryRequestAlreadySentAndClosesIdleConnectionsCleanly) {
  std::mutex m;
  std::condition_variable cv;
  bool held = false, released = false;
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.workerThreads = 1; },
               [&](const HttpRequest& r) {
                 if (r.path == "/hold") {
                   std::unique_lock lock(m);
                   held = true;
                   cv.notify_all();
                   cv.wait(lock, [&] { return released; });
                 }
                 return echo(r);
               });
  std::string error;
  tls::TlsClient idle, late;  // keep-alive connections, each answered once
  ASSERT_TRUE(idle.connect(s.port(), s.client(), error)) << error;
  ASSERT_TRUE(idle.request("POST", "/validate", "{}"));
  ASSERT_TRUE(late.connect(s.port(), s.client(), error)) << error;
  ASSERT_TRUE(late.request("POST", "/validate", "{}"));

  std::optional<tls::Response> heldAnswer, queuedAnswer;
  std::thread holder([&] { heldAnswer = tls::httpsRequest(s.port(), s.client(), "POST", "/hold", R"({"held":1})"); });
  {
    std::unique_lock lock(m);
    ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return held; }));
  }
  // The loop is busy: this connection (the kernel completed it) waits in the
  // accept queue; its handshake and request follow.
  const int queuedFd = tls::tcpConnect(s.port());
  ASSERT_GE(queuedFd, 0);
  std::thread queued([&] {
    tls::TlsClient c;
    std::string ignored;
    if (c.connectOver(queuedFd, s.client(), ignored)) queuedAnswer = c.request("POST", "/validate", R"({"queued":1})");
  });
  s.server->stop();
  // Sent after the stop, before the loop could see it: in the socket buffer.
  ASSERT_TRUE(late.write(tls::buildRequest("POST", "/validate", R"({"late":1})")));
  {
    std::lock_guard lock(m);
    released = true;
    cv.notify_all();
  }
  holder.join();
  queued.join();
  s.thread.join();  // run() returned

  ASSERT_TRUE(heldAnswer);
  EXPECT_EQ(heldAnswer->body, R"({"held":1})");
  EXPECT_EQ(*heldAnswer->header("connection"), "close");
  ASSERT_TRUE(queuedAnswer) << "a connection in the accept queue is served, not reset";
  EXPECT_EQ(queuedAnswer->body, R"({"queued":1})");
  EXPECT_EQ(*queuedAnswer->header("connection"), "close");
  auto lateAnswer = late.readResponse();
  ASSERT_TRUE(lateAnswer) << "a request in the socket buffer is answered, not reset";
  EXPECT_EQ(lateAnswer->body, R"({"late":1})");
  EXPECT_EQ(*lateAnswer->header("connection"), "close");
  EXPECT_TRUE(late.peerClosed());
  // The idle keep-alive connection: close_notify and FIN, no reset.
  EXPECT_TRUE(idle.peerClosed());
  EXPECT_EQ(idle.lastEnd(), tls::ReadEnd::CleanClose);
  EXPECT_EQ(s.stats().connectionsOpen, 0u);
  EXPECT_EQ(s.stats().shutdownClosedConnections, 0u);
}

TEST(HttpsServer, ShutdownTimeoutBoundsTheDrain) {
  TestServer s([](TestServer&, ServerConfig& cfg) {
    cfg.shutdownTimeout = 300ms;
    cfg.requestTimeout = 60s;  // would keep the slow client below for a minute
  });
  std::string error;
  tls::TlsClient slow;
  ASSERT_TRUE(slow.connect(s.port(), s.client(), error)) << error;
  // Half a request: the server waits for the rest.
  ASSERT_TRUE(slow.write("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{}"));
  ASSERT_TRUE(eventually([&] { return s.stats().connectionsOpen == 1; }));
  s.server->stop();
  ASSERT_TRUE(eventually([&] { return s.stats().connectionsOpen == 0; }, 5s));
  s.thread.join();
  EXPECT_EQ(s.stats().shutdownClosedConnections, 1u);
}

TEST(HttpsServer, StopBeforeRunMakesRunReturn) {
  tls::TestCa ca;
  tls::TempDir dir;
  const tls::KeyPair p = ca.issueServer();
  ServerConfig cfg = loopbackConfig(dir, p.certPem, p.keyPem);
  HttpsServer server(cfg, echo);
  std::string error;
  ASSERT_TRUE(server.start(error)) << error;
  EXPECT_NE(server.boundPort(), 0);
  server.stop();
  server.run();  // returns at once
  SUCCEED();
}

// --- The judging pool ----------------------------------------------------------------

// One loop: while a large request is judged (held here as long as the test
// likes), a small one on another connection is still answered.
TEST(HttpsServer, ALargeRequestIsJudgedOffTheLoop) {
  std::mutex m;
  std::condition_variable cv;
  bool held = false, released = false;
  TestServer s(
      [](TestServer&, ServerConfig& cfg) {
        cfg.workerThreads = 1;
        cfg.judgeThreads = 1;
        cfg.judgeOffLoopBytes = 4096;
      },
      [&](const HttpRequest& r) {
        if (r.path == "/hold") {
          std::unique_lock lock(m);
          held = true;
          cv.notify_all();
          cv.wait(lock, [&] { return released; });
        }
        return echo(r);
      });
  const std::string large(5000, 'x');
  std::optional<tls::Response> heldAnswer;
  std::thread holder([&] { heldAnswer = tls::httpsRequest(s.port(), s.client(), "POST", "/hold", large); });
  {
    std::unique_lock lock(m);
    ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return held; }));
  }
  EXPECT_TRUE(s.healthy());  // judged on the loop, which the large one does not hold
  {
    std::lock_guard lock(m);
    released = true;
  }
  cv.notify_all();
  holder.join();
  ASSERT_TRUE(heldAnswer);
  EXPECT_EQ(heldAnswer->status, 200);
  EXPECT_EQ(heldAnswer->body, large);
}

// Every request through the pool: keep-alive, pipelining in order, the
// close after the last, a throwing handler.
TEST(HttpsServer, EveryRequestCanBeJudgedOffTheLoop) {
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.judgeOffLoopBytes = 0; });
  tls::TlsClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  for (int i = 0; i < 100; ++i) {
    const std::string body = R"({"i":)" + std::to_string(i) + "}";
    auto r = c.request("POST", "/validate", body);
    ASSERT_TRUE(r) << "request " << i;
    ASSERT_EQ(r->status, 200);
    ASSERT_EQ(r->body, body);
  }
  ASSERT_NO_FATAL_FAILURE(expectBurstAnsweredInOrderThenClosed(c));

  auto thrown = tls::httpsRequest(s.port(), s.client(), "POST", "/throw", "{}");
  ASSERT_TRUE(thrown);
  EXPECT_EQ(thrown->status, 500);
  EXPECT_TRUE(s.healthy());
  EXPECT_EQ(s.stats().requestsHandled, 100u + 51u + 1u + 1u);
}

TEST(HttpsServer, StopWaitsForTheJudgingPool) {
  std::atomic<bool> entered{false};
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.judgeOffLoopBytes = 0; },
               [&](const HttpRequest& r) {
                 if (r.path == "/slow") {
                   entered = true;
                   std::this_thread::sleep_for(200ms);
                 }
                 return echo(r);
               });
  tls::TlsClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
  ASSERT_TRUE(c.write(tls::buildRequest("POST", "/slow", R"({"slow":1})")));
  ASSERT_TRUE(eventually([&] { return entered.load(); }));
  s.server->stop();
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, R"({"slow":1})");
  EXPECT_EQ(*r->header("connection"), "close");
  EXPECT_TRUE(c.peerClosed());
  s.thread.join();
  EXPECT_EQ(s.stats().connectionsOpen, 0u);
}

// The client resets the connection while its request is judged: the answer
// finds the connection closed and frees it.
TEST(HttpsServer, ClientGoneWhileJudgedIsHarmless) {
  std::atomic<int> entered{0};
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.judgeOffLoopBytes = 0; },
               [&](const HttpRequest& r) {
                 if (r.path == "/slow") {
                   ++entered;
                   std::this_thread::sleep_for(100ms);
                 }
                 return echo(r);
               });
  for (int i = 0; i < 4; ++i) {
    tls::TlsClient c;
    std::string error;
    ASSERT_TRUE(c.connect(s.port(), s.client(), error)) << error;
    ASSERT_TRUE(c.write(tls::buildRequest("POST", "/slow", "{}")));
    ASSERT_TRUE(eventually([&] { return entered.load() == i + 1; }));
    if (i % 2 == 0) {
      linger hard{1, 0};  // close with a reset
      ::setsockopt(c.fd(), SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    }
    c.close();
  }
  EXPECT_TRUE(s.healthy());
  EXPECT_TRUE(eventually([&] { return s.stats().connectionsOpen == 0; }));
}

}  // namespace
}  // namespace gpuguard::webhook
