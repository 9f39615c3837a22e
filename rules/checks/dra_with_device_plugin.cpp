// dra-with-device-plugin: GPUs asked through DRA and the device plugin at
// once, and the DRA request shapes people get wrong (ResourceClaim,
// ResourceClaimTemplate, container claims).
#include <array>
#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "rules/checks/checks.h"
#include "rules/support/dra_request_checks.h"
#include "rules/support/k8s_objects.h"
#include "rules/k8s/field_error.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 2> kPolicyKeys{"gpuResources", "draExtendedResources"};

constexpr RuleDoc kDoc{
    .id = "dra-with-device-plugin",
    .defaultSeverity = Severity::Warning,
    .summary = "GPUs asked through DRA resourceClaims and nvidia.com/gpu in one pod; malformed DRA device requests.",
    .description =
        "The NVIDIA DRA driver and the NVIDIA device plugin cannot both manage the GPUs of one node: the DRA "
        "driver's Helm chart refuses to enable GPUs next to the device plugin unless gpuResourcesEnabledOverride "
        "is set, and the GPU Operator takes either a DRA or a device-plugin configuration, not both. A pod that "
        "asks for GPUs both ways (a GPU claim, or a deviceclass.resource.kubernetes.io/<GPU class> resource, beside "
        "a device-plugin GPU resource) needs a node offering both and stays Pending. On Kubernetes 1.36+ "
        "(DRAExtendedResource, KEP-5004) a DRA driver may serve nvidia.com/gpu itself through a DeviceClass "
        "extendedResourceName; then both come from DRA and the pod schedules: say so with the policy's "
        "draExtendedResources, or lint the DeviceClass in the same input, and the rule stays silent. Which claims "
        "are GPU claims is gpu-missing-toleration's notion (the template in the input, else \"gpu\" in the "
        "names): DRA claims for IMEX channels (ComputeDomain) or RDMA NICs next to nvidia.com/gpu are the "
        "documented GB200 pattern, not a mistake. This is the rule's warning. It also checks, as errors (the API server rejects these for the built-in "
        "kinds; nobody checks them inside custom resources, and linting catches them before apply): a "
        "container's resources.claims[].name must be one of spec.resourceClaims[].name; in ResourceClaim "
        "(spec.devices.requests[]) and ResourceClaimTemplate (spec.spec.devices.requests[]) of "
        "resource.k8s.io/v1 and v1beta2, each request holds its details under exactly: (or firstAvailable:) - a "
        "request with deviceClassName/count/allocationMode directly on it is the v1beta1 shape, the usual "
        "migration mistake; in v1beta1 (and v1alpha3) they sit on the request and exactly: does not exist; "
        "a pod claim names exactly one of resourceClaimName and resourceClaimTemplateName (the API server shows the "
        "entry as a Go struct: {\"Name\":...,\"ResourceClaimName\":null,...}); a container lists a claim (or a "
        "claim's request) once (Duplicate value); a ResourceClaimTemplate holds its devices at spec.spec.devices; a "
        "firstAvailable sub-request has a DNS-label name and no adminAccess; a v1 request with firstAvailable has "
        "no deviceClassName of its own. The last three are unknown fields, which kubectl's default strict field "
        "validation rejects (\"strict decoding error: unknown field ...\") and which are dropped without it; "
        "deviceClassName is required; allocationMode is ExactCount (the default) or All; count must not be "
        "negative, and must not be set (other than 0) with allocationMode All. count: 0 with ExactCount is "
        "defaulted to 1 by the API server (SetDefaults_ExactDeviceRequest), so it is accepted - it means one "
        "device, neither none nor all; that case is reported at the rule's own severity (warning). A device "
        "toleration's operator is Equal or Exists (Unsupported value: \"Gt\" on v1.37.2) and its effect "
        "None, NoSchedule or NoExecute: PreferNoSchedule, a node taint effect, is refused. Older "
        "resource.k8s.io versions (v1alpha2, with resourceClassName) are not checked. Findings of the rule take "
        "the policy's severity for the rule when one is set. A container's resources.claims[].request is a DNS "
        "label, a top-level request of its claim: <request>/<sub-request> is refused (Invalid value), as the API "
        "server does. It must name a "
        "request of its claim (an error, when the claim's template or claim is in the input): the API server "
        "does not check it, and the kubelet gives the container only the devices of the named request, so a "
        "misspelt name holds a GPU the container never sees. A CEL selector comparing productName with a name "
        "in GPU Feature Discovery's dashed form ('NVIDIA-H100-80GB-HBM3') is an error: the driver's productName is "
        "the NVML name with spaces, so no device matches and the claim is never allocated. adminAccess: true is "
        "refused unless the namespace carries resource.kubernetes.io/admin-access: \"true\": an error (the API "
        "server's Forbidden) when the claim's Namespace is in the input or the cluster facts without that label, "
        "else a reminder at the rule's severity. DeviceClass, ResourceClaim and "
        "ResourceClaimTemplate objects of resource.k8s.io/v1beta1 or v1beta2 are reported at the rule's severity: a "
        "default Kubernetes 1.37 API server serves resource.k8s.io/v1 only (the betas need "
        "--runtime-config=resource.k8s.io/v1beta1=true), so kubectl answers no matches for kind; v1alpha3 holds none "
        "of them at all.",
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
    .policyKeys = kPolicyKeys,
};

// The fields of a v1beta1 request (v1: of `exactly`).
constexpr std::string_view kExactFields[] = {"deviceClassName", "allocationMode", "count",
                                             "selectors",       "adminAccess",    "tolerations"};

// The decoder's words for a field the type does not have, under kubectl's
// default (Strict) field validation.
std::string strictDecodingError(const FieldPath& decodedPath) {
  return "strict decoding error: unknown field \"" + decodedPath.apiPath() + "\"";
}

// validation.IsDNS1123Label's pattern message (the length message aside).
constexpr std::string_view kDnsLabelMessage =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

// validation.IsDNS1123Label: the length, then the pattern.
std::vector<std::string> dnsLabelErrors(std::string_view s) {
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  std::vector<std::string> errors;
  if (s.size() > 63) errors.emplace_back("must be no more than 63 characters");
  const bool pattern = !s.empty() && alnum(s.front()) && alnum(s.back()) &&
                       std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
  if (!pattern) errors.emplace_back(kDnsLabelMessage);
  return errors;
}

bool hasAnyExactField(const json& request) {
  return std::any_of(std::begin(kExactFields), std::end(kExactFields),
                     [&](std::string_view f) { return request.contains(f); });
}

// A container's claim references as validateResourceClaimNames counts
// them: a request twice is a duplicate of "<claim>/<request>", and the whole
// claim beside any of its requests a duplicate of "<claim>" (kube-apiserver
// v1.37.2: [gpu/a, gpu/a, gpu, gpu/b] -> claims[1] "gpu/a", [2] and [3] "gpu").
class ClaimReferences {
 public:
  // The duplicated value, if this reference repeats an earlier one.
  std::optional<std::string> add(const std::string& claim, const std::string& request) {
    const bool wholeBefore = contains(whole_, claim);
    const bool requestsBefore = contains(withRequests_, claim);
    if (request.empty()) {
      whole_.insert(claim);
      if (wholeBefore || requestsBefore) return claim;
      return std::nullopt;
    }
    const std::string key = claim + "/" + request;
    const bool keyBefore = contains(requests_, key);
    requests_.insert(key);
    withRequests_.insert(claim);
    if (keyBefore) return key;
    if (wholeBefore) return claim;
    return std::nullopt;
  }

 private:
  static bool contains(const std::unordered_set<std::string>& set, const std::string& s) { return set.count(s) > 0; }
  // Sets, not lists: a container may list each of its pod's thousands of claims.
  std::unordered_set<std::string> whole_, withRequests_, requests_;
};

class DraWithDevicePlugin final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) checkPod(ctx, site, out);
    forEachObject(ctx.object, [&](const json& obj, const FieldPath& path) {
      reportUnservedVersion(obj, path, out);
      checkClaimObject(obj, path, claimNamespaceOf(ctx, obj, path), out);
    });
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
      for (std::size_t i = 0; i < claims->size(); ++i) {
        const json& c = (*claims)[i];
        if (const std::string* name = stringAt(c, "name")) declared.push_back(*name);
        if (c.is_object()) checkClaimSource(c, site.resourceClaims.path.index(i), out);
      }
    }
    checkContainerClaims(site, declared, out);
    if (claims) checkRequestNames(ctx, site, *claims, out);

    reportBothWays(ctx, site, out);
  }

  // validatePodResourceClaimSource: exactly one of resourceClaimName and
  // resourceClaimTemplateName. The API server shows the internal Go struct
  // as the invalid value (a nil pointer is null).
  static void checkClaimSource(const json& claim, const FieldPath& path, Reporter& out) {
    const auto pointerField = [&](const char* key) {
      auto it = claim.find(key);
      return it == claim.end() || it->is_null() ? json(nullptr) : *it;
    };
    const json claimName = pointerField("resourceClaimName");
    const json templateName = pointerField("resourceClaimTemplateName");
    if (claimName.is_null() != templateName.is_null()) return;
    const json name = claim.contains("name") ? claim["name"] : json("");
    const std::string shown = "{\"Name\":" + name.dump() + ",\"ResourceClaimName\":" + claimName.dump() +
                              ",\"ResourceClaimTemplateName\":" + templateName.dump() + "}";
    if (claimName.is_null()) {
      const bool alphaShape = claim.contains("source");
      out.reportWithDefault(path,
                            FieldError::invalid(shown,
                                                std::string("must specify one of: `resourceClaimName`, "
                                                            "`resourceClaimTemplateName`") +
                                                    (alphaShape ? "; source: is the shape of Kubernetes 1.26-1.27 "
                                                                  "(v1alpha2), dropped since: write "
                                                                  "resourceClaimTemplateName (or resourceClaimName) "
                                                                  "on the entry itself"
                                                                : "; name the ResourceClaimTemplate the pod's claim "
                                                                  "is made from (resourceClaimTemplateName) or an "
                                                                  "existing ResourceClaim (resourceClaimName)")),
                            shown, Severity::Error);
    } else {
      out.reportWithDefault(path,
                            FieldError::invalid(shown,
                                                "at most one of `resourceClaimName` or `resourceClaimTemplateName` "
                                                "may be specified; keep resourceClaimTemplateName for a claim of the "
                                                "pod's own, or resourceClaimName to share an existing claim"),
                            shown, Severity::Error);
    }
  }

  // GPUs from the device plugin and from DRA in one pod. An extended
  // resource a DRA driver serves (policy draExtendedResources, a DeviceClass
  // extendedResourceName in the input) is DRA's: no conflict then.
  static void reportBothWays(const CheckContext& ctx, const PodSite& site, Reporter& out) {
    const std::vector<GpuSource>& sources = gpuSources(site, ctx.gpu());
    const auto pluginSource = std::find_if(sources.begin(), sources.end(), [](const GpuSource& s) {
      return s.kind == GpuSourceKind::ExtendedResource && !s.draBacked;
    });
    const auto draSource = std::find_if(sources.begin(), sources.end(), [](const GpuSource& s) {
      return s.kind != GpuSourceKind::ExtendedResource && s.draBacked;
    });
    if (pluginSource == sources.end() || draSource == sources.end()) return;
    const std::string what = draSource->kind == GpuSourceKind::Claim ? "this claim" : "this resource";
    out.report(draSource->path,
               FieldError::invalid(quotedValue(draSource->name),
                                   "the pod asks for GPUs through DRA (" + what + ") and through the device plugin (" +
                                       pluginSource->path.apiPath() +
                                       "); the NVIDIA DRA driver and the device plugin do not manage the GPUs of one "
                                       "node together, so no node offers both and the pod stays Pending, unless a "
                                       "DRA driver serves " + pluginSource->name +
                                       " too (a DeviceClass with extendedResourceName: " + pluginSource->name +
                                       ", Kubernetes 1.36+; say so with draExtendedResources: [" +
                                       pluginSource->name + "] in the policy); ask for all the pod's GPUs one way"),
               draSource->name);
  }

  static void checkContainerClaims(const PodSite& site, const std::vector<std::string>& declared, Reporter& out) {
    // The API server lists the names sorted (sets.List).
    std::vector<std::string> sorted = declared;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    const std::string known = joined(sorted, ", ");
    for (const ContainerRef& c : site.containers) {
      const json* resources = objectAt(*c.container, "resources");
      const json* claims = resources ? arrayAt(*resources, "claims") : nullptr;
      if (!claims) continue;
      const FieldPath claimsPath = c.path.field("resources").field("claims");
      ClaimReferences references;
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
        const std::string* request = stringAt((*claims)[j], "request");
        if (request && !request->empty()) checkRequestLabel(*request, claimsPath.index(j).field("request"), out);
        if (const std::optional<std::string> duplicate = references.add(*name, request ? *request : "")) {
          out.reportWithDefault(claimsPath.index(j),
                                FieldError::duplicate(quotedValue(*duplicate),
                                                      std::string("; the container already uses ") +
                                                          (duplicate->find('/') == std::string::npos
                                                               ? "this claim (or one of its requests)"
                                                               : "this request of the claim") +
                                                          ": remove the second entry"),
                                *duplicate, Severity::Error);
        }
        if (std::binary_search(sorted.begin(), sorted.end(), *name)) continue;
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

  // A container's claims[].request is a DNS label (validateResourceClaimNames,
  // kube-apiserver v1.37.2): a top-level request of the claim, never
  // <request>/<sub-request>, which only a claim's config and constraints name.
  static void checkRequestLabel(const std::string& request, const FieldPath& at, Reporter& out) {
    const std::vector<std::string> errors = dnsLabelErrors(request);
    if (errors.empty()) return;
    const std::size_t slash = request.find('/');
    const std::string fix = slash == std::string::npos
                                ? "name one of the claim's requests"
                                : "name the request " + quotedValue(request.substr(0, slash)) +
                                      ": the container gets the devices of whichever of its firstAvailable "
                                      "sub-requests is allocated";
    out.reportWithDefault(at, FieldError::invalid(quotedValue(request), joined(errors, "; ") + "; " + fix), request,
                          Severity::Error);
  }

  // A container's claims[].request must name a request of the claim: the API
  // server does not check it, and the kubelet hands the container only the
  // devices of the named request (pkg/kubelet/cm/dra/claiminfo.go; reference
  // §15.2), so a misspelt name holds a GPU the container never sees. Judged
  // when the claim's template or claim is in the input.
  static void checkRequestNames(const CheckContext& ctx, const PodSite& site, const json& podClaims, Reporter& out) {
    // The pod's claim entries by name (the first of a name): each container reference finds its own in O(1).
    std::unordered_map<std::string_view, const json*> entries;
    for (const json& entry : podClaims) {
      if (const std::string* n = entry.is_object() ? stringAt(entry, "name") : nullptr) entries.try_emplace(*n, &entry);
    }
    for (const ContainerRef& c : site.containers) {
      const json* resources = objectAt(*c.container, "resources");
      const json* claims = resources ? arrayAt(*resources, "claims") : nullptr;
      for (std::size_t j = 0; claims && j < claims->size(); ++j) {
        const std::string* name = stringAt((*claims)[j], "name");
        const std::string* request = stringAt((*claims)[j], "request");
        if (!name || !request || request->empty()) continue;
        std::string source;
        const auto entry = entries.find(*name);
        const ClaimFacts* facts = entry == entries.end() ? nullptr : claimFactsOf(ctx, *entry->second, source);
        if (!facts || facts->requestNames.empty()) continue;
        const std::string wanted = request->substr(0, request->find('/'));
        const auto& names = facts->requestNames;
        if (std::find(names.begin(), names.end(), wanted) != names.end()) continue;
        const FieldPath at = c.path.field("resources").field("claims").index(j).field("request");
        out.reportWithDefault(at,
                              FieldError::note("request " + quotedValue(*request) + " names no request of " + source +
                                               " (its requests: " + joined(names, ", ") +
                                               "); the API server accepts it, but the kubelet gives the container "
                                               "only the devices of the request it names, so the claim holds a GPU "
                                               "the container never sees; write request: " + names.front() +
                                               ", or leave request out to get every device of the claim"),
                              *request, Severity::Error);
      }
    }
  }

  // The facts of the claim a pod's resourceClaims entry refers to, when the input holds them.
  static const ClaimFacts* claimFactsOf(const CheckContext& ctx, const json& entry, std::string& source) {
    if (const std::string* t = stringAt(entry, "resourceClaimTemplateName")) {
      source = "ResourceClaimTemplate " + *t;
      return ctx.gpu().claimTemplate(*t);
    }
    if (const std::string* claim = stringAt(entry, "resourceClaimName")) {
      source = "ResourceClaim " + *claim;
      return ctx.gpu().claim(*claim);
    }
    return nullptr;
  }

  // --- ResourceClaim / ResourceClaimTemplate ----------------------------------

  // A default Kubernetes 1.37 API server serves resource.k8s.io/v1 only: v1beta1
  // and v1beta2 are in betaAPIGroupVersionsDisabledByDefault, and v1alpha3 holds
  // none of these kinds (pkg/controlplane/instance.go, pkg/registry/resource/rest,
  // v1.37.2; reference §15.2), so kubectl finds no such kind.
  static void reportUnservedVersion(const json& obj, const FieldPath& base, Reporter& out) {
    const std::string* kind = stringAt(obj, "kind");
    const std::string* apiVersion = stringAt(obj, "apiVersion");
    if (!kind || !apiVersion) return;
    if (*kind != "DeviceClass" && *kind != "ResourceClaim" && *kind != "ResourceClaimTemplate") return;
    const bool beta = *apiVersion == "resource.k8s.io/v1beta1" || *apiVersion == "resource.k8s.io/v1beta2";
    if (!beta && *apiVersion != "resource.k8s.io/v1alpha3") return;
    const std::string noMatch = "kubectl answers no matches for kind \"" + *kind + "\" in version \"" + *apiVersion + "\"";
    const std::string served = beta ? "is not served by a default Kubernetes 1.37 API server (needs --runtime-config=" +
                                          *apiVersion + "=true), so " + noMatch
                                    : "holds no " + *kind + " in Kubernetes 1.37 (only DeviceTaintRule and "
                                          "ResourcePoolStatusRequest, off by default), so " + noMatch;
    std::string fix = "use resource.k8s.io/v1";
    if (*kind == "DeviceClass") fix += " (the same selectors and config)";
    else if (*apiVersion == "resource.k8s.io/v1beta2") fix += " (the same shape as v1beta2)";
    else fix += " (requests under exactly:)";
    out.report(base.field("apiVersion"), FieldError::note(*apiVersion + " " + served + "; " + fix), *apiVersion);
  }

  // The namespace a claim object is created in: the object's (the admission
  // request's), or a List item's own metadata.namespace.
  static ClaimNamespace claimNamespaceOf(const CheckContext& ctx, const json& obj, const FieldPath& path) {
    std::string_view name = ctx.namespaceName;
    const json* metadata = path.empty() ? nullptr : objectAt(obj, "metadata");
    if (const std::string* ns = metadata ? stringAt(*metadata, "namespace") : nullptr; ns && !ns->empty()) name = *ns;
    return ClaimNamespace{name, ctx.gpu().namespaceFacts(name), ctx.facts.namespaceFacts(name) != nullptr};
  }

  static void checkClaimObject(const json& obj, const FieldPath& base, const ClaimNamespace& ns, Reporter& out) {
    const std::string* kind = stringAt(obj, "kind");
    const std::string* apiVersion = stringAt(obj, "apiVersion");
    if (!kind || !apiVersion || !apiVersion->starts_with("resource.k8s.io/")) return;
    const std::string version = apiVersion->substr(std::string_view("resource.k8s.io/").size());
    const bool exactShape = version == "v1" || version == "v1beta2";
    const bool flatShape = version == "v1beta1" || version == "v1alpha3";
    if (!exactShape && !flatShape) return;

    const json* claimSpec = nullptr;
    FieldPath specPath = base.field("spec");
    FieldPath decodedPath = FieldPath{}.field("spec");  // what the decoder names, from the object
    if (*kind == "ResourceClaim") {
      claimSpec = objectAt(obj, "spec");
    } else if (*kind == "ResourceClaimTemplate") {
      const json* templateSpec = objectAt(obj, "spec");
      claimSpec = templateSpec ? objectAt(*templateSpec, "spec") : nullptr;
      if (templateSpec && templateSpec->contains("devices")) reportDevicesTooHigh(specPath, out);
      specPath = specPath.field("spec");
      decodedPath = decodedPath.field("spec");
    }
    const json* devices = claimSpec ? objectAt(*claimSpec, "devices") : nullptr;
    const json* requests = devices ? arrayAt(*devices, "requests") : nullptr;
    if (!requests) return;
    const FieldPath requestsPath = specPath.field("devices").field("requests");
    for (std::size_t i = 0; i < requests->size(); ++i) {
      if (!(*requests)[i].is_object()) continue;
      checkClaimRequest((*requests)[i], requestsPath.index(i), decodedPath.field("devices").field("requests").index(i),
                        *apiVersion, exactShape, ns, out);
    }
  }

  // One request of a claim's devices.requests; `decoded` is its path as the
  // decoder names it (from the object), `exactShape` whether its version
  // nests the request's fields under exactly: (v1, v1beta2).
  static void checkClaimRequest(const json& request, const FieldPath& path, const FieldPath& decoded,
                                const std::string& apiVersion, bool exactShape, const ClaimNamespace& ns,
                                Reporter& out) {
    const json* exactly = objectAt(request, "exactly");
    const json* firstAvailable = arrayAt(request, "firstAvailable");
    if (firstAvailable) {
      checkSubRequests(*firstAvailable, path.field("firstAvailable"), decoded.field("firstAvailable"), ns, out);
    }
    if (exactShape && firstAvailable) reportFieldsBesideFirstAvailable(request, path, decoded, out);
    const auto error = [&](const FieldPath& at, FieldError e) {
      out.reportWithDefault(at, std::move(e), "", Severity::Error);
    };
    if (!exactShape) {
      if (exactly) {
        error(path.field("exactly"),
              FieldError::forbidden("exactly: exists only in resource.k8s.io/v1 and v1beta2; in " + apiVersion +
                                    " deviceClassName, allocationMode and count sit on the request itself (or use "
                                    "apiVersion resource.k8s.io/v1)"));
      } else if (!firstAvailable) {
        checkExact(request, path, ns, out);
      }
      return;
    }
    if (exactly && firstAvailable) {
      error(path, FieldError::invalid("null", "exactly one of `exactly` or `firstAvailable` is required, but multiple "
                                              "fields are set; keep one"));
    }
    if (exactly) {
      checkExact(*exactly, path.field("exactly"), ns, out);
    } else if (!firstAvailable && hasAnyExactField(request)) {
      error(path, FieldError::required("in " + apiVersion +
                                       " a request holds deviceClassName, allocationMode, count and selectors under "
                                       "exactly: (placing them on the request is the v1beta1 shape; the API server "
                                       "rejects them as unknown fields); move them into exactly:"));
    } else if (!firstAvailable) {
      error(path, FieldError::required("exactly one of `exactly` or `firstAvailable` is required; add exactly: "
                                       "{deviceClassName: gpu.nvidia.com}"));
    }
  }

  // A ResourceClaimTemplate's claim spec is spec.spec; devices right under
  // spec is an unknown field of ResourceClaimTemplateSpec.
  static void reportDevicesTooHigh(const FieldPath& templateSpecPath, Reporter& out) {
    out.reportWithDefault(templateSpecPath.field("devices"),
                          FieldError::note(strictDecodingError(FieldPath{}.field("spec").field("devices")) +
                                           ": a ResourceClaimTemplate holds the claim spec one level down, at "
                                           "spec.spec.devices; kubectl's strict field validation (its default) is "
                                           "refused, and without it the field is dropped and every claim made from "
                                           "the template asks for no device; move devices under spec.spec"),
                          "", Severity::Error);
  }

  // v1 requests with firstAvailable carry nothing else but their name: a
  // request-level deviceClassName (the v1beta1 shape) is an unknown field.
  static void reportFieldsBesideFirstAvailable(const json& request, const FieldPath& path, const FieldPath& decoded,
                                               Reporter& out) {
    for (std::string_view f : kExactFields) {
      if (!request.contains(f)) continue;
      out.reportWithDefault(path.field(f),
                            FieldError::note(strictDecodingError(decoded.field(f)) +
                                             ": a v1 request with firstAvailable names its DeviceClass in each "
                                             "sub-request, not beside the list; without strict field validation it "
                                             "is dropped; move " + std::string(f) + " into the sub-requests"),
                            renderValue(request[std::string(f)]), Severity::Error);
    }
  }

  static void checkSubRequests(const json& subs, const FieldPath& path, const FieldPath& decoded,
                               const ClaimNamespace& ns, Reporter& out) {
    for (std::size_t k = 0; k < subs.size(); ++k) {
      if (!subs[k].is_object()) continue;
      checkSubRequestName(subs[k], path.index(k), out);
      if (subs[k].contains("adminAccess")) {
        out.reportWithDefault(path.index(k).field("adminAccess"),
                              FieldError::note(strictDecodingError(decoded.index(k).field("adminAccess")) +
                                               ": adminAccess exists only on exactly: requests (DeviceSubRequest "
                                               "has none); without strict field validation it is dropped and the "
                                               "sub-request asks for ordinary access; use an exactly: request for "
                                               "admin access"),
                              renderValue(subs[k]["adminAccess"]), Severity::Error);
      }
      checkExact(subs[k], path.index(k), ns, out, /*subRequest=*/true);
    }
  }

  // validateDeviceSubRequest: the name is a DNS label (constraints and
  // config refer to <request>/<sub-request>).
  static void checkSubRequestName(const json& sub, const FieldPath& path, Reporter& out) {
    const std::string* name = stringAt(sub, "name");
    const std::string shown = name ? *name : "";
    const std::vector<std::string> errors = dnsLabelErrors(shown);
    if (errors.empty()) return;
    out.reportWithDefault(path.field("name"),
                          FieldError::invalid(renderValue(json(shown)),
                                              joined(errors, "; ") +
                                                  "; give each sub-request a name of its own (constraints and config "
                                                  "refer to it as <request>/<sub-request>)"),
                          shown, Severity::Error);
  }

  // The fields of an exact (or sub-) request: deviceClassName, allocationMode, count.
  static void checkExact(const json& request, const FieldPath& path, const ClaimNamespace& ns, Reporter& out,
                         bool subRequest = false) {
    checkRequestDetails(request, path, subRequest, ns, out);
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
