// Fragments (kustomize patches a kustomization lists), pod specs whose
// containers have no image (judged whole), and the object a finding is
// about: the engine's side of gpuguard-lint on GitOps trees.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/engine.h"
#include "rules/object_ref.h"
#include "rules/registry.h"
#include "test/unit/test_support.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::rulesHit;

nlohmann::json parsed(const std::string& text) { return yaml::parseStream(text).documents.at(0).value; }

// A strategic-merge patch that only changes the GPU count.
const char* const kPatch = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: train}
spec:
  template:
    spec:
      containers:
      - name: trainer
        resources:
          requests: {nvidia.com/gpu: 16}
          limits: {nvidia.com/gpu: "0.5"}
)";

TEST(Fragment, IsJudgedForWhatItSaysNotForWhatItLacks) {
  const nlohmann::json patch = parsed(kPatch);
  JudgeOptions whole;
  // As a whole object: no toleration, no pin, limits and requests differ...
  EXPECT_THAT(rulesHit(judge(patch, Policy{}, whole)),
              ::testing::IsSupersetOf({"gpu-fractional", "gpu-missing-toleration", "gpu-missing-driver-pin"}));
  JudgeOptions fragment;
  fragment.fragment = true;
  // ...as a fragment, only what the patch decides on its own.
  EXPECT_THAT(rulesHit(judge(patch, Policy{}, fragment)), ElementsAre("gpu-fractional", "gpu-requests-limits-mismatch"));
}

TEST(Fragment, EveryRuleDeclaresWhatItJudges) {
  // The rules that judge what is missing, or add up the pod, need the whole object.
  for (const char* id : {"gpu-missing-toleration", "gpu-missing-driver-pin", "gpu-requests-without-limits",
                         "gpu-count-exceeds-node", "gpu-toleration-without-request", "cuda-driver-too-old"}) {
    ASSERT_NE(findRule(id), nullptr) << id;
    EXPECT_EQ(judgesOf(*findRule(id)), Judges::WholeObject) << id;
  }
  for (const char* id : {"gpu-fractional", "gpu-invalid-quantity", "gpu-resource-name", "label-value-not-string"}) {
    EXPECT_EQ(judgesOf(*findRule(id)), Judges::WhatIsWritten) << id;
  }
}

// A Spark executor pod template (spark.kubernetes.executor.podTemplateFile):
// Spark sets the image, the template is where tolerations must be written.
const char* const kSparkTemplate = R"(apiVersion: v1
kind: Pod
metadata:
  labels: {spark-role: executor}
spec:
  nodeSelector: {nvidia.com/cuda.driver-version.major: "470"}
  containers:
  - name: spark-kubernetes-executor
    resources: {limits: {nvidia.com/gpu: 1}}
)";

TEST(Fragment, APodSpecWithoutAnImageIsJudgedWholeForWhatItSaysAndLacks) {
  // No kustomization lists it, so nothing makes it a patch: the missing
  // toleration keeps the executors Pending, and the engine says so. Driver
  // 470 is too old for most CUDA images, but it names none: what only an
  // image tells is not concluded (CudaDriverTooOld.AContainerWithoutAnImage...).
  EXPECT_THAT(rulesHit(judge(parsed(kSparkTemplate), Policy{})), ElementsAre("gpu-missing-toleration"));
}

TEST(ObjectRef, AListItemIsTheObjectNotTheList) {
  const nlohmann::json list = parsed(R"(apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: team-b}, spec: {containers: [{name: c, image: x}]}}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: half, namespace: team-a}
  spec: {template: {spec: {containers: [{name: c, image: x}]}}}
)");
  const ObjectLocator locator(list);
  const ObjectRef ref = locator.at("/items/1/spec/template/spec/containers/0/resources");
  EXPECT_EQ(ref.apiVersion, "apps/v1");
  EXPECT_EQ(ref.kind, "Deployment");
  EXPECT_EQ(ref.ns, "team-a");
  EXPECT_EQ(ref.name, "half");
  EXPECT_EQ(ref.pointer, "/items/1");
  EXPECT_EQ(ref.podTemplate, "spec.template.spec");
  EXPECT_EQ(ref.display(), "Deployment/team-a/half");
  ASSERT_EQ(locator.objects().size(), 2u);
  EXPECT_EQ(locator.objects()[0].display(), "Pod/team-b/a");
  EXPECT_EQ(ObjectLocator(parsed("apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n")).at("").display(),
            "Namespace/ml");
  EXPECT_EQ(ObjectLocator(parsed("apiVersion: v1\nkind: Pod\nmetadata: {generateName: w-}\n")).at("").display(), "Pod/w-");
}

}  // namespace
}  // namespace gpuguard
