#include "rules/policy.h"

#include <algorithm>
#include <array>

#include "rules/registry.h"

namespace gpuguard {
namespace {

using nlohmann::json;

[[noreturn]] void fail(std::string_view source, std::string_view key, std::string_view what) {
  throw PolicyError(std::string(source) + ": " + std::string(key) + ": " + std::string(what));
}

std::string typeName(const json& v) { return v.is_null() ? "null" : v.type_name(); }

std::vector<std::string> stringList(const json& v, std::string_view source, std::string_view key) {
  if (!v.is_array()) fail(source, key, "must be a list of strings, got " + typeName(v));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      fail(source, std::string(key) + "[" + std::to_string(i) + "]", "must be a string, got " + typeName(v[i]));
    }
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

bool boolean(const json& v, std::string_view source, std::string_view key) {
  if (!v.is_boolean()) fail(source, key, "must be true or false, got " + typeName(v));
  return v.get<bool>();
}

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
     "the generic facts: the NVIDIA GPU Operator (OpenShift's supported install) runs GFD; no source says "
     "OpenShift enables ExtendedResourceToleration, so it is not assumed",
     [](Policy&) {}},
}};

}  // namespace

std::span<const PlatformPreset> platformPresets() { return kPlatforms; }

const PlatformPreset* findPlatformPreset(std::string_view name) {
  for (const PlatformPreset& p : kPlatforms) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Policy Policy::fromJson(const json& doc, std::string_view source, std::string_view platform) {
  Policy p;
  if (!doc.is_null() && !doc.is_object()) fail(source, "(top level)", "must be a map, got " + typeName(doc));
  applyPlatform(p, doc, source, platform);
  if (doc.is_null()) return p;  // an empty file means the defaults (of the platform)
  for (const auto& [key, v] : doc.items()) {
    if (key == "platform") continue;  // applied first
    if (key == "rules") {
      if (!v.is_object()) fail(source, key, "must be a map of rule id to error|warning|off");
      for (const auto& [id, setting] : v.items()) {
        if (id != "*" && !findRule(id)) fail(source, "rules." + id, "unknown rule id (see gpuguard-lint --list-rules)");
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
    } else if (key == "allowSuppressions") {
      p.allowSuppressions = boolean(v, source, key);
    } else if (key == "exemptNamespaces") {
      p.exemptNamespaces = stringList(v, source, key);
    } else if (key == "include") {
      p.include = stringList(v, source, key);
    } else if (key == "exclude") {
      p.exclude = stringList(v, source, key);
    } else {
      fail(source, key,
           "unknown key (known: rules, platform, gpuResources, draExtendedResources, gpuTaints, driverPinLabels, "
           "maxGpusPerNode, "
           "assumeExtendedResourceToleration, allowSuppressions, exemptNamespaces, include, exclude)");
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

}  // namespace gpuguard
