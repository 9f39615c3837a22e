// UPDATE is judged on what the update does, never on the object's history
// (issue 23): POST /mutate patches only the findings the update introduced,
// never a field the API server makes immutable for the kind, and a finding's
// identity keeps two list elements of one name apart.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/webhook/admission_test_support.h"
#include "test/fuzz/json_patch_apply.h"
#include "test/unit/test_support.h"
#include "webhook/admission.h"
#include "webhook/admission_update.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using gpuguard::testing::onlyRules;
using namespace admission_test;

// `kubectl label job train team=vision` on a GPU Job that asks for its GPU in
// requests only and has no toleration, as kube-apiserver v1.3x sends it to a
// mutating webhook: the Job was created before the webhook was installed and
// is running (status.startTime set, the controller's labels and selector).
const char* const kJobLabelUpdate = R"json({
 "kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
 "request": {
  "uid": "3b8a1f0e-5c2d-4e6f-8a9b-0c1d2e3f4a5b",
  "kind": {"group": "batch", "version": "v1", "kind": "Job"},
  "resource": {"group": "batch", "version": "v1", "resource": "jobs"},
  "requestKind": {"group": "batch", "version": "v1", "kind": "Job"},
  "requestResource": {"group": "batch", "version": "v1", "resource": "jobs"},
  "name": "train", "namespace": "ml", "operation": "UPDATE",
  "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
  "object": {"kind": "Job", "apiVersion": "batch/v1",
   "metadata": {"name": "train", "namespace": "ml", "uid": "9d6c1e2a-7b3f-4c8d-a1e5-2f6b7c8d9e0a",
    "resourceVersion": "4711", "generation": 1, "creationTimestamp": "2026-12-01T08:00:00Z",
    "labels": {"team": "vision"},
    "managedFields": [{"manager": "kubectl-label", "operation": "Update", "apiVersion": "batch/v1",
      "time": "2026-12-03T10:00:00Z", "fieldsType": "FieldsV1",
      "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:team": {}}}}}]},
   "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 6, "completionMode": "NonIndexed",
    "suspend": false, "manualSelector": false, "podReplacementPolicy": "TerminatingOrFailed",
    "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "9d6c1e2a-7b3f-4c8d-a1e5-2f6b7c8d9e0a"}},
    "template": {"metadata": {"creationTimestamp": null,
      "labels": {"batch.kubernetes.io/controller-uid": "9d6c1e2a-7b3f-4c8d-a1e5-2f6b7c8d9e0a",
                 "batch.kubernetes.io/job-name": "train",
                 "controller-uid": "9d6c1e2a-7b3f-4c8d-a1e5-2f6b7c8d9e0a", "job-name": "train"}},
     "spec": {"containers": [{"name": "trainer", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
        "command": ["python", "train.py"],
        "resources": {"requests": {"nvidia.com/gpu": "1"}},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent"}],
      "nodeSelector": {"nvidia.com/cuda.driver-version.major": "550"},
      "restartPolicy": "Never", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
      "securityContext": {}, "schedulerName": "default-scheduler"}}},
   "status": {"startTime": "2026-12-01T08:00:01Z", "active": 1, "ready": 0, "terminating": 0,
    "uncountedTerminatedPods": {}}},
  "oldObject": {"kind": "Job", "apiVersion": "batch/v1",
   "metadata": {"name": "train", "namespace": "ml", "uid": "9d6c1e2a-7b3f-4c8d-a1e5-2f6b7c8d9e0a",
    "resourceVersion": "4711", "generation": 1, "creationTimestamp": "2026-12-01T08:00:00Z"},
   "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 6, "completionMode": "NonIndexed",
    "suspend": false, "manualSelector": false, "podReplacementPolicy": "TerminatingOrFailed",
    "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "9d6c1e2a-7b3f-4c8d-a1e5-2f6b7c8d9e0a"}},
    "template": {"metadata": {"creationTimestamp": null,
      "labels": {"batch.kubernetes.io/controller-uid": "9d6c1e2a-7b3f-4c8d-a1e5-2f6b7c8d9e0a",
                 "batch.kubernetes.io/job-name": "train",
                 "controller-uid": "9d6c1e2a-7b3f-4c8d-a1e5-2f6b7c8d9e0a", "job-name": "train"}},
     "spec": {"containers": [{"name": "trainer", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
        "command": ["python", "train.py"],
        "resources": {"requests": {"nvidia.com/gpu": "1"}},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent"}],
      "nodeSelector": {"nvidia.com/cuda.driver-version.major": "550"},
      "restartPolicy": "Never", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
      "securityContext": {}, "schedulerName": "default-scheduler"}}},
   "status": {"startTime": "2026-12-01T08:00:01Z", "active": 1, "ready": 0, "terminating": 0,
    "uncountedTerminatedPods": {}}},
  "dryRun": false,
  "options": {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "kubectl-label"}}})json";

json reviewJson(const std::string& body) { return json::parse(body); }

// The same review as CREATE of the new object (what /mutate fixes there).
std::string asCreate(const std::string& updateBody) {
  json review = reviewJson(updateBody);
  review["request"]["operation"] = "CREATE";
  review["request"].erase("oldObject");
  return review.dump();
}

// Every operation of the patch applies to `object`; the patched object.
json applied(const json& object, const json& patch) {
  const std::optional<json> out = fuzz::applyJsonPatch(object, patch);
  if (!out) throw std::runtime_error("the patch does not apply: " + patch.dump());
  return *out;
}

TEST(MutateUpdate, KubectlLabelOnAnExistingJobGetsNoPatch) {
  // Before: the toleration and the limit went into spec.template, and the API
  // server refused the label: "spec.template: Invalid value: ...: field is immutable".
  const Reply r = mutateRaw(kJobLabelUpdate);
  EXPECT_EQ(r.result.httpStatus, 200);
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(patchOf(r), IsEmpty());
  EXPECT_EQ(r.result.patchOperations, 0u);
  // The same Job on CREATE is fixed: the findings are real, only old.
  const json created = patchOf(mutateRaw(asCreate(kJobLabelUpdate)));
  EXPECT_THAT(created.dump(), AllOf(HasSubstr("/spec/template/spec/tolerations"), HasSubstr("limits")));
}

TEST(MutateUpdate, AJobTemplateIsNeverPatchedOnUpdateEvenForANewFinding) {
  // A suspended Job whose update adds a GPU container: the finding is the
  // update's, but the Job's pod template is immutable to the API server
  // (pkg/apis/batch/validation validatePodTemplateUpdate), so a patch there
  // would turn the user's update into "field is immutable".
  json review = reviewJson(kJobLabelUpdate);
  json& old = review["request"]["oldObject"];
  old["spec"]["suspend"] = true;
  old["spec"]["template"]["spec"]["containers"][0]["resources"] = json::object();
  review["request"]["object"]["spec"]["suspend"] = true;
  const Reply r = mutateRaw(review.dump());
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(patchOf(r), IsEmpty());
  // /validate still judges it: the new GPU without a toleration is the update's doing.
  const Reply validated = reviewRaw(review.dump());
  EXPECT_FALSE(validated.allowed());
  EXPECT_THAT(validated.message(), HasSubstr("[gpu-missing-toleration]"));
}

TEST(MutateUpdate, ARecordedDeploymentUpdateOfAnotherFieldGetsNoPatch) {
  // 12-UPDATE-Deployment: kubectl apply changed replicas 1 -> 2 of a GPU
  // Deployment without a toleration, recorded from kube-apiserver. A patch of
  // the pod template would bump the generation and roll every pod.
  const auto path =
      std::filesystem::path(GPUGUARD_SOURCE_DIR) / "test/data/admission-samples/12-UPDATE-Deployment-dep-gpu-allowed.json";
  std::ifstream in(path);
  std::stringstream body;
  body << in.rdbuf();
  ASSERT_FALSE(body.str().empty()) << path;
  const Reply r = mutateRaw(body.str());
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(patchOf(r), IsEmpty());
  EXPECT_THAT(patchOf(mutateRaw(asCreate(body.str()))), Not(IsEmpty())) << "the CREATE of the same object is fixed";
}

TEST(MutateUpdate, ADeploymentUpdateThatAddsAGpuContainerGetsOnlyThatContainerFixed) {
  // The old Deployment's GPU container lacks a limit (pre-existing); the
  // update adds a second one with the same fault: only the new one is fixed,
  // and the patch applies to the object the API server holds.
  json oldObject = objectFromYaml(gpuguard::testing::gpuPod("requests: {nvidia.com/gpu: \"1\"}", "Deployment"));
  json newObject = oldObject;
  json second = newObject["spec"]["template"]["spec"]["containers"][0];
  second["name"] = "second";
  newObject["spec"]["template"]["spec"]["containers"].push_back(second);
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = oldObject;
  const Reply r = mutateRaw(reviewBody(newObject, rq));
  const json patch = patchOf(r);
  ASSERT_EQ(patch.size(), 1u) << patch.dump();
  EXPECT_EQ(patch[0]["path"], "/spec/template/spec/containers/1/resources/limits");
  const json patched = applied(newObject, patch);
  EXPECT_EQ(patched["spec"]["template"]["spec"]["containers"][1]["resources"]["limits"]["nvidia.com/gpu"], "1");
  EXPECT_FALSE(patched["spec"]["template"]["spec"]["containers"][0]["resources"].contains("limits"));
}

TEST(MutateUpdate, ACronJobTemplateIsMutableAndFixedForWhatTheUpdateIntroduced) {
  // ValidateCronJobUpdate validates spec.jobTemplate without an immutability check.
  const char* const cronJob = R"(
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: ml}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
          containers:
          - name: trainer
            image: nvcr.io/nvidia/pytorch:24.05-py3
)";
  json oldObject = objectFromYaml(cronJob);
  json newObject = oldObject;
  newObject["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {
      {"limits", {{"nvidia.com/gpu", 1}}}};
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = oldObject;
  const json patch = patchOf(mutateRaw(reviewBody(newObject, rq)));
  ASSERT_EQ(patch.size(), 1u) << patch.dump();
  EXPECT_EQ(patch[0]["path"], "/spec/jobTemplate/spec/template/spec/tolerations");
  applied(newObject, patch);
}

TEST(MutateUpdate, APodUpdateMayOnlyGainTolerations) {
  // ValidatePodUpdate: a pod's spec is immutable but for additions to
  // tolerations (and images, deadlines...); resources change only through the
  // resize subresource. A hand-made UPDATE that gives the pod a GPU it did
  // not have gets the toleration, never the limit.
  json oldObject = objectFromYaml(kBarePod);
  oldObject["spec"]["containers"][0]["resources"] = json::object();
  json newObject = objectFromYaml(kBarePod);
  newObject["spec"]["containers"][0]["resources"] = {{"requests", {{"nvidia.com/gpu", "1"}}}};
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = oldObject;
  const json patch = patchOf(mutateRaw(reviewBody(newObject, rq)));
  ASSERT_EQ(patch.size(), 1u) << patch.dump();
  EXPECT_EQ(patch[0]["path"], "/spec/tolerations");
  // On CREATE the same pod gets both.
  EXPECT_EQ(patchOf(mutateRaw(reviewBody(newObject))).size(), 2u);
}

TEST(ImmutableOnUpdate, FollowsTheApiServersValidation) {
  const FieldPath podSpec = FieldPath{}.field("spec");
  const FieldPath jobTemplate = podSpec.field("template");
  const FieldPath limits = podSpec.field("containers").index(0).field("resources");
  const nlohmann::ordered_json toleration = {{"key", "nvidia.com/gpu"}, {"operator", "Exists"}};
  EXPECT_FALSE(immutableOnUpdate("", "Pod", JsonEdit::addToList(podSpec.field("tolerations"), toleration)));
  EXPECT_TRUE(immutableOnUpdate("", "Pod", JsonEdit::setMember(limits, "limits", {{"nvidia.com/gpu", 1}})));
  EXPECT_TRUE(immutableOnUpdate("batch", "Job", JsonEdit::addToList(jobTemplate.field("spec").field("tolerations"), toleration)));
  EXPECT_FALSE(immutableOnUpdate("batch", "CronJob", JsonEdit::addToList(podSpec.field("jobTemplate"), toleration)));
  EXPECT_FALSE(immutableOnUpdate("apps", "Deployment", JsonEdit::addToList(jobTemplate.field("spec").field("tolerations"), toleration)));
  EXPECT_FALSE(immutableOnUpdate("example.com", "Job", JsonEdit::addToList(jobTemplate, toleration))) << "another group's Job";
  EXPECT_FALSE(immutableOnUpdate("", "Pod", JsonEdit::setMember(FieldPath{}.field("specs"), "x", 1))) << "a prefix of a name is not its parent";
}

// ---------------------------------------------------------------------------
// A finding's identity: name and ordinal among elements of that name.
// ---------------------------------------------------------------------------

const char* const kRayClusterTwoWorkersOfOneName = R"(
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc, namespace: ml}
spec:
  workerGroupSpecs:
  - groupName: gpu
    template:
      spec:
        tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
        nodeSelector: {nvidia.com/cuda.driver-version.major: "550"}
        containers:
        - name: worker
          image: rayproject/ray:2.9.0-gpu
          resources: {limits: {nvidia.com/gpu: "500m"}}
        - name: worker
          image: rayproject/ray:2.9.0-gpu
          resources: {limits: {nvidia.com/gpu: "1"}}
)";

TEST(AdmissionUpdate, ADuplicateNameCannotPassANewFindingOffAsPreexisting) {
  // Before: both containers were "containers[name=worker]", so the second
  // one's new fractional GPU matched the first one's old finding and passed.
  const json oldObject = objectFromYaml(kRayClusterTwoWorkersOfOneName);
  json newObject = oldObject;
  newObject["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][1]["resources"]["limits"]["nvidia.com/gpu"] =
      "500m";
  Request rq;
  rq.operation = "UPDATE";
  rq.oldObject = oldObject;
  const AdmissionPolicy policy{onlyRules({"gpu-fractional"})};
  const Reply r = reviewRaw(reviewBody(newObject, rq), policy);
  EXPECT_FALSE(r.allowed());
  EXPECT_THAT(r.message(), HasSubstr("containers[1].resources.limits"));
  EXPECT_THAT(r.message(), Not(HasSubstr("containers[0]")));
  EXPECT_THAT(r.warnings(), Contains(AllOf(HasSubstr("containers[0].resources.limits"),
                                           EndsWith("(already present before this update)"))));
  // Unchanged, the same object passes: its one finding is the old one.
  EXPECT_TRUE(reviewRaw(reviewBody(oldObject, rq), policy).allowed());
}

TEST(FindingIdentities, NameTheElementByNameAndOrdinalAndTheRestByIndex) {
  const json object = json::parse(R"({"spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "a"}, {}]}})");
  FindingIdentities identities(object);
  auto at = [](std::size_t i) {
    Finding f;
    f.rule = "r";
    f.path = FieldPath{}.field("spec").field("containers").index(i).field("resources");
    return f;
  };
  EXPECT_EQ(identities.of(at(0)), "r\n.spec.containers[name=a#0].resources");
  EXPECT_EQ(identities.of(at(1)), "r\n.spec.containers[name=b#0].resources");
  EXPECT_EQ(identities.of(at(2)), "r\n.spec.containers[name=a#1].resources");
  EXPECT_EQ(identities.of(at(3)), "r\n.spec.containers[3].resources");
  EXPECT_EQ(identities.of(at(9)), "r\n.spec.containers[9].resources") << "past the end: the index";
}

TEST(FindingIdentities, KubeRayWorkerGroupsAreNamedByGroupName) {
  const json object = json::parse(
      R"({"spec": {"workerGroupSpecs": [{"groupName": "cpu"}, {"groupName": "gpu"}, {"groupName": "gpu"}]}})");
  FindingIdentities identities(object);
  auto at = [](std::size_t i) {
    Finding f;
    f.rule = "r";
    f.path = FieldPath{}.field("spec").field("workerGroupSpecs").index(i).field("template");
    return f;
  };
  EXPECT_EQ(identities.of(at(1)), "r\n.spec.workerGroupSpecs[groupName=gpu#0].template");
  EXPECT_EQ(identities.of(at(2)), "r\n.spec.workerGroupSpecs[groupName=gpu#1].template");
  // `name` comes first, and a name is never taken for a groupName of the same value.
  const json named = json::parse(R"({"spec": {"workerGroupSpecs": [{"name": "gpu", "groupName": "x"}]}})");
  FindingIdentities byName(named);
  EXPECT_EQ(byName.of(at(0)), "r\n.spec.workerGroupSpecs[name=gpu#0].template");
}

}  // namespace
}  // namespace gpuguard::webhook
