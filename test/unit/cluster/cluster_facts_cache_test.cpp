// The webhook's watched cluster facts against a fake API server: synced
// after every list, watch events reach the snapshot, a dropped watch resumes
// from its resourceVersion, 410 Gone relists, refused and unreachable
// withdraw the facts (judged without them) and say why, a watch silent past
// its idle timeout (a connection dead without FIN or RST) withdraws them too,
// with their age counted from the last thing it delivered; resources not
// served are absent.
#include <gtest/gtest.h>

#include <thread>

#include "cluster/facts_cache.h"
#include "test/unit/cluster_fake_api_server.h"

namespace gpuguard::cluster {
namespace {

using nlohmann::json;
using testing::FakeApiServer;

json list(std::vector<json> items, const std::string& rv) {
  return {{"items", std::move(items)}, {"metadata", {{"resourceVersion", rv}}}};
}

json node(const std::string& name, const std::string& rv = "1") {
  return {{"metadata", {{"name", name}, {"resourceVersion", rv}, {"labels", {{"nvidia.com/cuda.driver.major", "550"}}}}},
          {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}}}, {"capacity", {{"nvidia.com/gpu", "8"}}}}}};
}

std::string event(const std::string& type, const json& object) {
  return json{{"type", type}, {"object", object}}.dump();
}

// A cluster with two GPU nodes, one namespace, DRA served, no Karpenter.
void serveCluster(FakeApiServer& api) {
  api.setList("/api/v1/nodes", 200, list({node("gpu-a"), node("gpu-b")}, "100"));
  api.setList("/api/v1/namespaces", 200, list({{{"metadata", {{"name", "ml"}}}}}, "100"));
  for (const char* plural : {"deviceclasses", "resourceclaimtemplates", "resourceclaims", "resourceslices"}) {
    api.setList(std::string("/apis/resource.k8s.io/v1/") + plural, 200, list({}, "100"));
  }
}

struct Harness {
  FakeApiServer api;
  std::vector<std::string> logs;
  std::mutex logMutex;
  std::unique_ptr<FactsCache> cache;
  std::chrono::milliseconds watchIdleTimeout{0};  // 0: the default (timeoutSeconds + 15 s)
  std::atomic<int> clockSeconds{-1};               // >= 0: the facts' clock stands at this second

  void start() {
    ClientConfig config;
    config.server = api.url();
    parseServerUrl(config.server, config.url);
    CacheOptions options;
    options.publishInterval = std::chrono::milliseconds(5);
    options.backoffInitial = std::chrono::milliseconds(5);
    options.backoffMax = std::chrono::milliseconds(20);
    options.cancelCheck = std::chrono::milliseconds(5);
    options.watchIdleTimeout = watchIdleTimeout;
    if (clockSeconds >= 0) {
      options.now = [this] { return std::chrono::steady_clock::time_point(std::chrono::seconds(clockSeconds.load())); };
    }
    options.log = [this](bool warning, const std::string& line) {
      std::lock_guard lock(logMutex);
      logs.push_back((warning ? "W " : "I ") + line);
    };
    cache = std::make_unique<FactsCache>(config, options);
    cache->start();
  }
  template <typename Predicate>
  bool eventually(Predicate p) {
    for (int i = 0; i < 1000; ++i) {
      if (p()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
  std::size_t nodes() {
    auto facts = cache->snapshot();
    return facts ? facts->nodes().size() : 0;
  }
  const ResourceStatus& status(const std::string& resource, FactsStatus& holder) {
    holder = cache->status();
    for (const ResourceStatus& r : holder.resources) {
      if (r.resource == resource) return r;
    }
    throw std::runtime_error("no resource " + resource);
  }
  std::vector<std::string> logLines() {
    std::lock_guard lock(logMutex);
    return logs;
  }
  ~Harness() {
    if (cache) cache->stop();
  }
};

TEST(FactsCacheTest, EveryResourceListedPublishesTheFactsAndAnUnservedOneIsAbsentNotAnError) {
  Harness h;
  serveCluster(h.api);
  h.start();
  ASSERT_TRUE(h.eventually([&] { return h.cache->snapshot() != nullptr; }));
  auto facts = h.cache->snapshot();
  EXPECT_EQ(facts->nodes().size(), 2u);
  EXPECT_NE(facts->namespaceFacts("ml"), nullptr);
  EXPECT_TRUE(facts->listed(FactKind::Node));
  EXPECT_FALSE(facts->listed(FactKind::NodePool));  // no Karpenter: unknown, not "none"
  FactsStatus s;
  EXPECT_EQ(h.status("nodepools.karpenter.sh", s).state, ResourceState::NotServed);
  EXPECT_EQ(h.status("nodes", s).objects, 2u);
  EXPECT_TRUE(s.synced);
  const auto logs = h.logLines();
  EXPECT_EQ(std::count(logs.begin(), logs.end(),
                       "I cluster facts: nodepools.karpenter.sh not served (the API server does not serve it; judged as absent)"),
            1);
}

TEST(FactsCacheTest, NoFactsArePublishedBeforeEveryResourceHasSynced) {
  Harness h;
  serveCluster(h.api);
  h.api.setList("/api/v1/namespaces", 500, {{"message", "etcdserver: request timed out"}});
  h.start();
  ASSERT_TRUE(h.eventually([&] {
    FactsStatus s;
    return h.status("nodes", s).state == ResourceState::Synced;
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(h.cache->snapshot(), nullptr);
  h.api.setList("/api/v1/namespaces", 200, list({}, "100"));
  EXPECT_TRUE(h.eventually([&] { return h.cache->snapshot() != nullptr; }));
}

TEST(FactsCacheTest, WatchEventsReachTheSnapshotWithinThePublishInterval) {
  Harness h;
  serveCluster(h.api);
  h.start();
  ASSERT_TRUE(h.eventually([&] { return h.nodes() == 2; }));
  const auto before = h.cache->snapshot();
  h.api.push("/api/v1/nodes", event("ADDED", node("gpu-c", "101")));
  ASSERT_TRUE(h.eventually([&] { return h.nodes() == 3; }));
  h.api.push("/api/v1/nodes", event("DELETED", node("gpu-a", "102")));
  ASSERT_TRUE(h.eventually([&] { return h.nodes() == 2; }));
  EXPECT_EQ(before->nodes().size(), 2u);  // a published snapshot never changes
  EXPECT_EQ(h.cache->snapshot()->node("gpu-a"), nullptr);
}

TEST(FactsCacheTest, ADroppedWatchResumesFromTheLastResourceVersionSeen) {
  Harness h;
  serveCluster(h.api);
  h.start();
  ASSERT_TRUE(h.eventually([&] { return h.cache->snapshot() != nullptr; }));
  h.api.push("/api/v1/nodes", event("MODIFIED", node("gpu-a", "150")));
  h.api.push("/api/v1/nodes", event("BOOKMARK", {{"metadata", {{"resourceVersion", "160"}}}}));
  h.api.push("/api/v1/nodes", FakeApiServer::kDrop);
  ASSERT_TRUE(h.api.waitFor([](const std::vector<std::string>& requests) {
    return std::count_if(requests.begin(), requests.end(), [](const std::string& r) {
      return r.starts_with("/api/v1/nodes?allowWatchBookmarks=true&resourceVersion=160&");
    }) == 1;
  }));
  FactsStatus s;
  EXPECT_EQ(h.status("nodes", s).watchRestarts, 1u);
  EXPECT_EQ(h.status("nodes", s).relists, 0u);
  EXPECT_NE(h.cache->snapshot(), nullptr);
}

TEST(FactsCacheTest, GoneRelistsAndKeepsTheLastSnapshotMeanwhile) {
  Harness h;
  serveCluster(h.api);
  h.start();
  ASSERT_TRUE(h.eventually([&] { return h.nodes() == 2; }));
  h.api.setList("/api/v1/nodes", 200, list({node("gpu-a"), node("gpu-b"), node("gpu-z")}, "900"));
  h.api.push("/api/v1/nodes", R"j({"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old resource version: 100 (800)"}})j");
  ASSERT_TRUE(h.eventually([&] { return h.nodes() == 3; }));
  FactsStatus s;
  EXPECT_EQ(h.status("nodes", s).relists, 1u);
  ASSERT_TRUE(h.api.waitFor([](const std::vector<std::string>& requests) {
    return std::count(requests.begin(), requests.end(), "/api/v1/nodes?limit=500 auth=") == 2 &&
           std::any_of(requests.begin(), requests.end(),
                       [](const std::string& r) { return r.find("resourceVersion=900&") != std::string::npos; });
  }));
}

TEST(FactsCacheTest, RbacRefusingAResourceWithdrawsTheFactsAndSaysWhy) {
  Harness h;
  serveCluster(h.api);
  h.api.setList("/apis/resource.k8s.io/v1/resourceclaims", 403,
                {{"kind", "Status"}, {"code", 403}, {"message", "resourceclaims.resource.k8s.io is forbidden"}});
  h.start();
  ASSERT_TRUE(h.eventually([&] {
    FactsStatus s;
    return h.status("resourceclaims.resource.k8s.io", s).state == ResourceState::Refused;
  }));
  EXPECT_TRUE(h.eventually([&] { return h.cache->snapshot() == nullptr; }));
  EXPECT_TRUE(h.eventually([&] { return h.cache->missingReason() == "resourceclaims.resource.k8s.io refused"; }));
  const auto logs = h.logLines();
  EXPECT_EQ(std::count(logs.begin(), logs.end(),
                       "W cluster facts: resourceclaims.resource.k8s.io refused (judging without cluster facts): "
                       "list resourceclaims.resource.k8s.io: resourceclaims.resource.k8s.io is forbidden"),
            1);
  h.api.setList("/apis/resource.k8s.io/v1/resourceclaims", 200, list({}, "100"));  // the ClusterRole was fixed
  EXPECT_TRUE(h.eventually([&] { return h.cache->snapshot() != nullptr; }));
}

TEST(FactsCacheTest, AnApiServerThatGoesAwayWithdrawsTheFacts) {
  Harness h;
  serveCluster(h.api);
  h.start();
  ASSERT_TRUE(h.eventually([&] { return h.cache->snapshot() != nullptr; }));
  h.api.stop();
  FactsStatus s;
  EXPECT_TRUE(h.eventually([&] { return h.status("nodes", s).state == ResourceState::Unreachable; }));
  EXPECT_TRUE(h.eventually([&] { return h.cache->snapshot() == nullptr; }));
  EXPECT_FALSE(h.cache->status().synced);
  EXPECT_TRUE(h.eventually([&] { return h.cache->missingReason().ends_with(" unreachable"); }));
}

TEST(FactsCacheTest, BeforeTheFirstListTheFactsAreMissingBecauseNotSynced) {
  Harness h;
  serveCluster(h.api);
  h.api.setList("/api/v1/nodes", 500, {{"message", "etcdserver: request timed out"}});
  h.start();
  EXPECT_TRUE(h.eventually([&] { return h.cache->missingReason() == "nodes unreachable"; }));
  EXPECT_EQ(h.cache->snapshot(), nullptr);
}

TEST(FactsCacheTest, EveryWatchAsksForBookmarksAndTheServerEndsItWithinAMinute) {
  Harness h;
  serveCluster(h.api);
  h.start();
  ASSERT_TRUE(h.api.waitFor([](const std::vector<std::string>& requests) {
    return std::any_of(requests.begin(), requests.end(), [](const std::string& r) {
      return r == "/api/v1/nodes?allowWatchBookmarks=true&resourceVersion=100&timeoutSeconds=45&watch=1 auth=";
    });
  }));
}

// A connection that died without FIN or RST (a partition, a NAT that forgot
// the flow) leaves a watch open that delivers nothing: past its idle timeout
// the facts are withdrawn, and their age runs from the last thing received,
// not from when the silence was noticed.
TEST(FactsCacheTest, AWatchSilentPastItsIdleTimeoutWithdrawsTheFactsAgedFromTheLastWordReceived) {
  Harness h;
  serveCluster(h.api);
  h.watchIdleTimeout = std::chrono::milliseconds(300);
  h.clockSeconds = 10;
  h.start();
  ASSERT_TRUE(h.eventually([&] { return h.cache->snapshot() != nullptr; }));
  // The snapshot comes from the list, before the watch is sent: refusing watches before the
  // server has this one would refuse it too (a 503, not a silent connection).
  ASSERT_TRUE(h.api.waitFor([](const std::vector<std::string>& requests) {
    return std::any_of(requests.begin(), requests.end(), [](const std::string& r) {
      return r.starts_with("/api/v1/nodes?") && r.find("watch=1") != std::string::npos;
    });
  }));
  h.api.failWatches("/api/v1/nodes", 503);  // the open watch stays silent; a new one is refused
  h.clockSeconds = 100;
  ASSERT_TRUE(h.eventually([&] {
    FactsStatus s;
    return h.status("nodes", s).state == ResourceState::Unreachable && h.cache->snapshot() == nullptr;
  }));
  EXPECT_DOUBLE_EQ(h.cache->status().ageSeconds, 90.0);
  EXPECT_TRUE(h.eventually([&] { return h.cache->missingReason() == "nodes unreachable"; }));
  const auto logs = h.logLines();
  EXPECT_GE(std::count(logs.begin(), logs.end(),
                       "W cluster facts: nodes unreachable (judging without cluster facts): watch nodes: nothing "
                       "received (no event, no bookmark, no end) for 300 ms: the connection is dead"),
            1);
}

}  // namespace
}  // namespace gpuguard::cluster
