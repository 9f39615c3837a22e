// What a pod spec says of where it may run, as the checks read it: the
// ORed node-selection terms (rules/k8s/node_selection.h), the GPU taints no
// toleration of it tolerates, whether it bypasses the scheduler
// (spec.nodeName), and the note for a pod-level field written inside a
// container.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rules/k8s/node_selection.h"
#include "rules/k8s/taints.h"
#include "rules/pod_specs.h"
#include "rules/policy.h"

namespace gpuguard {

// A pod spec that names its node (a non-empty spec.nodeName): kube-scheduler
// never sees its pods. The kubelet admits them against NoExecute taints only
// and checks their nodeSelector and affinity, but nothing allocates their DRA
// claims (kubernetes-gpu-semantics.md §15.1).
bool bypassesScheduler(const PodSite& site);

// The Kueue queue a workload is submitted to: the label (or, in older
// releases, annotation) kueue.x-k8s.io/queue-name on the object holding the
// pod site or on any object between it and the site (a pod template). Kueue
// adds its ResourceFlavor's tolerations and nodeLabels to the pod template
// when it admits the workload (kueue docs, "Resource Flavor"), so what the
// author left out may come from there. nullopt when not queued.
std::optional<std::string> kueueQueueName(const nlohmann::json& object, const PodSite& site);

// The GPU taints (from the policy) that keep the pod off a GPU node and that no
// toleration of the site tolerates. PreferNoSchedule taints keep no pod off
// (the scheduler's TaintToleration filter ignores them), so they are never in
// the list; for a pod that bypasses the scheduler only NoExecute taints do.
std::vector<Taint> untoleratedGpuTaints(const PodSite& site, const Policy& policy);

// For a finding on a pod-level field (`proper`) whose like is written inside
// a container (`misplaced`, see MisplacedFields): "; <misplaced> does not
// count ...: move it to <proper>". Empty when nothing is misplaced.
std::string misplacedNote(const PodField& misplaced, const PodField& proper);

// Whether the pod's tolerations, nodeSelector or affinity are decided where
// the input cannot show (PodField::opaque: an Argo podSpecPatch, an
// operator's runtime): which nodes the pod reaches is then unknown.
bool placementOpaque(const PodSite& site);

// The ORed node-selection terms of a pod site (rules/k8s/node_selection.h),
// read once per site (PodSite::selectionTerms) and valid while it lives.
const std::vector<NodeTerm>& nodeSelectionTerms(const PodSite& site);

}  // namespace gpuguard
