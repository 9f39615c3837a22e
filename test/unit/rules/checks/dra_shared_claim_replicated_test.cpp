// dra-shared-claim-replicated: a ResourceClaim named by resourceClaimName is
// shared by every pod that names it, and its allocation pins them all to one
// node; a replicated workload wants a claim per pod (resourceClaimTemplateName)
// (kubernetes-gpu-semantics.md §15.2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/test_support.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::judgeYaml;
using testing::onlyRules;
using testing::rulesHit;

const Policy kRule = onlyRules({"dra-shared-claim-replicated"});

std::string deployment(const std::string& replicas, const std::string& claim, const std::string& podLines = "") {
  return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n" + replicas +
         "  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n    spec:\n" + podLines +
         "      resourceClaims: [{name: gpu, " + claim + "}]\n      containers:\n      - name: c\n"
         "        image: busybox\n        resources: {claims: [{name: gpu}]}\n";
}

TEST(DraSharedClaimReplicated, SharingOnPurposeIsNotReported) {
  // The Kubernetes DRA docs' example Job shares a claim among its pods on
  // purpose; nothing keeps the replicas from sharing one node.
  EXPECT_THAT(judgeYaml(deployment("  replicas: 3\n", "resourceClaimName: shared-gpu"), kRule), IsEmpty());
}

TEST(DraSharedClaimReplicated, AntiAffinityKeepsTheOtherReplicasPending) {
  const std::string anti =
      "      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
      "          - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: a}}}\n";
  const auto f = judgeYaml(deployment("  replicas: 2\n", "resourceClaimName: shared-gpu", anti), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("dra-shared-claim-replicated"));
  EXPECT_EQ(f[0].severity, Severity::Error);
  EXPECT_EQ(f[0].field(), "spec.template.spec.resourceClaims[0].resourceClaimName");
  EXPECT_THAT(f[0].message(), HasSubstr("all 2 replicas of the Deployment share this one ResourceClaim"));
  EXPECT_THAT(f[0].message(), HasSubstr("keeps all but one replica Pending"));
}

TEST(DraSharedClaimReplicated, AHostnameSpreadToo) {
  const std::string spread =
      "      topologySpreadConstraints:\n      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, "
      "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: a}}}\n";
  EXPECT_THAT(rulesHit(judgeYaml(deployment("  replicas: 2\n", "resourceClaimName: shared-gpu", spread), kRule)),
              ElementsAre("dra-shared-claim-replicated"));
}

TEST(DraSharedClaimReplicated, WholeGpusPerPodThatCannotAllFitOneNode) {
  // 3 replicas x 4 GPUs each on the one node the claim pins them to: > 8.
  const std::string job =
      "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  replicas: 3\n  template:\n"
      "    spec:\n      resourceClaims: [{name: imex, resourceClaimName: channel}]\n      containers:\n"
      "      - name: c\n        image: busybox\n        resources:\n          limits: {nvidia.com/gpu: 4}\n"
      "          claims: [{name: imex}]\n";
  const auto f = judgeYaml(job, kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("dra-shared-claim-replicated"));
  EXPECT_THAT(f[0].message(), HasSubstr("together they ask 12 GPUs of that node"));
}

TEST(DraSharedClaimReplicated, OneReplicaOrAClaimPerPodIsFine) {
  const std::string anti =
      "      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
      "          - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: a}}}\n";
  EXPECT_THAT(judgeYaml(deployment("", "resourceClaimName: shared-gpu", anti), kRule), IsEmpty());
  EXPECT_THAT(judgeYaml(deployment("  replicas: 1\n", "resourceClaimName: shared-gpu", anti), kRule), IsEmpty());
  EXPECT_THAT(judgeYaml(deployment("  replicas: 3\n", "resourceClaimTemplateName: one-gpu", anti), kRule),
              IsEmpty());
}

TEST(DraSharedClaimReplicated, AJobsParallelismCountsToo) {
  const std::string job =
      "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  parallelism: 4\n  template:\n    spec:\n"
      "      restartPolicy: Never\n      resourceClaims: [{name: gpu, resourceClaimName: shared-gpu}]\n"
      "      containers:\n      - name: c\n        image: busybox\n"
      "        resources: {limits: {nvidia.com/gpu: 4}, claims: [{name: gpu}]}\n";
  EXPECT_THAT(rulesHit(judgeYaml(job, kRule)), ElementsAre("dra-shared-claim-replicated"));
}

TEST(DraSharedClaimReplicated, ASharedClaimsDevicesServeEveryReplicaOnce) {
  // The red team's Deployment (redteam31 A2): 3 replicas share a 4-GPU
  // ResourceClaim; kube-scheduler bound all 3 to one node on the same 4
  // devices. The shared claim is allocated once: 4 GPUs, not 12.
  const std::string claim =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: four-gpus}\nspec:\n  devices:\n"
      "    requests:\n    - name: gpus\n      exactly: {deviceClassName: gpu.nvidia.com, count: 4}\n---\n";
  EXPECT_THAT(testing::judgeInput(claim + deployment("  replicas: 3\n", "resourceClaimName: four-gpus"), kRule),
              IsEmpty());
}

TEST(DraSharedClaimReplicated, OnlyWhatEachPodAsksOnItsOwnMultiplies) {
  // 3 replicas x 2 GPUs each, plus the shared claim's 4 once: 10 > 8.
  const std::string claim =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: four-gpus}\nspec:\n  devices:\n"
      "    requests:\n    - name: gpus\n      exactly: {deviceClassName: gpu.nvidia.com, count: 4}\n---\n";
  std::string workload = deployment("  replicas: 3\n", "resourceClaimName: four-gpus");
  workload.replace(workload.find("{claims:"), 8, "{limits: {nvidia.com/gpu: 2}, claims:");
  const auto f = testing::judgeInput(claim + workload, kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("dra-shared-claim-replicated"));
  EXPECT_THAT(f[0].message(), HasSubstr("together they ask 10 GPUs of that node"));
}

TEST(DraSharedClaimReplicated, AJobRunsNoMorePodsAtOnceThanItsCompletions) {
  // The red team's Job (redteam31 A3): parallelism 4, completions 1 runs one
  // pod at a time ("Higher values of .spec.parallelism are effectively ignored").
  const std::string anti =
      "      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
      "          - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: j}}}\n";
  const auto job = [&](const std::string& counts) {
    return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n" + counts + "  template:\n    spec:\n" +
           anti +
           "      restartPolicy: Never\n      resourceClaims: [{name: gpu, resourceClaimName: shared-gpu}]\n"
           "      containers:\n      - name: c\n        image: busybox\n        resources: {claims: [{name: gpu}]}\n";
  };
  EXPECT_THAT(judgeYaml(job("  parallelism: 4\n  completions: 1\n"), kRule), IsEmpty());
  EXPECT_THAT(judgeYaml(job("  completions: 4\n"), kRule), IsEmpty());  // parallelism defaults to 1
  const auto f = judgeYaml(job("  parallelism: 4\n  completions: 2\n"), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("dra-shared-claim-replicated"));
  EXPECT_THAT(f[0].message(), HasSubstr("all 2 replicas of the Job"));
}

TEST(DraSharedClaimReplicated, TheDocumentedExamplesFireAndStayQuiet) {
  const Rule* rule = findRule("dra-shared-claim-replicated");
  ASSERT_NE(rule, nullptr);
  EXPECT_THAT(rulesHit(judgeYaml(std::string(rule->doc().wrongExample), kRule)),
              ElementsAre("dra-shared-claim-replicated"));
  EXPECT_THAT(judgeYaml(std::string(rule->doc().rightExample), kRule), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
