// /metrics says whether admission judges with the cluster's facts, and why not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "webhook/metrics.h"

namespace gpuguard::webhook {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

cluster::FactsStatus refusedNodePools() {
  cluster::FactsStatus s;
  s.resources = {{"nodes", cluster::ResourceState::Synced, 5000, 3, 1, ""},
                 {"nodepools.karpenter.sh", cluster::ResourceState::Refused, 0, 0, 0, "forbidden"},
                 {"deviceclasses.resource.k8s.io", cluster::ResourceState::NotServed, 0, 0, 0, ""}};
  s.synced = false;
  s.ageSeconds = 12.5;
  return s;
}

TEST(ClusterFactsMetricsTest, EachResourceSaysWhetherItIsSyncedAndHowManyRecordsItHolds) {
  ExternalCounters external;
  external.clusterFacts = refusedNodePools();
  const std::string text = Metrics("t").render(external);
  EXPECT_THAT(text, HasSubstr("# TYPE gpuguard_cluster_facts_in_use gauge\ngpuguard_cluster_facts_in_use 0\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_cluster_facts_synced{resource=\"nodes\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_cluster_facts_synced{resource=\"nodepools.karpenter.sh\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_cluster_facts_synced{resource=\"deviceclasses.resource.k8s.io\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_cluster_facts_age_seconds 12.5\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_cluster_facts_objects{resource=\"nodes\"} 5000\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_cluster_facts_watch_restarts_total{resource=\"nodes\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_cluster_facts_relists_total{resource=\"nodes\"} 1\n"));
}

TEST(ClusterFactsMetricsTest, NoAgeBeforeTheFirstSyncAndNoSeriesWhenFactsAreOff) {
  ExternalCounters external;
  external.clusterFacts = refusedNodePools();
  external.clusterFacts->ageSeconds = -1;
  EXPECT_THAT(Metrics("t").render(external), Not(HasSubstr("gpuguard_cluster_facts_age_seconds")));
  EXPECT_THAT(Metrics("t").render(ExternalCounters{}), Not(HasSubstr("gpuguard_cluster_facts")));
}

}  // namespace
}  // namespace gpuguard::webhook
