#include "schedule/diagnose.h"

#include <algorithm>
#include <map>
#include <set>

#include "rules/nvidia/gfd_labels.h"
#include "rules/gpu_use.h"
#include "rules/k8s/go_strconv.h"
#include "rules/k8s/json_access.h"
#include "rules/k8s/node_selection.h"
#include "rules/pod_specs.h"
#include "rules/resources.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/names.h"

namespace gpuguard::schedule {
namespace {

using nlohmann::json;

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::optional<DriverPin> driverPin(const PlacementPod& pod, const Snapshot& snapshot) {
  DriverPin pin;
  std::vector<std::string> where;
  for (const auto& [key, value] : pod.selector) {
    if (!isDriverMajorLabel(key)) continue;
    pin.label = key;
    pin.pinned.push_back(value);
    where.push_back("nodeSelector");
  }
  for (std::size_t i = 0; i < pod.affinity.terms.size(); ++i) {
    for (const NodeExpression& x : pod.affinity.terms[i].expressions) {
      if (x.op != "In" || !isDriverMajorLabel(x.key) || (!pin.label.empty() && x.key != pin.label)) continue;
      pin.label = x.key;
      for (const std::string& v : x.values) {
        if (std::find(pin.pinned.begin(), pin.pinned.end(), v) == pin.pinned.end()) pin.pinned.push_back(v);
      }
      where.push_back("required node affinity term " + std::to_string(i));
    }
  }
  if (pin.pinned.empty()) return std::nullopt;
  std::map<std::string, std::size_t> counts;
  for (const NodeInfo& n : snapshot.nodes) {
    if (auto it = n.labels.find(pin.label); it != n.labels.end()) ++counts[it->second];
  }
  for (const std::string& v : pin.pinned) {
    if (!counts.count(v)) pin.missing.push_back(v);
  }
  if (pin.missing.empty()) return std::nullopt;
  pin.where = joined(where);
  pin.nodeValues.assign(counts.begin(), counts.end());
  std::sort(pin.nodeValues.begin(), pin.nodeValues.end(), [](const auto& a, const auto& b) {
    auto ia = parseGoInt(a.first), ib = parseGoInt(b.first);
    if (ia && ib && *ia != *ib) return *ia < *ib;
    return a.first < b.first;
  });
  return pin;
}

std::string driverPinNote(const DriverPin& pin, const Snapshot& snapshot) {
  std::string s = pin.label + " is pinned to " + joined(pin.pinned) + " (" + pin.where + "), but no node in the snapshot has " +
                  (pin.missing.size() == 1 ? "driver major " : "driver majors ") + joined(pin.missing);
  if (pin.nodeValues.empty()) {
    s += "; no node carries " + pin.label + " at all";
    // The other spelling (deprecated nvidia.com/cuda.driver.major or the current one)?
    const std::string other = pin.label == "nvidia.com/cuda.driver.major" ? "nvidia.com/cuda.driver-version.major"
                                                                          : "nvidia.com/cuda.driver.major";
    std::set<std::string> values;
    for (const NodeInfo& n : snapshot.nodes) {
      if (auto it = n.labels.find(other); it != n.labels.end()) values.insert(it->second);
    }
    if (!values.empty()) s += " (they carry " + other + ": " + joined({values.begin(), values.end()}) + ")";
    else s += " (is GPU Feature Discovery running?)";
    return s;
  }
  std::vector<std::string> have;
  for (const auto& [value, count] : pin.nodeValues) have.push_back(value + " (" + plural(count, "node", "nodes") + ")");
  return s + "; the nodes have " + joined(have);
}

// nodeSelector pairs and required affinity In expressions asking for label
// values no node has: "no node has nvidia.com/gpu.product=NVIDIA-T4; the
// nodes have Tesla-T4 (1 node), NVIDIA-L4 (2 nodes)". Driver majors have
// their own note (driverPin).
std::vector<std::string> unknownValueNotes(const PlacementPod& pod, const Snapshot& snapshot) {
  std::vector<std::pair<std::string, std::vector<std::string>>> asks;  // key, accepted values
  for (const auto& [key, value] : pod.selector) asks.push_back({key, {value}});
  for (const RequiredAffinity::Term& term : pod.affinity.terms) {
    for (const NodeExpression& x : term.expressions) {
      if (x.op == "In" && x.invalid.empty()) asks.push_back({x.key, x.values});
    }
  }
  std::vector<std::string> notes;
  for (const auto& [key, values] : asks) {
    if (isDriverMajorLabel(key)) continue;
    std::map<std::string, std::size_t> have;
    for (const NodeInfo& n : snapshot.nodes) {
      if (auto it = n.labels.find(key); it != n.labels.end()) ++have[it->second];
    }
    if (std::any_of(values.begin(), values.end(), [&](const std::string& v) { return have.count(v) > 0; })) continue;
    std::string note = "no node in the snapshot has " + key + (values.size() == 1 ? "=" + values[0] : " in [" + joined(values) + "]");
    if (have.empty()) {
      note += "; no node carries " + key + " at all";
    } else {
      std::vector<std::string> listed;
      for (const auto& [value, count] : have) listed.push_back(value + " (" + plural(count, "node", "nodes") + ")");
      note += "; the nodes have " + joined(listed);
    }
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(std::move(note));
  }
  return notes;
}

void conclude(PodDiagnosis& d) {
  for (const NodeVerdict& v : d.nodes) {
    if (v.schedulable) d.schedulableNodes.push_back(v.node);
  }
  if (d.schedulable()) {
    d.verdict = "schedulable on " + plural(d.schedulableNodes.size(), "node", "nodes") + ": " + joined(d.schedulableNodes);
    return;
  }
  d.verdict = schedulerSummary(d.nodes);
  if (d.nodes.empty()) return;
  std::map<std::string, std::size_t> histogram;
  for (const NodeVerdict& v : d.nodes) {
    for (const std::string& r : v.reasons) ++histogram[r];
  }
  // The most common reason; ties go to the reason the scheduler lists first.
  std::vector<std::pair<std::string, std::size_t>> ranked(histogram.begin(), histogram.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return std::to_string(a.second) + " " + a.first < std::to_string(b.second) + " " + b.first;
  });
  d.dominantReason = ranked.front().first;
  // Why it holds, per node, nodes with the same explanation grouped.
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const NodeVerdict& v : d.nodes) {
    if (std::find(v.reasons.begin(), v.reasons.end(), d.dominantReason) == v.reasons.end()) continue;
    d.dominantNodes.push_back(v.node);
    std::string why = v.cause;
    for (const ResourceFit& f : v.resources) {
      if (!f.fits && d.dominantReason == "Insufficient " + f.name) why = f.name + ": " + f.cause;
    }
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == why; });
    if (g == groups.end()) groups.push_back({why, {v.node}});
    else g->second.push_back(v.node);
  }
  for (const auto& [why, nodes] : groups) d.dominantDetails.push_back(joined(nodes) + ": " + why);
}

std::map<std::string, std::string, std::less<>> draBackedRequests(const ResourceList& requests, const Snapshot& snapshot,
                                                                  const Policy& policy) {
  std::map<std::string, std::string, std::less<>> out;
  for (const auto& [name, amount] : requests) {
    if (auto c = snapshot.draExtendedResources.find(name); c != snapshot.draExtendedResources.end()) {
      out.emplace(name, "DeviceClass " + c->second);
    } else if (const std::string* served = snapshot.facts ? snapshot.facts->classServing(name) : nullptr) {
      out.emplace(name, "DeviceClass " + *served);
    } else if (name.starts_with(kDeviceClassResourcePrefix)) {
      out.emplace(name, "DeviceClass " + name.substr(kDeviceClassResourcePrefix.size()));
    } else if (policy.isDraExtendedResource(name)) {
      out.emplace(name, "policy draExtendedResources");
    }
  }
  return out;
}

std::string draNote(const std::string& resource, const std::string& source) {
  return resource + " is served by DRA (" + source +
         ") on nodes that do not advertise it: --nodes does not count ResourceSlice devices, so whether one is "
         "free there is the DRA allocator's call (kubectl get resourceslices)";
}

PodDiagnosis diagnoseSite(const PodSite& site, const json& object, const Snapshot& snapshot, const Policy& policy) {
  PodDiagnosis d;
  d.kind = stringOr(object, "kind");
  if (const json* md = member(object, "metadata")) {
    d.ns = stringOr(*md, "namespace");
    d.name = stringOr(*md, "name");
  }
  d.specPath = site.specPath.apiPath();

  PodRequests requests = podRequests(site);
  for (std::string& p : requests.problems) d.notes.push_back(std::move(p));
  d.requests = std::move(requests.resources);
  for (const auto& [name, amount] : d.requests) {
    if (policy.isGpuResource(name)) d.gpuResources.push_back(name);
  }
  d.gpus = podGpus(site, policy);

  PlacementPod facts = placementPod(site, d.requests, policy);
  if (site.isPod && d.kind == "Pod" && !d.name.empty()) facts.self = BoundPod{d.ns.empty() ? "default" : d.ns, d.name, {}};
  facts.draBacked = draBackedRequests(d.requests, snapshot, policy);

  for (const NodeInfo& node : snapshot.nodes) d.nodes.push_back(judgeNode(facts, node, node.pods, policy));
  d.hasNodeSelector = !facts.selector.empty();
  d.hasRequiredAffinity = facts.affinity.required;
  for (const auto& [key, value] : facts.selector) d.selectorText.push_back(key + "=" + value);
  for (const RequiredAffinity::Term& term : facts.affinity.terms) {
    std::vector<std::string> parts;
    for (const NodeExpression& x : term.expressions) parts.push_back(describeExpression(x));
    for (const NodeExpression& x : term.fields) parts.push_back(describeExpression(x));
    d.affinityText.push_back(parts.empty() ? "(empty)" : joined(parts));
  }
  conclude(d);

  // What the table alone would not make obvious.
  if (auto pin = driverPin(facts, snapshot)) {
    d.notes.push_back(driverPinNote(*pin, snapshot));
    d.driverPin = std::move(pin);
  }
  for (std::string& note : unknownValueNotes(facts, snapshot)) d.notes.push_back(std::move(note));
  std::set<std::string> advertisedExtended;
  for (const NodeInfo& n : snapshot.nodes) {
    for (const auto& [name, amount] : n.capacity) {
      if (isExtendedResourceName(name) && !amount.isZero()) advertisedExtended.insert(name);
    }
  }
  for (const auto& [name, source] : facts.draBacked) d.notes.push_back(draNote(name, source));
  for (const auto& [name, amount] : d.requests) {
    if (!isExtendedResourceName(name) || advertisedExtended.count(name) || facts.draBacked.count(name)) continue;
    std::string note = "no node in the snapshot advertises " + name;
    note += advertisedExtended.empty() ? " (no node advertises any extended resource: is the device plugin deployed?)"
                                       : "; the nodes advertise " + joined({advertisedExtended.begin(), advertisedExtended.end()});
    d.notes.push_back(std::move(note));
  }
  if (!snapshot.podsGiven) d.notes.push_back("no pods given (--pods): free counts assume no pod holds anything");
  if (site.spec) {
    const std::string scheduler = stringOr(*site.spec, "schedulerName");
    if (!scheduler.empty() && scheduler != "default-scheduler") {
      d.notes.push_back("the pod asks for scheduler \"" + scheduler + "\"; this diagnosis follows default-scheduler's filters");
    }
  }
  if (site.resourceClaims.value && site.resourceClaims.value->is_array() && !site.resourceClaims.value->empty()) {
    d.notes.push_back("the pod also uses DRA resourceClaims, which this diagnosis does not evaluate");
  }
  return d;
}

bool alreadyBound(const json& object) {
  if (stringOr(object, "kind") != "Pod") return false;
  const json* spec = member(object, "spec");
  const json* status = member(object, "status");
  return spec && !stringOr(*spec, "nodeName").empty() && status && !stringOr(*status, "phase").empty();
}

void diagnoseOne(const json& object, const Snapshot& snapshot, const Policy& policy, std::vector<PodDiagnosis>& out) {
  if (!object.is_object() || alreadyBound(object)) return;
  for (const PodSite& site : findPodSites(object)) {
    if (!requestsGpu(site, policy)) continue;
    out.push_back(diagnoseSite(site, object, snapshot, policy));
  }
}

}  // namespace

std::string PodDiagnosis::title() const {
  std::string s = kind.empty() ? "object" : kind;
  s += " ";
  s += ns.empty() ? name : ns + "/" + name;
  if (name.empty()) s += "(unnamed)";
  return s + " (" + (specPath.empty() ? "." : specPath) + ")";
}

std::vector<PodDiagnosis> diagnoseObject(const json& object, const Snapshot& snapshot, const Policy& policy) {
  std::vector<PodDiagnosis> out;
  const json* items = member(object, "items");
  if (stringOr(object, "kind").ends_with("List") && items && items->is_array()) {
    for (const json& item : *items) diagnoseOne(item, snapshot, policy, out);
  } else {
    diagnoseOne(object, snapshot, policy, out);
  }
  return out;
}

}  // namespace gpuguard::schedule
