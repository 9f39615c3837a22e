// Objects a controller made from its owner's template, which the webhook
// judges and patches differently from what a user wrote:
//
//   - A child that one of kube-controller-manager's workload controllers
//     creates (a Deployment's ReplicaSet, a ReplicaSet's, Job's, StatefulSet's
//     or DaemonSet's Pod, a CronJob's Job) carries its owner's template, which
//     the webhook judged when the owner was created or updated. Denying the
//     child only stalls the controller — a rollout, a scale-up, the
//     replacement of a failed pod — with the reason in an event nobody reads,
//     while the owner, judged "already present" on its UPDATE, is allowed
//     (red team 34 D6: a node group of another driver joined after the
//     Deployment was admitted). So its errors are warnings, with the owner
//     named. Only the controllers' own identities count: the API server
//     authenticates them, while anyone can write an ownerReference.
//   - A ReplicaSet with a controller owner (a Deployment, an Argo Rollout) is
//     found again by comparing its pod template with the owner's
//     (EqualIgnoreHash, pkg/controller/deployment/util): patched by /mutate, it
//     no longer matches, and the owner creates another, and another
//     (kubernetes#57167; red team 34 D1). /mutate leaves it alone; the fix
//     belongs in the owner.
#pragma once

#include <string>

#include "webhook/admission_request.h"

namespace gpuguard::webhook {

// "Deployment/infer" when `request` is a CREATE, by one of
// kube-controller-manager's workload controllers (its service account, or
// system:kube-controller-manager without per-controller credentials), of an
// object whose metadata.ownerReferences has a controller; else "".
std::string ownerOfControllerChild(const AdmissionRequest& request);

// Whether /mutate must not patch request.object: an apps ReplicaSet with a
// controller owner.
bool ownerComparesTemplate(const AdmissionRequest& request);

}  // namespace gpuguard::webhook
