#include "rules/placement.h"

#include <algorithm>

#include "rules/gpu_use.h"
#include "rules/k8s/go_strconv.h"
#include "rules/k8s/json_access.h"
#include "rules/k8s/names.h"
#include "rules/k8s/node_selection.h"
#include "rules/resources.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/quantity.h"
#include "rules/k8s/taints.h"
#include "rules/pod_admission.h"

namespace gpuguard {
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

std::optional<std::string> labelOf(const NodeFacts& node, const std::string& key) {
  auto it = node.labels.find(key);
  if (it == node.labels.end()) return std::nullopt;
  return it->second;
}

std::string presentValue(const std::optional<std::string>& v) {
  return v ? "node has " + (v->empty() ? std::string("\"\"") : *v) : "label absent";
}

NodeExpression parseExpression(const json& e, bool field) {
  NodeExpression x;
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

// labels.Requirement.Matches / the node field selector, without words: what
// every node pays for every term it may match, so it copies nothing.
bool expressionMatches(const NodeExpression& x, const NodeFacts& node, bool field) {
  const std::string* value = field ? &node.name : node.label(x.key);
  if (x.op == "In" || x.op == "NotIn") {
    const bool listed = value && std::find(x.values.begin(), x.values.end(), *value) != x.values.end();
    return (x.op == "In") == listed;
  }
  if (x.op == "Exists" || x.op == "DoesNotExist") return (x.op == "Exists") == (value != nullptr);
  return requirementMatches(x.op, x.values, value ? std::optional<std::string>(*value) : std::nullopt);
}

bool termMatches(const RequiredAffinity::Term& term, const NodeFacts& node) {
  if (!term.invalid.empty()) return false;
  return std::all_of(term.expressions.begin(), term.expressions.end(),
                     [&](const NodeExpression& x) { return expressionMatches(x, node, false); }) &&
         std::all_of(term.fields.begin(), term.fields.end(),
                     [&](const NodeExpression& x) { return expressionMatches(x, node, true); });
}

// The names a valid term is restricted to (its first kubernetes.io/hostname
// In, else its first metadata.name In), and which index they go in.
void indexTerm(RequiredAffinity& a, std::size_t i) {
  const RequiredAffinity::Term& term = a.terms[i];
  if (!term.invalid.empty()) return;
  const auto list = [&](std::unordered_map<std::string, std::vector<std::size_t>>& index,
                        const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      std::vector<std::size_t>& terms = index[name];
      if (terms.empty() || terms.back() != i) terms.push_back(i);  // a name written twice
    }
  };
  for (const NodeExpression& x : term.expressions) {
    if (x.key == "kubernetes.io/hostname" && x.op == "In") return list(a.byHostname, x.values);
  }
  for (const NodeExpression& x : term.fields) {
    if (x.op == "In") return list(a.byNodeName, x.values);
  }
  a.unnamed.push_back(i);
}

// labels.Requirement.Matches / the node field selector, in words.
LabelCheck evaluate(const NodeExpression& x, const NodeFacts& node, bool field) {
  LabelCheck c;
  c.key = x.key;
  c.nodeValue = field ? std::optional<std::string>(node.name) : labelOf(node, x.key);
  const auto& v = c.nodeValue;
  c.matches = requirementMatches(x.op, x.values, v);
  if (c.matches) return c;  // the callers keep only failing checks: no words for a match
  c.requirement = describeExpression(x);
  const bool integerOperator = x.op == "Gt" || x.op == "Lt";
  if (x.op == "Exists" || (integerOperator && !v)) c.why = "label absent";
  else if (integerOperator && !parseGoInt(*v)) c.why = "node has " + *v + ", not an integer";
  else c.why = presentValue(v);
  if (field) c.why = "node is " + node.name;
  c.observed = c.key + (v ? " is " + (v->empty() ? std::string("\"\"") : *v) : std::string(" absent"));
  if ((x.op == "Gt" || x.op == "Lt") && v && !parseGoInt(*v)) c.observed += ", not an integer";
  return c;
}

// NodeResourcesFit checks pods, cpu, memory, ephemeral-storage, then the rest.
int resourceOrder(std::string_view name) {
  if (name == "cpu") return 0;
  if (name == "memory") return 1;
  if (name == "ephemeral-storage") return 2;
  return 3;
}

ResourceFit fitOf(const std::string& name, const Amount& requested, const NodeFacts& node,
                  const std::vector<BoundPod>& bound, const PlacementPod& pod,
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
  f.used = usedBy(bound, name, self);
  for (const BoundPod& p : bound) {
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

// Requests after the API server's defaulting (limit when no request), rounded
// up to milli; nullopt for values that do not parse or are negative.
std::optional<Amount> requestAmount(const ResourceEntry& e) {
  QuantityValue q = decodeQuantity(*e.value);
  if (!q.quantity || q.quantity->isNegative()) return std::nullopt;
  return Amount::fromQuantity(q.quantity->defaulted());
}

ResourceList containerRequests(const ContainerRef& c, std::vector<std::string>& problems) {
  ResourceList out;
  const ContainerResources r = resourcesOf(c, /*podDefaulting=*/true);
  for (const ResourceEntry& e : r.requests) {
    std::optional<Amount> a = requestAmount(e);
    if (!a) {
      problems.push_back(e.path.apiPath() + ": " + renderValue(*e.value) + " is not a valid quantity; counted as 0");
      continue;
    }
    out[e.name] = *a;
  }
  return out;
}

void add(ResourceList& into, const ResourceList& what) {
  for (const auto& [name, a] : what) into[name] += a;
}

void maxInto(ResourceList& into, const ResourceList& what) {
  for (const auto& [name, a] : what) {
    auto it = into.find(name);
    if (it == into.end()) into.emplace(name, a);
    else if (a > it->second) it->second = a;
  }
}

bool podLevelResource(std::string_view name) {
  return name == "cpu" || name == "memory" || name.starts_with("hugepages-");
}

}  // namespace

PodRequests podRequests(const PodSite& site) {
  PodRequests out;
  ResourceList apps;       // app containers and sidecars: they run together
  ResourceList sidecars;   // sidecars started so far
  ResourceList initPeak;   // the most any init phase needs
  for (const ContainerRef& c : site.containers) {  // init containers come first, in order
    if (c.kind == ContainerKind::Ephemeral) continue;  // ephemeral containers get no resources
    const ResourceList r = containerRequests(c, out.problems);
    if (c.kind == ContainerKind::Init) {
      ResourceList phase = r;
      add(phase, sidecars);
      maxInto(initPeak, phase);
    } else if (c.kind == ContainerKind::Sidecar) {
      add(apps, r);
      add(sidecars, r);
      maxInto(initPeak, sidecars);
    } else {
      add(apps, r);
    }
  }
  maxInto(apps, initPeak);

  // Pod-level resources (PodLevelResources, beta in 1.34): they replace the
  // containers' sum for the resources they name.
  if (site.podResources.value && site.podResources.value->is_object()) {
    // resourcesOf reads container["resources"]: wrap the pod-level object.
    const json wrapped = json{{"resources", *site.podResources.value}};
    ContainerRef pod;
    pod.container = &wrapped;
    pod.path = site.specPath;
    for (const auto& [name, a] : containerRequests(pod, out.problems)) {
      if (podLevelResource(name)) apps[name] = a;
    }
  }
  if (site.spec && site.spec->is_object()) {
    if (const json* overhead = member(*site.spec, "overhead"); overhead && overhead->is_object()) {
      for (const auto& [name, value] : overhead->items()) {
        QuantityValue q = decodeQuantity(value);
        if (q.quantity && !q.quantity->isNegative()) apps[name] += Amount::fromQuantity(q.quantity->defaulted());
      }
    }
  }
  for (const auto& [name, a] : apps) {
    if (!a.isZero()) out.resources.emplace(name, a);
  }
  return out;
}

Amount usedBy(const std::vector<BoundPod>& pods, std::string_view resource, const BoundPod* except) {
  Amount total;
  for (const BoundPod& p : pods) {
    if (except && p.ns == except->ns && p.name == except->name) continue;
    if (auto it = p.requests.find(resource); it != p.requests.end()) total += it->second;
  }
  return total;
}

std::string describeExpression(const NodeExpression& x) {
  std::string s = x.key + " " + x.op;
  if (x.op == "Gt" || x.op == "Lt") return s + " " + (x.values.empty() ? std::string() : x.values[0]);
  if (x.op == "Exists" || x.op == "DoesNotExist") return s;
  // Each node a term fails on keeps these words: a list of 3000 hosts would
  // be 30 KB per node.
  constexpr std::size_t kShown = 8;
  if (x.values.size() <= kShown) return s + " [" + joined(x.values) + "]";
  const std::vector<std::string> first(x.values.begin(), x.values.begin() + kShown);
  return s + " [" + joined(first) + ", and " + std::to_string(x.values.size() - kShown) + " more]";
}

RequiredAffinity parseRequiredAffinity(const PodSite& site) {
  RequiredAffinity a;
  if (!site.affinity.value) return a;
  const json* na = member(*site.affinity.value, "nodeAffinity");
  const json* req = na ? member(*na, "requiredDuringSchedulingIgnoredDuringExecution") : nullptr;
  if (!req || !req->is_object()) return a;
  a.required = true;
  const json* terms = member(*req, "nodeSelectorTerms");
  if (!terms || !terms->is_array()) return a;
  for (const json& t : *terms) {
    RequiredAffinity::Term term;
    if (const json* exprs = member(t, "matchExpressions"); exprs && exprs->is_array()) {
      for (const json& e : *exprs) term.expressions.push_back(parseExpression(e, false));
    }
    if (const json* fields = member(t, "matchFields"); fields && fields->is_array()) {
      for (const json& e : *fields) term.fields.push_back(parseExpression(e, true));
    }
    for (const auto* list : {&term.expressions, &term.fields}) {
      for (const NodeExpression& x : *list) {
        if (term.invalid.empty() && !x.invalid.empty()) term.invalid = describeExpression(x) + ": " + x.invalid;
      }
    }
    if (term.expressions.empty() && term.fields.empty()) term.invalid = "an empty term matches no node";
    a.terms.push_back(std::move(term));
    indexTerm(a, a.terms.size() - 1);
  }
  return a;
}

std::vector<std::size_t> RequiredAffinity::candidatesFor(const NodeFacts& node) const {
  std::vector<std::size_t> out = unnamed;
  const auto add = [&out](const std::unordered_map<std::string, std::vector<std::size_t>>& index,
                          const std::string* name) {
    if (!name) return;
    if (auto it = index.find(*name); it != index.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  };
  add(byHostname, node.label("kubernetes.io/hostname"));
  add(byNodeName, &node.name);
  if (out.size() > unnamed.size()) {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return out;
}

std::string describeFailedTerms(const NodeVerdict& v) {
  std::vector<std::string> parts;
  const bool several = v.terms.size() + v.termsNotExplained > 1;
  for (const TermCheck& t : v.terms) {
    std::string s = several ? "term " + std::to_string(t.index) + ": " : std::string();
    if (!t.invalid.empty()) {
      s += "invalid: " + t.invalid;
    } else {
      std::vector<std::string> fails;
      for (const LabelCheck& c : t.failing) fails.push_back(c.observed);
      s += joined(fails, ", ");
    }
    parts.push_back(std::move(s));
  }
  if (v.termsNotExplained > 0) parts.push_back(std::to_string(v.termsNotExplained) + " more terms");
  return parts.empty() ? "no nodeSelectorTerms" : joined(parts, " | ");
}

// The pod's tolerations plus those the API server and controllers add:
// its RuntimeClass's (PodSite::admitted, rules/pod_admission.h),
// DefaultTolerationSeconds (not-ready and unreachable NoExecute, every pod),
// the DaemonSet controller's, and ExtendedResourceToleration's when the
// policy says the plugin is on.
std::vector<Toleration> effectiveTolerations(const PodSite& site, const ResourceList& requests, const Policy& policy) {
  std::vector<Toleration> out;
  if (const json* tolerations = admittedTolerations(site); tolerations && tolerations->is_array()) {
    for (const json& t : *tolerations) {
      if (std::optional<Toleration> read = readToleration(t)) out.push_back(std::move(*read));
    }
  }
  auto add = [&](std::string key, const char* effect) { out.push_back(Toleration{std::move(key), "Exists", "", effect}); };
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
      if (isExtendedResourceName(name)) add(name, "NoSchedule");
    }
  }
  return out;
}

bool tolerated(const std::vector<Toleration>& tolerations, const Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(), [&](const Toleration& t) { return toleratesTaint(t, taint); });
}

std::vector<std::pair<std::string, std::string>> nodeSelectorOf(const PodSite& site) {
  std::vector<std::pair<std::string, std::string>> out;
  if (const json* selector = admittedNodeSelector(site); selector && selector->is_object()) {
    for (const auto& [k, v] : selector->items()) out.emplace_back(k, valueText(v));
  }
  return out;
}

namespace {

// The required affinity: only the terms that may match the node are tried
// (RequiredAffinity::candidatesFor), and a node none matches is explained by
// its first kTermsExplained terms; the work per node is the terms not
// restricted to names plus the few that name it.
void checkRequiredAffinity(const RequiredAffinity& affinity, const NodeFacts& node, NodeVerdict& v) {
  const std::vector<std::size_t> candidates = affinity.candidatesFor(node);
  v.affinityMatches = std::any_of(candidates.begin(), candidates.end(),
                                  [&](std::size_t i) { return termMatches(affinity.terms[i], node); });
  if (v.affinityMatches) return;
  const std::size_t explained = std::min(affinity.terms.size(), kTermsExplained);
  v.termsNotExplained = affinity.terms.size() - explained;
  for (std::size_t i = 0; i < explained; ++i) {
    const RequiredAffinity::Term& term = affinity.terms[i];
    TermCheck t;
    t.index = i;
    t.invalid = term.invalid;
    if (t.invalid.empty()) {
      for (const NodeExpression& x : term.expressions) {
        if (LabelCheck c = evaluate(x, node, false); !c.matches) t.failing.push_back(std::move(c));
      }
      for (const NodeExpression& x : term.fields) {
        if (LabelCheck c = evaluate(x, node, true); !c.matches) t.failing.push_back(std::move(c));
      }
    }
    v.terms.push_back(std::move(t));
  }
}

// NodeAffinity: the nodeSelector AND the required affinity (terms ORed).
void checkNodeAffinity(const PlacementPod& pod, const NodeFacts& node, NodeVerdict& v) {
  for (const auto& [key, want] : pod.selector) {
    const std::string* value = node.label(key);
    if (value && *value == want) continue;  // only failures are kept: no words for a match
    LabelCheck c;
    c.requirement = key + "=" + want;
    c.key = key;
    if (value) c.nodeValue = *value;
    c.why = presentValue(c.nodeValue);
    c.observed = key + (c.nodeValue ? " is " + (c.nodeValue->empty() ? std::string("\"\"") : *c.nodeValue)
                                    : std::string(" absent"));
    v.selectorFailures.push_back(std::move(c));
  }
  if (pod.affinity.required) checkRequiredAffinity(pod.affinity, node, v);
}

// The first filter that fails decides what the scheduler reports.
void explainFirstFailure(const PlacementPod& pod, const NodeFacts& node, const std::vector<BoundPod>& bound,
                         NodeVerdict& v) {
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
    if (!v.affinityMatches) parts.push_back("affinity: " + describeFailedTerms(v));
    v.cause = joined(parts, "; ");
    v.verdict = !v.selectorFailures.empty() && !v.affinityMatches ? "nodeSelector and affinity mismatch"
                : !v.selectorFailures.empty()                    ? "nodeSelector mismatch"
                                                                 : "affinity mismatch";
  } else {
    std::vector<std::string> causes;
    if (v.tooManyPods) {
      v.reasons.push_back(kReasonTooManyPods);
      causes.push_back("too many pods: " + std::to_string(bound.size()) + " bound, allocatable pods " +
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
}

}  // namespace

NodeVerdict judgeNode(const PlacementPod& pod, const NodeFacts& node, const std::vector<BoundPod>& bound,
                      const Policy& policy) {
  NodeVerdict v;
  v.node = node.name;
  const BoundPod* self = pod.self ? &*pod.self : nullptr;

  // A pod that names its node never meets the scheduler: the kubelet admits
  // it against NoExecute taints only, and not against a cordon
  // (lifecycle/predicate.go generalFilter; kubernetes-gpu-semantics.md §15.1).
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
  checkNodeAffinity(pod, node, v);
  // NodeResourcesFit
  std::vector<const std::pair<const std::string, Amount>*> order;
  for (const auto& entry : pod.requests) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(),
                   [](auto* a, auto* b) { return resourceOrder(a->first) < resourceOrder(b->first); });
  for (const auto* entry : order) v.resources.push_back(fitOf(entry->first, entry->second, node, bound, pod, policy));
  if (auto pods = node.allocatable.find("pods"); pods != node.allocatable.end()) {
    std::size_t others = 0;
    for (const BoundPod& p : bound) others += !(self && p.ns == self->ns && p.name == self->name);
    v.tooManyPods = Amount::units(static_cast<long long>(others) + 1) > pods->second;
  }

  explainFirstFailure(pod, node, bound, v);
  return v;
}

PlacementPod placementPod(const PodSite& site, const ResourceList& requests, const Policy& policy) {
  PlacementPod pod;
  pod.site = &site;
  pod.requests = requests;
  pod.tolerations = effectiveTolerations(site, requests, policy);
  pod.selector = nodeSelectorOf(site);
  pod.affinity = parseRequiredAffinity(site);
  if (site.spec) pod.nodeName = stringOr(*site.spec, "nodeName");
  return pod;
}

std::string schedulerSummary(const std::vector<NodeVerdict>& nodes) {
  std::size_t available = 0;
  std::map<std::string, std::size_t> histogram;
  for (const NodeVerdict& v : nodes) {
    available += v.schedulable;
    for (const std::string& r : v.reasons) ++histogram[r];
  }
  return schedulerSummary(histogram, available, nodes.size());
}

std::string schedulerSummary(const std::map<std::string, std::size_t>& histogram, std::size_t available,
                             std::size_t total) {
  if (total == 0) return "0/0 nodes are available: no nodes available to schedule pods.";
  std::vector<std::string> reasons;
  for (const auto& [reason, count] : histogram) reasons.push_back(std::to_string(count) + " " + reason);
  std::sort(reasons.begin(), reasons.end());  // FitError.Error(): sort.Strings
  return std::to_string(available) + "/" + std::to_string(total) + " nodes are available: " + joined(reasons) + ".";
}

}  // namespace gpuguard
