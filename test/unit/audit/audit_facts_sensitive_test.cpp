// Which objects a change of the cluster facts re-judges (audit/facts_sensitive.h):
// pods that ask for GPUs or hold DRA claims, DaemonSets, LimitRanges, NodePools.
#include <gtest/gtest.h>

#include "audit/facts_sensitive.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::audit {
namespace {

nlohmann::json object(const std::string& yamlText) {
  yaml::ParseResult parsed = yaml::parseStream(yamlText);
  if (parsed.error || parsed.documents.size() != 1) throw std::runtime_error("test YAML does not parse");
  return parsed.documents.front().value;
}

TEST(FactsSensitiveTest, APodTemplateAskingForGpusIs) {
  EXPECT_TRUE(factsSensitive(object(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: ml}
spec:
  template:
    spec:
      containers:
      - {name: server, image: vllm/vllm-openai:v0.6.3, resources: {limits: {nvidia.com/gpu: 1}}}
)"), Policy{}, nullptr));
}

TEST(FactsSensitiveTest, APodWithoutGpusOrClaimsIsNot) {
  EXPECT_FALSE(factsSensitive(object(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ml}
spec:
  template:
    spec:
      containers:
      - {name: web, image: nginx:1.27, resources: {limits: {cpu: 1}}}
)"), Policy{}, nullptr));
}

TEST(FactsSensitiveTest, APodWithDraClaimsIs) {
  EXPECT_TRUE(factsSensitive(object(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  resourceClaims: [{name: accel, resourceClaimTemplateName: accelerators}]
  containers:
  - {name: c, image: busybox:1.36, resources: {claims: [{name: accel}]}}
)"), Policy{}, nullptr));
}

TEST(FactsSensitiveTest, DaemonSetsLimitRangesAndNodePoolsAre) {
  for (const char* kind : {"DaemonSet", "LimitRange", "NodePool"}) {
    EXPECT_TRUE(factsSensitive(nlohmann::json{{"kind", kind}, {"metadata", {{"name", "x"}}}}, Policy{}, nullptr)) << kind;
  }
}

TEST(FactsSensitiveTest, WhatIsNoObjectIsNot) {
  EXPECT_FALSE(factsSensitive(nlohmann::json("text"), Policy{}, nullptr));
  EXPECT_FALSE(factsSensitive(nlohmann::json::parse(R"({"kind": 7, "metadata": []})"), Policy{}, nullptr));
}

}  // namespace
}  // namespace gpuguard::audit
