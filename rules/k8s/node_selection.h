// What a pod's node selection admits, for the checks that reason about the
// nodes a pod can land on (cuda-driver-too-old, tensor-parallel-without-nvlink,
// node-affinity-gt-lt) and for the scheduler replay (schedule/).
// Facts: kubernetes-gpu-semantics.md §7 (node affinity).
//
// Kubernetes composes the selection as: nodeSelector (every pair must match)
// AND the required node affinity, whose nodeSelectorTerms are ORed and whose
// matchExpressions inside one term are ANDed. We fold nodeSelector into every
// term, so the selection is a list of ORed terms, each a list of ANDed
// requirements. Preferred affinity never restricts where a pod may land.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/k8s/field_path.h"

namespace gpuguard {

struct NodeRequirement {
  std::string key;
  std::string op;                   // In, NotIn, Exists, DoesNotExist, Gt, Lt (or whatever was written)
  std::vector<std::string> values;  // string values; integer numbers as their decimal text
  bool fromNodeSelector = false;    // a nodeSelector pair (op "In", one value)
  FieldPath path;                   // the nodeSelector entry or the matchExpression
};

struct NodeTerm {
  std::vector<NodeRequirement> requirements;  // ANDed
  std::optional<std::size_t> termIndex;       // index in nodeSelectorTerms; nullopt: nodeSelector only
  bool matchesNothing = false;                // an empty term: the scheduler skips it
};

// The ORed terms a pod's node selection consists of. Without a required node
// affinity this is one term holding the nodeSelector pairs (possibly none).
// (rules/pod_constraints.h has the PodSite form the checks call.)
std::vector<NodeTerm> nodeSelectionTerms(const nlohmann::json* nodeSelector, const FieldPath& nodeSelectorPath,
                                         const nlohmann::json* affinity, const FieldPath& affinityPath);

// "nodeSelector nvidia.com/gpu.product=NVIDIA-L4" or
// "required node affinity term 1: nvidia.com/gpu.product In [NVIDIA-L4, Tesla-T4]".
std::string describeRequirement(const NodeRequirement& r, const NodeTerm& term);

// labels.Requirement.Matches: whether a node whose label has `nodeValue`
// (nullopt: the node has no such label) satisfies `op` over `values`. An
// absent label matches NotIn and DoesNotExist; Gt and Lt need both sides to
// parse with strconv.ParseInt(s, 10, 64) and exactly one value; an unknown
// operator matches nothing.
bool requirementMatches(std::string_view op, const std::vector<std::string>& values,
                        const std::optional<std::string>& nodeValue);

}  // namespace gpuguard
