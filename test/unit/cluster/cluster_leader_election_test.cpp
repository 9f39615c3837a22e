// Leader election through a Lease, as client-go's LeaseLock does it, on a
// fake clock (sleeping advances it; nothing waits) against the fake API
// server: create, the leader's renew without a GET, a conflict's slow path,
// expiry measured on our own clock from when the record last changed, release,
// the write fence, and two replicas taking turns.
#include <gtest/gtest.h>

#include <algorithm>

#include "cluster/leader_election.h"
#include "test/unit/cluster_fake_api_server.h"

namespace gpuguard::cluster {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::FakeApiServer;

const std::string kLease = "/apis/coordination.k8s.io/v1/namespaces/gpuguard-system/leases/gpuguard-audit";

// Time that moves only when the elector sleeps or the test says so.
struct FakeTime {
  std::atomic<long long> elapsedMs{0};
  std::function<void()> onSleep;  // the test's script, at each of the elector's sleeps
  std::vector<long long> sleeps;  // how long each sleep was (ms)

  void advance(std::chrono::milliseconds d) { elapsedMs += d.count(); }
  ElectionClock clock() {
    ElectionClock c;
    c.steadyNow = [this] { return std::chrono::steady_clock::time_point(std::chrono::milliseconds(elapsedMs.load())); };
    // 2026-12-04T11:00:00Z plus the time elapsed.
    c.wallNow = [this] { return std::chrono::system_clock::time_point(std::chrono::milliseconds(1796382000000LL + elapsedMs.load())); };
    c.sleep = [this](std::chrono::milliseconds d, const std::atomic<bool>& stop) {
      if (stop.load()) return false;
      sleeps.push_back(d.count());
      advance(d);
      if (onSleep) onSleep();
      return !stop.load();
    };
    c.random = [] { return 0.5; };
    return c;
  }
};

LeaderElectionConfig configFor(const std::string& identity) {
  LeaderElectionConfig c;
  c.namespaceName = "gpuguard-system";
  c.identity = identity;
  c.labels = {{"app.kubernetes.io/name", "gpuguard"}};
  return c;
}

struct Replica {
  Replica(const FakeApiServer& server, FakeTime& time, const std::string& identity, LeaderCallbacks callbacks = {})
      : api(clientConfig(server)), elector(api, configFor(identity), withLog(std::move(callbacks)), time.clock()) {}

  static ClientConfig clientConfig(const FakeApiServer& server) {
    ClientConfig config;
    config.server = server.url();
    parseServerUrl(config.server, config.url);
    return config;
  }
  LeaderCallbacks withLog(LeaderCallbacks callbacks) {
    callbacks.log = [this](bool warning, const std::string& line) { logs.push_back((warning ? "W " : "I ") + line); };
    return callbacks;
  }

  std::vector<std::string> logs;
  ApiClient api;
  LeaderElector elector;
};

LeaderCallbacks recordingLeaders(std::vector<std::string>& leaders) {
  LeaderCallbacks c;
  c.onNewLeader = [&leaders](const std::string& holder) { leaders.push_back(holder); };
  return c;
}

LeaderCallbacks working(std::function<void()> started, std::function<void()> stopped = {}) {
  LeaderCallbacks c;
  c.onStartedLeading = std::move(started);
  c.onStoppedLeading = std::move(stopped);
  return c;
}

json heldBy(const std::string& holder, const std::string& renewTime, long long transitions) {
  return {{"apiVersion", "coordination.k8s.io/v1"}, {"kind", "Lease"},
          {"metadata", {{"name", "gpuguard-audit"}, {"namespace", "gpuguard-system"}}},
          {"spec", {{"holderIdentity", holder}, {"leaseDurationSeconds", 15}, {"acquireTime", "2026-12-01T08:00:00.000000Z"},
                    {"renewTime", renewTime}, {"leaseTransitions", transitions}}}};
}

json spec(const FakeApiServer& api) { return api.object(kLease).value_or(json::object())["spec"]; }

TEST(LeaderElectionConfigTest, DurationsMustLeaveTheRenewDeadlineInsideTheLeaseAndRoomForRetries) {
  EXPECT_EQ(validate(configFor("a")), "");
  LeaderElectionConfig c = configFor("a");
  c.renewDeadline = 15s;
  EXPECT_EQ(validate(c), "leader election: the lease duration must be longer than the renew deadline");
  c = configFor("a");
  c.retryPeriod = 9s;
  EXPECT_EQ(validate(c), "leader election: the renew deadline must be longer than 1.2 x the retry period");
  c = configFor("a");
  c.retryPeriod = 500ms;
  EXPECT_EQ(validate(c), "leader election: lease duration, renew deadline and retry period must each be at least 1s");
  EXPECT_EQ(validate(configFor("")), "leader election: the identity is empty");
}

TEST(MicroTimeTest, IsRfc3339InUtcWithExactlySixFractionalDigits) {
  EXPECT_EQ(microTime(std::chrono::system_clock::time_point(std::chrono::microseconds(1796382000000007LL))),
            "2026-12-04T11:00:00.000007Z");
}

TEST(LeaderElectorTest, AnAbsentLeaseIsCreatedAndItsCreatorLeads) {
  FakeApiServer api;
  FakeTime time;
  std::vector<std::string> leaders;
  Replica a(api, time, "pod-a_1f2e3d4c", recordingLeaders(leaders));
  EXPECT_TRUE(a.elector.tryAcquireOrRenew());
  EXPECT_TRUE(a.elector.isLeader());
  EXPECT_EQ(spec(api), (json{{"holderIdentity", "pod-a_1f2e3d4c"}, {"leaseDurationSeconds", 15},
                             {"acquireTime", "2026-12-04T11:00:00.000000Z"}, {"renewTime", "2026-12-04T11:00:00.000000Z"},
                             {"leaseTransitions", 0}}));
  EXPECT_EQ(api.object(kLease)->at("metadata")["labels"], (json{{"app.kubernetes.io/name", "gpuguard"}}));
  EXPECT_EQ(leaders, (std::vector<std::string>{"pod-a_1f2e3d4c"}));
  EXPECT_EQ(api.requests(), (std::vector<std::string>{
                                kLease + " auth=",
                                "POST /apis/coordination.k8s.io/v1/namespaces/gpuguard-system/leases auth="}));
}

TEST(LeaderElectorTest, TheLeaderRenewsWithItsLastResourceVersionWithoutReadingFirst) {
  FakeApiServer api;
  FakeTime time;
  Replica a(api, time, "a");
  ASSERT_TRUE(a.elector.tryAcquireOrRenew());
  time.advance(2s);
  EXPECT_TRUE(a.elector.tryAcquireOrRenew());
  time.advance(2500ms);
  EXPECT_TRUE(a.elector.tryAcquireOrRenew());
  EXPECT_EQ(spec(api)["renewTime"], "2026-12-04T11:00:04.500000Z");
  EXPECT_EQ(spec(api)["acquireTime"], "2026-12-04T11:00:00.000000Z");
  EXPECT_EQ(spec(api)["leaseTransitions"], 0);
  const std::vector<std::string> r = api.requests();
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[2], "PUT " + kLease + " auth=");
  EXPECT_EQ(r[3], "PUT " + kLease + " auth=");
}

TEST(LeaderElectorTest, ARenewThatConflictsReadsTheLeaseAndYieldsToANewHolder) {
  FakeApiServer api;
  FakeTime time;
  std::vector<std::string> leaders;
  Replica a(api, time, "a", recordingLeaders(leaders));
  ASSERT_TRUE(a.elector.tryAcquireOrRenew());
  api.putObject(kLease, heldBy("b", "2026-12-04T11:00:01.000000Z", 1));  // an operator handed the Lease to b
  time.advance(2s);
  EXPECT_FALSE(a.elector.tryAcquireOrRenew());
  EXPECT_FALSE(a.elector.isLeader());
  EXPECT_EQ(a.elector.observedHolder(), "b");
  EXPECT_EQ(leaders, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(spec(api)["holderIdentity"], "b");
  const std::vector<std::string> r = api.requests();
  EXPECT_EQ(std::vector<std::string>(r.end() - 2, r.end()), (std::vector<std::string>{"PUT " + kLease + " auth=", kLease + " auth="}));
}

TEST(LeaderElectorTest, AnUnchangedRecordExpiresByOurOwnClockEvenWithARenewTimeInTheFuture) {
  FakeApiServer api;
  api.putObject(kLease, heldBy("b", "2099-01-01T00:00:00.000000Z", 3));  // b's clock is wrong, or b is gone
  FakeTime time;
  Replica a(api, time, "a");
  EXPECT_FALSE(a.elector.tryAcquireOrRenew());  // first seen now: valid for 15 s from now
  time.advance(14999ms);
  EXPECT_FALSE(a.elector.tryAcquireOrRenew());
  time.advance(1ms);
  EXPECT_TRUE(a.elector.tryAcquireOrRenew());
  EXPECT_EQ(spec(api)["holderIdentity"], "a");
  EXPECT_EQ(spec(api)["leaseTransitions"], 4);
  EXPECT_EQ(spec(api)["acquireTime"], "2026-12-04T11:00:15.000000Z");
}

TEST(LeaderElectorTest, AHolderThatKeepsRenewingIsNeverDisplaced) {
  FakeApiServer api;
  FakeTime time;
  Replica a(api, time, "a");
  for (int second = 0; second <= 60; second += 10) {
    api.putObject(kLease, heldBy("b", "2026-12-04T11:00:" + std::to_string(10 + second / 10) + ".000000Z", 0));
    EXPECT_FALSE(a.elector.tryAcquireOrRenew()) << "at " << second << " s";
    time.advance(10s);
  }
  EXPECT_EQ(spec(api)["holderIdentity"], "b");
}

TEST(LeaderElectorTest, AReleasedLeaseIsTakenAtTheNextTry) {
  FakeApiServer api;
  FakeTime time;
  Replica a(api, time, "a");
  Replica b(api, time, "b");
  ASSERT_TRUE(a.elector.tryAcquireOrRenew());
  EXPECT_FALSE(b.elector.tryAcquireOrRenew());
  EXPECT_TRUE(a.elector.release());
  EXPECT_EQ(spec(api), (json{{"holderIdentity", ""}, {"leaseDurationSeconds", 1},
                             {"acquireTime", "2026-12-04T11:00:00.000000Z"}, {"renewTime", "2026-12-04T11:00:00.000000Z"},
                             {"leaseTransitions", 0}}));
  EXPECT_FALSE(a.elector.isLeader());
  time.advance(100ms);
  EXPECT_TRUE(b.elector.tryAcquireOrRenew());
  EXPECT_EQ(spec(api)["holderIdentity"], "b");
  EXPECT_EQ(spec(api)["leaseTransitions"], 1);
  EXPECT_TRUE(a.elector.release());  // not the holder: nothing to give up, nothing written
  EXPECT_EQ(spec(api)["holderIdentity"], "b");
}

TEST(LeaderElectorTest, AMalformedLeaseIsAnErrorAndNeverOverwritten) {
  FakeApiServer api;
  json lease = heldBy("b", "2026-12-04T11:00:00.000000Z", 0);
  lease["spec"]["leaseDurationSeconds"] = "15";
  api.putObject(kLease, lease);
  FakeTime time;
  Replica a(api, time, "a");
  time.advance(60s);
  EXPECT_FALSE(a.elector.tryAcquireOrRenew());
  EXPECT_EQ(a.logs, (std::vector<std::string>{
                        "W leader election: lease gpuguard-system/gpuguard-audit: the Lease's spec has a leaseDurationSeconds "
                        "or leaseTransitions that is not an integer"}));
  EXPECT_EQ(api.writes().size(), 0u);
}

TEST(LeaderElectorTest, AnUnreachableOrRefusingServerMeansNotLeading) {
  FakeApiServer api;
  api.failNext("GET", kLease, 500);
  FakeTime time;
  Replica a(api, time, "a");
  EXPECT_FALSE(a.elector.tryAcquireOrRenew());
  EXPECT_EQ(a.logs.at(0), "W leader election: lease gpuguard-system/gpuguard-audit: read failed (500): injected by the test");
  EXPECT_TRUE(a.elector.tryAcquireOrRenew());
}

TEST(LeaderElectorRunTest, LeadsUntilStoppedThenStopsTheWorkAndReleases) {
  FakeApiServer api;
  FakeTime time;
  std::atomic<bool> stop{false};
  std::vector<std::string> events;
  Replica* self = nullptr;
  Replica a(api, time, "a", working([&] { events.push_back(self->elector.mayWrite() ? "started, may write" : "started"); },
                    [&] { events.push_back(self->elector.mayWrite() ? "stopped, may write" : "stopped"); }));
  self = &a;
  time.onSleep = [&] {
    if (time.elapsedMs >= 6000) stop = true;
  };
  a.elector.run(stop);
  EXPECT_EQ(events, (std::vector<std::string>{"started, may write", "stopped"}));
  EXPECT_EQ(time.sleeps, (std::vector<long long>{2000, 2000, 2000}));  // renewing every retry period
  EXPECT_EQ(spec(api)["holderIdentity"], "");
  EXPECT_EQ(spec(api)["renewTime"], "2026-12-04T11:00:06.000000Z");
  EXPECT_EQ(a.elector.timesLeading(), 1u);
}

TEST(LeaderElectorRunTest, RenewsFailingForTheRenewDeadlineCloseTheFenceAndEndTheLead) {
  FakeApiServer api;
  FakeTime time;
  std::atomic<bool> stop{false};
  std::vector<std::string> events;
  Replica* self = nullptr;
  Replica a(api, time, "a", working(
                    [&] {
                      events.push_back("started");
                      api.failNext("PUT", kLease, 500, 100);  // the API server stops answering writes
                    },
                    [&] { events.push_back("stopped"); }));
  self = &a;
  std::vector<std::pair<long long, bool>> fence;
  time.onSleep = [&] {
    fence.emplace_back(time.elapsedMs.load(), self->elector.mayWrite());
    if (events.size() == 2) stop = true;
  };
  a.elector.run(stop);
  EXPECT_EQ(events, (std::vector<std::string>{"started", "stopped"}));
  // Renewed last at 0 s; tries at 2, 4, ... 12 s fail; the fence closes at 10 s, the lead ends at 12 s.
  EXPECT_EQ(fence.at(0), (std::pair<long long, bool>{2000, true}));
  EXPECT_EQ(fence.at(3), (std::pair<long long, bool>{8000, true}));
  EXPECT_EQ(fence.at(4), (std::pair<long long, bool>{10000, false}));
  EXPECT_EQ(std::count(a.logs.begin(), a.logs.end(),
                       "W leader election: lease gpuguard-system/gpuguard-audit: no renew succeeded for 10000ms: stopped leading"),
            1);
}

TEST(LeaderElectorRunTest, ACandidateTriesAgainAfterAJitteredRetryPeriod) {
  FakeApiServer api;
  api.putObject(kLease, heldBy("b", "2026-12-04T11:00:00.000000Z", 0));
  FakeTime time;
  std::atomic<bool> stop{false};
  Replica a(api, time, "a", working([&] { stop = true; }));
  a.elector.run(stop);
  // 2 s x (1 + 0.5 x 1.2) = 3.2 s between tries; b's record unchanged since 0 s expires after 15 s: the 6th try.
  EXPECT_EQ(time.sleeps, (std::vector<long long>{3200, 3200, 3200, 3200, 3200}));
  EXPECT_EQ(spec(api)["holderIdentity"], "");  // stopped right after winning: released
  EXPECT_EQ(spec(api)["leaseTransitions"], 1);
}

}  // namespace
}  // namespace gpuguard::cluster
