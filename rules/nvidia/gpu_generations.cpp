#include "rules/nvidia/gpu_generations.h"

#include <algorithm>

#include "rules/k8s/go_strconv.h"

namespace gpuguard {
namespace {

// The requirement of a term that admits only pre-Turing GPUs, described.
std::optional<std::string> preTuringTerm(const NodeTerm& term) {
  for (const NodeRequirement& r : term.requirements) {
    const bool lowComputeMajor = r.key == "nvidia.com/gpu.compute.major" && r.op == "Lt" && r.values.size() == 1 &&
                                 isCanonicalUnsigned(r.values.front()) && r.values.front().size() == 1 &&
                                 r.values.front()[0] <= '7';
    const bool allOld = r.op == "In" && !r.values.empty() &&
                        std::all_of(r.values.begin(), r.values.end(),
                                    [&](const std::string& v) { return !preTuringGpu(r.key, v).empty(); });
    if (lowComputeMajor || allOld) return describeRequirement(r, term);
  }
  return std::nullopt;
}

}  // namespace

std::string preTuringGpu(std::string_view key, std::string_view value) {
  if (key == "nvidia.com/gpu.family") {
    for (std::string_view f : {"volta", "pascal", "maxwell", "kepler", "fermi", "tesla"}) {
      if (value == f) return std::string(value);
    }
    return "";
  }
  if (key == "nvidia.com/gpu.compute.major") {
    return isCanonicalUnsigned(value) && value.size() == 1 && value[0] < '7' ? "compute capability " + std::string(value) + ".x" : "";
  }
  if (key == "nvidia.com/gpu.product") {
    for (std::string_view prefix : {"NVIDIA-", "Tesla-"}) {
      if (value.starts_with(prefix)) value.remove_prefix(prefix.size());
    }
    for (std::string_view model : {"V100", "P100", "P40", "P4", "P6", "K80", "K40", "M60", "M40", "GV100"}) {
      if (value == model || (value.starts_with(model) && value[model.size()] == '-') ||
          (model == "V100" && value.starts_with("V100S"))) {
        return std::string(value);
      }
    }
    return "";
  }
  if (key == "cloud.google.com/gke-accelerator") {
    for (std::string_view v : {"nvidia-tesla-v100", "nvidia-tesla-p100", "nvidia-tesla-p4", "nvidia-tesla-k80"}) {
      if (value == v) return std::string(value.substr(std::string_view("nvidia-tesla-").size()));
    }
    return "";
  }
  if (key == "karpenter.k8s.aws/instance-gpu-name") {
    return value == "v100" || value == "k80" || value == "m60" ? std::string(value) : "";
  }
  if (key == "node.kubernetes.io/instance-type" || key == "beta.kubernetes.io/instance-type") {
    if (value.starts_with("ml.")) value.remove_prefix(3);
    const std::string_view family = value.substr(0, value.find('.'));
    if (family.size() == value.size()) return "";
    if (family == "p3" || family == "p3dn") return "V100 (" + std::string(family) + ")";
    if (family == "p2") return "K80 (p2)";
    if (family == "g3" || family == "g3s") return "M60 (" + std::string(family) + ")";
  }
  return "";
}

std::optional<std::string> onlyPreTuringGpus(const std::vector<NodeTerm>& terms) {
  std::optional<std::string> evidence;
  for (const NodeTerm& term : terms) {
    if (term.matchesNothing) continue;
    auto e = preTuringTerm(term);
    if (!e) return std::nullopt;
    if (!evidence) evidence = e;
  }
  return evidence;
}

}  // namespace gpuguard
