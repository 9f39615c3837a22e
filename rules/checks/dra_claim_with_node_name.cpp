// dra-claim-with-node-name: a pod that names its node and asks for DRA
// devices. Only kube-scheduler allocates and reserves ResourceClaims; a pod
// with spec.nodeName never passes through it, and the kubelet waits for a
// reservation that never comes (kubernetes-gpu-semantics.md §15.1).
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "rules/checks/checks.h"
#include "rules/k8s/json_access.h"
#include "rules/resources.h"
#include "rules/pod_constraints.h"
#include "rules/k8s/field_error.h"

namespace gpuguard::checks {
namespace {

using nlohmann::json;

// The policy keys this rule reads (besides `rules`), for --explain and docs/rules.md.
constexpr std::array<std::string_view, 2> kPolicyKeys{"gpuResources", "draExtendedResources"};

constexpr RuleDoc kDoc{
    .id = "dra-claim-with-node-name",
    .defaultSeverity = Severity::Error,
    .summary = "A pod that sets spec.nodeName and asks for DRA devices (resourceClaims, or an extended resource a "
               "DRA driver serves): it never starts.",
    .description =
        "A pod created with spec.nodeName bypasses kube-scheduler, and only kube-scheduler allocates a "
        "ResourceClaim and reserves it for the pod (the DynamicResources plugin). The kubelet of the named node "
        "waits for a claim allocated and reserved for the pod, which never happens, so the pod never starts "
        "(Kubernetes docs, Dynamic Resource Allocation, \"Pre-scheduled Pods\"; kubernetes/kubernetes#114005). "
        "The same holds for an extended resource a DRA driver serves: deviceclass.resource.kubernetes.io/<class>, "
        "a DeviceClass's extendedResourceName in the same input, or a name the policy lists in "
        "draExtendedResources - the scheduler creates the claim behind it. Every resourceClaims entry counts, "
        "GPU or not (IMEX channels and NICs wait the same way). Workload templates with nodeName create such "
        "pods too. A claim by name (resourceClaimName) already allocated on the named node is the exception: "
        "kube-controller-manager's resourceclaim controller reserves it for the pod, and the pod starts - so such a "
        "claim the cluster facts show allocated there is not reported, one they show unallocated or allocated on "
        "another node is, and one neither the input nor the facts hold is a warning. "
        "A Pod read back from a cluster whose status shows the scheduler bound it (PodScheduled True, "
        "or phase Running, Succeeded or Failed) got its nodeName from the scheduler and is not reported.",
    .remediation =
        "Remove spec.nodeName and keep the pod on that node with a node selector on its hostname "
        "(nodeSelector: {kubernetes.io/hostname: <node>}), so that the scheduler allocates the claims.",
    .wrongExample =
        "spec:\n  nodeName: gpu-node-1\n  resourceClaims:\n  - name: gpu\n    resourceClaimTemplateName: single-gpu\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      claims:\n      - name: gpu\n",
    .rightExample =
        "spec:\n  nodeSelector:\n    kubernetes.io/hostname: gpu-node-1\n  resourceClaims:\n  - name: gpu\n"
        "    resourceClaimTemplateName: single-gpu\n"
        "  containers:\n  - name: cuda\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      claims:\n      - name: gpu\n",
    .policyKeys = kPolicyKeys,
};

// What the pod asks of DRA, for the message. `waiting`: what nothing will
// allocate for it (a template's claim, a claim not allocated or allocated on
// another node, a DRA-backed extended resource, whose claim the scheduler
// creates). `unknown`: claims by name that the input and the facts do not
// show; one already allocated on the pod's node is fine, as
// kube-controller-manager's resourceclaim controller reserves it for a pod
// with spec.nodeName (syncPod, reserveForPod; red team 35 D7).
struct DraAsks {
  std::vector<std::string> waiting;
  std::vector<std::string> unknown;
};

DraAsks draAsks(const PodSite& site, const GpuFacts& facts, const std::string& node) {
  DraAsks asks;
  if (const json* claims = site.resourceClaims.value; claims && claims->is_array()) {
    for (std::size_t i = 0; i < claims->size(); ++i) {
      const json& claim = (*claims)[i];
      if (!claim.is_object()) continue;
      const std::string said =
          "claim " + quotedValue(stringOr(claim, "name")) + " (" + site.resourceClaims.path.index(i).apiPath() + ")";
      const std::string claimName = stringOr(claim, "resourceClaimName");
      if (claimName.empty()) {
        asks.waiting.push_back(said);
        continue;
      }
      const ClaimFacts* held = facts.claim(claimName);
      if (!held) {
        asks.unknown.push_back(said + ", ResourceClaim " + claimName);
      } else if (!held->allocated) {
        asks.waiting.push_back(said + ", ResourceClaim " + claimName + " not allocated");
      } else if (!held->allocatedNodes.empty() &&
                 std::find(held->allocatedNodes.begin(), held->allocatedNodes.end(), node) == held->allocatedNodes.end()) {
        asks.waiting.push_back(said + ", ResourceClaim " + claimName + " allocated on " + joined(held->allocatedNodes));
      }
    }
  }
  const auto draBacked = [&](std::string_view name) {
    return name.starts_with(kDeviceClassResourcePrefix) || facts.isDraBacked(name);
  };
  for (const ResourceUnits& u : podRequestUnitsByName(site, draBacked)) {
    if (u.units > 0) asks.waiting.push_back("the DRA-backed resource " + u.name);
  }
  return asks;
}

// A pod read back from a cluster (kubectl get pods -o yaml) that the
// scheduler has already bound: its nodeName is the scheduler's, not the
// author's. The status says so: PodScheduled True, or a phase past Pending.
bool boundByScheduler(const json& object, const PodSite& site) {
  if (!site.isPod) return false;
  const json::json_pointer spec(site.specPath.jsonPointer());
  if (spec.empty() || !object.contains(spec.parent_pointer())) return false;
  const json* status = objectAt(object.at(spec.parent_pointer()), "status");
  if (!status) return false;
  const std::string phase = stringOr(*status, "phase");
  if (phase == "Running" || phase == "Succeeded" || phase == "Failed") return true;
  const json* conditions = arrayAt(*status, "conditions");
  if (!conditions) return false;
  for (const json& c : *conditions) {
    if (stringOr(c, "type") == "PodScheduled" && stringOr(c, "status") == "True") return true;
  }
  return false;
}

class DraClaimWithNodeName final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      if (!bypassesScheduler(site) || boundByScheduler(ctx.object, site)) continue;
      const std::string& node = site.spec->at("nodeName").get_ref<const std::string&>();
      const DraAsks asks = draAsks(site, ctx.gpu(), node);
      const std::string instead = "remove nodeName and select the node by its hostname label (usually its name): "
                                  "nodeSelector: {kubernetes.io/hostname: " + node + "}";
      if (!asks.waiting.empty()) {
        out.report(site.specPath.field("nodeName"),
                   FieldError::invalid(quotedValue(node),
                                       "the pod names its node, so kube-scheduler never sees it and nothing allocates "
                                       "or reserves its DRA devices (" + joined(asks.waiting) +
                                           "); the kubelet waits for them and the pod never starts; " + instead),
                   node);
      } else if (!asks.unknown.empty()) {
        out.reportWithDefault(
            site.specPath.field("nodeName"),
            FieldError::invalid(quotedValue(node),
                                "the pod names its node, so kube-scheduler never sees it: its claims by name (" +
                                    joined(asks.unknown) + ") must already be allocated on node " + node +
                                    ", which kube-controller-manager then reserves for the pod; neither the input nor "
                                    "the cluster facts show them, and one not allocated there never is, so the pod "
                                    "would never start; otherwise " + instead),
            node, Severity::Warning);
      }
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeDraClaimWithNodeName() { return std::make_unique<DraClaimWithNodeName>(); }

}  // namespace gpuguard::checks
