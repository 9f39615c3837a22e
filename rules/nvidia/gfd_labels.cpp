#include "rules/nvidia/gfd_labels.h"

#include <algorithm>
#include <array>

namespace gpuguard {
namespace {

constexpr std::string_view kGfdPrefix = "nvidia.com/";

bool endsWith(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

}  // namespace

LabelFormat labelFormat(std::string_view key) {
  static constexpr std::array<std::string_view, 20> kInteger{
      "gpu.count",          "gpu.memory",           "gpu.compute.major",      "gpu.compute.minor",
      "gpu.replicas",       "gpu.multiprocessors",  "gpu.slices.gi",          "gpu.slices.ci",
      "gpu.engines.copy",   "gpu.engines.decoder",  "gpu.engines.encoder",    "gpu.engines.jpeg",
      "gpu.engines.ofa",    "cuda.driver-version.major", "cuda.driver-version.minor", "cuda.runtime-version.major",
      "cuda.runtime-version.minor", "cuda.driver.major", "cuda.driver.minor", "gfd.timestamp"};
  static constexpr std::array<std::string_view, 2> kIntegerDeprecated{"cuda.runtime.major", "cuda.runtime.minor"};
  static constexpr std::array<std::string_view, 4> kBoolean{"mig.capable", "mps.capable", "vgpu.present",
                                                            "gpu.present"};
  static constexpr std::array<std::string_view, 3> kEnumerated{"gpu.family", "mig.strategy", "gpu.sharing-strategy"};
  static constexpr std::array<std::string_view, 8> kGfdText{
      "gpu.product", "gpu.machine",      "gpu.clique",           "gpu.mode",
      "mig.config",  "mig.config.state", "device-plugin.config", "vgpu.host-driver-branch"};
  static constexpr std::array<std::string_view, 19> kWellKnownText{
      "kubernetes.io/hostname",
      "kubernetes.io/arch",
      "kubernetes.io/os",
      "beta.kubernetes.io/arch",
      "beta.kubernetes.io/os",
      "node.kubernetes.io/instance-type",
      "beta.kubernetes.io/instance-type",
      "topology.kubernetes.io/zone",
      "topology.kubernetes.io/region",
      "failure-domain.beta.kubernetes.io/zone",
      "failure-domain.beta.kubernetes.io/region",
      "cloud.google.com/gke-accelerator",
      "cloud.google.com/gke-nodepool",
      "cloud.google.com/machine-family",
      "karpenter.k8s.aws/instance-gpu-name",
      "karpenter.k8s.aws/instance-gpu-manufacturer",
      "karpenter.k8s.aws/instance-family",
      "karpenter.sh/capacity-type",
      "eks.amazonaws.com/nodegroup"};

  auto in = [](std::string_view needle, const auto& list) {
    return std::find(list.begin(), list.end(), needle) != list.end();
  };
  if (in(key, kWellKnownText)) return LabelFormat::Text;
  if (!key.starts_with(kGfdPrefix)) return LabelFormat::Unknown;
  const std::string_view name = key.substr(kGfdPrefix.size());
  if (name == "cuda.driver-version.revision" || name == "cuda.driver.rev") {
    return LabelFormat::Unknown;  // "02": int-ish, empty for two-part versions
  }
  if (in(name, kInteger) || in(name, kIntegerDeprecated)) return LabelFormat::Integer;
  if (name == "cuda.driver-version.full" || name == "vgpu.host-driver-version") return LabelFormat::DriverVersion;
  if (name == "cuda.runtime-version.full") return LabelFormat::RuntimeVersion;
  if (in(name, kBoolean)) return LabelFormat::Boolean;
  if (in(name, kEnumerated)) return LabelFormat::Enumerated;
  if (in(name, kGfdText) || name.starts_with("gpu.deploy.")) return LabelFormat::Text;
  // MIG mixed strategy: nvidia.com/mig-<profile>.<attribute>.
  if (name.starts_with("mig-")) {
    static constexpr std::array<std::string_view, 11> kMigInteger{
        ".count",        ".memory",         ".multiprocessors", ".slices.gi",       ".slices.ci", ".engines.copy",
        ".engines.decoder", ".engines.encoder", ".engines.jpeg",  ".engines.ofa", ".replicas"};
    for (std::string_view s : kMigInteger) {
      if (endsWith(name, s)) return LabelFormat::Integer;
    }
    if (endsWith(name, ".product")) return LabelFormat::Text;
    if (endsWith(name, ".sharing-strategy")) return LabelFormat::Enumerated;
  }
  return LabelFormat::Unknown;
}

const std::vector<std::string_view>& enumeratedValues(std::string_view key) {
  static const std::vector<std::string_view> kFamily{"tesla",  "fermi",  "kepler",       "maxwell", "pascal",
                                                     "volta",  "turing", "ampere",       "ada-lovelace",
                                                     "hopper", "blackwell", "rubin",     "undefined"};
  static const std::vector<std::string_view> kMigStrategy{"none", "single", "mixed"};
  static const std::vector<std::string_view> kSharing{"none", "time-slicing", "mps"};
  static const std::vector<std::string_view> kNone{};
  if (key == "nvidia.com/gpu.family") return kFamily;
  if (key == "nvidia.com/mig.strategy") return kMigStrategy;
  if (key.ends_with(".sharing-strategy")) return kSharing;
  return kNone;
}

bool isDriverMajorLabel(std::string_view key) {
  return key == "nvidia.com/cuda.driver-version.major" || key == "nvidia.com/cuda.driver.major";
}
bool isDriverFullLabel(std::string_view key) { return key == "nvidia.com/cuda.driver-version.full"; }
bool isRuntimeMajorLabel(std::string_view key) {
  return key == "nvidia.com/cuda.runtime-version.major" || key == "nvidia.com/cuda.runtime.major";
}
bool isRuntimeFullLabel(std::string_view key) { return key == "nvidia.com/cuda.runtime-version.full"; }

bool pinsDriver(const NodeRequirement& r, const Policy& policy) {
  const bool driverLabel = policy.isDriverPinLabel(r.key) || isRuntimeMajorLabel(r.key) || isRuntimeFullLabel(r.key);
  return driverLabel && (r.op == "In" || r.op == "Gt" || r.op == "Lt");
}

bool selectionPinsDriver(const std::vector<NodeTerm>& terms, const Policy& policy) {
  return std::all_of(terms.begin(), terms.end(), [&](const NodeTerm& t) {
    return t.matchesNothing || std::any_of(t.requirements.begin(), t.requirements.end(),
                                           [&](const NodeRequirement& r) { return pinsDriver(r, policy); });
  });
}

}  // namespace gpuguard
