// Large request bodies (red team 34, D3): the API server sends reviews up to
// 18 MiB, so the body limit is large, and the memory they take is bounded by
// a budget instead: a body is charged as its bytes arrive (not as its head
// announces them: red team 35 D1), freed when its request ends; beyond the
// budget 503 with Retry-After, a body larger than the whole budget 413. A refused body is read (and dropped) before the
// answer, so the client's write completes and it reads a status, never a
// reset or a "broken pipe".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/https/https_server_test_support.h"

namespace gpuguard::webhook {
namespace {

using namespace https_test;

constexpr std::size_t kKi = 1024;

std::string head(std::size_t contentLength, bool expectContinue = false) {
  return "POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(contentLength) + "\r\n" + (expectContinue ? "Expect: 100-continue\r\n" : "") + "\r\n";
}

void connect(tls::TlsClient& client, const TestServer& s) {
  std::string error;
  ASSERT_TRUE(client.connect(s.port(), s.client(), error)) << error;
}

void budget(std::size_t bytes, ServerConfig& cfg) {
  cfg.bodyBudgetBytes = bytes;
  cfg.maxBodyBytes = 4 * bytes;
}

TEST(HttpsServerBodyBudget, TheDefaultLimitTakesTheLargestReviewTheApiServerSends) {
  // An UPDATE: two objects of etcd's 1.5 MiB, every byte escaped to six.
  EXPECT_GE(ServerConfig().maxBodyBytes, 2 * 6 * 3 * kKi * kKi / 2);
}

TEST(HttpsServerBodyBudget, ABodyOverTheLimitIsReadBefore413AndTheConnectionStaysOpen) {
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.maxBodyBytes = 1024 * kKi; });
  tls::TlsClient c;
  connect(c, s);
  // More than the socket buffers and the 1 MiB a closing connection drains:
  // answered on the head, this write would fail with a reset.
  ASSERT_TRUE(c.write(tls::buildRequest("POST", "/validate", std::string(1900 * kKi, 'x'))))
      << "the whole body was taken: " << c.lastError();
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_THAT(r->body, ::testing::HasSubstr("larger than the limit of 1048576 bytes"));
  EXPECT_EQ(r->header("connection"), nullptr) << "the body was read: the connection is still framed";
  auto next = c.request("POST", "/validate", "next");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
  EXPECT_EQ(next->body, "next");
  EXPECT_EQ(s.stats().requestsRejected, 1u);
  EXPECT_EQ(s.stats().bodyBytesReserved, 0u);
}

TEST(HttpsServerBodyBudget, AContentLengthBeyondTwiceTheLimitIsAnswered413AtOnce) {
  TestServer s([](TestServer&, ServerConfig& cfg) { cfg.maxBodyBytes = 64 * kKi; });
  tls::TlsClient c;
  connect(c, s);
  ASSERT_TRUE(c.write(head(128 * kKi + 1)));
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(*r->header("connection"), "close");
}

TEST(HttpsServerBodyBudget, BodiesOverTheBudgetGet503WithRetryAfterOnceReadWhileSmallerOnesAreServed) {
  TestServer s([](TestServer&, ServerConfig& cfg) { budget(100 * kKi, cfg); });
  tls::TlsClient holder, refused, small;
  connect(holder, s);
  const std::string held(80 * kKi, 'h');
  const std::size_t sent = held.size() - 1000;
  ASSERT_TRUE(holder.write(head(held.size()) + held.substr(0, sent)));  // the last 1000 bytes later
  ASSERT_TRUE(eventually([&] { return s.stats().bodyBytesReserved == sent; }));

  connect(refused, s);
  ASSERT_TRUE(refused.write(tls::buildRequest("POST", "/validate", std::string(40 * kKi, 'r'))));
  auto busy = refused.readResponse();
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 503);
  ASSERT_NE(busy->header("retry-after"), nullptr);
  EXPECT_EQ(*busy->header("retry-after"), "1");
  EXPECT_THAT(busy->body, ::testing::HasSubstr("retry"));
  EXPECT_EQ(s.stats().bodyBudgetRejected, 1u);

  // Bodies under kBudgetedBodyBytes do not count: served.
  connect(small, s);
  auto served = small.request("POST", "/validate", std::string(kBudgetedBodyBytes - 1, 's'));
  ASSERT_TRUE(served);
  EXPECT_EQ(served->status, 200);

  ASSERT_TRUE(holder.write(held.substr(sent)));
  auto first = holder.readResponse();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(first->body, held);
  // Its budget back, the refused client's retry on the same connection is served.
  auto retried = refused.request("POST", "/validate", std::string(40 * kKi, 'r'));
  ASSERT_TRUE(retried);
  EXPECT_EQ(retried->status, 200);
  EXPECT_EQ(s.stats().bodyBytesReserved, 0u);
}

// Red team 35 D1: four connections that sent a head announcing 5 MB and one
// byte held the whole budget, and every large review got 503 until the
// request timeout. A body is charged as it arrives: announced bytes hold
// nothing, so the reviews of the API server are served beside them.
TEST(HttpsServerBodyBudget, AnnouncedBytesThatNeverComeHoldNothing) {
  TestServer s([](TestServer&, ServerConfig& cfg) { budget(100 * kKi, cfg); });
  std::vector<tls::TlsClient> holders(4);
  for (auto& h : holders) {
    connect(h, s);
    ASSERT_TRUE(h.write(head(90 * kKi) + "{"));
  }
  ASSERT_TRUE(eventually([&] { return s.stats().bodyBytesReserved == 4; }));
  tls::TlsClient review;
  connect(review, s);
  const std::string body(60 * kKi, 'r');
  auto served = review.request("POST", "/validate", body);
  ASSERT_TRUE(served);
  EXPECT_EQ(served->status, 200);
  EXPECT_EQ(s.stats().bodyBudgetRejected, 0u);
  // A holder that does send its bytes is charged for them, and refused (503
  // once they are in) when the budget cannot take them.
  auto& sender = holders[0];
  ASSERT_TRUE(sender.write(std::string(90 * kKi - 1, 'x')));
  auto r = sender.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << "the budget had room: the other holders hold one byte each";
  EXPECT_TRUE(eventually([&] { return s.stats().bodyBytesReserved == 3; }));
}

TEST(HttpsServerBodyBudget, ABodyLargerThanTheWholeBudgetGets413OnceRead) {
  TestServer s([](TestServer&, ServerConfig& cfg) { budget(32 * kKi, cfg); });
  tls::TlsClient c;
  connect(c, s);
  ASSERT_TRUE(c.write(tls::buildRequest("POST", "/validate", std::string(40 * kKi, 'x'))));
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_THAT(r->body, ::testing::HasSubstr("memory for request bodies (32768 bytes)"));
  EXPECT_EQ(s.stats().bodyBudgetRejected, 0u) << "a retry would not help: not a 503";
}

TEST(HttpsServerBodyBudget, TheBudgetIsFreedWhenTheClientLeavesMidBody) {
  TestServer s([](TestServer&, ServerConfig& cfg) { budget(100 * kKi, cfg); });
  tls::TlsClient c;
  connect(c, s);
  const std::string part = "{\"partial\":" + std::string(30 * kKi, ' ');
  ASSERT_TRUE(c.write(head(60 * kKi) + part));
  ASSERT_TRUE(eventually([&] { return s.stats().bodyBytesReserved == part.size(); }));
  c.close();
  EXPECT_TRUE(eventually([&] { return s.stats().bodyBytesReserved == 0; }));
}

TEST(HttpsServerBodyBudget, TheBudgetIsFreedWhenTheRequestTimesOut) {
  TestServer s([](TestServer&, ServerConfig& cfg) {
    budget(100 * kKi, cfg);
    cfg.requestTimeout = 300ms;
  });
  tls::TlsClient c;
  connect(c, s);
  ASSERT_TRUE(c.write(head(60 * kKi) + "{\"stalled\":"));
  auto r = c.readResponse();  // after the request timeout
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 408);
  EXPECT_TRUE(eventually([&] { return s.stats().bodyBytesReserved == 0; }));
}

TEST(HttpsServerBodyBudget, AJudgedBodyHoldsItsShareUntilItsAnswerIsBack) {
  Gate gate;
  TestServer s(
      [](TestServer&, ServerConfig& cfg) {
        budget(100 * kKi, cfg);
        cfg.judgeOffLoopBytes = 0;
        cfg.judgeThreads = 1;
      },
      gate.handler());
  OpenAtEnd opener{gate};
  tls::TlsClient c;
  connect(c, s);
  const std::string body(60 * kKi, 'j');
  ASSERT_TRUE(c.write(tls::buildRequest("POST", "/hold", body)));
  ASSERT_TRUE(gate.waitSeen(1));
  EXPECT_EQ(s.stats().bodyBytesReserved, body.size());
  gate.open();
  auto r = c.readResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(eventually([&] { return s.stats().bodyBytesReserved == 0; }));
}

// Twenty clients send 100 KiB bodies (all but the last byte) against a 1 MiB
// budget: ten are held, the others are refused as their bytes come (503 once
// they are in), and what is held never exceeds the budget. A client that
// waits for "100 Continue" is told at once when its body would not fit.
TEST(HttpsServerBodyBudget, ManyConnectionsSendingLargeBodiesHoldNoMoreThanTheBudget) {
  TestServer s([](TestServer&, ServerConfig& cfg) {
    budget(1024 * kKi, cfg);
    cfg.requestTimeout = 60s;
  });
  const std::string body(100 * kKi, 'b');
  std::vector<tls::TlsClient> held(10), refused(10);
  for (std::size_t i = 0; i < held.size(); ++i) {
    connect(held[i], s);
    ASSERT_TRUE(held[i].write(head(body.size()) + body.substr(1)));
    ASSERT_TRUE(eventually([&] { return s.stats().bodyBytesReserved == (i + 1) * (body.size() - 1); }));
  }
  tls::TlsClient waiting;
  connect(waiting, s);
  ASSERT_TRUE(waiting.write(head(body.size(), /*expectContinue=*/true)));
  auto told = waiting.readResponse(/*skipInterim=*/false);
  ASSERT_TRUE(told);
  EXPECT_EQ(told->status, 503);
  for (auto& c : refused) {
    connect(c, s);
    ASSERT_TRUE(c.write(head(body.size()) + body));
    auto r = c.readResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 503);
  }
  EXPECT_EQ(s.stats().bodyBytesReserved, held.size() * (body.size() - 1));
  EXPECT_EQ(s.stats().bodyBudgetRejected, 1u + refused.size());
  for (auto& c : held) {
    ASSERT_TRUE(c.write("b"));
    auto r = c.readResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_TRUE(eventually([&] { return s.stats().bodyBytesReserved == 0; }));
}

// Under mutual TLS only the API server's certificate opens /validate: a
// client without one announcing large bodies holds none of the budget (its
// body is read and dropped, then 403), so it cannot turn the reviews away.
TEST(HttpsServerBodyBudget, AClientWithoutAVerifiedCertificateHoldsNoneOfTheBudget) {
  tls::TestCa clientCa("gpuguard test client CA");
  TestServer s([&](TestServer& t, ServerConfig& cfg) {
    budget(100 * kKi, cfg);
    cfg.clientCaFile = t.dir.write("client-ca.crt", clientCa.certPem());
  });
  tls::TlsClient stranger;
  connect(stranger, s);
  const std::string body(80 * kKi, 's');
  ASSERT_TRUE(stranger.write(head(body.size()) + body.substr(0, 1000)));  // the rest later
  const tls::ClientOptions apiserver = withCertificate(s.client(), clientCa.issueClient());
  tls::TlsClient review;
  std::string error;
  ASSERT_TRUE(review.connect(s.port(), apiserver, error)) << error;
  auto served = review.request("POST", "/validate", body);
  ASSERT_TRUE(served);
  EXPECT_EQ(served->status, 200) << "the stranger's announced body reserved nothing";
  EXPECT_EQ(s.stats().bodyBudgetRejected, 0u);

  ASSERT_TRUE(stranger.write(body.substr(1000)));
  auto refused = stranger.readResponse();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403);
  EXPECT_THAT(refused->body, ::testing::HasSubstr("a verified client certificate is required"));
  EXPECT_EQ(*refused->header("connection"), "close");
  EXPECT_EQ(s.stats().clientCertificateRequired, 1u);
  EXPECT_EQ(s.stats().bodyBytesReserved, 0u);
}

}  // namespace
}  // namespace gpuguard::webhook
