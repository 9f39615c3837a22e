#include "rules/policy.h"

#include <algorithm>
#include <array>

#include "rules/policy_json.h"

namespace gpuguard {
namespace {

using nlohmann::json;
using policy_json::boolean;
using policy_json::fail;
using policy_json::stringList;
using policy_json::typeName;

// YAML 1.1 reads a bare `off` as false, so accept the boolean too.
RuleSetting ruleSetting(const json& v, std::string_view source, const std::string& key) {
  if (v.is_boolean() && !v.get<bool>()) return RuleSetting::Off;
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "error") return RuleSetting::Error;
    if (s == "warning") return RuleSetting::Warning;
    if (s == "off") return RuleSetting::Off;
  }
  fail(source, key, "must be one of error, warning, off; got " + v.dump());
}

std::vector<Taint> taints(const json& v, std::string_view source) {
  if (!v.is_array()) fail(source, "gpuTaints", "must be a list of {key, value, effect}, got " + typeName(v));
  std::vector<Taint> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string where = "gpuTaints[" + std::to_string(i) + "]";
    const json& t = v[i];
    if (!t.is_object()) fail(source, where, "must be a map with key, value and effect");
    Taint taint;
    for (const auto& [k, val] : t.items()) {
      if (!val.is_string()) fail(source, where + "." + k, "must be a string, got " + typeName(val));
      if (k == "key") taint.key = val.get<std::string>();
      else if (k == "value") taint.value = val.get<std::string>();
      else if (k == "effect") taint.effect = val.get<std::string>();
      else fail(source, where + "." + k, "unknown key (known: key, value, effect)");
    }
    if (taint.key.empty()) fail(source, where + ".key", "is required");
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute" && taint.effect != "PreferNoSchedule") {
      fail(source, where + ".effect", "must be NoSchedule, PreferNoSchedule or NoExecute, got \"" + taint.effect + "\"");
    }
    out.push_back(std::move(taint));
  }
  return out;
}

// "12", "11.8", "12.4.1": what a CUDA version looks like in an image tag.
bool isCudaVersion(std::string_view s) {
  int parts = 0;
  while (true) {
    const std::size_t digits = std::min(s.find_first_not_of("0123456789"), s.size());
    if (digits == 0 || ++parts > 3) return false;
    s.remove_prefix(digits);
    if (s.empty()) return true;
    if (s.front() != '.') return false;
    s.remove_prefix(1);
  }
}

CudaImage cudaImage(const json& entry, std::string_view source, const std::string& where) {
  if (!entry.is_object()) fail(source, where, "must be a map with image (and cuda), got " + typeName(entry));
  std::optional<Pattern> image;
  std::optional<std::string> cuda;
  for (const auto& [k, v] : entry.items()) {
    if (k == "image") {
      image = policy_json::pattern(v, source, where + ".image");
    } else if (k == "cuda") {
      cuda = policy_json::string(v, source, where + ".cuda");
      if (!isCudaVersion(*cuda)) fail(source, where + ".cuda", "must be a CUDA version such as \"11.8\", got " + v.dump());
    } else {
      fail(source, where + "." + k, "unknown key (known: image, cuda)");
    }
  }
  if (!image) fail(source, where + ".image", "is required");
  const bool group = image->hasGroup("cuda");
  if (!cuda && !group) {
    fail(source, where, "says no CUDA version: give cuda: \"X.Y\", or a (?P<cuda>...) group in image");
  }
  if (cuda && group) fail(source, where, "gives the CUDA version twice (cuda and a (?P<cuda>...) group): keep one");
  return CudaImage{std::move(*image), std::move(cuda)};
}

std::vector<CudaImage> readCudaImages(const json& v, std::string_view source) {
  if (!v.is_array()) fail(source, "cudaImages", "must be a list of {image, cuda}, got " + typeName(v));
  std::vector<CudaImage> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(cudaImage(v[i], source, policy_json::entryKey("cudaImages", i)));
  return out;
}

constexpr std::array<std::string_view, 11> kKeys{"rules",          "platform",
                                                 "gpuResources",   "draExtendedResources", "gpuTaints",
                                                 "driverPinLabels", "maxGpusPerNode",
                                                 "assumeExtendedResourceToleration", "assumePodTolerationRestriction",
                                                 "assumePodNodeSelector", "cudaImages"};

std::string knownKeys(std::span<const std::string_view> othersKeys) {
  std::string out;
  for (const auto& list : {std::span<const std::string_view>(kKeys), othersKeys}) {
    for (std::string_view key : list) out += (out.empty() ? "" : ", ") + std::string(key);
  }
  return out;
}

// The platform the document (or the caller) names, applied first: the
// document's other keys override what it sets.
void applyPlatform(Policy& p, const json& doc, std::string_view source, std::string_view override) {
  std::string name(override);
  if (name.empty() && doc.is_object()) {
    if (auto it = doc.find("platform"); it != doc.end()) {
      if (!it->is_string()) fail(source, "platform", "must be a string, got " + typeName(*it));
      name = it->get<std::string>();
    }
  }
  if (name.empty()) return;
  const PlatformPreset* preset = findPlatformPreset(name);
  if (!preset) {
    std::string known;
    for (const PlatformPreset& each : platformPresets()) known += (known.empty() ? "" : ", ") + std::string(each.name);
    fail(source, "platform", "unknown platform \"" + name + "\" (known: " + known + ")");
  }
  preset->apply(p);
  p.platform = name;
}

// kubernetes-gpu-semantics.md §14.17.
constexpr std::array<PlatformPreset, 6> kPlatforms{{
    {"generic", "the defaults: nvidia.com/gpu:NoSchedule taint of any value, no ExtendedResourceToleration, GFD labels",
     [](Policy&) {}},
    {"gke",
     "GKE Standard taints GPU nodes nvidia.com/gpu=present:NoSchedule and runs the ExtendedResourceToleration "
     "admission plugin, so a pod that requests nvidia.com/gpu needs no toleration (the plugin adds it to every Pod, "
     "also those a workload creates; not for DRA claims); cloud.google.com/gke-gpu-driver-version (the driver channel) pins the "
     "driver besides GFD's labels",
     [](Policy& p) {
       p.gpuTaints = {{"nvidia.com/gpu", "present", "NoSchedule"}};
       p.assumeExtendedResourceToleration = true;
       p.driverPinLabels.insert(p.driverPinLabels.begin(), "cloud.google.com/gke-gpu-driver-version");
     }},
    {"eks",
     "EKS runs the ExtendedResourceToleration admission plugin on every platform version; the taint is the node "
     "group's (nvidia.com/gpu:NoSchedule by convention)",
     [](Policy& p) { p.assumeExtendedResourceToleration = true; }},
    {"eks-auto-mode",
     "as eks, and Auto Mode runs no GPU Feature Discovery (no nvidia.com/gpu.* or nvidia.com/cuda.* labels; its "
     "own are eks.amazonaws.com/instance-gpu-*) and ships the driver in the AMI it picks for a NodePool, so a "
     "NodePool or instance-family selector (karpenter.sh/nodepool, eks.amazonaws.com/instance-family) is the "
     "driver pin",
     [](Policy& p) {
       p.assumeExtendedResourceToleration = true;
       p.gfdLabels = false;
       p.driverPinLabels = {"karpenter.sh/nodepool", "eks.amazonaws.com/instance-family"};
     }},
    {"aks",
     "AKS does not run ExtendedResourceToleration (Azure/AKS#1449), and its GPU node pool docs taint with "
     "sku=gpu:NoSchedule, so a GPU pod needs {key: sku, operator: Equal, value: gpu, effect: NoSchedule}",
     [](Policy& p) {
       p.gpuTaints = {{"sku", "gpu", "NoSchedule"}};
       p.assumeExtendedResourceToleration = false;
     }},
    {"openshift",
     "the generic taint and labels (the NVIDIA GPU Operator, OpenShift's supported install, runs GFD); OpenShift's "
     "API server turns on PodNodeSelector and PodTolerationRestriction, which upstream leaves off, and runs "
     "OriginPodNodeEnvironment (openshift.io/node-selector), so a namespace's node selector and default "
     "tolerations reach its pods; no source says it enables ExtendedResourceToleration, so that is not assumed",
     // openshift/kubernetes openshift-kube-apiserver/admission/admissionenablement/register.go
     // (additionalDefaultOnPlugins) and .../admission/scheduler/nodeenv.
     [](Policy& p) {
       p.assumePodNodeSelector = true;
       p.assumePodTolerationRestriction = true;
     }},
}};

}  // namespace

std::span<const PlatformPreset> platformPresets() { return kPlatforms; }

const PlatformPreset* findPlatformPreset(std::string_view name) {
  for (const PlatformPreset& p : kPlatforms) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Policy Policy::fromJson(const json& doc, std::string_view source, std::string_view platform,
                        std::span<const std::string_view> othersKeys, const KnownRule& knownRule) {
  Policy p;
  if (!doc.is_null() && !doc.is_object()) fail(source, "(top level)", "must be a map, got " + typeName(doc));
  applyPlatform(p, doc, source, platform);
  if (doc.is_null()) return p;  // an empty file means the defaults (of the platform)
  for (const auto& [key, v] : doc.items()) {
    if (key == "platform") continue;  // applied first
    if (key == "rules") {
      if (!v.is_object()) fail(source, key, "must be a map of rule id to error|warning|off");
      for (const auto& [id, setting] : v.items()) {
        if (id != "*" && knownRule && !knownRule(id)) fail(source, "rules." + id, "unknown rule id (see gpuguard-lint --list-rules)");
        p.rules[id] = ruleSetting(setting, source, "rules." + id);
      }
    } else if (key == "gpuResources") {
      p.gpuResources = stringList(v, source, key);
    } else if (key == "draExtendedResources") {
      p.draExtendedResources = stringList(v, source, key);
    } else if (key == "gpuTaints") {
      p.gpuTaints = taints(v, source);
    } else if (key == "driverPinLabels") {
      p.driverPinLabels = stringList(v, source, key);
    } else if (key == "maxGpusPerNode") {
      if (!v.is_number_integer() || v.get<long long>() < 1) fail(source, key, "must be a positive integer, got " + v.dump());
      p.maxGpusPerNode = v.get<long long>();
    } else if (key == "assumeExtendedResourceToleration") {
      p.assumeExtendedResourceToleration = boolean(v, source, key);
    } else if (key == "assumePodTolerationRestriction") {
      p.assumePodTolerationRestriction = boolean(v, source, key);
    } else if (key == "assumePodNodeSelector") {
      p.assumePodNodeSelector = boolean(v, source, key);
    } else if (key == "cudaImages") {
      p.cudaImages = readCudaImages(v, source);
    } else if (std::find(othersKeys.begin(), othersKeys.end(), key) == othersKeys.end()) {
      fail(source, key, "unknown key (known: " + knownKeys(othersKeys) + ")");
    }
  }
  return p;
}

std::optional<Severity> Policy::severityOf(std::string_view ruleId, Severity defaultSeverity) const {
  auto it = rules.find(ruleId);
  if (it == rules.end()) it = rules.find("*");
  if (it == rules.end()) return defaultSeverity;
  switch (it->second) {
    case RuleSetting::Error: return Severity::Error;
    case RuleSetting::Warning: return Severity::Warning;
    case RuleSetting::Off: return std::nullopt;
  }
  return defaultSeverity;
}

namespace {

// A resource name list entry ending in '*' matches a prefix.
bool matchesResourceList(const std::vector<std::string>& patterns, std::string_view name) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& pattern) {
    if (!pattern.empty() && pattern.back() == '*') {
      return name.substr(0, pattern.size() - 1) == std::string_view(pattern).substr(0, pattern.size() - 1);
    }
    return name == pattern;
  });
}

}  // namespace

bool Policy::isGpuResource(std::string_view name) const { return matchesResourceList(gpuResources, name); }

bool Policy::isDraExtendedResource(std::string_view name) const {
  return matchesResourceList(draExtendedResources, name);
}

bool Policy::isDriverPinLabel(std::string_view key) const {
  return std::find(driverPinLabels.begin(), driverPinLabels.end(), key) != driverPinLabels.end();
}

std::optional<std::string> Policy::cudaVersionOfImage(std::string_view image) const {
  for (const CudaImage& entry : cudaImages) {
    if (entry.cuda) {
      if (entry.image.fullMatch(image)) return entry.cuda;
    } else if (auto version = entry.image.fullMatchGroup(image, "cuda")) {
      return version;
    }
  }
  return std::nullopt;
}

}  // namespace gpuguard
