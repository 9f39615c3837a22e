#include "rules/support/container_gpus.h"

#include <algorithm>

#include "rules/k8s/json_access.h"
#include "rules/resources.h"
#include "text/ascii.h"

namespace gpuguard::checks {

using nlohmann::json;

namespace {

bool isSliceResource(std::string_view name) {
  return name.find("/mig-") != std::string_view::npos || name.ends_with(".shared");
}

// The whole GPUs of a claim (or of one request of it): the fewest any
// allocation gives, and what the preferred alternatives give.
struct ClaimGpus {
  bool countUnknown = false;
  std::optional<long long> fewest;
  std::optional<long long> preferred;
};

void addUnitsTo(std::optional<long long>& to, long long units) {
  if (to) *to = addUnits(*to, units);
}

// Adds what a claim (or one request of it) hands the container.
void addDevices(const ClaimGpus& claim, ContainerGpus& out) {
  out.asksGpu = true;
  if (!claim.fewest || claim.countUnknown) {
    out.devices.reset();
    out.preferredDevices.reset();
  } else if (*claim.fewest == 0) {
    out.mig = true;  // a GPU claim of no whole GPU (in some alternative): MIG devices
    addUnitsTo(out.devices, 1);
    addUnitsTo(out.preferredDevices, 1);
  } else {
    addUnitsTo(out.devices, *claim.fewest);
    addUnitsTo(out.preferredDevices, claim.preferred.value_or(*claim.fewest));
  }
}

ClaimGpus claimGpus(const GpuSource& claim) { return {claim.countUnknown, claim.wholeGpus, claim.preferredWholeGpus}; }

// A listed claim's request `request` (claims[].request): the kubelet hands
// the container only that request's devices (§15.2, pkg/kubelet/cm/dra/claiminfo.go).
void addRequest(const GpuSource& claim, std::string_view request, ContainerGpus& out) {
  if (claim.requests.empty()) {  // the claim is not in view: its requests are unknown
    addDevices(claimGpus(claim), out);
    return;
  }
  const auto named = std::find_if(claim.requests.begin(), claim.requests.end(),
                                  [&](const ClaimRequestGpus& r) { return r.name == request; });
  if (named == claim.requests.end()) {
    out.asksGpu = true;  // no request of that name (dra-with-device-plugin says so): what it gets is unknown
    out.devices.reset();
    out.preferredDevices.reset();
  } else if (named->asksGpu) {
    addDevices({named->countUnknown, named->wholeGpus, named->preferredWholeGpus}, out);
  }
}

// The GPU claim sources of the pod the container lists by name, and the
// claim its operator lists in it (KServe's Managed DRA).
void addClaims(const PodSite& site, const ContainerRef& container, const GpuFacts& facts, ContainerGpus& out) {
  if (site.operatorClaim && !site.operatorClaim->container.empty() &&
      container.name() == site.operatorClaim->container) {
    const std::string* name = stringAt(site.operatorClaim->podClaim, "name");
    if (const GpuSource* s = name ? gpuClaimSource(site, facts, *name) : nullptr) addDevices(claimGpus(*s), out);
  }
  const json* resources = objectAt(*container.container, container.resourcesKey);
  const json* claims = resources ? arrayAt(*resources, "claims") : nullptr;
  if (!claims) return;
  for (const json& listed : *claims) {
    const std::string* name = stringAt(listed, "name");
    const GpuSource* s = name ? gpuClaimSource(site, facts, *name) : nullptr;
    if (!s) continue;
    const std::string* request = stringAt(listed, "request");
    if (request && !request->empty()) {
      addRequest(*s, *request, out);
    } else {
      addDevices(claimGpus(*s), out);
    }
  }
}

}  // namespace

ContainerGpus containerGpus(const PodSite& site, const ContainerRef& container, const GpuFacts& facts) {
  ContainerGpus out;
  out.devices = 0;
  out.preferredDevices = 0;
  if (!container.container || !container.container->is_object()) return out;
  const ContainerResources& r = resourcesOf(container, site.isPod);
  forEachRequestedResource(r, [&](const ResourceEntry& e) {
    if (!facts.isGpuResource(e.name)) return;
    const long long units = requestedUnits(r, e.name);
    if (units <= 0) return;
    out.asksGpu = true;
    if (isSliceResource(e.name)) out.mig = out.mig || e.name.find("/mig-") != std::string::npos;
    addUnitsTo(out.devices, units);
    addUnitsTo(out.preferredDevices, units);
  });
  addClaims(site, container, facts, out);
  return out;
}

std::optional<LiteralEnv> literalEnv(const ContainerRef& container, std::string_view name) {
  if (!container.container || !container.container->is_object()) return std::nullopt;
  const json* env = arrayAt(*container.container, "env");
  if (!env) return std::nullopt;
  std::optional<LiteralEnv> found;
  for (std::size_t i = 0; i < env->size(); ++i) {
    const json& e = (*env)[i];
    const std::string* n = stringAt(e, "name");
    if (!n || *n != name) continue;
    const std::string* v = stringAt(e, "value");
    if (!v) {
      found.reset();  // valueFrom (or no value): what it holds is unknown here
      continue;
    }
    found = LiteralEnv{*v, container.path.field("env").index(i).field("value")};
  }
  return found;
}

bool isNvidiaNodeAgentImage(std::string_view image) {
  // The repository's last path segment, without tag or digest.
  std::string_view repo = image.substr(0, image.find('@'));
  const std::size_t slash = repo.rfind('/');
  const std::size_t colon = repo.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) repo = repo.substr(0, colon);
  const std::string lower = text::asciiLowercase(repo);
  const std::string_view last = std::string_view(lower).substr(lower.rfind('/') + 1);
  static constexpr std::string_view kAgents[] = {
      "k8s-device-plugin", "gpu-feature-discovery", "dcgm-exporter", "dcgm", "k8s-mig-manager",
      "k8s-dra-driver-gpu", "k8s-dra-driver", "gpu-operator", "gpu-operator-validator", "container-toolkit",
      "k8s-driver-manager", "driver", "vgpu-device-manager", "k8s-kata-manager", "k8s-cc-manager"};
  const bool nvidia = lower.find("nvidia") != std::string::npos;
  if (!nvidia) return false;  // AMD's rocm/k8s-device-plugin, AWS's EFA plugin: not NVIDIA's
  return std::find(std::begin(kAgents), std::end(kAgents), last) != std::end(kAgents);
}

}  // namespace gpuguard::checks
