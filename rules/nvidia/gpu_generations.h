// GPU generations as node labels name them, for the CUDA releases that drop
// them: CUDA 13.0 has no code for GPUs below compute capability 7.5 (Maxwell,
// Pascal, Volta; CUDA 12.9 is their last toolkit; reference §14.9). Read from
// GFD's gpu.family, gpu.compute.major and gpu.product, GKE's accelerator,
// Karpenter's instance-gpu-name and AWS instance types. For cuda-driver-too-old.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/k8s/node_selection.h"

namespace gpuguard {

// The pre-Turing GPU a label value names ("volta", "V100 (p3)"), or "" when
// it names another GPU (or is not certain).
std::string preTuringGpu(std::string_view key, std::string_view value);

// The evidence that a node selection admits only pre-Turing GPUs: the
// requirement of the first term that can match, described, when every such
// term admits only them; nullopt otherwise.
std::optional<std::string> onlyPreTuringGpus(const std::vector<NodeTerm>& terms);

}  // namespace gpuguard
