// What may still place a pod that neither the input nor the cluster facts
// show: a RuntimeClass the pod names that they do not hold (its
// scheduling.tolerations and nodeSelector reach the pod through the
// RuntimeClass admission plugin), or a Karpenter NodePool its node selection
// requires that they do not hold (Karpenter launches its nodes, with their
// taints and labels). Both happen when the object is applied with the
// workload (helm install, kubectl apply -f dir/: the webhook's watch has not
// seen it yet) or lives in another file. A finding such an object could lift
// (a missing toleration, a missing driver pin) is then a warning that names it.
#pragma once

#include <string>

#include "rules/gpu_use.h"
#include "rules/pod_specs.h"

namespace gpuguard::checks {

// "RuntimeClass rc2" or "NodePool np2" (the first unknown), or "" when the
// pod's placement is all known (AdmittedScheduling::unknownRuntimeClass says
// which classes are unknown).
std::string unknownPlacement(const PodSite& site, const GpuFacts& gpu);

// "; ... NodePool np2 ..., which the cluster facts do not hold (yet): ...,
// hence a warning" for a NodePool (a RuntimeClass says so through
// unknownRuntimeClassNote); "" otherwise.
std::string unknownNodePoolNote(const PodSite& site, const GpuFacts& gpu);

}  // namespace gpuguard::checks
