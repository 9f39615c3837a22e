// Fail-safe (docs/cluster-facts.md): while the cluster facts are configured
// but missing (before the first sync, API server unreachable, RBAC refusing,
// a dead watch), the webhook must not deny what it would admit with them. An
// error the facts could overturn (RuleDoc::withoutFacts) is a warning that
// says the facts were missing and what it was judged against; an error the
// facts cannot change still denies; with facts off by configuration nothing
// changes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "rules/registry.h"
#include "test/unit/webhook/admission_test_support.h"
#include "webhook/metrics.h"

namespace gpuguard::webhook {
namespace {

using admission_test::objectFromYaml;
using admission_test::reviewBody;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// A GPU pod pinned to its driver that tolerates no taint: on a cluster whose
// GPU nodes are untainted (AKS's default, an EKS node group without taint) it
// schedules.
constexpr const char* kUntoleratedPod = R"(
apiVersion: v1
kind: Pod
metadata: {name: eks, namespace: ml}
spec:
  nodeSelector: {nvidia.com/cuda.driver-version.major: "570"}
  containers:
  - name: cuda
    image: nvidia/cuda:12.8.0-base-ubuntu22.04
    resources:
      limits: {nvidia.com/gpu: "1"}
)";

// The cluster of that pod: one untainted GPU node on driver 570.
std::shared_ptr<const ClusterFacts> untaintedGpuCluster() {
  ClusterFactsBuilder builder;
  builder.setSource("cluster https://10.0.0.1:443");
  builder.add(json{{"apiVersion", "v1"},
                   {"kind", "Node"},
                   {"metadata", {{"name", "gpu-eks"}, {"labels", {{"nvidia.com/cuda.driver-version.major", "570"}}}}},
                   {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}}}, {"capacity", {{"nvidia.com/gpu", "8"}}}}}});
  builder.markListed(FactKind::Node);
  return builder.build();
}

struct Answer {
  AdmissionResult result;
  json response;
  std::vector<std::string> warnings() const {
    return response.contains("warnings") ? response["warnings"].get<std::vector<std::string>>()
                                         : std::vector<std::string>{};
  }
};

Answer reviewWith(const char* yaml, const FactsInUse& facts) {
  Answer a{review(reviewBody(objectFromYaml(yaml)), AdmissionPolicy{}, AdmissionLimits{}, facts), json()};
  a.response = json::parse(a.result.body).at("response");
  return a;
}

TEST(AdmissionFactsMissingTest, TheSyncedFactsAdmitAPodOnUntaintedGpuNodes) {
  const auto cluster = untaintedGpuCluster();
  const Answer a = reviewWith(kUntoleratedPod, FactsInUse{cluster.get(), {}});
  EXPECT_TRUE(a.response.at("allowed").get<bool>());
  EXPECT_TRUE(a.result.hits.empty());
}

TEST(AdmissionFactsMissingTest, MissingFactsWarnWhatTheFactsCouldAdmitAndSayWhy) {
  const Answer a = reviewWith(kUntoleratedPod, FactsInUse{nullptr, "nodes unreachable"});
  EXPECT_TRUE(a.response.at("allowed").get<bool>());
  ASSERT_EQ(a.warnings().size(), 1u);
  EXPECT_THAT(a.warnings()[0], StartsWith("gpu-missing-toleration: cluster facts unavailable (nodes unreachable): "
                                          "judged against the policy's gpuTaints, so a warning, not a denial; "
                                          "spec.tolerations: "));
  ASSERT_EQ(a.result.hits.size(), 1u);
  EXPECT_FALSE(a.result.hits[0].denied);
  EXPECT_TRUE(a.result.hits[0].failedOpen);
}

TEST(AdmissionFactsMissingTest, FactsOffByConfigurationDenyAsAlways) {
  const Answer a = reviewWith(kUntoleratedPod, FactsInUse{});
  EXPECT_FALSE(a.response.at("allowed").get<bool>());
  EXPECT_THAT(a.response.at("status").at("message").get<std::string>(),
              HasSubstr("no toleration for the GPU node taint nvidia.com/gpu:NoSchedule"));
  EXPECT_THAT(a.response.at("status").at("message").get<std::string>(), Not(HasSubstr("cluster facts")));
}

TEST(AdmissionFactsMissingTest, AnErrorTheFactsCannotChangeStillDenies) {
  // Half a GPU is invalid whatever the cluster holds.
  const Answer a = reviewWith(R"(
apiVersion: v1
kind: Pod
metadata: {name: half, namespace: ml}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  nodeSelector: {nvidia.com/cuda.driver-version.major: "570"}
  containers:
  - name: cuda
    image: nvidia/cuda:12.8.0-base-ubuntu22.04
    resources:
      limits: {nvidia.com/gpu: "0.5"}
)",
                              FactsInUse{nullptr, "nodes not listed yet"});
  EXPECT_FALSE(a.response.at("allowed").get<bool>());
  EXPECT_THAT(a.response.at("status").at("message").get<std::string>(), HasSubstr("[gpu-fractional]"));
}

TEST(AdmissionFactsMissingTest, TooManyGpusForThePolicyFailOpenToo) {
  // Without facts the policy's maxGpusPerNode (8) judges; a cluster of
  // 16-GPU nodes would admit the pod, so a policy that makes it an error
  // warns while the facts are missing.
  AdmissionPolicy policy;
  policy.engine.rules["gpu-count-exceeds-node"] = RuleSetting::Error;
  const std::string body = reviewBody(objectFromYaml(R"(
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: ml}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  nodeSelector: {nvidia.com/cuda.driver-version.major: "570"}
  containers:
  - name: cuda
    image: nvidia/cuda:12.8.0-base-ubuntu22.04
    resources:
      limits: {nvidia.com/gpu: "16"}
)"));
  EXPECT_EQ(review(body, policy, {}, FactsInUse{}).decision, Decision::Denied);
  const AdmissionResult missing = review(body, policy, {}, FactsInUse{nullptr, "nodes refused"});
  EXPECT_EQ(missing.decision, Decision::Allowed);
  EXPECT_THAT(json::parse(missing.body)["response"]["warnings"][0].get<std::string>(),
              StartsWith("gpu-count-exceeds-node: cluster facts unavailable (nodes refused): judged against the "
                         "policy's maxGpusPerNode"));
}

TEST(AdmissionFactsMissingTest, OnlyRulesWhoseErrorsTheFactsCanOverturnSayWhatTheyJudgeWithoutThem) {
  EXPECT_EQ(judgedWithoutFactsAgainst("gpu-missing-toleration"), "the policy's gpuTaints");
  EXPECT_EQ(judgedWithoutFactsAgainst("gpu-count-exceeds-node"), "the policy's maxGpusPerNode");
  EXPECT_EQ(judgedWithoutFactsAgainst("gpu-fractional"), "");
  EXPECT_EQ(judgedWithoutFactsAgainst("no-such-rule"), "");
}

TEST(AdmissionFactsMissingTest, MetricsCountTheErrorsThatFailedOpenByRule) {
  Metrics metrics("t");
  metrics.observe(reviewWith(kUntoleratedPod, FactsInUse{nullptr, "nodes unreachable"}).result,
                  std::chrono::milliseconds(1));
  metrics.observe(reviewWith(kUntoleratedPod, FactsInUse{}).result, std::chrono::milliseconds(1));
  const std::string text = metrics.render();
  EXPECT_THAT(text, HasSubstr("gpuguard_admission_failed_open_total{rule=\"gpu-missing-toleration\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpuguard_admission_findings_total{rule=\"gpu-missing-toleration\",severity=\"error\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("gpuguard_admission_findings_total{rule=\"gpu-missing-toleration\",severity=\"warning\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("gpuguard_admission_failed_open_total{rule=\"gpu-fractional\"}")));
}

}  // namespace
}  // namespace gpuguard::webhook
