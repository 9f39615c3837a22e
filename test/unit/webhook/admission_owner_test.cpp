// What a controller makes from its owner's template (webhook/admission_owner.h):
//   - the CREATE of a child by one of kube-controller-manager's workload
//     controllers is judged at its owner: its errors warn, naming the owner;
//     the same object written by anyone else is judged as always (anyone can
//     write an ownerReference; only the API server says who asks);
//   - /mutate never patches a ReplicaSet that has a controller owner: the
//     owner finds it by comparing pod templates, and a patched one sends the
//     Deployment controller into a loop of new ReplicaSets (kubernetes#57167).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/webhook/admission_test_support.h"
#include "webhook/admission.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using namespace admission_test;

constexpr const char* kReplicaSetController = "system:serviceaccount:kube-system:replicaset-controller";

// kBarePod (no toleration, no driver pin: gpu-missing-toleration denies) as
// the ReplicaSet controller creates it: a pod-template-hash label and its
// ReplicaSet as controller owner.
json replicaSetPod(bool controller = true) {
  json pod = objectFromYaml(kBarePod);
  pod["metadata"]["name"] = "infer-6c7d8-x2k9p";
  pod["metadata"]["labels"] = {{"app", "infer"}, {"pod-template-hash", "6c7d8"}};
  pod["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "apps/v1"},
                                                     {"kind", "ReplicaSet"},
                                                     {"name", "infer-6c7d8"},
                                                     {"uid", "8f0c2d3e-1b4a-4c5d-9e6f-7a8b9c0d1e2f"},
                                                     {"controller", controller},
                                                     {"blockOwnerDeletion", true}}});
  return pod;
}

// The ReplicaSet the Deployment controller creates for Deployment `infer`
// (or the same ReplicaSet written by hand, without the owner).
json deploymentReplicaSet(bool owned = true) {
  json pod = objectFromYaml(kBarePod);
  json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata", {{"name", "infer-6c7d8"}, {"namespace", "ml"}, {"labels", {{"app", "infer"}}}}},
             {"spec",
              {{"replicas", 1},
               {"selector", {{"matchLabels", {{"app", "infer"}}}}},
               {"template", {{"metadata", {{"labels", {{"app", "infer"}}}}}, {"spec", pod["spec"]}}}}}};
  if (owned) {
    rs["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "apps/v1"},
                                                      {"kind", "Deployment"},
                                                      {"name", "infer"},
                                                      {"uid", "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"},
                                                      {"controller", true},
                                                      {"blockOwnerDeletion", true}}});
  }
  return rs;
}

Request by(const std::string& username) { return with(Request{}, [&](Request& r) { r.username = username; }); }

TEST(ControllerChild, APodTheReplicaSetControllerCreatesIsJudgedAtItsOwnerAndWarns) {
  const Reply r = reviewRaw(reviewBody(replicaSetPod(), by(kReplicaSetController)));
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(r.rules(true), IsEmpty());
  EXPECT_THAT(r.rules(false), Contains("gpu-missing-toleration"));
  EXPECT_THAT(r.warnings(), Contains(AllOf(HasSubstr("gpu-missing-toleration"),
                                           HasSubstr("(created by its controller from ReplicaSet/infer-6c7d8, which "
                                                     "was judged when it was written)"))));
}

TEST(ControllerChild, EveryWorkloadControllerOfKubeControllerManagerCounts) {
  for (const char* user : {"system:serviceaccount:kube-system:deployment-controller",
                           "system:serviceaccount:kube-system:job-controller",
                           "system:serviceaccount:kube-system:cronjob-controller",
                           "system:serviceaccount:kube-system:statefulset-controller",
                           "system:serviceaccount:kube-system:daemon-set-controller",
                           "system:serviceaccount:kube-system:replication-controller",
                           "system:kube-controller-manager"}) {
    SCOPED_TRACE(user);
    EXPECT_TRUE(reviewRaw(reviewBody(replicaSetPod(), by(user))).allowed());
  }
}

TEST(ControllerChild, TheSameObjectWrittenByAnyoneElseIsJudgedAsAlways) {
  for (const char* user : {"alice", "system:serviceaccount:kube-system:namespace-controller",
                           "system:serviceaccount:ml:replicaset-controller", "system:serviceaccount:kube-system:"}) {
    SCOPED_TRACE(user);
    const Reply r = reviewRaw(reviewBody(replicaSetPod(), by(user)));
    EXPECT_FALSE(r.allowed());
    EXPECT_THAT(r.rules(true), Contains("gpu-missing-toleration"));
  }
}

TEST(ControllerChild, AnOwnerThatIsNotItsControllerLeavesTheChildJudgedAsAlways) {
  EXPECT_FALSE(reviewRaw(reviewBody(replicaSetPod(false), by(kReplicaSetController))).allowed());
  json orphan = replicaSetPod();
  orphan["metadata"].erase("ownerReferences");
  EXPECT_FALSE(reviewRaw(reviewBody(orphan, by(kReplicaSetController))).allowed());
}

TEST(ControllerChild, OnlyACreateIsJudgedAtTheOwner) {
  // An UPDATE by the controller (adopting, relabelling) is judged on what it changes, as any UPDATE.
  json before = replicaSetPod();
  before["spec"]["tolerations"] = json::array({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}});
  Request rq = by(kReplicaSetController);
  rq.operation = "UPDATE";
  rq.oldObject = before;
  EXPECT_FALSE(reviewRaw(reviewBody(replicaSetPod(), rq)).allowed());
}

TEST(ControllerChild, APolicyForAWebhookThatSeesOnlyPodsJudgesChildrenAsAlways) {
  AdmissionPolicy policy;
  policy.judgeChildrenAtOwner = false;
  EXPECT_FALSE(reviewRaw(reviewBody(replicaSetPod(), by(kReplicaSetController)), policy).allowed());
}

TEST(ControllerChild, ThePolicyFileKeyTurnsItOff) {
  const AdmissionPolicy policy =
      AdmissionPolicy::from(yaml::parsePolicy("judgeChildrenAtOwner: false\n", "policy.yaml"));
  EXPECT_FALSE(policy.judgeChildrenAtOwner);
  EXPECT_TRUE(AdmissionPolicy::from(yaml::parsePolicy("{}\n", "policy.yaml")).judgeChildrenAtOwner);
}

TEST(MutateReplicaSet, AReplicaSetItsDeploymentOwnsIsNeverPatched) {
  const Reply r = mutateRaw(reviewBody(deploymentReplicaSet(), by("system:serviceaccount:kube-system:deployment-controller")));
  EXPECT_TRUE(r.allowed());
  EXPECT_THAT(patchOf(r), IsEmpty());
  // Whoever writes it: the owner would not find a patched one again.
  EXPECT_THAT(patchOf(mutateRaw(reviewBody(deploymentReplicaSet()))), IsEmpty());
}

TEST(MutateReplicaSet, AReplicaSetWithoutAControllerOwnerIsPatchedAsAnyWorkload) {
  const json patch = patchOf(mutateRaw(reviewBody(deploymentReplicaSet(false))));
  ASSERT_FALSE(patch.empty());
  EXPECT_EQ(patch[0].value("path", ""), "/spec/template/spec/tolerations");
}

TEST(MutateReplicaSet, APodItsReplicaSetOwnsIsStillPatched) {
  // Pods are not compared with the template: the toleration /mutate adds is what lets it schedule.
  EXPECT_THAT(patchOf(mutateRaw(reviewBody(replicaSetPod(), by(kReplicaSetController)))), Not(IsEmpty()));
}

}  // namespace
}  // namespace gpuguard::webhook
