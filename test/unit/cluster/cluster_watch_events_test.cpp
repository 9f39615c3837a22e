// The body of a watch, split into events however the bytes arrive, and the
// backoff between reconnects.
#include <gtest/gtest.h>

#include <vector>

#include "cluster/backoff.h"
#include "cluster/watch_events.h"

namespace gpuguard::cluster {
namespace {

struct Collected {
  std::vector<WatchEvent> events;
  std::function<bool(WatchEvent&&)> sink() {
    return [this](WatchEvent&& e) {
      events.push_back(std::move(e));
      return true;
    };
  }
};

TEST(WatchStreamParserTest, EventsSplitAcrossPiecesAreJoinedAtTheNewline) {
  const std::string stream =
      R"({"type":"ADDED","object":{"kind":"Node","metadata":{"name":"a","resourceVersion":"10"}}})" "\n"
      R"({"type":"MODIFIED","object":{"kind":"Node","metadata":{"name":"a","resourceVersion":"11"}}})" "\n"
      R"({"type":"DELETED","object":{"kind":"Node","metadata":{"name":"a","resourceVersion":"12"}}})" "\n";
  for (std::size_t piece : {1u, 7u, 64u, 10000u}) {
    WatchStreamParser parser;
    Collected got;
    for (std::size_t i = 0; i < stream.size(); i += piece) {
      ASSERT_EQ(parser.feed(std::string_view(stream).substr(i, piece), got.sink()), "");
    }
    ASSERT_EQ(got.events.size(), 3u) << "pieces of " << piece;
    EXPECT_EQ(got.events[0].type, WatchEvent::Type::Added);
    EXPECT_EQ(got.events[1].type, WatchEvent::Type::Modified);
    EXPECT_EQ(got.events[2].type, WatchEvent::Type::Deleted);
    EXPECT_EQ(resourceVersionOf(got.events[2].object), "12");
    EXPECT_EQ(parser.pending(), 0u);
  }
}

TEST(WatchStreamParserTest, AnIncompleteLineWaitsForItsNewline) {
  WatchStreamParser parser;
  Collected got;
  EXPECT_EQ(parser.feed(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"99"}}})", got.sink()), "");
  EXPECT_TRUE(got.events.empty());
  EXPECT_GT(parser.pending(), 0u);
  EXPECT_EQ(parser.feed("\r\n\n", got.sink()), "");  // CRLF and blank lines are fine
  ASSERT_EQ(got.events.size(), 1u);
  EXPECT_EQ(got.events[0].type, WatchEvent::Type::Bookmark);
  EXPECT_EQ(resourceVersionOf(got.events[0].object), "99");
}

TEST(WatchStreamParserTest, AnErrorEventCarriesTheStatusCode410) {
  WatchStreamParser parser;
  Collected got;
  ASSERT_EQ(parser.feed(R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",)"
                        R"j("message":"too old resource version: 5 (120)","reason":"Expired","code":410}})j" "\n",
                        got.sink()),
            "");
  ASSERT_EQ(got.events.size(), 1u);
  EXPECT_EQ(got.events[0].type, WatchEvent::Type::Error);
  EXPECT_EQ(statusCode(got.events[0].object), 410);
  EXPECT_EQ(statusCode(nlohmann::json::object()), 0);
}

TEST(WatchStreamParserTest, GarbageLinesMakeTheStreamUnusable) {
  auto errorOf = [](std::string_view bytes) {
    WatchStreamParser parser;
    Collected got;
    return parser.feed(bytes, got.sink());
  };
  EXPECT_EQ(errorOf("<html>502 Bad Gateway</html>\n"), "a watch line that is not JSON: <html>502 Bad Gateway</html>");
  EXPECT_EQ(errorOf("[1,2]\n"), "a watch line that is not JSON: [1,2]");
  EXPECT_EQ(errorOf(R"({"type":"ADDED"})" "\n"), R"(a watch line without type and object: {"type":"ADDED"})");
  EXPECT_EQ(errorOf(R"({"type":"ADDED","object":"x"})" "\n"),
            R"(a watch line without type and object: {"type":"ADDED","object":"x"})");
  EXPECT_EQ(errorOf(R"({"type":"SYNC","object":{}})" "\n"), R"(a watch event of unknown type "SYNC")");
}

TEST(WatchStreamParserTest, ALineOverTheCapIsRefusedWithoutHoldingIt) {
  WatchStreamParser parser;
  Collected got;
  const std::string piece(1u << 20, 'x');
  std::string error;
  for (int i = 0; i < 17 && error.empty(); ++i) error = parser.feed(piece, got.sink());
  EXPECT_EQ(error, "a watch line longer than 16 MiB");
  EXPECT_EQ(parser.pending(), 0u);
}

TEST(WatchStreamParserTest, TheSinkCanStopTheStreamAtAnyEvent) {
  WatchStreamParser parser;
  int seen = 0;
  const std::string two = R"({"type":"ADDED","object":{}})" "\n" R"({"type":"ADDED","object":{}})" "\n";
  EXPECT_EQ(parser.feed(two, [&](WatchEvent&&) { return ++seen < 1; }), "");
  EXPECT_EQ(seen, 1);
}

TEST(BackoffTest, DoublesFromTheInitialWaitUpToTheCapWithJitterAbove) {
  Backoff backoff(std::chrono::milliseconds(100), std::chrono::milliseconds(1000), 0.5, 42);
  const long long bases[] = {100, 200, 400, 800, 1000, 1000};
  for (long long base : bases) {
    const long long wait = backoff.next().count();
    EXPECT_GE(wait, base);
    EXPECT_LE(wait, base + base / 2);
  }
  backoff.reset();
  EXPECT_LE(backoff.next().count(), 150);
}

TEST(BackoffTest, ReplicasWithDifferentSeedsSpreadTheirReconnects) {
  Backoff a(std::chrono::milliseconds(1000), std::chrono::seconds(30), 0.5, 1);
  Backoff b(std::chrono::milliseconds(1000), std::chrono::seconds(30), 0.5, 2);
  EXPECT_NE(a.next(), b.next());
}

}  // namespace
}  // namespace gpuguard::cluster
