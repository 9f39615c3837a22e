#include "rules/policy.h"

#include <algorithm>

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

}  // namespace

Policy Policy::fromJson(const json& doc, std::string_view source) {
  Policy p;
  if (doc.is_null()) return p;  // an empty file means the defaults
  if (!doc.is_object()) fail(source, "(top level)", "must be a map, got " + typeName(doc));
  for (const auto& [key, v] : doc.items()) {
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
           "unknown key (known: rules, gpuResources, draExtendedResources, gpuTaints, driverPinLabels, maxGpusPerNode, "
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
