#include "rules/gpu_use.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>

#include "rules/k8s/json_access.h"
#include "rules/resources.h"
#include "rules/k8s/quantity.h"
#include "text/ascii.h"

namespace gpuguard {
namespace {

// A GPU source with what every kind has; the rest stays at its default.
GpuSource sourceOf(GpuSourceKind kind, std::string name, FieldPath path, bool draBacked) {
  GpuSource s;
  s.kind = kind;
  s.name = std::move(name);
  s.path = std::move(path);
  s.draBacked = draBacked;
  return s;
}

using nlohmann::json;

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// The last resort, when the input does not define the class: a class named
// for GPUs. The NVIDIA DRA driver's (gpu.nvidia.com, mig.nvidia.com,
// vfio.gpu.nvidia.com; not its ComputeDomain or IMEX channel classes) and any
// other with "gpu" in its name, as claims are recognised without their
// template: the webhook, which never sees the template, and the linter, which
// may, then decide alike. Other vendors' drivers (gpu.amd.com, gpu.intel.com)
// and the DRA example driver (gpu.example.com) serve no NVIDIA GPU.
bool namedLikeGpuClass(std::string_view name) {
  for (std::string_view foreign : {".amd.com", ".intel.com", "example.com"}) {
    if (name.ends_with(foreign)) return false;
  }
  return contains(name, "gpu") || name.starts_with("mig.") || name.starts_with("mig-");
}

// The NVIDIA DRA driver's names: gpu.nvidia.com serves whole GPUs, MIG
// devices and VFIO passthrough; mig.nvidia.com as a driver name appears in
// older examples.
bool isNvidiaGpuDriver(std::string_view driver) { return driver == "gpu.nvidia.com" || driver == "mig.nvidia.com"; }

// MIG slices are not whole GPUs; neither are time-sliced *.shared ones.
bool isSliceResource(std::string_view name) { return contains(name, "/mig-") || name.ends_with(".shared"); }

// The claim or template a pod claim entry names (also the alpha `source:` shape).
const ClaimFacts* namedClaimFacts(const json& podClaim, const GpuFacts& facts) {
  for (const json* holder : {&podClaim, objectAt(podClaim, "source")}) {
    if (!holder) continue;
    if (const std::string* t = stringAt(*holder, "resourceClaimTemplateName")) return facts.claimTemplate(*t);
    if (const std::string* c = stringAt(*holder, "resourceClaimName")) return facts.claim(*c);
  }
  return nullptr;
}

// The ResourceClaimTemplate the NIM operator creates for a NIMService's
// draResources entry with a claimCreationSpec (k8s-nim-operator
// api/apps/v1alpha1/dra_types.go, manifests/resourceclaimtemplate.yaml): one
// ExactCount request per device, count defaulted to 1 and deviceClassName
// to gpu.nvidia.com by the CRD, the device's celExpressions as CEL selectors.
std::optional<ClaimFacts> createdClaimFacts(const json& podClaim) {
  const json* creation = objectAt(podClaim, "claimCreationSpec");
  const json* devices = creation ? arrayAt(*creation, "devices") : nullptr;
  if (!devices) return std::nullopt;
  json requests = json::array();
  for (const json& device : *devices) {
    if (!device.is_object()) continue;
    const std::string* className = stringAt(device, "deviceClassName");
    const json* count = member(device, "count");
    json exactly = {{"allocationMode", "ExactCount"},
                    {"deviceClassName", className ? *className : std::string("gpu.nvidia.com")},
                    {"count", count && count->is_number_integer() ? *count : json(1)},
                    {"selectors", json::array()}};
    if (const json* cel = arrayAt(device, "celExpressions")) {
      for (const json& expression : *cel) exactly["selectors"].push_back({{"cel", {{"expression", expression}}}});
    }
    requests.push_back({{"name", stringOr(device, "name")}, {"exactly", std::move(exactly)}});
  }
  return reduceClaim(json{{"spec", {{"devices", {{"requests", std::move(requests)}}}}}});
}

// The claim a pod claim entry stands for: the claim or template it names,
// when the input or the cluster defines it, or the one the operator creates
// from the entry itself (a NIMService's draResources, which take the place
// of the pod's resourceClaims). Holds what it built: keep it while using get().
class ClaimOf {
 public:
  ClaimOf(const json& podClaim, const GpuFacts& facts)
      : named_(namedClaimFacts(podClaim, facts)), created_(named_ ? std::nullopt : createdClaimFacts(podClaim)) {}
  const ClaimFacts* get() const { return created_ ? &*created_ : named_; }

 private:
  const ClaimFacts* named_;
  std::optional<ClaimFacts> created_;
};

// What a finding calls a pod claim entry: its name in the pod; a
// NIMService's draResources entry has none, so what it names or creates.
std::string claimLabel(const json& podClaim) {
  for (const char* key : {"name", "resourceClaimTemplateName", "resourceClaimName"}) {
    if (const std::string* s = stringAt(podClaim, key)) return *s;
  }
  return podClaim.contains("claimCreationSpec") ? "claimCreationSpec" : "";
}

bool claimAsksGpuClass(const ClaimFacts& claim, const GpuFacts& facts) {
  return std::any_of(claim.requests.begin(), claim.requests.end(), [&](const auto& alternatives) {
    return std::any_of(alternatives.begin(), alternatives.end(),
                       [&](const DeviceRequestFacts& r) { return facts.isGpuClass(r.deviceClassName); });
  });
}

// What one request allocates: the fewest whole GPUs of its alternatives (the
// scheduler may pick any; MIG classes count 0), the first one's (the one it
// picks when it can), and whether an alternative
// of a GPU class is allocationMode All (its count depends on the node).
ClaimRequestGpus requestGpus(std::string name, const std::vector<DeviceRequestFacts>& alternatives,
                             const GpuFacts& facts) {
  ClaimRequestGpus out{std::move(name)};
  long long fewest = alternatives.empty() ? 0 : std::numeric_limits<long long>::max();
  for (const DeviceRequestFacts& r : alternatives) {
    const bool gpu = facts.isGpuClass(r.deviceClassName);
    out.asksGpu = out.asksGpu || gpu;
    out.countUnknown = out.countUnknown || (gpu && !r.count);
    const long long gpus = facts.isWholeGpuClass(r.deviceClassName) && r.count ? *r.count : 0;
    if (&r == &alternatives.front()) out.preferredWholeGpus = gpus;
    fewest = std::min(fewest, gpus);
  }
  out.wholeGpus = fewest;
  return out;
}

// A claim's requests, as requestGpus reads each, and their sum into `source`.
void addClaimRequests(const ClaimFacts& claim, const GpuFacts& facts, GpuSource& source) {
  long long total = 0;
  long long preferred = 0;
  for (std::size_t i = 0; i < claim.requests.size(); ++i) {
    const std::string name = i < claim.requestNames.size() ? claim.requestNames[i] : std::string();
    ClaimRequestGpus r = requestGpus(name, claim.requests[i], facts);
    total = addUnits(total, r.wholeGpus);
    preferred = addUnits(preferred, r.preferredWholeGpus);
    source.countUnknown = source.countUnknown || r.countUnknown;
    source.requests.push_back(std::move(r));
  }
  source.wholeGpus = total;
  source.preferredWholeGpus = preferred;
}

// Where the pod first asks for `resource`: the entry to point a finding at.
FieldPath firstEntryOf(const PodSite& site, std::string_view resource) {
  for (const ContainerRef& c : site.containers) {
    if (c.kind == ContainerKind::Ephemeral) continue;
    const ContainerResources& r = resourcesOf(c, false);
    if (const ResourceEntry* e = r.limit(resource)) return e->path;
    if (const ResourceEntry* e = r.request(resource)) return e->path;
  }
  return site.specPath;
}

}  // namespace

const DeviceClassFacts* GpuFacts::deviceClass(std::string_view name) const {
  if (const DeviceClassFacts* c = input.deviceClass(name)) return c;
  return cluster ? cluster->deviceClass(name) : nullptr;
}

const ClaimFacts* GpuFacts::claimTemplate(std::string_view name) const {
  if (const ClaimFacts* c = input.claimTemplate(ns, name)) return c;
  return cluster ? cluster->claimTemplate(ns, name) : nullptr;
}

const ClaimFacts* GpuFacts::claim(std::string_view name) const {
  if (const ClaimFacts* c = input.claim(ns, name)) return c;
  return cluster ? cluster->claim(ns, name) : nullptr;
}

const NamespaceFacts* GpuFacts::namespaceFacts(std::string_view name) const {
  if (const NamespaceFacts* n = input.namespaceFacts(name)) return n;
  return cluster ? cluster->namespaceFacts(name) : nullptr;
}

const RuntimeClassFacts* GpuFacts::runtimeClass(std::string_view name) const {
  if (const RuntimeClassFacts* r = input.runtimeClass(name)) return r;
  return cluster ? cluster->runtimeClass(name) : nullptr;
}

const std::string* GpuFacts::classServing(std::string_view resource) const {
  if (const std::string* c = input.classServing(resource)) return c;
  return cluster ? cluster->classServing(resource) : nullptr;
}

namespace {

// A class whose selectors name no driver that still selects NVIDIA GPUs:
// one without selectors (every device of every driver) or one that reads the
// NVIDIA driver's attributes (device.attributes['gpu.nvidia.com']...).
bool selectsNvidiaGpusByOtherMeans(const DeviceClassFacts& c) {
  return c.drivers.empty() && (c.selectorText.empty() || contains(c.selectorText, "'gpu.nvidia.com'") ||
                               contains(c.selectorText, "\"gpu.nvidia.com\""));
}

}  // namespace

bool GpuFacts::isGpuClass(std::string_view className) const {
  if (const DeviceClassFacts* c = deviceClass(className)) {
    if (!c->extendedResourceName.empty() && policy.isGpuResource(c->extendedResourceName)) return true;
    // The selectors name the driver: that decides, whatever the class's name.
    if (!c->drivers.empty()) return std::any_of(c->drivers.begin(), c->drivers.end(), isNvidiaGpuDriver);
    if (selectsNvidiaGpusByOtherMeans(*c)) return true;
    // Selectors gpuguard cannot read say nothing either way: the name decides, as without the class.
  }
  return namedLikeGpuClass(className);
}

bool GpuFacts::isGuessedClass(std::string_view className) const {
  const DeviceClassFacts* c = deviceClass(className);
  if (!c) return true;
  const bool servesGpuResource = !c->extendedResourceName.empty() && policy.isGpuResource(c->extendedResourceName);
  return c->drivers.empty() && !servesGpuResource && !selectsNvidiaGpusByOtherMeans(*c);
}

bool GpuFacts::isWholeGpuClass(std::string_view className) const {
  if (!isGpuClass(className)) return false;
  const DeviceClassFacts* c = deviceClass(className);
  if (!c) return !className.starts_with("mig.") && !className.starts_with("mig-");
  const bool migDriver = std::find(c->drivers.begin(), c->drivers.end(), "mig.nvidia.com") != c->drivers.end();
  return !migDriver && !isSliceResource(c->extendedResourceName) && !contains(c->selectorText, "'mig'") &&
         !contains(c->selectorText, "\"mig\"");
}

bool GpuFacts::isDraBacked(std::string_view resource) const {
  return policy.isDraExtendedResource(resource) || classServing(resource) != nullptr;
}

bool GpuFacts::isGpuResource(std::string_view resource) const {
  if (policy.isGpuResource(resource)) return true;
  if (resource.starts_with(kDeviceClassResourcePrefix)) {
    return isGpuClass(resource.substr(kDeviceClassResourcePrefix.size()));
  }
  const std::string* served = classServing(resource);
  return served && isGpuClass(*served);
}

bool GpuFacts::isGpuDriver(std::string_view driver) const {
  if (isNvidiaGpuDriver(driver)) return true;
  if (!cluster) return false;
  const std::vector<std::string>& classes = cluster->classesSelecting(driver);
  return std::any_of(classes.begin(), classes.end(), [&](const std::string& c) { return isGpuClass(c); });
}

bool GpuFacts::draServesGpusOn(std::string_view nodeName) const {
  if (!cluster) return false;
  const std::vector<std::string>& drivers = cluster->sliceDriversOn(nodeName);
  return std::any_of(drivers.begin(), drivers.end(), [&](const std::string& d) { return isGpuDriver(d); });
}

bool anyFromDevicePluginOnly(const std::vector<GpuSource>& sources) {
  return std::any_of(sources.begin(), sources.end(), [](const GpuSource& s) { return !s.draBacked; });
}

bool allMayComeFromDra(const std::vector<GpuSource>& sources) {
  return !sources.empty() && !anyFromDevicePluginOnly(sources);
}

namespace {

// The claim template a pod claim entry names, when a ComputeDomain of the
// input creates it: an IMEX channel.
bool isComputeDomainChannel(const json& podClaim, const InputFacts& input) {
  for (const json* holder : {&podClaim, objectAt(podClaim, "source")}) {
    if (!holder) continue;
    if (const std::string* t = stringAt(*holder, "resourceClaimTemplateName")) return input.isComputeDomainChannel(*t);
  }
  return false;
}

bool claimNamedLikeGpu(const json& podClaim) {
  for (const json* holder : {&podClaim, objectAt(podClaim, "source")}) {
    if (!holder) continue;
    for (const char* key : {"name", "resourceClaimTemplateName", "resourceClaimName"}) {
      if (const std::string* s = stringAt(*holder, key); s && namedLikeGpuClass(text::asciiLowercase(*s))) return true;
    }
  }
  return false;
}

// A pod claim entry naming one ResourceClaim (also the alpha `source:` shape).
bool namesSharedClaim(const json& podClaim) {
  const json* source = objectAt(podClaim, "source");
  return stringAt(podClaim, "resourceClaimName") || (source && stringAt(*source, "resourceClaimName"));
}

// A GPU claim recognised by a name, not by a class the input defines.
bool isGuessedClaim(const json& podClaim, const GpuFacts& facts) {
  const ClaimOf of(podClaim, facts);
  const ClaimFacts* claim = of.get();
  if (!claim) return true;
  for (const auto& alternatives : claim->requests) {
    for (const DeviceRequestFacts& r : alternatives) {
      if (facts.isGpuClass(r.deviceClassName) && !facts.isGuessedClass(r.deviceClassName)) return false;
    }
  }
  return true;
}

}  // namespace

bool isGpuClaim(const json& podClaim, const GpuFacts& facts) {
  if (!podClaim.is_object()) return false;
  if (const ClaimOf of(podClaim, facts); const ClaimFacts* claim = of.get()) return claimAsksGpuClass(*claim, facts);
  if (isComputeDomainChannel(podClaim, facts.input)) return false;
  return claimNamedLikeGpu(podClaim);
}

bool judgedByNamesOnly(const std::vector<GpuSource>& sources) {
  return !sources.empty() && std::all_of(sources.begin(), sources.end(), [](const GpuSource& s) { return s.guessed; });
}

std::string guessNote(const std::vector<GpuSource>& sources) {
  if (!judgedByNamesOnly(sources)) return "";
  std::string list;
  for (const GpuSource& s : sources) list += (list.empty() ? "" : ", ") + s.name;
  return "; a guess, so a warning: no DeviceClass or claim template in view says what " + list +
         " selects (another vendor's GPUs need no NVIDIA taint or driver), so GPUs were inferred from the name; "
         "judged by their selectors when the DeviceClass and ResourceClaimTemplate are in the linted input or the "
         "webhook's cluster facts";
}

namespace {

// A GPU resource whose quantity does not parse ("{{ .Values.gpus }}", "1 GPU")
// is still a GPU ask: the pod is a GPU pod for the other rules, whatever
// count gpu-invalid-quantity makes the author write (§15.9). Its count is unknown.
void addUnparseableAsks(const PodSite& site, const GpuFacts& facts, std::vector<GpuSource>& out) {
  for (const ContainerRef& c : site.containers) {
    // A lone container-like object is taken for one by its resources alone:
    // without a count that parses, too little says it is a container at all.
    if (c.kind == ContainerKind::Ephemeral || c.kind == ContainerKind::Lone) continue;
    const ContainerResources& r = resourcesOf(c, false);
    forEachRequestedResource(r, [&](const ResourceEntry& e) {
      if (!facts.isGpuResource(e.name) || decodeQuantity(*e.value).quantity) return;
      const bool known = std::any_of(out.begin(), out.end(), [&](const GpuSource& s) { return s.name == e.name; });
      if (known) return;
      const bool implicit = e.name.starts_with(kDeviceClassResourcePrefix);
      out.push_back(sourceOf(implicit ? GpuSourceKind::DeviceClassResource : GpuSourceKind::ExtendedResource, e.name,
                             e.path, implicit || facts.isDraBacked(e.name)));
    });
  }
}

std::vector<GpuSource> readGpuSources(const PodSite& site, const GpuFacts& facts) {
  std::vector<GpuSource> out;
  const auto gpuResource = [&](std::string_view name) { return facts.isGpuResource(name); };
  for (const ResourceUnits& u : podRequestUnitsByName(site, gpuResource)) {
    if (u.units <= 0) continue;
    GpuSource s = sourceOf(GpuSourceKind::ExtendedResource, u.name, firstEntryOf(site, u.name), facts.isDraBacked(u.name));
    if (const std::string* served = facts.classServing(u.name); served && !facts.policy.isGpuResource(u.name)) {
      s.guessed = facts.isGuessedClass(*served);
    }
    if (u.name.starts_with(kDeviceClassResourcePrefix)) {
      const std::string_view className = std::string_view(u.name).substr(kDeviceClassResourcePrefix.size());
      s.kind = GpuSourceKind::DeviceClassResource;
      s.draBacked = true;
      s.guessed = facts.isGuessedClass(className);
      if (facts.isWholeGpuClass(className)) s.wholeGpus = u.units;
    } else if (!isSliceResource(u.name)) {
      s.wholeGpus = u.units;
    }
    out.push_back(std::move(s));
  }
  addUnparseableAsks(site, facts, out);
  const auto addClaim = [&](const json& claim, const FieldPath& path) {
    if (!isGpuClaim(claim, facts)) return;
    GpuSource s = sourceOf(GpuSourceKind::Claim, claimLabel(claim), path, true);
    s.guessed = isGuessedClaim(claim, facts);
    s.sharedClaim = namesSharedClaim(claim);
    if (const ClaimOf of(claim, facts); const ClaimFacts* known = of.get()) addClaimRequests(*known, facts, s);
    out.push_back(std::move(s));
  };
  if (const json* claims = site.resourceClaims.value; claims && claims->is_array()) {
    for (std::size_t i = 0; i < claims->size(); ++i) addClaim((*claims)[i], site.resourceClaims.path.index(i));
  }
  if (site.operatorClaim) addClaim(site.operatorClaim->podClaim, site.operatorClaim->path);
  return out;
}

}  // namespace

// A site's GPU sources and the facts they were read with: the half dozen
// checks that ask judge the site with the same facts.
struct GpuSourcesMemo {
  const Policy* policy;
  const InputFacts* input;
  const ClusterFacts* cluster;
  std::string ns;
  std::vector<GpuSource> sources;
  // The claim sources by pod claim name (the first of a name), so that a
  // container listing all of a pod's N claims finds each in O(1), not O(N).
  std::unordered_map<std::string_view, const GpuSource*> claimsByName;

  bool readWith(const GpuFacts& facts) const {
    return policy == &facts.policy && input == &facts.input && cluster == facts.cluster && ns == facts.ns;
  }
};

const std::vector<GpuSource>& gpuSources(const PodSite& site, const GpuFacts& facts) {
  if (!site.gpuSourcesMemo || !site.gpuSourcesMemo->readWith(facts)) {
    auto memo = std::make_shared<GpuSourcesMemo>(GpuSourcesMemo{
        &facts.policy, &facts.input, facts.cluster, std::string(facts.ns), readGpuSources(site, facts), {}});
    for (const GpuSource& s : memo->sources) {
      if (s.kind == GpuSourceKind::Claim) memo->claimsByName.try_emplace(s.name, &s);
    }
    site.gpuSourcesMemo = std::move(memo);
  }
  return site.gpuSourcesMemo->sources;
}

const GpuSource* gpuClaimSource(const PodSite& site, const GpuFacts& facts, std::string_view podClaimName) {
  gpuSources(site, facts);
  const auto& byName = site.gpuSourcesMemo->claimsByName;
  const auto it = byName.find(podClaimName);
  return it == byName.end() ? nullptr : it->second;
}

bool claimPinsDriver(const PodSite& site, const GpuFacts& facts) {
  const auto pins = [&](const json& claim) {
    if (!claim.is_object() || !isGpuClaim(claim, facts)) return false;
    const ClaimOf of(claim, facts);
    const ClaimFacts* known = of.get();
    if (!known) return false;
    // Every alternative of a request must pin: the scheduler may pick any of them.
    const auto pinned = [&](const DeviceRequestFacts& r) {
      return r.pinsDriver && facts.isGpuClass(r.deviceClassName);
    };
    return std::any_of(known->requests.begin(), known->requests.end(), [&](const auto& alternatives) {
      return !alternatives.empty() && std::all_of(alternatives.begin(), alternatives.end(), pinned);
    });
  };
  if (site.operatorClaim && pins(site.operatorClaim->podClaim)) return true;
  const json* claims = site.resourceClaims.value;
  return claims && claims->is_array() && std::any_of(claims->begin(), claims->end(), pins);
}

bool usesGpus(const PodSite& site, const GpuFacts& facts) { return !gpuSources(site, facts).empty(); }

}  // namespace gpuguard
