// What a pod's node selection admits, for the checks that reason about the
// nodes a pod can land on (cuda-driver-too-old, tensor-parallel-without-nvlink)
// and what GPU Feature Discovery writes into its labels (node-affinity-gt-lt,
// gpu-label-value). Facts: kubernetes-gpu-semantics.md §7 (node affinity) and
// §8 (GFD labels).
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

#include "rules/field_path.h"
#include "rules/pod_specs.h"
#include "rules/policy.h"

namespace gpuguard::checks {

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
std::vector<NodeTerm> nodeSelectionTerms(const PodSite& site);

// "nodeSelector nvidia.com/gpu.product=NVIDIA-L4" or
// "required node affinity term 1: nvidia.com/gpu.product In [NVIDIA-L4, Tesla-T4]".
std::string describeRequirement(const NodeRequirement& r, const NodeTerm& term);

// What GFD (and a few well-known components) write into a label.
enum class LabelFormat {
  Unknown,         // not a label we know: judge only what Kubernetes judges
  Integer,         // canonical decimal integer ("550", "81920")
  DriverVersion,   // "550.107.02" (cuda.driver-version.full)
  RuntimeVersion,  // "12.5" (cuda.runtime-version.full)
  Boolean,         // "true" / "false" (strconv.FormatBool)
  Enumerated,      // one of a fixed set (gpu.family, mig.strategy, sharing-strategy)
  Text,            // free text that is never an integer (gpu.product, gpu.machine, instance types...)
};
LabelFormat labelFormat(std::string_view key);
// For Enumerated labels: the values GFD writes.
const std::vector<std::string_view>& enumeratedValues(std::string_view key);

// strconv.ParseInt(s, 10, 64): optional sign, decimal digits, no spaces, in range.
std::optional<long long> parseGoInt(std::string_view s);
// A canonical non-negative decimal integer, as GFD writes them ("0", "550", not "0550").
bool isCanonicalUnsigned(std::string_view s);

// The driver labels, by what their value means.
bool isDriverMajorLabel(std::string_view key);    // nvidia.com/cuda.driver-version.major, nvidia.com/cuda.driver.major
bool isDriverFullLabel(std::string_view key);     // nvidia.com/cuda.driver-version.full
bool isRuntimeMajorLabel(std::string_view key);   // nvidia.com/cuda.runtime-version.major, nvidia.com/cuda.runtime.major
bool isRuntimeFullLabel(std::string_view key);    // nvidia.com/cuda.runtime-version.full

// A requirement that pins the node's CUDA driver: In, Gt or Lt on a driver
// label of the policy (driverPinLabels) or on a GFD label GFD derives from the
// driver: cuda.runtime-version.major/.full (and the deprecated
// cuda.runtime.major) hold the newest CUDA the driver supports (§14.8).
// gpu-missing-driver-pin asks for one in every term; cuda-driver-too-old
// judges only terms that have one.
bool pinsDriver(const NodeRequirement& r, const Policy& policy);

// Template placeholders nobody means literally: ${X}, $(X), {{ x }}.
bool looksTemplated(std::string_view s);

}  // namespace gpuguard::checks
