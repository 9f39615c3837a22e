// shared-gpu-request-gt-one: more than one nvidia.com/gpu per container on
// nodes whose GPUs are shared (GKE time-sharing or MPS, NVIDIA's MPS), which
// allow at most one (kubernetes-gpu-semantics.md §9.5, §15.5).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "rules/checks/checks.h"
#include "rules/resources.h"
#include "rules/pod_constraints.h"
#include "rules/k8s/field_error.h"
#include "rules/k8s/node_selection.h"

namespace gpuguard::checks {
namespace {

constexpr RuleDoc kDoc{
    .id = "shared-gpu-request-gt-one",
    .defaultSeverity = Severity::Error,
    .summary = "A container asking for more than one nvidia.com/gpu on nodes whose GPUs are shared (GKE time-sharing "
               "or MPS, the device plugin's MPS), which allow one per container.",
    .description =
        "On a shared GPU node each nvidia.com/gpu is a share of a physical GPU, and a container may hold at most "
        "one: GKE's time-sharing and MPS nodes (labels cloud.google.com/gke-gpu-sharing-strategy: time-sharing | "
        "mps, cloud.google.com/gke-max-shared-clients-per-gpu) refuse more than one GPU per container (GKE docs, "
        "\"About GPU sharing strategies\"), and the NVIDIA device plugin's MPS sharing sets "
        "failRequestsGreaterThanOne, so a request of 2 fails at the kubelet's Allocate (UnexpectedAdmissionError: "
        "\"maximum request size for shared resources is 1\"). The rule applies when every node the pod may land "
        "on is such a node: its nodeSelector, or each term of its required node affinity, selects one of those "
        "GKE labels, or GPU Feature Discovery's nvidia.com/gpu.sharing-strategy=mps. Time-slicing through the "
        "device plugin's own config lets requests above one through unless failRequestsGreaterThanOne is set, "
        "so nvidia.com/gpu.sharing-strategy=time-slicing is not judged.",
    .remediation =
        "Ask for nvidia.com/gpu: 1 per container on shared nodes, or select nodes whose GPUs are not shared for a "
        "container that needs several whole GPUs.",
    .wrongExample =
        "spec:\n  nodeSelector:\n    cloud.google.com/gke-gpu-sharing-strategy: time-sharing\n"
        "    cloud.google.com/gke-max-shared-clients-per-gpu: \"3\"\n  containers:\n  - name: cuda\n"
        "    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources:\n      limits:\n        nvidia.com/gpu: 2\n",
    .rightExample =
        "spec:\n  nodeSelector:\n    cloud.google.com/gke-gpu-sharing-strategy: time-sharing\n"
        "    cloud.google.com/gke-max-shared-clients-per-gpu: \"3\"\n  containers:\n  - name: cuda\n"
        "    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
};

constexpr std::string_view kGkeStrategy = "cloud.google.com/gke-gpu-sharing-strategy";
constexpr std::string_view kGkeClients = "cloud.google.com/gke-max-shared-clients-per-gpu";
constexpr std::string_view kGfdStrategy = "nvidia.com/gpu.sharing-strategy";

// Which sharing a requirement confines the pod to; nullopt when it does not.
std::optional<std::string> sharingOf(const NodeRequirement& r) {
  const bool in = r.op == "In" && !r.values.empty();
  const auto allOf = [&](std::initializer_list<std::string_view> allowed) {
    return in && std::all_of(r.values.begin(), r.values.end(), [&](const std::string& v) {
             return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
           });
  };
  if (r.key == kGkeStrategy && allOf({"time-sharing", "mps"})) return "GKE " + joined(r.values, "/");
  if (r.key == kGkeClients && (in || r.op == "Exists" || r.op == "Gt")) return std::string("GKE GPU sharing");
  if (r.key == kGfdStrategy && allOf({"mps"})) return std::string("the device plugin's MPS");
  return std::nullopt;
}

// The sharing every node the pod may land on has, or nullopt.
std::optional<std::string> sharedOnly(const PodSite& site) {
  std::optional<std::string> sharing;
  bool anyTerm = false;
  for (const NodeTerm& term : nodeSelectionTerms(site)) {
    if (term.matchesNothing) continue;
    anyTerm = true;
    std::optional<std::string> here;
    for (const NodeRequirement& r : term.requirements) {
      if (!here) here = sharingOf(r);
    }
    if (!here) return std::nullopt;
    if (!sharing) sharing = here;
  }
  return anyTerm ? sharing : std::nullopt;
}

class SharedGpuRequestGtOne final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      const std::optional<std::string> sharing = sharedOnly(site);
      if (!sharing) continue;
      for (const ContainerRef& c : site.containers) {
        const ContainerResources& r = resourcesOf(c, false);
        const long long units = requestedUnits(r, "nvidia.com/gpu");
        if (units <= 1) continue;
        const ResourceEntry* e = r.limit("nvidia.com/gpu") ? r.limit("nvidia.com/gpu") : r.request("nvidia.com/gpu");
        if (!e) continue;
        const std::string shown = renderValue(*e->value);
        out.report(e->path,
                   FieldError::invalid(shown, "container " + std::string(c.name()) + " asks for " +
                                                  std::to_string(units) + " nvidia.com/gpu on nodes whose GPUs are "
                                                  "shared (" + *sharing +
                                                  "), which give at most 1 per container, so the pod is refused "
                                                  "or fails at Allocate; ask for 1, or select unshared GPU nodes"),
                   shown);
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeSharedGpuRequestGtOne() { return std::make_unique<SharedGpuRequestGtOne>(); }

}  // namespace gpuguard::checks
