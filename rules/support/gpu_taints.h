// Which node taints mark a node as a GPU node, for the rules that ask GPU
// pods to tolerate them (gpu-missing-toleration) and the fixes that add the
// toleration (--fix, /mutate). A taint of the GPU nodes outside this set is
// the cluster's own (a team's dedicated nodes, a health check's NoExecute, the
// control plane, spot capacity): tolerating it puts the pod where the admin
// kept it out, so it is named but never demanded nor added (red team 34 D5).
#pragma once

#include <string>

#include "rules/k8s/taints.h"
#include "rules/policy.h"

namespace gpuguard::checks {

// Whether `taint` is one of the policy's gpuTaints or one a platform preset
// puts on GPU nodes (nvidia.com/gpu of any value, AKS's sku=gpu): the key,
// and the value where the entry names one. The effect is not compared: a GPU
// taint is one whatever its effect.
bool isGpuTaint(const Taint& taint, const Policy& policy);

// What gpu-missing-toleration says of a taint that is no GPU taint on the GPU
// nodes a pod would land on (`where`: "2 nodes: a, b; cluster ..."): a warning
// without a fix.
std::string otherTaintOfGpuNodes(const Taint& taint, const std::string& where);

}  // namespace gpuguard::checks
