// device-plugin-config beyond DaemonSets: a GPU Operator ClusterPolicy whose
// daemonsets.tolerations replace every operand's and drop the GPU taint, and
// a device plugin sharing config with replicas below 2
// (kubernetes-gpu-semantics.md §9.5, §15.5).
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

const Policy kRule = onlyRules({"device-plugin-config"});

std::string clusterPolicy(const std::string& tolerations) {
  return "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: cluster-policy}\nspec:\n  daemonsets:\n"
         "    tolerations: " + tolerations + "\n";
}

TEST(GpuOperatorConfig, ClusterPolicyTolerationsThatDropTheGpuTaintKeepEveryOperandOff) {
  const auto f = judgeYaml(clusterPolicy("[{key: CriticalAddonsOnly, operator: Exists}]"), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("device-plugin-config"));
  EXPECT_EQ(f[0].field(), "spec.daemonsets.tolerations");
  EXPECT_THAT(f[0].message(), HasSubstr("replaces the tolerations of every GPU Operator operand DaemonSet"));
  EXPECT_THAT(f[0].message(), HasSubstr("add {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}"));
}

TEST(GpuOperatorConfig, TheChartDefaultOrNoListIsFine) {
  EXPECT_THAT(judgeYaml(clusterPolicy("[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}, "
                                      "{key: CriticalAddonsOnly, operator: Exists}]"),
                        kRule),
              IsEmpty());
  EXPECT_THAT(judgeYaml(clusterPolicy("[{operator: Exists}]"), kRule), IsEmpty());
  EXPECT_THAT(judgeYaml(clusterPolicy("[]"), kRule), IsEmpty());
}

std::string sharingConfigMap(const std::string& replicas) {
  return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: time-slicing-config}\ndata:\n  any: |-\n    version: v1\n"
         "    sharing:\n      timeSlicing:\n        resources:\n        - name: nvidia.com/gpu\n          replicas: " +
         replicas + "\n";
}

TEST(GpuOperatorConfig, ASharingConfigWithOneReplicaFailsThePluginsConfigLoad) {
  const auto f = judgeYaml(sharingConfigMap("1"), kRule);
  ASSERT_THAT(rulesHit(f), ElementsAre("device-plugin-config"));
  EXPECT_EQ(f[0].field(), "data[any]");
  EXPECT_THAT(f[0].message(), HasSubstr("number of replicas must be >= 2"));
  EXPECT_THAT(judgeYaml(sharingConfigMap("4"), kRule), IsEmpty());
}

TEST(GpuOperatorConfig, OtherConfigMapsAreNotSharingConfigs) {
  const std::string other = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata:\n"
                            "  app.yaml: |-\n    replicas: 1\n    timestamps: true\n";
  EXPECT_THAT(judgeYaml(other, kRule), IsEmpty());
}

}  // namespace
}  // namespace gpuguard
