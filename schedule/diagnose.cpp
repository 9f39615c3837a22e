#include "schedule/diagnose.h"

#include <algorithm>
#include <map>
#include <set>

#include "rules/gfd_labels.h"
#include "rules/gpu_use.h"
#include "rules/k8s/go_strconv.h"
#include "rules/k8s/json_access.h"
#include "rules/k8s/node_selection.h"
#include "rules/pod_specs.h"
#include "rules/semantics.h"

namespace gpuguard::schedule {
namespace {

using nlohmann::json;

// The scheduler's reason strings (k8s.io/kubernetes pkg/scheduler/framework/plugins).
constexpr const char* kReasonUnschedulable = "node(s) were unschedulable";
constexpr const char* kReasonNodeName = "node(s) didn't match the requested node name";
constexpr const char* kReasonAffinity = "node(s) didn't match Pod's node affinity/selector";
// kube-scheduler 1.37 (tainttoleration.Filter) no longer names the taint; the
// node table's TAINTS column and the node's cause do.
constexpr const char* kReasonTaint = "node(s) had untolerated taint(s)";
constexpr const char* kReasonTooManyPods = "Too many pods";
constexpr const char* kTaintUnschedulable = "node.kubernetes.io/unschedulable";

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

bool isDeviceResource(std::string_view name) { return isExtendedResourceName(name); }

std::optional<std::string> labelOf(const NodeInfo& node, const std::string& key) {
  auto it = node.labels.find(key);
  if (it == node.labels.end()) return std::nullopt;
  return it->second;
}

std::string presentValue(const std::optional<std::string>& v) {
  return v ? "node has " + (v->empty() ? std::string("\"\"") : *v) : "label absent";
}

// --- node affinity -----------------------------------------------------------

struct Expression {
  std::string key;
  std::string op;
  std::vector<std::string> values;
  std::string invalid;  // why the scheduler cannot parse it (the term never matches)
};

Expression parseExpression(const json& e, bool field) {
  Expression x;
  x.key = stringOr(e, "key");
  x.op = stringOr(e, "operator");
  if (const json* vs = member(e, "values"); vs && vs->is_array()) {
    for (const json& v : *vs) x.values.push_back(valueText(v));
  }
  if (field) {  // matchFields: metadata.name In/NotIn one value
    if (x.key != "metadata.name") x.invalid = "\"" + x.key + "\" is not a valid field selector key";
    else if (x.op != "In" && x.op != "NotIn") x.invalid = "\"" + x.op + "\" is not a valid field selector operator";
    else if (x.values.size() != 1) x.invalid = "matchFields " + x.op + " needs exactly one value";
    return x;
  }
  if (!isQualifiedName(x.key)) {
    x.invalid = "\"" + x.key + "\" is not a valid label key";
  } else if (x.op == "In" || x.op == "NotIn") {
    if (x.values.empty()) x.invalid = x.op + " needs at least one value";
  } else if (x.op == "Exists" || x.op == "DoesNotExist") {
    if (!x.values.empty()) x.invalid = x.op + " takes no values";
  } else if (x.op == "Gt" || x.op == "Lt") {
    if (x.values.size() != 1) x.invalid = x.op + " needs exactly one value";
    else if (!parseGoInt(x.values[0])) {
      x.invalid = x.op + " needs an integer, \"" + x.values[0] + "\" is not one";
    }
  } else {
    x.invalid = "\"" + x.op + "\" is not a valid node selector operator";
  }
  if (x.invalid.empty()) {
    for (const std::string& v : x.values) {
      if (!isValidLabelValue(v)) x.invalid = "\"" + v + "\" is not a valid label value";
    }
  }
  return x;
}

std::string describe(const Expression& x) {
  std::string s = x.key + " " + x.op;
  if (x.op == "Gt" || x.op == "Lt") return s + " " + (x.values.empty() ? std::string() : x.values[0]);
  if (x.op == "Exists" || x.op == "DoesNotExist") return s;
  return s + " [" + joined(x.values) + "]";
}

// labels.Requirement.Matches / the node field selector.
LabelCheck evaluate(const Expression& x, const NodeInfo& node, bool field) {
  LabelCheck c;
  c.requirement = describe(x);
  c.key = x.key;
  c.nodeValue = field ? std::optional<std::string>(node.name) : labelOf(node, x.key);
  const auto& v = c.nodeValue;
  c.matches = requirementMatches(x.op, x.values, v);
  const bool integerOperator = x.op == "Gt" || x.op == "Lt";
  if (x.op == "Exists" || (integerOperator && !v)) c.why = "label absent";
  else if (integerOperator && !parseGoInt(*v)) c.why = "node has " + *v + ", not an integer";
  else c.why = presentValue(v);
  if (field) c.why = "node is " + node.name;
  c.observed = c.key + (v ? " is " + (v->empty() ? std::string("\"\"") : *v) : std::string(" absent"));
  if ((x.op == "Gt" || x.op == "Lt") && v && !parseGoInt(*v)) c.observed += ", not an integer";
  return c;
}

struct Affinity {
  bool required = false;  // requiredDuringSchedulingIgnoredDuringExecution is set
  struct Term {
    std::vector<Expression> expressions;
    std::vector<Expression> fields;
    std::string invalid;
  };
  std::vector<Term> terms;
};

Affinity parseAffinity(const PodSite& site) {
  Affinity a;
  if (!site.affinity.value) return a;
  const json* na = member(*site.affinity.value, "nodeAffinity");
  const json* req = na ? member(*na, "requiredDuringSchedulingIgnoredDuringExecution") : nullptr;
  if (!req || !req->is_object()) return a;
  a.required = true;
  const json* terms = member(*req, "nodeSelectorTerms");
  if (!terms || !terms->is_array()) return a;
  for (const json& t : *terms) {
    Affinity::Term term;
    if (const json* exprs = member(t, "matchExpressions"); exprs && exprs->is_array()) {
      for (const json& e : *exprs) term.expressions.push_back(parseExpression(e, false));
    }
    if (const json* fields = member(t, "matchFields"); fields && fields->is_array()) {
      for (const json& e : *fields) term.fields.push_back(parseExpression(e, true));
    }
    for (const auto* list : {&term.expressions, &term.fields}) {
      for (const Expression& x : *list) {
        if (term.invalid.empty() && !x.invalid.empty()) term.invalid = describe(x) + ": " + x.invalid;
      }
    }
    if (term.expressions.empty() && term.fields.empty()) term.invalid = "an empty term matches no node";
    a.terms.push_back(std::move(term));
  }
  return a;
}

// --- tolerations -------------------------------------------------------------

// The pod's tolerations plus those the API server and controllers add:
// DefaultTolerationSeconds (not-ready and unreachable NoExecute, every pod),
// the DaemonSet controller's, and ExtendedResourceToleration's when the
// policy says the plugin is on.
json effectiveTolerations(const PodSite& site, const ResourceList& requests, const Policy& policy) {
  json out = json::array();
  if (site.tolerations.value && site.tolerations.value->is_array()) out = *site.tolerations.value;
  auto add = [&](const char* key, const char* effect) {
    out.push_back({{"key", key}, {"operator", "Exists"}, {"effect", effect}});
  };
  add("node.kubernetes.io/not-ready", "NoExecute");
  add("node.kubernetes.io/unreachable", "NoExecute");
  if (site.ownerKind == "DaemonSet") {
    add("node.kubernetes.io/disk-pressure", "NoSchedule");
    add("node.kubernetes.io/memory-pressure", "NoSchedule");
    add("node.kubernetes.io/pid-pressure", "NoSchedule");
    add(kTaintUnschedulable, "NoSchedule");
    if (const json* hn = site.spec ? member(*site.spec, "hostNetwork") : nullptr; hn && hn->is_boolean() && hn->get<bool>()) {
      add("node.kubernetes.io/network-unavailable", "NoSchedule");
    }
  }
  if (policy.assumeExtendedResourceToleration) {
    for (const auto& [name, amount] : requests) {
      if (isExtendedResourceName(name)) out.push_back({{"key", name}, {"operator", "Exists"}, {"effect", "NoSchedule"}});
    }
  }
  return out;
}

bool tolerated(const json& tolerations, const Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(), [&](const json& t) { return toleratesTaint(t, taint); });
}

// --- resources ---------------------------------------------------------------

// NodeResourcesFit checks pods, cpu, memory, ephemeral-storage, then the rest.
int resourceOrder(std::string_view name) {
  if (name == "cpu") return 0;
  if (name == "memory") return 1;
  if (name == "ephemeral-storage") return 2;
  return 3;
}

struct PodFacts {
  const PodSite* site = nullptr;
  ResourceList requests;
  json tolerations;
  std::vector<std::pair<std::string, std::string>> selector;  // nodeSelector, in order
  Affinity affinity;
  std::string nodeName;  // spec.nodeName
  std::optional<BoundPod> self;  // the Pod's identity, to leave its own requests out of `used`
  // Requested extended resources a DRA driver serves (KEP-5004), with where
  // that is said: "DeviceClass gpu.nvidia.com", "policy draExtendedResources".
  std::map<std::string, std::string, std::less<>> draBacked;
};

ResourceFit fitOf(const std::string& name, const Amount& requested, const NodeInfo& node, const PodFacts& pod,
                  const Policy& policy) {
  const BoundPod* self = pod.self ? &*pod.self : nullptr;
  ResourceFit f;
  f.name = name;
  f.gpu = policy.isGpuResource(name);
  f.requested = requested;
  auto cap = node.capacity.find(name);
  f.advertised = cap != node.capacity.end();
  // KEP-5004: on a node whose allocatable lacks the resource, NodeResourcesFit
  // leaves it to the DynamicResources filter, which allocates ResourceSlice
  // devices of the DeviceClass; the snapshot has no slices to count.
  if (auto dra = pod.draBacked.find(name); dra != pod.draBacked.end() && !f.advertised) {
    f.viaDra = true;
    f.cause = "served by DRA (" + dra->second + "): ResourceSlice devices are not counted";
    return f;
  }
  if (f.advertised) f.capacity = cap->second;
  if (auto a = node.allocatable.find(name); a != node.allocatable.end()) f.allocatable = a->second;
  f.used = node.used(name, self);
  for (const BoundPod& p : node.pods) {
    if (self && p.ns == self->ns && p.name == self->name) continue;
    if (p.requests.count(name)) ++f.holders;
  }
  f.free = f.allocatable - f.used;
  f.fits = requested <= f.free;
  if (f.fits) return f;

  const std::string need = "needs " + requested.strFor(name);
  const bool device = isDeviceResource(name);
  const Amount unhealthy = f.capacity - f.allocatable;
  const std::string gap = "allocatable " + f.allocatable.strFor(name) + " < capacity " + f.capacity.strFor(name);
  std::string unhealthyText = device ? gap + ": " + unhealthy.strFor(name) + " device(s) reported Unhealthy" : gap;
  if (!f.advertised) {
    f.cause = device ? "device plugin not registered on this node" : "the node does not report " + name;
  } else if (f.capacity.isZero() && device) {
    f.cause = "the device plugin advertises 0 " + name;
  } else if (requested > f.allocatable) {
    if (f.allocatable < f.capacity && requested <= f.capacity) f.cause = need + ", " + unhealthyText;
    else if (f.allocatable < f.capacity) f.cause = need + ", the node has " + f.capacity.strFor(name) + " (" + unhealthyText + ")";
    else f.cause = need + ", the node has " + f.allocatable.strFor(name);
  } else {
    f.cause = need + ", " + (f.free.isNegative() ? Amount() : f.free).strFor(name) + " free: " + f.used.strFor(name) +
              " of " + f.allocatable.strFor(name) + " held by " + plural(f.holders, "bound pod", "bound pods");
    if (f.allocatable < f.capacity) f.cause += " (" + unhealthyText + ")";
  }
  return f;
}

// --- one node ------------------------------------------------------------------

// The node's side of the failed terms: "nvidia.com/gpu.product is Tesla-T4,
// nvidia.com/cuda.driver-version.major is 535" (one term) or
// "term 0: ... | term 1: invalid: ..." (several).
std::string observedTerms(const NodeVerdict& v) {
  std::vector<std::string> parts;
  for (const TermCheck& t : v.terms) {
    std::string s = v.terms.size() > 1 ? "term " + std::to_string(t.index) + ": " : std::string();
    if (!t.invalid.empty()) {
      s += "invalid: " + t.invalid;
    } else {
      std::vector<std::string> fails;
      for (const LabelCheck& c : t.failing) fails.push_back(c.observed);
      s += joined(fails, ", ");
    }
    parts.push_back(std::move(s));
  }
  return parts.empty() ? "no nodeSelectorTerms" : joined(parts, " | ");
}

NodeVerdict judgeNode(const PodFacts& pod, const NodeInfo& node, const Policy& policy) {
  NodeVerdict v;
  v.node = node.name;
  const BoundPod* self = pod.self ? &*pod.self : nullptr;

  // A pod that names its node never meets the scheduler: the kubelet admits
  // it against NoExecute taints only, and not against a cordon
  // (lifecycle/predicate.go generalFilter).
  const bool kubeletOnly = !pod.nodeName.empty();
  // NodeUnschedulable
  v.cordoned = !kubeletOnly && node.unschedulable &&
               !tolerated(pod.tolerations, Taint{kTaintUnschedulable, "", "NoSchedule"});
  // NodeName
  v.nodeNameMismatch = !pod.nodeName.empty() && pod.nodeName != node.name;
  // TaintToleration: NoSchedule and NoExecute; PreferNoSchedule only scores.
  for (const Taint& t : node.taints) {
    if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
    if (kubeletOnly && t.effect != "NoExecute") continue;
    ++v.filteringTaints;
    if (!tolerated(pod.tolerations, t)) v.untoleratedTaints.push_back(t);
  }
  // NodeAffinity: nodeSelector AND required affinity (terms ORed).
  for (const auto& [key, want] : pod.selector) {
    LabelCheck c;
    c.requirement = key + "=" + want;
    c.key = key;
    c.nodeValue = labelOf(node, key);
    c.matches = c.nodeValue && *c.nodeValue == want;
    c.why = presentValue(c.nodeValue);
    c.observed = key + (c.nodeValue ? " is " + (c.nodeValue->empty() ? std::string("\"\"") : *c.nodeValue)
                                    : std::string(" absent"));
    if (!c.matches) v.selectorFailures.push_back(std::move(c));
  }
  if (pod.affinity.required) {
    v.affinityMatches = false;
    std::vector<TermCheck> terms;
    for (std::size_t i = 0; i < pod.affinity.terms.size(); ++i) {
      const Affinity::Term& term = pod.affinity.terms[i];
      TermCheck t;
      t.index = i;
      t.invalid = term.invalid;
      if (t.invalid.empty()) {
        for (const Expression& x : term.expressions) {
          LabelCheck c = evaluate(x, node, false);
          if (!c.matches) t.failing.push_back(std::move(c));
        }
        for (const Expression& x : term.fields) {
          LabelCheck c = evaluate(x, node, true);
          if (!c.matches) t.failing.push_back(std::move(c));
        }
        t.matches = t.failing.empty();
      }
      if (t.matches) v.affinityMatches = true;
      terms.push_back(std::move(t));
    }
    if (!v.affinityMatches) v.terms = std::move(terms);
  }
  // NodeResourcesFit
  std::vector<const std::pair<const std::string, Amount>*> order;
  for (const auto& entry : pod.requests) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(),
                   [](auto* a, auto* b) { return resourceOrder(a->first) < resourceOrder(b->first); });
  for (const auto* entry : order) v.resources.push_back(fitOf(entry->first, entry->second, node, pod, policy));
  if (auto pods = node.allocatable.find("pods"); pods != node.allocatable.end()) {
    std::size_t bound = 0;
    for (const BoundPod& p : node.pods) bound += !(self && p.ns == self->ns && p.name == self->name);
    v.tooManyPods = Amount::units(static_cast<long long>(bound) + 1) > pods->second;
  }

  // The first filter that fails decides what the scheduler reports.
  if (v.cordoned) {
    v.reasons = {kReasonUnschedulable};
    v.cause = "cordoned (spec.unschedulable)";
    v.verdict = "cordoned";
  } else if (v.nodeNameMismatch) {
    v.reasons = {kReasonNodeName};
    v.cause = "the pod names node " + pod.nodeName + " (spec.nodeName)";
    v.verdict = "spec.nodeName is " + pod.nodeName;
  } else if (!v.untoleratedTaints.empty()) {
    v.reasons = {kReasonTaint};
    std::vector<std::string> names;
    for (const Taint& u : v.untoleratedTaints) names.push_back(describeTaint(u));
    v.cause = std::string(v.untoleratedTaints.size() == 1 ? "untolerated taint " : "untolerated taints ") + joined(names);
    v.verdict = v.untoleratedTaints.size() == 1 ? "untolerated taint" : "untolerated taints";
  } else if (!v.selectorFailures.empty() || !v.affinityMatches) {
    v.reasons = {kReasonAffinity};
    std::vector<std::string> parts, observed;
    for (const LabelCheck& c : v.selectorFailures) observed.push_back(c.observed);
    if (!observed.empty()) parts.push_back("nodeSelector: " + joined(observed));
    if (!v.affinityMatches) parts.push_back("affinity: " + observedTerms(v));
    v.cause = joined(parts, "; ");
    v.verdict = !v.selectorFailures.empty() && !v.affinityMatches ? "nodeSelector and affinity mismatch"
                : !v.selectorFailures.empty()                    ? "nodeSelector mismatch"
                                                                 : "affinity mismatch";
  } else {
    std::vector<std::string> causes;
    if (v.tooManyPods) {
      v.reasons.push_back(kReasonTooManyPods);
      causes.push_back("too many pods: " + std::to_string(node.pods.size()) + " bound, allocatable pods " +
                       node.allocatable.at("pods").str());
    }
    for (const ResourceFit& f : v.resources) {
      if (f.fits) continue;
      v.reasons.push_back("Insufficient " + f.name);
      causes.push_back(f.name + ": " + f.cause);
    }
    v.schedulable = v.reasons.empty();
    v.cause = v.schedulable ? "fits" : joined(causes, "; ");
    v.verdict = v.cause;
  }
  return v;
}

// --- the pod -------------------------------------------------------------------

std::vector<std::pair<std::string, std::string>> nodeSelectorOf(const PodSite& site) {
  std::vector<std::pair<std::string, std::string>> out;
  if (site.nodeSelector.value && site.nodeSelector.value->is_object()) {
    for (const auto& [k, v] : site.nodeSelector.value->items()) out.emplace_back(k, valueText(v));
  }
  return out;
}

std::optional<DriverPin> driverPin(const PodFacts& pod, const Snapshot& snapshot) {
  DriverPin pin;
  std::vector<std::string> where;
  for (const auto& [key, value] : pod.selector) {
    if (!isDriverMajorLabel(key)) continue;
    pin.label = key;
    pin.pinned.push_back(value);
    where.push_back("nodeSelector");
  }
  for (std::size_t i = 0; i < pod.affinity.terms.size(); ++i) {
    for (const Expression& x : pod.affinity.terms[i].expressions) {
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
std::vector<std::string> unknownValueNotes(const PodFacts& pod, const Snapshot& snapshot) {
  std::vector<std::pair<std::string, std::vector<std::string>>> asks;  // key, accepted values
  for (const auto& [key, value] : pod.selector) asks.push_back({key, {value}});
  for (const Affinity::Term& term : pod.affinity.terms) {
    for (const Expression& x : term.expressions) {
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

  PodFacts facts;
  facts.site = &site;
  facts.requests = d.requests;
  facts.tolerations = effectiveTolerations(site, d.requests, policy);
  facts.selector = nodeSelectorOf(site);
  facts.affinity = parseAffinity(site);
  if (site.spec) facts.nodeName = stringOr(*site.spec, "nodeName");
  if (site.isPod && d.kind == "Pod" && !d.name.empty()) facts.self = BoundPod{d.ns.empty() ? "default" : d.ns, d.name, {}};
  facts.draBacked = draBackedRequests(d.requests, snapshot, policy);

  for (const NodeInfo& node : snapshot.nodes) d.nodes.push_back(judgeNode(facts, node, policy));
  d.hasNodeSelector = !facts.selector.empty();
  d.hasRequiredAffinity = facts.affinity.required;
  for (const auto& [key, value] : facts.selector) d.selectorText.push_back(key + "=" + value);
  for (const Affinity::Term& term : facts.affinity.terms) {
    std::vector<std::string> parts;
    for (const Expression& x : term.expressions) parts.push_back(describe(x));
    for (const Expression& x : term.fields) parts.push_back(describe(x));
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

std::string schedulerSummary(const std::vector<NodeVerdict>& nodes) {
  if (nodes.empty()) return "0/0 nodes are available: no nodes available to schedule pods.";
  std::size_t available = 0;
  std::map<std::string, std::size_t> histogram;
  for (const NodeVerdict& v : nodes) {
    available += v.schedulable;
    for (const std::string& r : v.reasons) ++histogram[r];
  }
  std::vector<std::string> reasons;
  for (const auto& [reason, count] : histogram) reasons.push_back(std::to_string(count) + " " + reason);
  std::sort(reasons.begin(), reasons.end());  // FitError.Error(): sort.Strings
  return std::to_string(available) + "/" + std::to_string(nodes.size()) + " nodes are available: " + joined(reasons) + ".";
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
