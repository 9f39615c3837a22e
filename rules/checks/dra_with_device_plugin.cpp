// dra-with-device-plugin: GPUs asked through DRA and the device plugin at
// once, and the DRA request shapes people get wrong (ResourceClaim,
// ResourceClaimTemplate, container claims).
#include <algorithm>

#include "rules/checks/checks.h"
#include "rules/checks/k8s_objects.h"
#include "rules/semantics.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

constexpr RuleDoc kDoc{
    .id = "dra-with-device-plugin",
    .defaultSeverity = Severity::Warning,
    .summary = "GPUs asked through DRA resourceClaims and nvidia.com/gpu in one pod; malformed DRA device requests.",
    .description =
        "The NVIDIA DRA driver and the NVIDIA device plugin cannot both manage the GPUs of one node: the DRA "
        "driver's Helm chart refuses to enable GPUs next to the device plugin unless gpuResourcesEnabledOverride "
        "is set, and the GPU Operator takes either a DRA or a device-plugin configuration, not both. A pod that "
        "asks for GPUs both ways needs a node offering both and stays Pending (unless nvidia.com/gpu is itself "
        "served by DRA through a DeviceClass extendedResourceName, feature gate DRAExtendedResource). A claim "
        "counts as a GPU claim when its name, resourceClaimTemplateName or resourceClaimName contains \"gpu\": "
        "the engine sees one object at a time and cannot read the template, and DRA claims for IMEX channels "
        "(ComputeDomain) or RDMA NICs next to nvidia.com/gpu are the documented GB200 pattern, not a mistake. "
        "This is the rule's warning. It also checks, as errors (the API server rejects these for the built-in "
        "kinds; nobody checks them inside custom resources, and linting catches them before apply): a "
        "container's resources.claims[].name must be one of spec.resourceClaims[].name; in ResourceClaim "
        "(spec.devices.requests[]) and ResourceClaimTemplate (spec.spec.devices.requests[]) of "
        "resource.k8s.io/v1 and v1beta2, each request holds its details under exactly: (or firstAvailable:) - a "
        "request with deviceClassName/count/allocationMode directly on it is the v1beta1 shape, the usual "
        "migration mistake; in v1beta1 (and v1alpha3) they sit on the request and exactly: does not exist; "
        "deviceClassName is required; allocationMode is ExactCount (the default) or All; count must not be "
        "negative, and must not be set (other than 0) with allocationMode All. count: 0 with ExactCount is "
        "defaulted to 1 by the API server (SetDefaults_ExactDeviceRequest), so it is accepted - it means one "
        "device, neither none nor all; that case is reported at the rule's own severity (warning). Older "
        "resource.k8s.io versions (v1alpha2, with resourceClassName) are not checked. Findings of the rule take "
        "the policy's severity for the rule when one is set.",
    .remediation =
        "Ask for a pod's GPUs one way: either nvidia.com/gpu limits (device plugin) or a resource claim (DRA). "
        "In resource.k8s.io/v1 write requests as {name, exactly: {deviceClassName, allocationMode, count, "
        "selectors}}.",
    .wrongExample =
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: two-gpus}\nspec:\n  spec:\n"
        "    devices:\n      requests:\n      - name: gpu\n        deviceClassName: gpu.nvidia.com\n        count: 2\n",
    .rightExample =
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: two-gpus}\nspec:\n  spec:\n"
        "    devices:\n      requests:\n      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n"
        "          count: 2\n",
};

// The fields of a v1beta1 request (v1: of `exactly`).
constexpr std::string_view kExactFields[] = {"deviceClassName", "allocationMode", "count",
                                             "selectors",       "adminAccess",    "tolerations"};

bool hasAnyExactField(const json& request) {
  return std::any_of(std::begin(kExactFields), std::end(kExactFields),
                     [&](std::string_view f) { return request.contains(f); });
}

// Strings that name a claim entry of spec.resourceClaims (also the alpha
// `source:` shape), lower-cased.
std::vector<std::string> claimNames(const json& entry) {
  std::vector<std::string> out;
  for (const json* holder : {&entry, objectAt(entry, "source")}) {
    if (!holder) continue;
    for (const char* key : {"name", "resourceClaimTemplateName", "resourceClaimName"}) {
      if (const std::string* s = stringAt(*holder, key)) out.push_back(lowercase(*s));
    }
  }
  return out;
}

class DraWithDevicePlugin final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) checkPod(ctx, site, out);
    forEachObject(ctx.object, [&](const json& obj, const FieldPath& path) { checkClaimObject(obj, path, out); });
  }

 private:
  // --- Pods -----------------------------------------------------------------

  static void checkPod(const CheckContext& ctx, const PodSite& site, Reporter& out) {
    const bool loneContainer = std::any_of(site.containers.begin(), site.containers.end(),
                                           [](const ContainerRef& c) { return c.kind == ContainerKind::Lone; });
    if (loneContainer) return;  // no pod spec: its claims are unknown

    std::vector<std::string> declared;
    const json* claims = site.resourceClaims.value && site.resourceClaims.value->is_array() ? site.resourceClaims.value
                                                                                            : nullptr;
    if (claims) {
      for (const json& c : *claims) {
        if (const std::string* name = stringAt(c, "name")) declared.push_back(*name);
      }
    }
    checkContainerClaims(site, declared, out);

    if (!claims) return;
    // GPUs from the device plugin.
    const ContainerRef* gpuContainer = nullptr;
    std::string gpuResource;
    for (const ContainerRef& c : site.containers) {
      if (c.kind == ContainerKind::Ephemeral || gpuContainer) continue;
      const ContainerResources& r = resourcesOf(c, false);
      for (const auto* list : {&r.limits, &r.requests}) {
        for (const ResourceEntry& e : *list) {
          if (!gpuContainer && ctx.policy.isGpuResource(e.name) && requestedUnits(r, e.name) > 0) {
            gpuContainer = &c;
            gpuResource = e.path.apiPath();
          }
        }
      }
    }
    if (!gpuContainer) return;
    // GPUs from DRA.
    for (std::size_t i = 0; i < claims->size(); ++i) {
      const std::vector<std::string> names = claimNames((*claims)[i]);
      const bool gpuClaim = std::any_of(names.begin(), names.end(),
                                        [](const std::string& n) { return n.find("gpu") != std::string::npos; });
      if (!gpuClaim) continue;
      const std::string* name = stringAt((*claims)[i], "name");
      out.report(site.resourceClaims.path.index(i),
                 FieldError::invalid(quotedValue((name ? *name : std::string())),
                                     "the pod asks for GPUs through DRA (this claim) and through the device "
                                         "plugin (" + gpuResource +
                                         "); the NVIDIA DRA driver and device plugin do not manage the GPUs of one "
                                         "node together, so "
                                         "no node offers both and the pod stays Pending (unless nvidia.com/gpu is "
                                         "served by DRA through "
                                         "a DeviceClass extendedResourceName); ask for all the pod's GPUs one way"),
                 name ? *name : "");
      return;  // one finding per pod
    }
  }

  static void checkContainerClaims(const PodSite& site, const std::vector<std::string>& declared, Reporter& out) {
    std::string known;
    for (const std::string& d : declared) known += (known.empty() ? "" : ", ") + d;
    for (const ContainerRef& c : site.containers) {
      const json* resources = objectAt(*c.container, "resources");
      const json* claims = resources ? arrayAt(*resources, "claims") : nullptr;
      if (!claims) continue;
      const FieldPath claimsPath = c.path.field("resources").field("claims");
      for (std::size_t j = 0; j < claims->size(); ++j) {
        const std::string* name = stringAt((*claims)[j], "name");
        if (!name || name->empty()) {
          out.reportWithDefault(claimsPath.index(j).field("name"),
                                FieldError::required("a container claim names the entry of spec.resourceClaims "
                                                         "it uses"),
                                "",
                                Severity::Error);
          continue;
        }
        if (std::find(declared.begin(), declared.end(), *name) != declared.end()) continue;
        out.reportWithDefault(claimsPath.index(j),
                              FieldError::notFound(quotedValue(*name),
                                                   "must be one of the names in pod.spec.resourceClaims" +
                                                       (declared.empty() ? std::string(" which is empty")
                                                                         : ": " + known) +
                                                       "; add {name: " + *name +
                                                       ", resourceClaimTemplateName: <template>} to the pod's "
                                                       "resourceClaims, or fix the name"),
                              *name,
                              Severity::Error);
      }
    }
  }

  // --- ResourceClaim / ResourceClaimTemplate ----------------------------------

  static void checkClaimObject(const json& obj, const FieldPath& base, Reporter& out) {
    const std::string* kind = stringAt(obj, "kind");
    const std::string* apiVersion = stringAt(obj, "apiVersion");
    if (!kind || !apiVersion || !apiVersion->starts_with("resource.k8s.io/")) return;
    const std::string version = apiVersion->substr(std::string_view("resource.k8s.io/").size());
    const bool exactShape = version == "v1" || version == "v1beta2";
    const bool flatShape = version == "v1beta1" || version == "v1alpha3";
    if (!exactShape && !flatShape) return;

    const json* claimSpec = nullptr;
    FieldPath specPath = base.field("spec");
    if (*kind == "ResourceClaim") {
      claimSpec = objectAt(obj, "spec");
    } else if (*kind == "ResourceClaimTemplate") {
      const json* templateSpec = objectAt(obj, "spec");
      claimSpec = templateSpec ? objectAt(*templateSpec, "spec") : nullptr;
      specPath = specPath.field("spec");
    }
    const json* devices = claimSpec ? objectAt(*claimSpec, "devices") : nullptr;
    const json* requests = devices ? arrayAt(*devices, "requests") : nullptr;
    if (!requests) return;
    const FieldPath requestsPath = specPath.field("devices").field("requests");
    for (std::size_t i = 0; i < requests->size(); ++i) {
      const json& request = (*requests)[i];
      if (!request.is_object()) continue;
      const FieldPath path = requestsPath.index(i);
      const json* exactly = objectAt(request, "exactly");
      const json* firstAvailable = arrayAt(request, "firstAvailable");
      if (firstAvailable) checkSubRequests(*firstAvailable, path.field("firstAvailable"), out);
      if (exactShape) {
        if (exactly && firstAvailable) {
          out.reportWithDefault(path,
                                FieldError::invalid("null",
                                                    "exactly one of `exactly` or `firstAvailable` is required, "
                                                        "but multiple fields are set; keep one"),
                                "",
                                Severity::Error);
        }
        if (exactly) {
          checkExact(*exactly, path.field("exactly"), out);
        } else if (!firstAvailable) {
          if (hasAnyExactField(request)) {
            out.reportWithDefault(path,
                                  FieldError::required("in " + *apiVersion +
                                                           " a request holds deviceClassName, allocationMode, count "
                                                           "and "
                                                           "selectors under exactly: (placing them on the request "
                                                           "is the v1beta1 shape; the API server "
                                                           "rejects them as unknown fields); move them into exactly:"),
                                  "",
                                  Severity::Error);
          } else {
            out.reportWithDefault(path,
                                  FieldError::required("exactly one of `exactly` or `firstAvailable` is "
                                                           "required; add exactly: {deviceClassName: gpu.nvidia.com}"),
                                  "",
                                  Severity::Error);
          }
        }
      } else {
        if (exactly) {
          out.reportWithDefault(path.field("exactly"),
                                FieldError::forbidden("exactly: exists only in resource.k8s.io/v1 and v1beta2; in " +
                                                          *apiVersion +
                                                          " deviceClassName, allocationMode and count sit on the "
                                                          "request itself (or use apiVersion resource.k8s.io/v1)"),
                                "",
                                Severity::Error);
        } else if (!firstAvailable) {
          checkExact(request, path, out);
        }
      }
    }
  }

  static void checkSubRequests(const json& subs, const FieldPath& path, Reporter& out) {
    for (std::size_t k = 0; k < subs.size(); ++k) {
      if (subs[k].is_object()) checkExact(subs[k], path.index(k), out);
    }
  }

  // The fields of an exact (or sub-) request: deviceClassName, allocationMode, count.
  static void checkExact(const json& request, const FieldPath& path, Reporter& out) {
    const std::string* className = stringAt(request, "deviceClassName");
    if (!className || className->empty()) {
      out.reportWithDefault(path.field("deviceClassName"),
                            FieldError::required("name the DeviceClass to allocate from (gpu.nvidia.com for "
                                                     "whole GPUs with the NVIDIA DRA driver, mig.nvidia.com for MIG "
                                                     "devices)"),
                            "",
                            Severity::Error);
    }
    std::string mode = "ExactCount";
    if (auto it = request.find("allocationMode"); it != request.end()) {
      const std::string* m = it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
      if (m && (m->empty() || *m == "ExactCount" || *m == "All")) {
        if (!m->empty()) mode = *m;
      } else {
        out.reportWithDefault(path.field("allocationMode"),
                              FieldError::notSupported(renderValue(*it),
                                                       "supported values: \"All\", \"ExactCount\""),
                              renderValue(*it),
                              Severity::Error);
        return;
      }
    }
    auto count = request.find("count");
    if (count == request.end() || count->is_null()) return;
    const FieldPath countPath = path.field("count");
    if (!count->is_number_integer()) {
      out.reportWithDefault(countPath,
                            FieldError::invalid(renderValue(*count),
                                                "count must be a whole number of devices"),
                            renderValue(*count),
                            Severity::Error);
      return;
    }
    const long long n = count->is_number_unsigned() ? static_cast<long long>(std::min<std::uint64_t>(
                                                          count->get<std::uint64_t>(), 1ULL << 62))
                                                    : count->get<long long>();
    const std::string shown = std::to_string(n);
    if (mode == "All") {
      if (n != 0) {
        out.reportWithDefault(countPath,
                              FieldError::invalid(shown,
                                                  "must not be specified when allocationMode is 'All' (All takes "
                                                      "every matching device); remove count, or use allocationMode: "
                                                      "ExactCount"),
                              shown,
                              Severity::Error);
      }
    } else if (n < 0) {
      out.reportWithDefault(countPath,
                            FieldError::invalid(shown,
                                                "must be greater than zero; ask for 1 or more devices"),
                            shown,
                            Severity::Error);
    } else if (n == 0) {
      out.report(countPath,
                 FieldError::invalid("0",
                                     "the API server defaults count 0 to 1, so this asks for one device, not "
                                         "none and not all; write count: 1, or allocationMode: All for every "
                                         "matching device"),
                 shown);
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeDraWithDevicePlugin() { return std::make_unique<DraWithDevicePlugin>(); }

}  // namespace gpuguard::checks
