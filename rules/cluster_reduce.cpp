#include "rules/cluster_reduce.h"

#include <algorithm>

#include "rules/k8s/json_access.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/taints.h"
#include "rules/k8s/node_selection.h"

namespace gpuguard {
namespace {

using nlohmann::json;

std::string nameOf(const json& object) {
  const json* metadata = objectAt(object, "metadata");
  return metadata ? stringOr(*metadata, "name") : std::string();
}

LabelMap labelsIn(const json* metadata) {
  LabelMap out;
  const json* labels = metadata ? objectAt(*metadata, "labels") : nullptr;
  if (!labels) return out;
  for (const auto& [key, value] : labels->items()) out.emplace(key, valueText(value));
  return out;
}

void readResources(const json* list, ResourceList& out, const std::string& where, std::vector<std::string>& warnings) {
  if (!list || !list->is_object()) return;
  for (const auto& [name, value] : list->items()) {
    std::optional<Amount> a = Amount::fromJson(value);
    if (!a) {
      warnings.push_back(where + ": " + name + " " + renderValue(value) + " is not a quantity; ignored");
      continue;
    }
    out[name] = *a;
  }
}

// Taints as the API stores them: a missing value is "" (the node's value is
// known to be empty), never "any value".
std::vector<Taint> taintsIn(const json* list) {
  std::vector<Taint> out;
  if (!list || !list->is_array()) return out;
  for (const json& t : *list) {
    if (t.is_object()) out.push_back({stringOr(t, "key"), stringOr(t, "value"), stringOr(t, "effect")});
  }
  return out;
}

std::vector<NodeRequirement> requirementsIn(const json* list) {
  std::vector<NodeRequirement> out;
  if (!list || !list->is_array()) return out;
  for (const json& r : *list) {
    if (!r.is_object()) continue;
    NodeRequirement req;
    req.key = stringOr(r, "key");
    req.op = stringOr(r, "operator");
    if (const json* values = arrayAt(r, "values")) {
      for (const json& v : *values) req.values.push_back(valueText(v));
    }
    out.push_back(std::move(req));
  }
  return out;
}

// A namespace node selector as PodNodeSelector reads it
// (labels.ConvertSelectorToLabelsMap): "key=value" pairs separated by commas,
// spaces around each trimmed; "" is no selector. nullopt when a pair is not
// key=value (the plugin then rejects the namespace's pods).
std::optional<LabelMap> parseNodeSelector(std::string_view text) {
  LabelMap out;
  const auto trimmed = [](std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return std::string_view();
    return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
  };
  if (text.empty()) return out;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view pair = text.substr(start, comma - start);
    const std::size_t equals = pair.find('=');
    if (equals == std::string_view::npos || pair.find('=', equals + 1) != std::string_view::npos) return std::nullopt;
    const std::string_view key = trimmed(pair.substr(0, equals));
    if (key.empty()) return std::nullopt;
    out[std::string(key)] = std::string(trimmed(pair.substr(equals + 1)));
    start = comma + 1;
  }
  return out;
}

// The namespace's node selector: PodNodeSelector's annotation, else
// OpenShift's, which OriginPodNodeEnvironment reads only without the former
// (openshift-kube-apiserver/admission/scheduler/nodeenv).
void readNodeSelector(const json* annotations, NamespaceFacts& n) {
  for (const char* key : {kNodeSelectorAnnotation, kOpenShiftNodeSelectorAnnotation}) {
    const std::string* text = annotations ? stringAt(*annotations, key) : nullptr;
    if (!text) continue;
    n.nodeSelectorAnnotation = key;
    n.nodeSelector = parseNodeSelector(*text);
    if (!n.nodeSelector) n.nodeSelectorError = std::string(key) + " is not a list of key=value";
    return;
  }
}

}  // namespace

NodeFacts reduceNode(const json& node, std::vector<std::string>& warnings) {
  NodeFacts n;
  n.name = nameOf(node);
  n.labels = labelsIn(objectAt(node, "metadata"));
  if (const json* spec = objectAt(node, "spec")) {
    if (const json* u = member(*spec, "unschedulable"); u && u->is_boolean()) n.unschedulable = u->get<bool>();
    n.taints = taintsIn(member(*spec, "taints"));
  }
  const json* status = objectAt(node, "status");
  const std::string where = "node " + n.name;
  readResources(status ? member(*status, "capacity") : nullptr, n.capacity, where + " status.capacity", warnings);
  const json* allocatable = status ? member(*status, "allocatable") : nullptr;
  if (allocatable) readResources(allocatable, n.allocatable, where + " status.allocatable", warnings);
  else n.allocatable = n.capacity;
  return n;
}

NodePoolFacts reduceNodePool(const json& nodePool, std::vector<std::string>& warnings) {
  NodePoolFacts p;
  p.name = nameOf(nodePool);
  const json* spec = objectAt(nodePool, "spec");
  const json* tmpl = spec ? objectAt(*spec, "template") : nullptr;
  p.labels = labelsIn(tmpl ? objectAt(*tmpl, "metadata") : nullptr);
  if (const json* tspec = tmpl ? objectAt(*tmpl, "spec") : nullptr) {
    p.requirements = requirementsIn(member(*tspec, "requirements"));
    p.taints = taintsIn(member(*tspec, "taints"));
    p.startupTaints = taintsIn(member(*tspec, "startupTaints"));
  }
  readResources(spec ? member(*spec, "limits") : nullptr, p.limits, "nodepool " + p.name + " spec.limits", warnings);
  return p;
}

NamespaceFacts reduceNamespace(const json& ns, std::vector<std::string>& warnings) {
  NamespaceFacts n;
  n.name = nameOf(ns);
  const json* metadata = objectAt(ns, "metadata");
  n.labels = labelsIn(metadata);
  const json* annotations = metadata ? objectAt(*metadata, "annotations") : nullptr;
  readNodeSelector(annotations, n);
  if (!n.nodeSelectorError.empty()) warnings.push_back("namespace " + n.name + ": " + n.nodeSelectorError);
  const std::string* text = annotations ? stringAt(*annotations, kDefaultTolerationsAnnotation) : nullptr;
  if (!text) return n;
  // PodTolerationRestriction reads the annotation as a JSON list of tolerations.
  json parsed = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) {
    n.defaultTolerationsError = std::string(kDefaultTolerationsAnnotation) + " is not a JSON list of tolerations";
  } else {
    for (const json& t : parsed) {
      if (t.is_object()) n.defaultTolerations.push_back(t);
      else n.defaultTolerationsError = std::string(kDefaultTolerationsAnnotation) + " holds an entry that is not a toleration";
    }
  }
  if (!n.defaultTolerationsError.empty()) warnings.push_back("namespace " + n.name + ": " + n.defaultTolerationsError);
  return n;
}

RuntimeClassFacts reduceRuntimeClass(const json& runtimeClass) {
  RuntimeClassFacts r;
  r.name = nameOf(runtimeClass);
  const json* scheduling = objectAt(runtimeClass, "scheduling");
  if (!scheduling) return r;
  if (const json* selector = objectAt(*scheduling, "nodeSelector")) {
    for (const auto& [key, value] : selector->items()) r.nodeSelector.emplace(key, valueText(value));
  }
  if (const json* tolerations = arrayAt(*scheduling, "tolerations")) {
    for (const json& t : *tolerations) {
      if (t.is_object()) r.tolerations.push_back(t);
    }
  }
  return r;
}

ResourceSliceFacts reduceResourceSlice(const json& slice) {
  ResourceSliceFacts s;
  const json* spec = objectAt(slice, "spec");
  if (!spec) return s;
  s.driver = stringOr(*spec, "driver");
  // Only spec.nodeName pins the devices to one node; allNodes, nodeSelector
  // and perDeviceNodeSelection leave nodeName empty (the API requires exactly one).
  s.nodeName = stringOr(*spec, "nodeName");
  if (const json* devices = arrayAt(*spec, "devices")) s.devices = devices->size();
  return s;
}

}  // namespace gpuguard
