#include "rules/input_facts.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>
#include <utility>

#include "rules/cluster_reduce.h"

#include "rules/k8s/json_access.h"

namespace gpuguard {
namespace {

using nlohmann::json;

// A request as the API server defaults it (SetDefaults_ExactDeviceRequest,
// SetDefaults_DeviceSubRequest): no mode is ExactCount, and ExactCount with
// no count (or 0) is one device.
bool selectorsPinDriver(const json& request) {
  const json* selectors = member(request, "selectors");
  if (!selectors || !selectors->is_array()) return false;
  for (const json& s : *selectors) {
    const json* cel = member(s, "cel");
    const std::string expression = cel ? stringOr(*cel, "expression") : std::string();
    if (expression.find(".driverVersion") != std::string::npos ||
        expression.find(".cudaDriverVersion") != std::string::npos ||
        expression.find("'driverVersion'") != std::string::npos ||
        expression.find("'cudaDriverVersion'") != std::string::npos) {
      return true;
    }
  }
  return false;
}

DeviceRequestFacts requestFacts(const json& request) {
  DeviceRequestFacts out;
  out.deviceClassName = stringOr(request, "deviceClassName");
  out.pinsDriver = selectorsPinDriver(request);
  if (stringOr(request, "allocationMode") == "All") return out;
  const json* count = member(request, "count");
  out.count = count && count->is_number_integer() && count->get<long long>() > 0 ? count->get<long long>() : 1;
  return out;
}

// spec.devices of a claim spec, in any served shape: v1/v1beta2 put the
// details under `exactly`, v1beta1 on the request itself.
ClaimFacts claimFacts(const json* claimSpec) {
  ClaimFacts out;
  const json* devices = claimSpec ? member(*claimSpec, "devices") : nullptr;
  const json* requests = devices ? member(*devices, "requests") : nullptr;
  if (!requests || !requests->is_array()) return out;
  for (const json& request : *requests) {
    if (!request.is_object()) continue;
    out.requestNames.push_back(stringOr(request, "name"));
    std::vector<DeviceRequestFacts> alternatives;
    if (const json* subs = member(request, "firstAvailable"); subs && subs->is_array()) {
      for (const json& sub : *subs) {
        if (sub.is_object()) alternatives.push_back(requestFacts(sub));
      }
    } else if (const json* exactly = member(request, "exactly"); exactly && exactly->is_object()) {
      alternatives.push_back(requestFacts(*exactly));
    } else {
      alternatives.push_back(requestFacts(request));
    }
    out.requests.push_back(std::move(alternatives));
  }
  return out;
}

DeviceClassFacts deviceClassFacts(const json* spec) {
  DeviceClassFacts out;
  if (!spec) return out;
  out.extendedResourceName = stringOr(*spec, "extendedResourceName");
  const json* selectors = member(*spec, "selectors");
  if (!selectors || !selectors->is_array()) return out;
  for (const json& s : *selectors) {
    const json* cel = member(s, "cel");
    if (!cel) continue;
    const std::string expression = stringOr(*cel, "expression");
    out.selectorText += expression + "\n";
    for (std::string& driver : celDriverNames(expression)) out.drivers.push_back(std::move(driver));
  }
  return out;
}

// A ComputeDomain (resource.nvidia.com) names the claim template it creates.
std::string computeDomainChannelTemplate(const json& object) {
  const json* spec = member(object, "spec");
  const json* channel = spec ? objectAt(*spec, "channel") : nullptr;
  const json* rct = channel ? objectAt(*channel, "resourceClaimTemplate") : nullptr;
  return rct ? stringOr(*rct, "name") : std::string();
}

// "namespace/name"; a namespace holds no '/', so no two objects share a key.
std::string namespacedKey(std::string_view ns, std::string_view name) {
  std::string key(ns);
  key += '/';
  key += name;
  return key;
}

// The claim (template) `name` a pod of namespace `ns` names: one of its own
// namespace, else one that names no namespace (it lands where it is applied,
// as the pod does). Never one of another namespace.
const ClaimFacts* inNamespace(const std::map<std::string, ClaimFacts, std::less<>>& byKey, std::string_view ns,
                              std::string_view name) {
  for (std::string_view where : {ns, std::string_view()}) {
    if (const auto it = byKey.find(namespacedKey(where, name)); it != byKey.end()) return &it->second;
  }
  return nullptr;
}

}  // namespace

DeviceClassFacts reduceDeviceClass(const json& deviceClass) { return deviceClassFacts(member(deviceClass, "spec")); }

ClaimFacts reduceClaimTemplate(const json& claimTemplate) {
  const json* spec = member(claimTemplate, "spec");
  return claimFacts(spec ? member(*spec, "spec") : nullptr);
}

namespace {

// status.allocation.nodeSelector of a node-local allocation: one term,
// matchFields metadata.name In [node] (the scheduler's DynamicResources
// plugin writes it so); the names it holds.
std::vector<std::string> allocatedNodeNames(const json& allocation) {
  std::vector<std::string> names;
  const json* selector = objectAt(allocation, "nodeSelector");
  const json* terms = selector ? arrayAt(*selector, "nodeSelectorTerms") : nullptr;
  if (!terms) return names;
  for (const json& term : *terms) {
    const json* fields = term.is_object() ? arrayAt(term, "matchFields") : nullptr;
    if (!fields) continue;
    for (const json& f : *fields) {
      if (stringOr(f, "key") != "metadata.name" || stringOr(f, "operator") != "In") continue;
      if (const json* values = arrayAt(f, "values")) {
        for (const json& v : *values) {
          if (v.is_string()) names.push_back(v.get<std::string>());
        }
      }
    }
  }
  return names;
}

}  // namespace

ClaimFacts reduceClaim(const json& claim) {
  ClaimFacts out = claimFacts(member(claim, "spec"));
  const json* status = objectAt(claim, "status");
  if (const json* allocation = status ? objectAt(*status, "allocation") : nullptr) {
    out.allocated = true;
    out.allocatedNodes = allocatedNodeNames(*allocation);
  }
  return out;
}

void InputFacts::add(const json& object) {
  addOne(object);
  if (stringOr(object, "kind") != "List") return;
  const json* items = member(object, "items");
  if (!items || !items->is_array()) return;
  for (const json& item : *items) addOne(item);
}

namespace {

bool celSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The quoted string literal at cel[i] ('...' or "..."): its text and the
// index past its closing quote, or nullopt.
std::optional<std::pair<std::string, std::size_t>> celString(std::string_view cel, std::size_t i) {
  if (i >= cel.size() || (cel[i] != '\'' && cel[i] != '"')) return std::nullopt;
  const std::size_t end = cel.find(cel[i], i + 1);
  if (end == std::string_view::npos) return std::nullopt;
  return std::pair{std::string(cel.substr(i + 1, end - i - 1)), end + 1};
}

// `device.driver in ['a', "b"]` from just past `in`: the list's strings.
std::vector<std::string> celStringList(std::string_view cel, std::size_t i) {
  std::vector<std::string> out;
  while (i < cel.size() && celSpace(cel[i])) ++i;
  if (i >= cel.size() || cel[i] != '[') return out;
  for (++i; i < cel.size();) {
    while (i < cel.size() && (celSpace(cel[i]) || cel[i] == ',')) ++i;
    auto literal = celString(cel, i);
    if (!literal) break;  // ']' or something not a literal: the list ends
    out.push_back(std::move(literal->first));
    i = literal->second;
  }
  return out;
}

// `'<name>' ==` written before device.driver at `at`: the name, or nullopt.
std::optional<std::string> celStringBefore(std::string_view cel, std::size_t at) {
  std::size_t i = at;
  while (i > 0 && celSpace(cel[i - 1])) --i;
  if (i < 2 || cel.substr(i - 2, 2) != "==" || (i >= 3 && (cel[i - 3] == '!' || cel[i - 3] == '='))) {
    return std::nullopt;
  }
  i -= 2;
  while (i > 0 && celSpace(cel[i - 1])) --i;
  if (i < 2) return std::nullopt;  // room for a quote pair at least
  const std::size_t close = i - 1;
  if (cel[close] != '\'' && cel[close] != '"') return std::nullopt;
  const std::size_t open = cel.rfind(cel[close], close - 1);
  if (open == std::string_view::npos) return std::nullopt;
  return std::string(cel.substr(open + 1, close - open - 1));
}

}  // namespace

std::vector<std::string> celDriverNames(std::string_view cel) {
  std::vector<std::string> out;
  constexpr std::string_view kDriver = "device.driver";
  for (std::size_t at = cel.find(kDriver); at != std::string_view::npos; at = cel.find(kDriver, at + 1)) {
    const std::size_t past = at + kDriver.size();
    if (past < cel.size() && (std::isalnum(static_cast<unsigned char>(cel[past])) || cel[past] == '_')) {
      continue;  // device.driverVersion and the like
    }
    if (auto before = celStringBefore(cel, at)) out.push_back(std::move(*before));
    std::size_t i = past;
    while (i < cel.size() && celSpace(cel[i])) ++i;
    if (cel.substr(i, 2) == "==") {
      i += 2;
      while (i < cel.size() && celSpace(cel[i])) ++i;
      if (auto literal = celString(cel, i)) out.push_back(std::move(literal->first));
    } else if (cel.substr(i, 2) == "in" && i + 2 < cel.size() && (celSpace(cel[i + 2]) || cel[i + 2] == '[')) {
      for (std::string& name : celStringList(cel, i + 2)) out.push_back(std::move(name));
    }
  }
  return out;
}

bool mayDefineFacts(std::string_view text) {
  static constexpr std::string_view kWords[] = {
      // The kinds addOne() reads: keep the two in step (input_facts_test.cpp
      // checks each kind's manifest). "ResourceClaim" covers its template.
      "DeviceClass", "ResourceClaim", "ComputeDomain", "Namespace", "RuntimeClass",
      // A kind written another way: YAML's \x, \u and \U escapes and JSON's
      // \u (a letter as a code point), a double-quoted line break escaped
      // away ("Device\<newline>Class", also before CR LF), a !!binary
      // scalar (base64).
      "\\x", "\\u", "\\U", "\\\n", "\\\r", "binary"};
  return std::any_of(std::begin(kWords), std::end(kWords),
                     [text](std::string_view word) { return text.find(word) != std::string_view::npos; });
}

void InputFacts::addOne(const json& object) {
  const std::optional<FactKind> factKind = factKindOf(object);
  if (factKind == FactKind::Namespace) {
    std::vector<std::string> unread;  // a defaultTolerations annotation that does not parse: not read here
    auto ns = std::make_shared<const NamespaceFacts>(reduceNamespace(object, unread));
    if (!ns->name.empty()) namespaces_[ns->name] = std::move(ns);
    return;
  }
  if (factKind == FactKind::RuntimeClass) {
    auto runtimeClass = std::make_shared<const RuntimeClassFacts>(reduceRuntimeClass(object));
    if (!runtimeClass->name.empty()) runtimeClasses_[runtimeClass->name] = std::move(runtimeClass);
    return;
  }
  const std::string apiVersion = stringOr(object, "apiVersion");
  if (apiVersion.starts_with("resource.nvidia.com/") && stringOr(object, "kind") == "ComputeDomain") {
    if (std::string channel = computeDomainChannelTemplate(object); !channel.empty()) {
      channelTemplates_[std::move(channel)] = true;
    }
    return;
  }
  if (!apiVersion.starts_with("resource.k8s.io/")) return;
  const json* metadata = member(object, "metadata");
  const std::string name = metadata ? stringOr(*metadata, "name") : std::string();
  if (name.empty()) return;
  const std::string kind = stringOr(object, "kind");
  if (kind == "DeviceClass") {
    DeviceClassFacts facts = reduceDeviceClass(object);
    if (!facts.extendedResourceName.empty()) servedBy_[facts.extendedResourceName] = name;
    classes_[name] = std::move(facts);
  } else if (kind == "ResourceClaimTemplate") {
    templates_[namespacedKey(stringOr(*metadata, "namespace"), name)] = reduceClaimTemplate(object);
  } else if (kind == "ResourceClaim") {
    claims_[namespacedKey(stringOr(*metadata, "namespace"), name)] = reduceClaim(object);
  }
}

const DeviceClassFacts* InputFacts::deviceClass(std::string_view name) const {
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : &it->second;
}

const ClaimFacts* InputFacts::claimTemplate(std::string_view ns, std::string_view name) const {
  return inNamespace(templates_, ns, name);
}

const ClaimFacts* InputFacts::claim(std::string_view ns, std::string_view name) const {
  return inNamespace(claims_, ns, name);
}

const std::string* InputFacts::classServing(std::string_view resource) const {
  auto it = servedBy_.find(resource);
  return it == servedBy_.end() ? nullptr : &it->second;
}

bool InputFacts::isComputeDomainChannel(std::string_view templateName) const {
  return channelTemplates_.find(templateName) != channelTemplates_.end();
}

const NamespaceFacts* InputFacts::namespaceFacts(std::string_view name) const {
  auto it = namespaces_.find(name);
  return it == namespaces_.end() ? nullptr : it->second.get();
}

const RuntimeClassFacts* InputFacts::runtimeClass(std::string_view name) const {
  auto it = runtimeClasses_.find(name);
  return it == runtimeClasses_.end() ? nullptr : it->second.get();
}

}  // namespace gpuguard
