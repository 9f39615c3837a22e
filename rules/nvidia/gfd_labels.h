// What GPU Feature Discovery (and a few well-known components) write into node
// labels, for the checks that judge selector values (node-affinity-gt-lt,
// gpu-label-value, cuda-driver-too-old) and the scheduler replay's driver
// notes. NVIDIA's model, beside the Kubernetes one in rules/k8s/.
// Facts: kubernetes-gpu-semantics.md §8 (GFD labels).
#pragma once

#include <string_view>
#include <vector>

#include "rules/k8s/go_strconv.h"  // isCanonicalUnsigned: how GFD writes its integers
#include "rules/k8s/node_selection.h"
#include "rules/policy.h"

namespace gpuguard {

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

// The driver labels, by what their value means.
bool isDriverMajorLabel(std::string_view key);    // nvidia.com/cuda.driver-version.major, nvidia.com/cuda.driver.major
bool isDriverFullLabel(std::string_view key);     // nvidia.com/cuda.driver-version.full
bool isRuntimeMajorLabel(std::string_view key);   // nvidia.com/cuda.runtime-version.major, nvidia.com/cuda.runtime.major
bool isRuntimeFullLabel(std::string_view key);    // nvidia.com/cuda.runtime-version.full

// A requirement that pins the node's CUDA driver: In, Gt or Lt on a driver
// label of the policy (driverPinLabels) or on a label GFD derives from the
// driver: cuda.runtime-version.major/.full (and the deprecated
// cuda.runtime.major) hold the newest CUDA the driver supports (§14.8).
// gpu-missing-driver-pin asks for one in every term; cuda-driver-too-old
// judges only terms that have one.
bool pinsDriver(const NodeRequirement& r, const Policy& policy);
// A node selection (nodeSelector folded into every ORed term of the required
// node affinity) pins the driver when every term that can match a node has a
// pin. An empty term matches no node (component-helpers nodeaffinity: "nil
// or empty term selects no objects"), so it lets no unknown driver in.
bool selectionPinsDriver(const std::vector<NodeTerm>& terms, const Policy& policy);

}  // namespace gpuguard
