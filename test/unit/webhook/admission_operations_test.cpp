// The admission decision, continued (see admission_test.cpp): which operations
// are judged, UPDATE, the webhook's policy keys, custom resources.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "test/unit/webhook/admission_test_support.h"
#include "test/unit/test_support.h"
#include "webhook/admission.h"
#include "yaml/policy_file.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::StartsWith;
using gpuguard::testing::onlyRules;
using namespace admission_test;

// ---------------------------------------------------------------------------
// Operations: what is judged and what is let through.
// ---------------------------------------------------------------------------

TEST(AdmissionOperations, DeleteIsAlwaysAllowed) {
  Request rq;
  rq.operation = "DELETE";
  rq.oldObject = objectFromYaml(kBarePod);
  const Reply r = reviewRaw(reviewBody(nullptr, rq));
  EXPECT_TRUE(r.allowed());
  EXPECT_EQ(r.result.skipped, "DELETE");
  EXPECT_THAT(r.warnings(), IsEmpty());
}

TEST(AdmissionOperations, ConnectIsAlwaysAllowed) {
  Request rq;
  rq.operation = "CONNECT";
  rq.subResource = "exec";
  const Reply r = reviewRaw(reviewBody(json{{"kind", "PodExecOptions"}, {"apiVersion", "v1"}}, rq));
  EXPECT_TRUE(r.allowed());
}

TEST(AdmissionOperations, DryRunIsJudgedTheSame) {
  Request rq;
  rq.dryRun = true;
  const Reply dry = admit(kBarePod, AdmissionPolicy{}, rq);
  const Reply real = admit(kBarePod);
  EXPECT_FALSE(dry.allowed());
  EXPECT_TRUE(dry.result.dryRun);
  EXPECT_EQ(dry.message(), real.message());
}

TEST(AdmissionOperations, SubresourcesAreAllowed) {
  // The kubelet updates pod status constantly; a binding or a scale never
  // changes what the pod asks for.
  for (const char* sub : {"status", "scale", "binding", "ephemeralcontainers", "eviction"}) {
    Request rq;
    rq.operation = "UPDATE";
    rq.subResource = sub;
    rq.oldObject = objectFromYaml(kBarePod);
    const Reply r = admit(kBarePod, AdmissionPolicy{}, rq);
    EXPECT_TRUE(r.allowed()) << sub;
    EXPECT_EQ(r.result.skipped, std::string("subresource ") + sub);
  }
}

TEST(AdmissionOperations, CreateOfAnyKindIsJudged) {
  const Reply r = admit(R"(
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: c
            resources:
              limits: {nvidia.com/gpu: "1"}
)");
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.message(), HasSubstr("spec.jobTemplate.spec.template.spec.tolerations: Required value"));
  EXPECT_EQ(r.result.kind, "CronJob");
  EXPECT_EQ(r.result.group, "batch");
}

TEST(AdmissionOperations, ObjectsWithoutGpusAreAllowedQuietly) {
  const Reply r = admit(R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: b}
)");
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(r.warnings(), IsEmpty());
}

// ---------------------------------------------------------------------------
// UPDATE: deny only what the update introduces.
// ---------------------------------------------------------------------------

TEST(AdmissionUpdate, FindingsTheOldObjectAlreadyHadBecomeWarnings) {
  // A pod admitted before the webhook was installed must still be able to
  // change its labels.
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = objectFromYaml(kBarePod);
  json updated = objectFromYaml(kBarePod);
  updated["metadata"]["labels"] = {{"touched", "yes"}};
  const Reply r = reviewRaw(reviewBody(updated, rq));
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(r.warnings(), Contains(AllOf(StartsWith("gpu-missing-toleration: spec.tolerations: "),
                                           EndsWith("(already present before this update)"))));
  EXPECT_THAT(r.rules(true), IsEmpty());
  EXPECT_THAT(r.rules(false), Contains("gpu-missing-toleration"));
}

// A DRA pod the scheduler bound (spec.nodeName set by the binding, status
// Running): a `kubectl label` of it is an UPDATE whose object carries the
// status, which says the nodeName is the scheduler's, as the linter reads it.
constexpr const char* kBoundDraPod = R"(
apiVersion: v1
kind: Pod
metadata: {name: infer, namespace: ml}
spec:
  nodeName: gpu-node-3
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: single-gpu}
  containers:
  - name: cuda
    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
    resources: {claims: [{name: gpu}]}
status:
  phase: Running
  conditions:
  - {type: PodScheduled, status: "True"}
  containerStatuses:
  - {name: cuda, ready: true, restartCount: 0, image: cuda, imageID: "", started: true}
)";

TEST(AdmissionUpdate, AnUpdateOfAPodTheSchedulerBoundReadsItsStatus) {
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = objectFromYaml(kBoundDraPod);
  json updated = objectFromYaml(kBoundDraPod);
  updated["metadata"]["labels"] = {{"touched", "yes"}};
  const Reply r = reviewRaw(reviewBody(updated, rq));
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(r.rules(false), Not(Contains("dra-claim-with-node-name")));
  EXPECT_THAT(r.rules(true), Not(Contains("dra-claim-with-node-name")));
}

TEST(AdmissionUpdate, AStatusWrittenIntoACreateIsNotBelieved) {
  // The API server resets a created pod's status (PrepareForCreate), so a
  // client's "Running" cannot hide that its nodeName bypasses the scheduler.
  const Reply r = reviewRaw(reviewBody(objectFromYaml(kBoundDraPod)));
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.rules(true), Contains("dra-claim-with-node-name"));
}

TEST(AdmissionUpdate, WhatTheUpdateIntroducesIsDenied) {
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = objectFromYaml(kGoodPod);
  const Reply r = admit(kBarePod, AdmissionPolicy{}, rq);
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.message(), HasSubstr("[gpu-missing-toleration]"));
}

TEST(AdmissionUpdate, OldAndNewFindingsAreToldApart) {
  // The old Deployment lacked a toleration; the update also makes the GPU
  // count fractional. Only the fraction is the update's doing.
  const std::string before = gpuguard::testing::gpuPod("limits: {nvidia.com/gpu: \"1\"}", "Deployment");
  json oldObject = objectFromYaml(before);
  oldObject["spec"]["template"]["spec"].erase("tolerations");
  json newObject = oldObject;
  newObject["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "500m";
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = oldObject;
  const AdmissionPolicy policy = AdmissionPolicy{onlyRules({"gpu-missing-toleration", "gpu-fractional"})};
  const Reply r = reviewRaw(reviewBody(newObject, rq), policy);
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.rules(true), ElementsAre("gpu-fractional"));
  EXPECT_THAT(r.rules(false), ElementsAre("gpu-missing-toleration"));
  EXPECT_THAT(r.message(), Not(HasSubstr("toleration")));
  EXPECT_THAT(r.warnings(), ElementsAre(StartsWith("gpu-missing-toleration: spec.template.spec.tolerations: ")));
}

TEST(AdmissionUpdate, AContainerInsertedInFrontLeavesTheOldFindingsOld) {
  // Findings are matched by the container's name, not its index: adding a
  // sidecar at containers[0] introduces nothing about the GPU container.
  const std::string before = gpuguard::testing::gpuPod("limits: {nvidia.com/gpu: \"500m\"}", "Deployment");
  const json oldObject = objectFromYaml(before);
  json newObject = oldObject;
  json& containers = newObject["spec"]["template"]["spec"]["containers"];
  containers.insert(containers.begin(), json{{"name", "log-shipper"}, {"image", "fluent/fluent-bit:3.2"}});
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = oldObject;
  const AdmissionPolicy policy = AdmissionPolicy{onlyRules({"gpu-fractional"})};
  const Reply r = reviewRaw(reviewBody(newObject, rq), policy);
  EXPECT_TRUE(r.allowed()) << r.message();
  EXPECT_THAT(r.warnings(), ElementsAre(AllOf(HasSubstr("spec.template.spec.containers[1].resources.limits"),
                                              EndsWith("(already present before this update)"))));
  // A second GPU container with the same fault is the update's doing.
  json gpu = oldObject["spec"]["template"]["spec"]["containers"][0];
  gpu["name"] = "second";
  containers.push_back(gpu);
  const Reply added = reviewRaw(reviewBody(newObject, rq), policy);
  EXPECT_FALSE(added.allowed());
  EXPECT_THAT(added.message(), HasSubstr("spec.template.spec.containers[2].resources.limits"));
  EXPECT_THAT(added.message(), Not(HasSubstr("containers[1]")));
}

TEST(AdmissionUpdate, AWorkerGroupInsertedOrRemovedInFrontLeavesTheOldFindingsOld) {
  // KubeRay names worker groups by groupName (redteam31 A15): a CPU group
  // added in front of, or removed from before, a GPU group admitted without
  // the toleration introduces nothing about that group.
  const json withoutCpu = objectFromYaml(
      "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: rc, namespace: ml}\nspec:\n"
      "  headGroupSpec:\n    template:\n      spec:\n        containers: [{name: head, image: rayproject/ray:2.40.0}]\n"
      "  workerGroupSpecs:\n  - groupName: gpu\n    replicas: 1\n    template:\n      spec:\n"
      "        containers:\n        - {name: w, image: rayproject/ray:2.40.0-gpu, resources: {limits: {nvidia.com/gpu: 1}}}\n");
  json withCpu = withoutCpu;
  json& groups = withCpu["spec"]["workerGroupSpecs"];
  json cpu = groups[0];
  cpu["groupName"] = "cpu";
  cpu["template"]["spec"]["containers"][0]["resources"] = json::object();
  groups.insert(groups.begin(), cpu);
  const AdmissionPolicy policy = AdmissionPolicy{onlyRules({"gpu-missing-toleration"})};
  for (const auto& [before, after] : {std::pair{&withoutCpu, &withCpu}, std::pair{&withCpu, &withoutCpu}}) {
    Request rq;
    rq.operation = "UPDATE";
    rq.oldObject = *before;
    const Reply r = reviewRaw(reviewBody(*after, rq), policy);
    EXPECT_TRUE(r.allowed()) << r.message();
    EXPECT_THAT(r.warnings(), ElementsAre(EndsWith("(already present before this update)")));
  }
  // A second GPU group of another groupName is the update's doing.
  json secondGpu = withoutCpu;
  json gpu2 = secondGpu["spec"]["workerGroupSpecs"][0];
  gpu2["groupName"] = "gpu-2";
  secondGpu["spec"]["workerGroupSpecs"].push_back(gpu2);
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = withoutCpu;
  const Reply added = reviewRaw(reviewBody(secondGpu, rq), policy);
  EXPECT_FALSE(added.allowed());
  EXPECT_THAT(added.message(), HasSubstr("workerGroupSpecs[1]"));
}

TEST(AdmissionUpdate, WithoutAnOldObjectEverythingCounts) {
  Request rq;
  rq.operation = "UPDATE";
  const Reply r = admit(kBarePod, AdmissionPolicy{}, rq);
  EXPECT_FALSE(r.allowed());
}

TEST(AdmissionUpdate, AnObjectBeingDeletedIsAllowedSoFinalizersCanBeRemoved) {
  // A webhook that blocks finalizer removal leaves objects stuck forever.
  json gone = objectFromYaml(kBarePod);
  gone["metadata"]["deletionTimestamp"] = "2026-11-29T09:51:56Z";
  gone["metadata"]["finalizers"] = json::array();
  json old = objectFromYaml(kGoodPod);
  old["metadata"]["finalizers"] = {"example.com/cleanup"};
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = old;
  const Reply r = reviewRaw(reviewBody(gone, rq));
  EXPECT_TRUE(r.allowed());
  EXPECT_EQ(r.result.skipped, "being deleted");
}

// ---------------------------------------------------------------------------
// Policy: namespace exemptions and suppression annotations.
// ---------------------------------------------------------------------------

TEST(AdmissionPolicy, ExemptNamespacesAreAllowedByTheRequestsNamespace) {
  const AdmissionPolicy policy = with(AdmissionPolicy{}, [](AdmissionPolicy& p) { p.exemptNamespaces = {"kube-system", "team-*"}; });
  for (const char* ns : {"kube-system", "team-a", "team-"}) {
    Request rq;
    rq.namespaceName = ns;
    const Reply r = admit(kBarePod, policy, rq);
    EXPECT_TRUE(r.allowed()) << ns;
    EXPECT_EQ(r.result.skipped, "namespace exempt");
  }
  for (const char* ns : {"default", "kube-system2", "team"}) {
    Request rq;
    rq.namespaceName = ns;
    EXPECT_FALSE(admit(kBarePod, policy, rq).allowed()) << ns;
  }
}

TEST(AdmissionPolicy, SuppressionAnnotationsAreIgnoredByDefault) {
  // Anyone who can create a pod can write an annotation.
  EXPECT_EQ(AdmissionPolicy{}.allowSuppressions, false);
  EXPECT_EQ(AdmissionPolicy::from(yaml::PolicyDocument{}).allowSuppressions, false) << "unset in the policy file";
  const Reply r = admit(kSuppressedPod);
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.message(), HasSubstr("[gpu-missing-toleration]"));
}

TEST(AdmissionPolicy, SuppressionAnnotationsCountWhenThePolicyAllowsThem) {
  const AdmissionPolicy policy = AdmissionPolicy::from(yaml::parsePolicy("allowSuppressions: true", "policy.yaml"));
  EXPECT_EQ(policy.allowSuppressions, true);
  const Reply r = admit(kSuppressedPod, policy);
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(r.warnings(), IsEmpty());
  EXPECT_THAT(r.result.hits, IsEmpty());
}

// ---------------------------------------------------------------------------
// Custom resources: the webhook is the only check they get at apply time.
// ---------------------------------------------------------------------------

TEST(AdmissionCustomResources, RayClusterWorkerGroupsAreJudged) {
  std::ifstream in(std::string(GPUGUARD_SOURCE_DIR) + "/test/e2e/cases/raycluster-fractional.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const Reply r = admit(text.str(), AdmissionPolicy{onlyRules({"gpu-fractional"})});
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.message(),
              StartsWith("[spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits[nvidia.com/gpu]: "
                         "Invalid value: \"500m\": must be an integer"));
  EXPECT_THAT(r.message(), HasSubstr(", spec.workerGroupSpecs[0].template.spec.containers[0].resources.requests"));
  EXPECT_THAT(r.message(), HasSubstr("must be an integer"));
  EXPECT_EQ(r.result.kind, "RayCluster");
  EXPECT_EQ(r.result.group, "ray.io");
}

TEST(AdmissionCustomResources, PyTorchJobNumbersStayNumbersAndAreJudged) {
  // CRs are unstructured: a YAML 0.5 reaches the webhook as the JSON number 0.5.
  const Reply r = admit(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pj}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            resources:
              limits: {nvidia.com/gpu: 0.5}
)",
                        AdmissionPolicy{onlyRules({"gpu-fractional"})});
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.message(),
              StartsWith("spec.pytorchReplicaSpecs.Master.template.spec.containers[0].resources.limits[nvidia.com/gpu]:"
                         " Invalid value: "));
}

}  // namespace
}  // namespace gpuguard::webhook
