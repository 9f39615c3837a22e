// The policy: which rules run at which severity, and the cluster facts the
// rules need (GPU resource names, GPU taints, driver pin labels...). One
// schema serves the linter (.gpuguard.yaml) and the webhook (--policy).
//
//   rules: {gpu-missing-driver-pin: warning, gpu-count-exceeds-node: off}
//   rules: {"*": warning}            # every rule not named otherwise ("audit first")
//   gpuResources: [nvidia.com/gpu, nvidia.com/gpu.shared, "nvidia.com/mig-*"]
//   draExtendedResources: [nvidia.com/gpu]   # served by a DRA driver (DeviceClass extendedResourceName)
//   gpuTaints: [{key: nvidia.com/gpu, effect: NoSchedule}]   # value omitted: any value;
//                                    # PreferNoSchedule: no toleration required (it only scores)
//   driverPinLabels: [nvidia.com/cuda.driver-version.major, ...]
//   maxGpusPerNode: 8
//   platform: generic                # gke | eks | eks-auto-mode | aks | openshift: a bundle
//                                    # of the facts below (PlatformPreset); keys written beside it win
//   assumeExtendedResourceToleration: false
//   assumePodTolerationRestriction: false   # namespaces' defaultTolerations apply
//   assumePodNodeSelector: false     # namespaces' node-selector annotations apply
//   cudaImages:                      # images whose tag does not say their CUDA version
//     - image: 'registry\.corp/ml/train:(?P<cuda>\d+\.\d+)-.*'
//     - {image: 'registry\.corp/ml/legacy(:.*)?', cuda: "11.8"}
//
// This is what the rules read, and nothing else. The rest of a policy file
// belongs to the front ends (yaml/policy_file.h reads the whole document):
// exemptions (rules/exemptions.h), allowSuppressions, the webhook's
// exemptNamespaces and the linter's include/exclude globs.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/finding.h"
#include "rules/k8s/taints.h"
#include "rules/pattern.h"

namespace gpuguard {

class PolicyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class RuleSetting { Error, Warning, Off };

// Whether a rule id names a rule. Configuration flows one way: the engine's
// readers (Policy, Exemptions) check the shape of a policy document only, and
// the reader of a policy file (yaml/policy_file.h) passes the registry's
// answer in, so that an unknown id fails where it is written. Empty: every
// id is taken.
using KnownRule = std::function<bool(std::string_view ruleId)>;

// An image whose tag does not say its CUDA version (cudaImages).
struct CudaImage {
  Pattern image;                    // matched against the whole image reference, as written
  std::optional<std::string> cuda;  // a fixed version; without it the pattern's (?P<cuda>...) group gives it
};

struct Policy {
  // Overrides of default severities by rule id; "*" applies to every rule
  // without an entry of its own.
  std::map<std::string, RuleSetting, std::less<>> rules;
  std::vector<std::string> gpuResources{"nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-*"};
  // Extended resources a DRA driver serves through a DeviceClass
  // extendedResourceName (KEP-5004, DRAExtendedResource: beta 1.36, GA 1.37)
  // instead of a device plugin; a trailing * matches a prefix. Unset: none.
  std::vector<std::string> draExtendedResources;
  std::vector<Taint> gpuTaints{{"nvidia.com/gpu", std::nullopt, "NoSchedule"}};
  std::vector<std::string> driverPinLabels{"nvidia.com/cuda.driver-version.major",
                                           "nvidia.com/cuda.driver-version.full",
                                           "nvidia.com/cuda.driver.major"};
  long long maxGpusPerNode = 8;
  bool assumeExtendedResourceToleration = false;
  // The API server runs the PodTolerationRestriction admission plugin (off
  // by default upstream: kube-apiserver's DefaultOffAdmissionPlugins), which
  // adds a namespace's scheduler.alpha.kubernetes.io/defaultTolerations to
  // every pod created in it. Without it the annotation does nothing.
  bool assumePodTolerationRestriction = false;
  // The API server runs the PodNodeSelector admission plugin (off by default
  // upstream), which merges a namespace's
  // scheduler.alpha.kubernetes.io/node-selector into every pod created in it;
  // OpenShift's OriginPodNodeEnvironment does the same with
  // openshift.io/node-selector. Without it the annotations do nothing.
  bool assumePodNodeSelector = false;
  std::vector<CudaImage> cudaImages;  // consulted in order, before cuda-driver-too-old's built-in table
  std::string platform = "generic";
  // Whether GPU Feature Discovery labels the GPU nodes (nvidia.com/gpu.*,
  // nvidia.com/cuda.*). Not a key: false on platforms that run none
  // (eks-auto-mode), where a selector on them matches no node.
  bool gfdLabels = true;

  // Reads a policy document (already decoded from YAML or JSON). Unknown keys,
  // rule ids `knownRule` refuses, invalid patterns and values of the wrong
  // type throw PolicyError naming the key (and entry) and `source` (the file name).
  // `platform`, when given (the linter's --platform), replaces the document's
  // platform key; the other keys of the document still override the preset.
  // `othersKeys`: top-level keys another reader takes (skipped here, and
  // listed among the known keys in the error for an unknown one).
  static Policy fromJson(const nlohmann::json& doc, std::string_view source, std::string_view platform = {},
                         std::span<const std::string_view> othersKeys = {}, const KnownRule& knownRule = {});

  // The severity a rule runs at, or nullopt when it is off.
  std::optional<Severity> severityOf(std::string_view ruleId, Severity defaultSeverity) const;

  // True for names in gpuResources; an entry ending in '*' matches a prefix.
  bool isGpuResource(std::string_view resourceName) const;
  bool isDraExtendedResource(std::string_view resourceName) const;
  bool isDriverPinLabel(std::string_view labelKey) const;

  // The CUDA version text the first cudaImages entry matching all of `image`
  // gives it (its fixed cuda, or what its cuda group took); nullopt when none
  // matches.
  std::optional<std::string> cudaVersionOfImage(std::string_view image) const;
};

// A managed platform's facts about its GPU nodes (reference §14.17), as
// policy settings.
struct PlatformPreset {
  std::string_view name;
  std::string_view facts;  // what it sets and why, for the docs
  void (*apply)(Policy&);
};
std::span<const PlatformPreset> platformPresets();
// The preset of that name, or nullptr.
const PlatformPreset* findPlatformPreset(std::string_view name);

}  // namespace gpuguard
