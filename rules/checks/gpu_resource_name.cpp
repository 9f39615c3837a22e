// gpu-resource-name: common misspellings of the NVIDIA GPU resource.
#include <algorithm>
#include <array>
#include <optional>

#include "rules/checks/checks.h"
#include "rules/support/k8s_objects.h"
#include "rules/resources.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/names.h"
#include "text/edit_distance.h"

namespace gpuguard::checks {
namespace {

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 1> kPolicyKeys{"gpuResources"};

constexpr RuleDoc kDoc{
    .id = "gpu-resource-name",
    .defaultSeverity = Severity::Error,
    .summary = "A misspelt or invalid GPU resource name such as nvidia.com/GPU, nvidia.com/gpus, nvidia/gpu or "
               "requests.nvidia.com/gpu.",
    .description =
        "The NVIDIA device plugin advertises nvidia.com/gpu (and nvidia.com/gpu.shared, nvidia.com/mig-*). "
        "Resource names are case-sensitive, and most misspellings are still valid extended-resource names: "
        "nvidia.com/GPU, nvidia.com/gpus or nvidia/gpu pass validation, nothing advertises them, and the pod "
        "stays Pending with \"Insufficient nvidia.com/GPU\". Names without a '/' (gpu, nvidia.com.gpu) are "
        "rejected by the API server in Pods and workload templates, but not inside custom resources (RayCluster, "
        "PyTorchJob...), where they fail only when the operator creates the pods. "
        "alpha.kubernetes.io/nvidia-gpu is the accelerator resource of Kubernetes before 1.10, long removed; "
        "being under kubernetes.io/ it is still accepted and never satisfied. Some spellings are not "
        "extended-resource names at all (validateContainerResourceName: a name with a '/' must be a qualified "
        "name, and \"requests.\" + name one too, without a requests. prefix of its own): requests.nvidia.com/gpu "
        "(the ResourceQuota key), \"nvidia.com/gpu \" with stray whitespace, NVIDIA.com/gpu. The API server "
        "rejects them in Pods and workload templates with \"doesn't follow extended resource name standard\" "
        "(after IsQualifiedName's messages), which the finding quotes. Only a closed list of misspellings "
        "is reported (case variants of nvidia.com/gpu and nvidia.com/gpu.shared; gpus; nvidia/, nvidia.<other tld>/ "
        "and domains one or two letters off nvidia.com; gpu, gpus and nvidia.com.gpu without a domain), so "
        "resources of other device plugins (HAMi's nvidia.com/gpucores, nvidia.com/gpumem) are left alone. "
        "Names listed exactly in the policy's gpuResources are never reported. MIG names are checked by "
        "mig-resource-name.",
    .remediation = "Ask for nvidia.com/gpu (or the exact name your device plugin advertises: kubectl describe node).",
    .wrongExample = "resources:\n  limits:\n    nvidia.com/GPU: 1\n",
    .rightExample = "resources:\n  limits:\n    nvidia.com/gpu: 1\n",
    .policyKeys = kPolicyKeys,
};

struct Misspelling {
  std::string intended;
  std::string why;
  bool noDomain = false;  // not an extended resource at all
};

std::optional<Misspelling> misspelling(std::string_view name) {
  const std::string lower = lowercase(name);
  const std::string caseNote = "resource names are case-sensitive";
  for (std::string_view right : {"nvidia.com/gpu", "nvidia.com/gpu.shared"}) {
    if (lower == right && name != right) return Misspelling{std::string(right), caseNote};
  }
  if (lower == "alpha.kubernetes.io/nvidia-gpu") {
    return Misspelling{"nvidia.com/gpu",
                       "alpha.kubernetes.io/nvidia-gpu is the pre-1.10 accelerator resource, removed from Kubernetes; "
                       "GPUs now come from the device plugin"};
  }
  constexpr std::array<std::string_view, 8> kNoDomain{"gpu",        "gpus",       "nvidia-gpu", "nvidia_gpu",
                                                      "nvidia.gpu", "nvidia.com.gpu", "nvidia.com-gpu", "nvidiagpu"};
  if (std::find(kNoDomain.begin(), kNoDomain.end(), lower) != kNoDomain.end()) {
    return Misspelling{"nvidia.com/gpu",
                       "must be a standard resource type or fully qualified: the API server rejects it in Pods and "
                       "workload templates, and inside a custom resource it fails when the operator creates the pods",
                       true};
  }
  const std::size_t slash = lower.find('/');
  if (slash == std::string::npos || lower.find('/', slash + 1) != std::string::npos) return std::nullopt;
  const std::string_view domain = std::string_view(lower).substr(0, slash);
  const std::string_view resource = std::string_view(lower).substr(slash + 1);
  if (domain == "nvidia.com") {
    if (resource == "gpus" || resource == "nvidia-gpu") return Misspelling{"nvidia.com/gpu", "nothing advertises it"};
    return std::nullopt;
  }
  if ((resource == "gpu" || resource == "gpus") && (domain == "nvidia" || domain.starts_with("nvidia.") || text::editDistance(domain, "nvidia.com") <= 2)) {
    return Misspelling{"nvidia.com/gpu", "the device plugin's domain is nvidia.com"};
  }
  return std::nullopt;
}

// A GPU resource name the API server rejects (validateContainerResourceName):
// what it was meant to be, and why it is not that.
struct RejectedName {
  std::string intended;
  std::string why;
};

std::string_view trimmed(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  const std::size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

// Names with a '/' that are neither native nor extended, when what is left
// without stray whitespace and a ResourceQuota "requests." prefix is a GPU
// resource. MIG names are mig-resource-name's (it has the profile grammar).
std::optional<RejectedName> rejectedGpuName(std::string_view name, const Policy& policy) {
  if (name.find('/') == std::string_view::npos || name.starts_with("nvidia.com/mig-")) return std::nullopt;
  if (isNativeResourceName(name) || isExtendedResourceName(name)) return std::nullopt;
  std::vector<std::string> whys;
  std::string_view candidate = trimmed(name);
  if (candidate.size() != name.size()) whys.push_back("the name has leading or trailing whitespace");
  if (candidate.starts_with("requests.")) {
    candidate.remove_prefix(std::string_view("requests.").size());
    whys.push_back("requests.<name> is how a ResourceQuota names a resource, not a container");
  }
  std::string intended;
  if (policy.isGpuResource(candidate)) {
    intended = std::string(candidate);
  } else if (const std::optional<Misspelling> m = misspelling(candidate); m && !m->noDomain) {
    intended = m->intended;
    whys.push_back(m->why);
  } else {
    return std::nullopt;
  }
  if (whys.empty()) return std::nullopt;  // nothing to say beyond the API server's message
  return RejectedName{intended, joined(whys, "; ")};
}

bool namedExactlyInPolicy(const Policy& policy, std::string_view name) {
  return std::any_of(policy.gpuResources.begin(), policy.gpuResources.end(),
                     [&](const std::string& r) { return r == name && r.find('*') == std::string::npos; });
}

class GpuResourceName final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      for (const ContainerRef& c : site.containers) {
        const ContainerResources& r = resourcesOf(c, false);
        for (const auto* list : {&r.limits, &r.requests}) {
          for (const ResourceEntry& e : *list) {
            if (namedExactlyInPolicy(ctx.policy, e.name)) continue;
            if (const std::optional<RejectedName> r = rejectedGpuName(e.name, ctx.policy)) {
              reportRejected(e, *r, out);
              continue;
            }
            const std::optional<Misspelling> m = misspelling(e.name);
            if (!m) continue;
            if (m->noDomain) {
              // A lone container's `resources` may be the custom resource's own
              // format (an operator translating "gpu"); only pod specs are sure.
              if (c.kind == ContainerKind::Lone) continue;
              out.report(e.path, FieldError::invalid(quotedValue(e.name), m->why + "; use " + m->intended), e.name);
            } else {
              out.report(e.path,
                         FieldError::invalid(quotedValue(e.name), "no device plugin advertises this resource (" + m->why +
                                                                 "), so the pod stays Pending with \"Insufficient " +
                                                                 e.name + "\"; use " + m->intended),
                         e.name);
            }
          }
        }
      }
    }
  }

 private:
  // The API server's field errors for the name, joined; then why and the fix.
  static void reportRejected(const ResourceEntry& e, const RejectedName& r, Reporter& out) {
    const std::string shown = renderValue(nlohmann::json(e.name));
    out.report(e.path,
               FieldError::invalid(shown,
                                   joined(prefixedResourceNameErrors(e.name), "; ") + " (" + r.why +
                                       "): the API server rejects Pods and workload templates that name it, and "
                                       "inside a custom resource the pods its operator creates; use " + r.intended),
               e.name);
  }
};

}  // namespace

std::unique_ptr<Rule> makeGpuResourceName() { return std::make_unique<GpuResourceName>(); }

}  // namespace gpuguard::checks
