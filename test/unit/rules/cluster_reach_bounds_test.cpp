// The work of judging a pod against the cluster's nodes (reachOf) is bounded
// by the pod plus the nodes, never their product (red team 32 B5, B7: a
// 19 KB pod of 200 one-host affinity terms made the webhook allocate 300 MB
// on 3000 nodes, 3000 terms took 4-5 s):
//   - a term that names its hosts (kubernetes.io/hostname In, matchFields
//     metadata.name In) is tried only on the nodes it names;
//   - a node no term matches is explained by its first kTermsExplained terms;
//   - a pod whose terms that name no host would cost more than kMaxTermTries
//     tries is not judged, and the rules judge it as without facts.
// Allocations are counted (operator new below), not time: the suite runs on
// loaded machines and under ASan.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "rules/cluster_reach.h"
#include "test/unit/test_support.h"

namespace {
// Allocations made by the counting thread while `counting` is set; every
// other allocation of this test binary passes straight to malloc.
std::atomic<std::size_t> allocations{0};
thread_local bool counting = false;
}  // namespace

void* operator new(std::size_t size) {
  if (counting) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// The other forms too, so that every pointer this binary frees with
// operator delete came from malloc: under ASan a form left out (new[],
// nothrow) allocates through ASan's operator new, and free() of it is an
// alloc-dealloc mismatch.
void* operator new[](std::size_t size) { return ::operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return ::operator new(size, tag); }
// Not inlined: GCC would see free() meet a pointer from operator new.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using nlohmann::json;

std::string nodeName(std::size_t i) {
  char name[16];
  std::snprintf(name, sizeof name, "gpu-%05zu", i);
  return name;
}

// `count` GPU nodes, half on driver 550 and half on 570 (two node groups).
std::shared_ptr<const ClusterFacts> cluster(std::size_t count) {
  ClusterFactsBuilder builder;
  builder.setSource("snapshot test");
  builder.markListed(FactKind::Node);
  for (std::size_t i = 0; i < count; ++i) {
    builder.add(json{{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata",
                      {{"name", nodeName(i)},
                       {"labels",
                        {{"kubernetes.io/hostname", nodeName(i)},
                         {"nvidia.com/gpu.present", "true"},
                         {"nvidia.com/cuda.driver-version.major", i % 2 ? "570" : "550"}}}}},
                     {"spec", {{"taints", json::array({{{"key", "nvidia.com/gpu"}, {"effect", "NoSchedule"}}})}}},
                     {"status", {{"allocatable", {{"cpu", "96"}, {"memory", "1Ti"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}}}}});
  }
  return builder.build();
}

// A GPU pod whose required affinity has one term per entry of `terms`.
json podWithTerms(const json& terms) {
  return json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "placed"}, {"namespace", "ml"}}},
              {"spec",
               {{"tolerations", json::array({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}})},
                {"affinity",
                 {{"nodeAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", terms}}}}}}},
                {"containers",
                 json::array({{{"name", "c"},
                               {"image", "nvidia/cuda:12.8.1-runtime-ubuntu24.04"},
                               {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}};
}

// `count` terms, each `kubernetes.io/hostname In [one node]` (or matchFields
// metadata.name In), naming every `step`-th node of `nodes` from the first.
json oneHostTerms(std::size_t count, std::size_t nodes, bool fields = false, std::size_t step = 1) {
  json terms = json::array();
  for (std::size_t i = 0; i < count; ++i) {
    const json requirement = fields ? json{{"key", "metadata.name"}, {"operator", "In"}, {"values", {nodeName(i * step % nodes)}}}
                                    : json{{"key", "kubernetes.io/hostname"}, {"operator", "In"}, {"values", {nodeName(i * step % nodes)}}};
    terms.push_back({{fields ? "matchFields" : "matchExpressions", json::array({requirement})}});
  }
  return terms;
}

struct Measured {
  PodReach reach;
  std::size_t allocations = 0;
};

Measured reachCounted(const json& pod, const ClusterFacts& facts) {
  static const Policy policy;
  static const InputFacts none;
  const std::vector<PodSite> sites = findPodSites(pod);
  const GpuFacts gpu{policy, none, &facts, "ml"};
  allocations = 0;
  counting = true;
  PodReach reach = reachOf(sites.at(0), facts, gpu, "ml");
  counting = false;
  return {std::move(reach), allocations.load()};
}

TEST(ClusterReachBounds, ATermThatNamesItsHostCostsTheSameWhateverTheNumberOfNodes) {
  // 20 and 200 one-host terms, all naming the first 10 nodes, on 100 and on
  // 1000 nodes: what the 180 terms add must not grow with the nodes (before:
  // ~5 allocations per term and node the term does not match).
  for (const bool fields : {false, true}) {
    SCOPED_TRACE(fields ? "matchFields metadata.name" : "kubernetes.io/hostname");
    std::size_t added[2];
    for (const std::size_t nodes : {100U, 1000U}) {
      const auto facts = cluster(nodes);
      const std::size_t few = reachCounted(podWithTerms(oneHostTerms(20, 10, fields)), *facts).allocations;
      const std::size_t many = reachCounted(podWithTerms(oneHostTerms(200, 10, fields)), *facts).allocations;
      ASSERT_GT(many, few);
      added[nodes == 1000U] = many - few;
    }
    // Ten times the nodes: the terms' cost the same, within a factor 2.
    EXPECT_LT(added[1], 2 * added[0]) << "180 terms on 100 nodes: " << added[0] << ", on 1000: " << added[1];
  }
}

TEST(ClusterReachBounds, ATermThatNamesItsHostMatchesOnlyTheNodesItNames) {
  // Every other node, so only the 550 nodes: the driver rules see one major.
  const auto facts = cluster(40);
  for (const bool fields : {false, true}) {
    const Measured m = reachCounted(podWithTerms(oneHostTerms(10, 40, fields, 2)), *facts);
    const auto majors = reachableDriverMajors(m.reach);
    ASSERT_EQ(majors.size(), 1U);
    EXPECT_EQ(majors[0].first, "550");
    EXPECT_EQ(majors[0].second.size(), 10U);
  }
}

// Three rules read a reach's driver majors, and a reach kept between reviews
// (ReachCache) is read again on every review of a replica: the list of
// every landing node's name is made once, then read without a copy.
TEST(ClusterReachBounds, TheDriverMajorsOfAReachAreMadeOnceThenReadWithoutAllocating) {
  const auto facts = cluster(40);
  const Measured m = reachCounted(podWithTerms(oneHostTerms(10, 40, false, 2)), *facts);
  const DriverMajors& first = reachableDriverMajors(m.reach);
  allocations = 0;
  counting = true;
  const DriverMajors& again = reachableDriverMajors(m.reach);
  counting = false;
  EXPECT_EQ(&again, &first);
  EXPECT_EQ(allocations.load(), 0U);
  ASSERT_EQ(again.size(), 1U);
  EXPECT_EQ(again[0].second.size(), 10U);
}

// A rule may hold one site's reach while it asks for another's: what the
// memo handed out stays where it is while it makes more (under ASan a
// moved reach would be a use after free here).
TEST(ClusterReachBounds, AReachHandedOutStaysValidWhileTheMemoMakesMore) {
  static const Policy policy;
  static const InputFacts none;
  const auto facts = cluster(8);
  const GpuFacts gpu{policy, none, facts.get(), "ml"};
  // The sites point into their objects: the objects are kept for the test's length.
  std::vector<json> objects;
  for (std::size_t i = 0; i < 16; ++i) objects.push_back(podWithTerms(oneHostTerms(1 + i % 4, 8)));
  std::vector<std::vector<PodSite>> pods;
  for (const json& object : objects) pods.push_back(findPodSites(object));
  ReachMemo memo;
  const PodReach& first = memo.of(pods[0].at(0), *facts, gpu, "ml");
  const std::size_t firstLanding = first.landingNodes().size();
  for (const auto& sites : pods) memo.of(sites.at(0), *facts, gpu, "ml");
  EXPECT_EQ(first.landingNodes().size(), firstLanding);
  EXPECT_EQ(&memo.of(pods[0].at(0), *facts, gpu, "ml"), &first);
}

TEST(ClusterReachBounds, ANodeNoTermMatchesIsExplainedByItsFirstTerms) {
  const auto facts = cluster(4);
  const Measured m = reachCounted(podWithTerms(oneHostTerms(20, 2)), *facts);  // names gpu-00000 and gpu-00001
  const NodeReach& unnamed = m.reach.nodes.at(3);
  ASSERT_EQ(unnamed.node->name, "gpu-00003");
  EXPECT_FALSE(unnamed.verdict->affinityMatches);
  EXPECT_EQ(unnamed.verdict->terms.size(), kTermsExplained);
  EXPECT_EQ(unnamed.verdict->termsNotExplained, 20 - kTermsExplained);
  EXPECT_THAT(unnamed.verdict->cause, HasSubstr("term 0: kubernetes.io/hostname is gpu-00003 | term 1: "));
  EXPECT_THAT(unnamed.verdict->cause, HasSubstr("| 12 more terms"));
  EXPECT_TRUE(m.reach.nodes.at(1).verdict->affinityMatches);
}

TEST(ClusterReachBounds, APodTooLargeToJudgeIsJudgedAsWithoutFactsAndSaysSo) {
  // Terms that name no host (NotIn) may match any node: 2001 of them on 2000
  // nodes would be 4,002,000 tries, over kMaxTermTries.
  const std::size_t nodes = 2000;
  json terms = json::array();
  for (std::size_t i = 0; i <= kMaxTermTries / nodes; ++i) {
    terms.push_back({{"matchExpressions", json::array({{{"key", "kubernetes.io/hostname"},
                                                        {"operator", "NotIn"},
                                                        {"values", {nodeName(i)}}}})}});
  }
  const auto facts = cluster(nodes);
  const json pod = podWithTerms(terms);
  const Measured m = reachCounted(pod, *facts);
  EXPECT_THAT(m.reach.notJudged, HasSubstr("2001 terms that name no node, to try on each of 2000 nodes"));
  EXPECT_THAT(m.reach.nodes, IsEmpty());
  const auto findings = testing::judgeWithCluster(pod.dump(), *facts,
                                                  testing::onlyRules({"gpu-unschedulable", "gpu-missing-driver-pin"}));
  ASSERT_THAT(testing::rulesHit(findings), ElementsAre("gpu-missing-driver-pin", "gpu-unschedulable"));
  EXPECT_EQ(findings[1].severity, Severity::Warning);
  EXPECT_THAT(findings[1].message(), HasSubstr("not judged against the cluster's nodes (snapshot test)"));
  // The pin: a warning as without facts, not the mixed-driver error.
  EXPECT_EQ(findings[0].severity, Severity::Warning);
  EXPECT_THAT(findings[0].message(), ::testing::Not(HasSubstr("CUDA driver majors")));
}

}  // namespace
}  // namespace gpuguard
